"""The doctor's fix flow: a check's fix confirmed, run (pip here, a system command in the terminal), then the
checks again and what changed. MainScreen (main.py) is this plus the list, the pane and the rest."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from textual.screen import Screen

from torch_gpu_doctor.model import Command, Finding, Remediation, Status, Target, flag_words
from torch_gpu_doctor.tui.fix_text import IN_TERMINAL, confirm_body, runs_in_terminal
from torch_gpu_doctor.tui.screens.confirm import ConfirmScreen
from torch_gpu_doctor.tui.session import Session, target_python
from torch_gpu_doctor.tui.widgets.check_list import CheckList
from torch_gpu_doctor.tui.widgets.detail_pane import DetailPane

if TYPE_CHECKING:
    from torch_gpu_doctor.fixing.apply import ApplyResult
    from torch_gpu_doctor.report import Report


class FixFlow(Screen[None]):
    """The state it shares with MainScreen, which sets it up."""

    session: Session
    report: Report | None
    running: bool
    _findings: dict[str, list[Finding]]
    _before: dict[str, Status | None]  # statuses before a fix, to say what it changed

    def start_diagnosis(self) -> None:
        raise NotImplementedError  # MainScreen's

    @staticmethod
    def _fix_of(findings: tuple[Finding, ...] | list[Finding]) -> Remediation | None:
        fixes = [f.remediation for f in findings if f.remediation is not None]
        return fixes[0] if fixes else None

    def action_fix(self) -> None:
        check_id = self.query_one(CheckList).selected_check
        fix = self._fix_of(self._findings.get(check_id or "", []))
        if check_id is None or fix is None:
            self.notify("This check has nothing to fix.")
            return
        if not self.session.can_apply:  # a capture: nothing runs, so no Run button to point at either
            self.fix(check_id, None)
            return
        if fix.target is Target.PYTHON_ENV:
            self.fix(check_id, None)
            return
        runnable = [c for c in fix.commands if runs_in_terminal(c)]
        if not runnable:
            self.notify("This fix is not run from here: its commands are in the pane, to copy.")
        elif len(runnable) == 1:
            self.fix(check_id, runnable[0])
        else:  # steps or alternatives: the person picks one by its own button, never a guess
            self.notify("This fix has several commands: choose one with its Run in terminal… button.")
            self.query_one(DetailPane).focus_first_run()

    def on_detail_pane_fix_requested(self, message: DetailPane.FixRequested) -> None:
        self.fix(message.check_id, message.command)

    def fix(self, check_id: str, command: Command | None) -> None:
        """`command` None: the check's python-env fix, run by gpu-doctor; else a system command."""
        fix = self._fix_of(self._findings.get(check_id, []))
        if fix is None or self.report is None:
            return
        if not self.session.can_apply:
            self.notify(
                "This is a capture (--root): its fixes are for the captured machine. Copy them with c."
            )
            return
        if self.running:
            self.notify("Wait for the checks to finish.", severity="warning")
            return
        if command is None:
            self._fix_python_env(fix)
        elif runs_in_terminal(command):
            self._fix_in_terminal(fix, command)

    def _fix_python_env(self, fix: Remediation) -> None:
        from torch_gpu_doctor.fixing.plan import runnable_argv
        from torch_gpu_doctor.tui.screens.fix_run import FixRunScreen

        assert self.report is not None
        python = target_python(self.report, self.session.python)
        argv = runnable_argv(fix, python, self.report.facts)
        if argv is None:
            why = "copy the command with c" if fix.commands else "what to do is in the pane"
            self.notify(f"gpu-doctor does not run this fix itself: {why}.")
            return
        body = confirm_body(fix.text, argv, f"Into the Python environment of {python}", flag_words(fix))

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._before = self._statuses()
                self.app.push_screen(FixRunScreen(argv), self._fix_done)

        self.app.push_screen(ConfirmScreen("Apply this fix?", body, "Run it"), confirmed)

    def _fix_in_terminal(self, fix: Remediation, command: Command) -> None:
        from torch_gpu_doctor.tui.system_run import run_system_command

        body = confirm_body(fix.text, command.argv, IN_TERMINAL, flag_words(fix))

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._before = self._statuses()
                ended = run_system_command(self.app, command.argv)
                self.notify(f"{shlex.join(command.argv)} ended: {ended}", timeout=8)
                self.start_diagnosis()

        self.app.push_screen(ConfirmScreen("Run this system command?", body, "Run it"), confirmed)

    def _fix_done(self, result: ApplyResult | None) -> None:
        # Done, or stopped part way (the environment may be half changed): look again. A failure pip
        # rolled back by itself changed nothing: nothing to look at.
        stopped = result is not None and (
            result.cancelled or result.timed_out or (result.returncode or 0) < 0
        )
        if result is not None and (result.ok or stopped):
            self.start_diagnosis()
        else:
            self._before = {}

    def _statuses(self) -> dict[str, Status | None]:
        checks = self.query_one(CheckList)
        return {check_id: checks.status_of(check_id) for check_id in self._findings}

    def _say_what_changed(self) -> None:
        if not self._before:
            return
        checks = self.query_one(CheckList)
        changed = [
            f"{check_id}: {_word(old)} → {_word(checks.status_of(check_id))}"
            for check_id, old in self._before.items()
            if checks.status_of(check_id) != old
        ]
        self._before = {}
        self.notify("\n".join(changed) if changed else "No check changed.", title="After the fix", timeout=10)


def _word(status: Status | None) -> str:
    return status.value.upper() if status is not None else "not run"
