"""Will a model fit on these GPUs, in the TUI: type what follows `gpu-doctor fit` and read the estimate.

The same words as the command (doctor/fit/arguments.py) and the same text (render/fit.py), from the GPUs of
the report on screen; it reads a moment after the last keystroke, like the paste view. Nothing is run.
"""

from __future__ import annotations

import io
import shlex
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, Static

from torch_gpu_doctor.fit.arguments import FitWordsError, parse_fit_words
from torch_gpu_doctor.fit.estimate import WorkloadError
from torch_gpu_doctor.fit.model_size import ModelError, read_model
from torch_gpu_doctor.fit.plan import plan
from torch_gpu_doctor.fit.request import gpus_of, request
from torch_gpu_doctor.render.fit import render_fit_text
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.tui.widgets.footer import SteadyFooter

SETTLE_S = 0.3
FIRST = "7B --train"
INTRO = (
    "What follows `gpu-doctor fit`: a parameter count (7B), a config.json or a model folder, then --train, "
    "--lora or --qlora, --precision, --batch, --seq, --gpus N, --checkpointing. Estimated for this report's GPUs."
)


def fit_text(words: str, report: Report) -> Text:
    """The estimate for these words on the report's machine, as `gpu-doctor fit` prints it; or why not."""
    try:
        args = parse_fit_words(shlex.split(words))
        model = read_model(args.model)
        gpus = gpus_of(report.facts)
        work, notes = request(args, model, gpus)
        result = plan(model, work, gpus)
    except (ValueError, FitWordsError, ModelError, WorkloadError) as exc:
        return Text(str(exc), "italic")
    out = io.StringIO()
    render_fit_text(result, out, notes)
    shown = Text()
    for line in out.getvalue().splitlines():
        bold = line.startswith(("Fits", "Does not fit", "Needs")) or line.endswith(", fits")
        shown.append(line + "\n", "bold" if bold else "")
    return shown


class FitScreen(Screen[None]):
    CSS_PATH = "fit.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def __init__(self, report: Report) -> None:
        super().__init__()
        self.report = report
        self._settle: Timer | None = None
        self.shown_for: str | None = None  # the words the estimate below was made from (tests wait on it)

    def compose(self) -> ComposeResult:
        yield Static(INTRO, id="fit-intro")
        yield Input(FIRST, placeholder="7B --train", id="fit-words")
        with VerticalScroll(id="fit-result-scroll"):
            yield Static(fit_text(FIRST, self.report), id="fit-result")
        yield SteadyFooter(compact=True)

    def on_mount(self) -> None:
        self.shown_for = FIRST
        self.query_one(Input).focus()

    @on(Input.Changed)
    def _changed(self) -> None:
        if self._settle is not None:
            self._settle.stop()
        self._settle = self.set_timer(SETTLE_S, self._show)

    @on(Input.Submitted)
    def _show(self) -> None:
        words = self.query_one(Input).value
        self.query_one("#fit-result", Static).update(fit_text(words, self.report))
        self.query_one("#fit-result-scroll", VerticalScroll).scroll_home(animate=False)
        self.shown_for = words

    def action_close(self) -> None:
        self.dismiss(None)
