"""The setup wizard: the fix plan's steps in order, each explained, run (after confirmation) or handed over.

Driver, then torch of the right build, then the other fixes, a reboot when one is needed, and a last check
with the quick smoke test. gpu-doctor runs only a step's `python -m pip ...` itself; system commands are
copied, or handed the terminal when the person asks. A failure stops the wizard at that step. After a
python-env step the machine is diagnosed again and the rest of the plan rebuilt from what it says now.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, HorizontalGroup
from textual.screen import Screen
from textual.widgets import Button

from torch_gpu_doctor import TOOL_NAME
from torch_gpu_doctor.events import CheckDone, DiagnosisEvent
from torch_gpu_doctor.facts.smoke import SmokeMode
from torch_gpu_doctor.fixing.plan import VERIFY_KEY, plan_fixes
from torch_gpu_doctor.model import Command, Status, Target, flag_words
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.smoke.run import SmokeProgress
from torch_gpu_doctor.tui.fix_runner import FixRunner, RunOutcome
from torch_gpu_doctor.tui.fix_text import IN_TERMINAL, confirm_body, runs_in_terminal
from torch_gpu_doctor.tui.messages import (
    DiagnosisFailed,
    DiagnosisFinished,
    DiagnosisProgress,
    SmokeFailed,
    SmokeFinished,
    SmokeStepProgress,
)
from torch_gpu_doctor.tui.session import Session
from torch_gpu_doctor.tui.widgets.footer import SteadyFooter
from torch_gpu_doctor.tui.widgets.machine_header import MachineHeader
from torch_gpu_doctor.tui.widgets.setup_page import REPLAY_LINE, RunKind, SetupPage, StepView, run_kind
from torch_gpu_doctor.tui.widgets.setup_result import verify_summary
from torch_gpu_doctor.tui.widgets.setup_steps import SetupSteps
from torch_gpu_doctor.tui.widgets.setup_walk import StepState, Walk, status_changes
from torch_gpu_doctor.tui.widgets.status_line import StatusLine
from torch_gpu_doctor.tui.workers import diagnose_and_post

if TYPE_CHECKING:
    from torch_gpu_doctor.tui.app import DoctorApp

STOPPED = "Stopped here: nothing after this step runs. Run it again once the problem is fixed, or leave with escape."


class SetupScreen(Screen[Report | None]):
    """Dismisses with the newest report it diagnosed (None when it diagnosed nothing)."""

    CSS_PATH = "setup.tcss"  # loaded when this screen first opens: the first paint does not parse it

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("n", "next", "Next"),
        Binding("p", "back", "Back"),
        Binding("d", "done", "I did it"),
        Binding("s", "skip", "Skip"),
        Binding("c", "copy", "Copy"),
        Binding("r", "run", "Run…"),
    ]

    def __init__(self, session: Session, report: Report) -> None:
        super().__init__()
        self.session = session
        self.first_report = report  # what the wizard set out to fix, to say what changed at the end
        self.report = report  # the diagnosis the remaining plan was built from
        self.newest: Report | None = None
        self.walk = Walk.start(plan_fixes(report))
        self.result: Text | None = None  # the verification's summary
        self.busy = ""  # what a worker is doing: "diagnose" or "verify"; "" when idle
        self.stopped = False  # a step failed: nothing after it may run
        self._checked = 0  # checks done in the diagnosis running now
        self.fixes = FixRunner(self)

    @property
    def _app(self) -> DoctorApp:
        return cast("DoctorApp", self.app)

    def compose(self) -> ComposeResult:
        replay = not self.session.can_apply
        heads = (
            f"{TOOL_NAME} setup" + (" (replay of a capture)" if replay else ""),
            f"{TOOL_NAME} setup" + (" (replay)" if replay else ""),
            "setup" + (" (replay)" if replay else ""),
        )
        yield MachineHeader(heads, self.report.facts, id="setup-head")
        with Horizontal(id="setup-body"):
            yield SetupSteps(id="setup-steps")
            yield SetupPage(id="setup-page")
        yield StatusLine(id="setup-status")
        with HorizontalGroup(id="setup-nav"):
            yield Button("Skip (s)", id="setup-skip", compact=True)
            yield Button("I did it (d)", id="setup-done", compact=True)
            yield Button("Next (n)", id="setup-next", compact=True, variant="primary")
        yield SteadyFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:  # noqa: ARG002
        """A replay only turns pages: no Skip, I did it or Run in the footer."""
        return self.session.can_apply or action not in ("skip", "done", "run")

    def on_mount(self) -> None:
        self.query_one("#setup-skip", Button).display = self.session.can_apply
        self.query_one("#setup-done", Button).display = self.session.can_apply
        self._show()
        if not self.session.can_apply:
            self.query_one(StatusLine).message("Replay: copy only (c copies the step's first command).")
        elif not any(s.needed for s in self.walk.steps if s.key != VERIFY_KEY):
            self.query_one(StatusLine).message("Nothing needs changing: check again to be sure.")

    # --- drawing --------------------------------------------------------------------------------

    def _show(self) -> None:
        walk = self.walk
        self.query_one(SetupSteps).show([s.title for s in walk.steps], walk.states, walk.current)
        step, state = walk.step, walk.state
        result = self.result if step.key == VERIFY_KEY else None
        view = StepView(
            walk.current + 1,
            len(walk.steps),
            step,
            state,
            walk.python,
            self.session.can_apply,
            walk.notes.get(step.key),
            result,
        )
        self.query_one(SetupPage).show(view)
        next_button = self.query_one("#setup-next", Button)
        next_button.label = (
            "Close (n)" if walk.next_todo() is None and not self._can_mark_done() else "Next (n)"
        )
        next_button.disabled = bool(self.busy) or self.stopped
        self.query_one("#setup-done", Button).disabled = (
            bool(self.busy) or self.stopped or not self._can_mark_done()
        )
        skip = self.query_one("#setup-skip", Button)
        skip.disabled = (
            bool(self.busy) or self.stopped or state is not StepState.TODO or not self.session.can_apply
        )

    def _advance(self) -> None:
        self.walk.advance()
        self._show()

    # --- navigation -----------------------------------------------------------------------------

    def _can_mark_done(self) -> bool:
        """A step still to do may be marked "I did it" (by hand); never the last check, never in a replay."""
        walk = self.walk
        return self.session.can_apply and walk.state is StepState.TODO and walk.step.key != VERIFY_KEY

    def action_next(self) -> None:
        """Turn the page: a step still to do stays to do (`d` says it was done by hand)."""
        if self._refused():
            return
        if self.walk.next_todo() is None and not self._can_mark_done():
            self.dismiss(self.newest)
            return
        self._advance()

    def action_back(self) -> None:
        """The step before, to read it again (or run it again): nothing it did is undone."""
        if self._refused():
            return
        if self.walk.back():
            self._show()
        else:
            self.notify("This is the first step.")

    def action_done(self) -> None:
        if self._refused() or not self._can_mark_done():
            return
        self.walk.set(StepState.DONE, Text("You marked this done.", "italic"))
        if self._python_step() or self._reveals():
            self._rediagnose()  # what the checks say now decides the rest
            return
        self._advance()

    def action_skip(self) -> None:
        if self._refused() or self.walk.state is not StepState.TODO or not self.session.can_apply:
            return
        self.walk.set(StepState.SKIPPED)
        self._advance()

    def action_close(self) -> None:
        if self.busy == "verify":  # the quick smoke test is on the GPU: leaving would hide it, not stop it
            self.notify("Still checking: wait for the smoke test to end (its watchdog stops a hung step).")
            return
        self.dismiss(self.newest)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "setup-next":
            event.stop()
            self.action_next()
        elif event.button.id == "setup-done":
            event.stop()
            self.action_done()
        elif event.button.id == "setup-skip":
            event.stop()
            self.action_skip()

    def _refused(self) -> bool:
        if self.busy:
            self.notify("Wait for the checks to finish.", severity="warning")
            return True
        if self.stopped:
            self.notify("This step failed: run it again, or leave with escape.", severity="warning")
            return True
        return False

    def _python_step(self) -> bool:
        fix = self.walk.step.remediation
        return fix is not None and fix.target is Target.PYTHON_ENV

    # --- copy and run ---------------------------------------------------------------------------

    def _reveals(self) -> bool:
        """A step other steps wait for (an enclosure authorized): the GPU it reveals needs a new plan."""
        key = self.walk.step.key
        return any(s.waits_for == key for s in self.walk.steps)

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

        def started() -> None:
            self.walk.set(StepState.RUNNING)
            self._show()

        self.fixes.pip(argv, "Install into this Python?", body, self._installed, on_start=started)

    def _installed(self, outcome: RunOutcome | None) -> None:
        if outcome is None or not outcome.ok:
            why = outcome.said if outcome is not None else "It did not finish."
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
        self.fixes.terminal(command.argv, body, lambda outcome: self._ran_in_terminal(command, outcome))

    def _ran_in_terminal(self, command: Command, outcome: RunOutcome) -> None:
        shown = shlex.join(command.argv)
        if not outcome.ok:
            self._fail(Text(f"FAILED {shown} ended: {outcome.said}.", "bold red"))
            return
        self.stopped = False
        fix = self.walk.step.remediation
        last = [c for c in (fix.commands if fix else ()) if runs_in_terminal(c)][-1:]
        if last == [command]:
            self.walk.set(StepState.DONE, Text(f"{shown} ended: {outcome.said}.", "italic"))
            if self._reveals():
                self._rediagnose()
                return
            self._advance()
        else:
            self.walk.set(StepState.TODO, Text(f"{shown} ended: {outcome.said}. Run the next one.", "italic"))
            self._show()

    # --- checking again after a python-env step -------------------------------------------------

    def _rediagnose(self) -> None:
        self.busy, self._checked = "diagnose", 0
        self.query_one(StatusLine).message("Checking the machine again…")
        self._show()
        self._diagnose()

    @work(thread=True, exit_on_error=False, group="setup")
    def _diagnose(self) -> None:
        diagnose_and_post(self.session, self.post_message, self._progress)

    def _progress(self, event: DiagnosisEvent) -> None:
        """In the worker thread: tell the screen."""
        self.post_message(DiagnosisProgress(event))

    def _smoke_progress(self, progress: SmokeProgress) -> None:
        self.post_message(SmokeStepProgress(progress))

    def on_diagnosis_progress(self, message: DiagnosisProgress) -> None:
        message.stop()
        if isinstance(message.event, CheckDone):
            self._checked += 1
            self.query_one(StatusLine).message(f"Checking the machine again… {self._checked} checks done")

    def on_diagnosis_finished(self, message: DiagnosisFinished) -> None:
        message.stop()
        report = self.newest = self._app.last_report = message.report
        if self.busy == "verify":
            self.query_one(StatusLine).message("Checks done. Running the quick smoke test…")
            return
        self.busy = ""
        changed = status_changes(self.report, report, self.walk.step.check_ids)
        self.walk.notes[self.walk.step.key] = Text(changed or "Done. The checks say nothing changed here.")
        self.report = report
        self.walk.rebuild(plan_fixes(report))
        self.query_one(StatusLine).done(report.summary().counts, "")
        self._advance()

    def on_diagnosis_failed(self, message: DiagnosisFailed) -> None:
        message.stop()
        verifying, self.busy = self.busy == "verify", ""
        text = f"Checking again failed ({message.error}). This is a bug; please report it."
        self.query_one(StatusLine).message(text, "bold red")
        if verifying:
            self._fail(Text(text, "bold red"))
        else:
            self._show()

    # --- the last step: everything again, then the quick smoke test ---------------------------

    def _start_verify(self) -> None:
        self.busy, self._checked = "verify", 0
        self.stopped = False
        self.walk.set(StepState.RUNNING)
        self.result = None
        self.query_one(StatusLine).message("Checking everything again…")
        self._show()
        self._verify()

    @work(thread=True, exit_on_error=False, group="setup")
    def _verify(self) -> None:
        report = diagnose_and_post(self.session, self.post_message, self._progress)
        if report is None:
            return
        try:
            smoked = self.session.smoke(report, SmokeMode.QUICK, self._smoke_progress)
        except Exception as exc:  # a GPU problem is a finding; an exception is a bug of gpu-doctor's
            self.post_message(SmokeFailed(f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(SmokeFinished(smoked))

    def on_smoke_failed(self, message: SmokeFailed) -> None:
        message.stop()
        self.busy = ""
        self._fail(Text(f"The smoke test itself failed ({message.error}). This is a bug; please report it."))

    def on_smoke_step_progress(self, message: SmokeStepProgress) -> None:
        message.stop()
        p = message.progress
        doing = p.status.value if p.status else "running" if p.done is None else f"running, {p.done:.0%}"
        text = f"Quick smoke test: {p.label} {doing} ({p.ended} of ~{p.expected} steps)"
        self.query_one(StatusLine).message(text)

    def on_smoke_finished(self, message: SmokeFinished) -> None:
        message.stop()
        report = self.newest = self._app.last_report = message.report
        self.busy = ""
        self.result = verify_summary(self.first_report, report)
        broken = any(f.status in (Status.FAIL, Status.CRASH) for f in report.findings)
        self.walk.set(StepState.FAILED if broken else StepState.DONE)
        hint = "Some checks still fail: see the result." if broken else "All set. Close with n or escape."
        self.query_one(StatusLine).done(report.summary().counts, hint)
        self._show()
