"""A confirmed python-env fix running: its output streams in; a failure shows pip's own message."""

from __future__ import annotations

import shlex
import threading
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, RichLog, Static

from torch_gpu_doctor.fixing.apply import ApplyResult, apply_command
from torch_gpu_doctor.tui.messages import FixOutput
from torch_gpu_doctor.tui.screens.confirm import ConfirmScreen


class FixRunScreen(ModalScreen[ApplyResult | None]):
    """Runs one argv in a worker; dismisses with its result once the person closes it."""

    CSS_PATH = "dialogs.tcss"  # loaded when this screen first opens: the first paint does not parse it

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close / stop")]

    def __init__(self, argv: tuple[str, ...], timeout_s: float = 1800.0) -> None:
        super().__init__()
        self.argv = argv
        self.timeout_s = timeout_s
        self.result: ApplyResult | None = None
        self._cancel = threading.Event()

    def compose(self) -> ComposeResult:
        with Vertical(id="run-dialog"):
            yield Static(Text.assemble(("Running ", "bold"), (shlex.join(self.argv), "cyan")), id="run-title")
            yield RichLog(id="run-log", wrap=True, max_lines=5000)
            yield Static(Text("Running… (escape to stop it)", "italic"), id="run-status")
            yield Button("Close", id="close", disabled=True)

    def on_mount(self) -> None:
        self._run()

    @work(thread=True, exit_on_error=False)
    def _run(self) -> None:
        result = apply_command(
            self.argv, lambda line: self.post_message(FixOutput(line)), self.timeout_s, cancel=self._cancel
        )
        self.app.call_from_thread(self._finished, result)

    def on_fix_output(self, message: FixOutput) -> None:
        self.query_one(RichLog).write(Text(message.line))

    def _finished(self, result: ApplyResult) -> None:
        self.result = result
        status = self.query_one("#run-status", Static)
        if result.ok:
            status.update(Text("Done. Close to re-run the checks.", "bold green"))
        else:
            # pip rolls back an install that fails by itself; one that was stopped may be half done.
            stopped = result.cancelled or result.timed_out or (result.returncode or 0) < 0
            after = (
                "\nIt was stopped part way: the environment may be half changed. Close to check it again."
                if stopped
                else "\nNothing else was changed."
            )
            status.update(Text.assemble(("FAILED ", "bold red"), result.failure_message(), (after, "bold")))
        button = self.query_one("#close", Button)
        button.disabled = False
        button.focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(self.result)

    @property
    def running(self) -> bool:
        return self.result is None

    def action_close(self) -> None:
        if self.result is not None:
            self.dismiss(self.result)
            return
        if self._cancel.is_set():
            self.notify("Stopping: pip gets a Ctrl-C and a few seconds to roll back.")
            return

        def answered(stop: bool | None) -> None:
            if stop and self.result is None:
                self._cancel.set()  # Ctrl-C, then SIGKILL if it does not end (doctor/fixing/apply.py)
                self.query_one("#run-status", Static).update(Text("Stopping…", "italic"))

        body = Text(
            "pip gets a Ctrl-C and rolls back what it can; an install stopped part way may leave torch "
            "half changed (run the fix again afterwards)."
        )
        self.app.push_screen(ConfirmScreen("Stop this command?", body, "Stop it"), answered)

    def on_unmount(self) -> None:
        self._cancel.set()  # never leave pip running behind a screen that is gone
