"""Triage in the TUI: paste what another machine printed and read what is wrong there, as you type.

The same pipeline as `gpu-doctor triage` (triage/pipeline.py) reads the text a moment after the last
keystroke, in a worker thread, and the verdict below the text area is the same text the command prints. Its
fixes are shown and never run: they belong to the machine the paste came from, not to this one.
"""

from __future__ import annotations

import io
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static, TextArea

from torch_gpu_doctor.triage.decode import UnreadablePaste
from torch_gpu_doctor.triage.pipeline import NOTHING_KNOWN, diagnose_paste
from torch_gpu_doctor.triage.render import render_text
from torch_gpu_doctor.tui.widgets.footer import SteadyFooter

SETTLE_S = 0.3  # read the paste once typing pauses this long: a paste arrives as one event, typing as many
SOURCE = "the text pasted here"
INTRO = (
    "Paste what another machine printed: a collect_env report, an error or traceback, nvidia-smi, pip list, "
    "kernel log lines, or a mix. The fixes below are for that machine: shown here, never run."
)
EMPTY = "Nothing pasted yet."


def verdict_text(text: str) -> Text:
    """The triage of `text` as the command prints it, the cause and the fix commands picked out."""
    if not text.strip():
        return Text(EMPTY, "italic")
    try:
        diagnosis = diagnose_paste(text.encode("utf-8"), SOURCE)
    except UnreadablePaste as e:
        return Text(str(e), "italic")
    except Exception as e:
        return Text(
            f"gpu-doctor could not read this paste (a bug, please report it): {type(e).__name__}: {e}"
        )
    if diagnosis.pasted.empty:
        return Text(NOTHING_KNOWN, "italic")
    out = io.StringIO()
    render_text(diagnosis, SOURCE, out)
    shown = Text()
    for line in out.getvalue().splitlines():
        style = ""
        if line.startswith(
            ("Most likely cause", "No problem found", "The paste shows")
        ) or line.lstrip().startswith("$ "):
            style = "bold"
        shown.append(line + "\n", style)
    return shown


class PasteScreen(Screen[None]):
    CSS_PATH = "paste.tcss"  # loaded when this screen first opens: the first paint does not parse it
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("ctrl+l", "clear", "Clear"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._settle: Timer | None = None
        self.shown_for: str | None = None  # the text the verdict below was made from (tests wait on it)

    def compose(self) -> ComposeResult:
        yield Static(INTRO, id="paste-intro")
        yield TextArea(id="paste-text", soft_wrap=True, show_line_numbers=True)
        with VerticalScroll(id="paste-verdict-scroll"):
            yield Static(Text(EMPTY, "italic"), id="paste-verdict")
        yield SteadyFooter(compact=True)

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    @on(TextArea.Changed)
    def _changed(self) -> None:
        if self._settle is not None:
            self._settle.stop()
        self._settle = self.set_timer(SETTLE_S, self._read)

    def _read(self) -> None:
        self._triage(self.query_one(TextArea).text)

    @work(thread=True, exclusive=True, group="paste")
    def _triage(self, text: str) -> None:
        shown = verdict_text(text)
        self.app.call_from_thread(self._show, text, shown)

    def _show(self, text: str, shown: Text) -> None:
        if text != self.query_one(TextArea).text:  # typing went on while it read: the next read is due
            return
        self.query_one("#paste-verdict", Static).update(shown)
        self.query_one("#paste-verdict-scroll", VerticalScroll).scroll_home(animate=False)
        self.shown_for = text

    def action_clear(self) -> None:
        self.query_one(TextArea).clear()

    def action_close(self) -> None:
        self.dismiss(None)
