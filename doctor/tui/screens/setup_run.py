"""The setup wizard's copy-and-run half: a step's command copied, or run after a confirmation (pip here, a
system command in the terminal), and what that changes in the walk. SetupScreen (setup.py) is this plus the
pages, the navigation and the checks it runs again."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual.screen import Screen

from torch_gpu_doctor import TOOL_NAME
from torch_gpu_doctor.model import Command, flag_words
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.tui.fix_text import IN_TERMINAL, confirm_body, runs_in_terminal
from torch_gpu_doctor.tui.screens.confirm import ConfirmScreen
from torch_gpu_doctor.tui.screens.fix_run import FixRunScreen
from torch_gpu_doctor.tui.session import Session
from torch_gpu_doctor.tui.system_run import run_system_command
from torch_gpu_doctor.tui.widgets.setup_page import REPLAY_LINE, RunKind, SetupPage, run_kind
from torch_gpu_doctor.tui.widgets.setup_walk import StepState, Walk
from torch_gpu_doctor.tui.widgets.status_line import StatusLine

if TYPE_CHECKING:
    from torch_gpu_doctor.fixing.apply import ApplyResult
    from torch_gpu_doctor.tui.app import DoctorApp

STOPPED = "Stopped here: nothing after this step runs. Run it again once the problem is fixed, or leave with escape."


class StepRunner(Screen[Report | None]):
    """The state it shares with SetupScreen, which sets it up, and what SetupScreen does for it."""

    session: Session
    walk: Walk
    busy: str  # what a worker is doing: "diagnose" or "verify"; "" when idle
    stopped: bool  # a step failed: nothing after it may run

    @property
    def _app(self) -> DoctorApp:
        return cast("DoctorApp", self.app)

    def _show(self) -> None:
        raise NotImplementedError  # SetupScreen's

    def _advance(self) -> None:
        raise NotImplementedError

    def _rediagnose(self) -> None:
        raise NotImplementedError

    def _start_verify(self) -> None:
        raise NotImplementedError

    def _reveals(self) -> bool:
        """A step other steps wait for (an enclosure authorized): the GPU it reveals needs a new plan."""
        key = self.walk.step.key
        return any(s.waits_for == key for s in self.walk.steps)

    # --- copy and run ---------------------------------------------------------------------------

    def action_copy(self) -> None:
        fix = self.walk.step.remediation
        if fix is None or not fix.commands:
            self.notify("This step has no command.")
            return
        self.copy(fix.commands[0].display())

    def on_setup_page_copy_requested(self, message: SetupPage.CopyRequested) -> None:
        self.copy(message.text)

    def copy(self, text: str) -> None:
        self.app.copy_to_clipboard(text)
        self._app.copied.append(text)
        self.notify(Text(text).plain, title="Copied (also printed when you quit)")

    def action_run(self) -> None:
        """r: the step's first command that may run from here."""
        if not self.session.can_apply:
            self.notify(REPLAY_LINE)
            return
        view, fix = self.query_one(SetupPage).view, self.walk.step.remediation
        if view is not None and fix is not None:
            for command in fix.commands:
                kind = run_kind(view, command)
                if kind is not None:
                    self._run(kind, command)
                    return
        self.notify(f"Nothing here runs from {TOOL_NAME}: copy the command with c.")

    def on_setup_page_run_requested(self, message: SetupPage.RunRequested) -> None:
        self._run(message.kind, message.command)

    def _run(self, kind: RunKind, command: Command) -> None:
        if not self.session.can_apply:  # the page offers no button then; a key must not slip through
            self.notify(REPLAY_LINE)
            return
        if self.busy:
            self.notify("Wait for the checks to finish.", severity="warning")
            return
        if kind == "pip":
            self._confirm_pip()
        elif kind == "terminal":
            self._confirm_terminal(command)
        else:
            self._start_verify()

    def _confirm_pip(self) -> None:
        step = self.walk.step
        fix = step.remediation
        argv = step.runnable_argv
        if argv is None or fix is None:
            return
        where = f"Into the Python environment of {self.walk.python}"
        body = confirm_body(step.why, argv, where, flag_words(fix))

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.walk.set(StepState.RUNNING)
                self._show()
                self.app.push_screen(FixRunScreen(argv), self._installed)

        self.app.push_screen(ConfirmScreen("Install into this Python?", body, "Run it"), confirmed)

    def _installed(self, result: ApplyResult | None) -> None:
        if result is None or not result.ok:
            why = result.failure_message() if result is not None else "It did not finish."
            self._fail(Text.assemble(("FAILED ", "bold red"), why))
            return
        self.stopped = False
        self.walk.set(StepState.DONE, Text("Installed. Checking the machine again…", "italic"))
        self._rediagnose()

    def _fail(self, why: Text) -> None:
        self.stopped = True
        self.walk.set(StepState.FAILED, Text.assemble(why, "\n\n", (STOPPED, "bold")))
        self.query_one(StatusLine).message(STOPPED, "bold red")
        self._show()

    def _confirm_terminal(self, command: Command) -> None:
        fix = self.walk.step.remediation
        if fix is None:
            return
        body = confirm_body(self.walk.step.why, command.argv, IN_TERMINAL, flag_words(fix))

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._ran_in_terminal(command, run_system_command(self.app, command.argv))

        self.app.push_screen(ConfirmScreen("Run this system command?", body, "Run it"), confirmed)

    def _ran_in_terminal(self, command: Command, ended: str) -> None:
        shown = shlex.join(command.argv)
        if ended != "exit code 0":  # run_system_command's words for a clean exit
            self._fail(Text(f"FAILED {shown} ended: {ended}.", "bold red"))
            return
        self.stopped = False
        fix = self.walk.step.remediation
        last = [c for c in (fix.commands if fix else ()) if runs_in_terminal(c)][-1:]
        if last == [command]:
            self.walk.set(StepState.DONE, Text(f"{shown} ended: {ended}.", "italic"))
            if self._reveals():
                self._rediagnose()
                return
            self._advance()
        else:
            self.walk.set(StepState.TODO, Text(f"{shown} ended: {ended}. Run the next one.", "italic"))
            self._show()
