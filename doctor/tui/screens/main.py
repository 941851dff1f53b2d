"""The doctor: checks stream into a list grouped by area; the detail pane explains the one under the cursor."""

from __future__ import annotations

import dataclasses
import shlex
from collections import deque
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Tree

from torch_gpu_doctor import TOOL_NAME, __version__
from torch_gpu_doctor.events import CheckDone, ChecksListed, ProbeDone
from torch_gpu_doctor.model import CheckSpec, Command, Finding, Remediation, Status, Target, flag_words
from torch_gpu_doctor.tui.fix_runner import FixRunner, RunOutcome
from torch_gpu_doctor.tui.fix_text import IN_TERMINAL, confirm_body, runs_in_terminal
from torch_gpu_doctor.tui.messages import (
    BundleFailed,
    BundleRecorded,
    DiagnosisFailed,
    DiagnosisFinished,
)
from torch_gpu_doctor.tui.session import Session, target_python
from torch_gpu_doctor.tui.widgets.check_list import CheckList
from torch_gpu_doctor.tui.widgets.detail_pane import DetailPane, Shown
from torch_gpu_doctor.tui.widgets.footer import SteadyFooter
from torch_gpu_doctor.tui.widgets.machine_header import MachineHeader
from torch_gpu_doctor.tui.widgets.status_line import StatusLine
from torch_gpu_doctor.tui.workers import diagnose_and_post
from torch_gpu_doctor.unavailable import Unavailable

if TYPE_CHECKING:  # the rest of the engine loads after the first paint, in the diagnosis worker
    from textual.timer import Timer

    from torch_gpu_doctor.events import DiagnosisEvent
    from torch_gpu_doctor.report import Report
    from torch_gpu_doctor.tui.app import DoctorApp


NEEDS_THE_LIST = frozenset({"next_problem", "fix", "copy", "rerun"})
# The diagnosis's progress is taken from its queue this often: live for a person, and a fast run's 56 checks
# are one repaint, not 56 messages and repaints fighting the diagnosis for the GIL (issue 21).
PROGRESS_EVERY_S = 0.1
FIRST_FRAME_S = 0.05  # Textual writes its first frame 30-45 ms after the screen mounts here; see on_mount


class MainScreen(Screen[None]):
    # The tooltip is what the help screen (?) says of each key, in this order.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "next_problem", "Next", tooltip="jump to the next check that fails or warns"),
        Binding(
            "f", "fix", "Fix", tooltip="fix it: shows the exact command and where it runs, and asks first"
        ),
        Binding("c", "copy", "Copy", tooltip="copy the fix command (printed again when you quit)"),
        Binding("r", "rerun", "Re-run", tooltip="run the checks again"),
        Binding(
            "s",
            "smoke",
            "Smoke",
            tooltip="GPU smoke test: proof that the GPU computes correctly, with measured speeds",
        ),
        Binding(
            "w",
            "setup",
            "Setup",
            tooltip="setup wizard: the driver, then torch of the right build, then a check",
        ),
        Binding(
            "t",
            "paste",
            "Triage",
            tooltip="triage a paste from another machine (a report, an error, nvidia-smi, pip list): what is "
            "wrong there\n  and its fix, shown and never run here",
        ),
        # not in the footer, which holds the rest at 80 columns; the help lists it (`gpu-doctor --json` is the
        # usual way to a JSON report)
        Binding("e", "export", "JSON", tooltip="save the report as JSON in the current folder", show=False),
        Binding(
            "m",
            "fit",
            "Fit",
            tooltip="will a model fit on these GPUs: memory per part, and what makes it fit",
            show=False,
        ),
        Binding(
            "b",
            "bundle",
            "Bundle",
            tooltip="save a support bundle (.tar.gz) in the current folder: this machine recorded again, host "
            "names,\n  users, addresses and serials replaced, secrets removed; shown first, written only if you "
            "say yes",
        ),
    ]

    def __init__(self, session: Session, then: str = "doctor") -> None:
        super().__init__()
        self.session = session
        self.then = then  # "setup" or "smoke": opens once the first checks are in
        self.report: Report | None = None
        self.running = False
        self._findings: dict[str, list[Finding]] = {}
        self._specs: dict[str, CheckSpec] = {}
        self._probes: list[str] = []
        self._probes_done: set[str] = set()
        self._before: dict[str, Status | None] = {}  # statuses before a fix, to say what it changed
        self.fixes = FixRunner(self)
        self._pending: deque[DiagnosisEvent] = deque()
        self._progress_timer: Timer | None = None
        self.filled = False  # the list and the detail pane are in (they join after the first frame)
        self._arrived: Report | None = None  # a report that came before the list it goes into
        self._started = False  # the first diagnosis has started (once: a failure is not retried unasked)
        self._filling = False  # after_first_frame has begun (by its timer, or by a report that came first)
        self._fill_timer: Timer | None = None
        self._waited = False  # the list's timer waited once for a report on its way

    @property
    def _app(self) -> DoctorApp:
        return cast("DoctorApp", self.app)

    def compose(self) -> ComposeResult:
        replay = not self.session.can_apply
        heads = (
            f"{TOOL_NAME} {__version__}" + (" · replay of a capture" if replay else ""),
            TOOL_NAME + (" · replay" if replay else ""),
            "replay" if replay else "",
        )
        yield MachineHeader(heads, reading="the capture" if replay else "this machine", id="machine")
        yield StatusLine(Text("Starting…", "italic"), id="status")
        yield Horizontal(id="body")
        yield SteadyFooter(compact=True)

    def on_mount(self) -> None:
        """The first frame is the header, the status and the keys: cheap to lay out and draw. The list and the
        detail pane join a moment later, and the diagnosis after them (its worker's imports would otherwise
        hold the GIL while a frame is drawn). A timer, because Textual holds the frames drawn while the app
        starts (`call_after_refresh` from here runs before anything reaches the terminal); on a machine slow
        enough to miss it, the first frame simply has the list in it.

        When the first diagnosis runs in the early child, its worker starts now: it mostly waits on the pipe
        (the GIL is free) and then unpickles the report while the main thread is idle before the list joins,
        so the list can be filled with the report at once (issue 21: full screen at 2x a bare Textual app).
        A diagnosis run here in the worker would hold the GIL through the first frame, so it waits."""
        self._fill_timer = self.set_timer(FIRST_FRAME_S, self._list_is_due)
        if self.session.early is not None:
            self._start_first_diagnosis()

    async def _list_is_due(self) -> None:
        """The list joins now, unless the early child's report has been read and is being unpickled: then it
        joins with the report in it (on_diagnosis_finished), without first drawing every check as running,
        and at the latest one FIRST_FRAME_S later (a report that fails to unpickle is diagnosed again)."""
        if self.session.report_on_its_way() and not self._waited:
            self._waited = True
            self._fill_timer = self.set_timer(FIRST_FRAME_S, self._list_is_due)
            return
        await self.after_first_frame()

    async def after_first_frame(self) -> None:
        if self._filling:  # the report came first and started it (on_diagnosis_finished)
            return
        self._filling = True
        if self._fill_timer is not None:
            self._fill_timer.stop()
        checks, detail = CheckList(id="checks"), DetailPane(id="detail")
        await self.query_one("#body", Horizontal).mount_all([checks, detail])
        self.filled = True
        self.refresh_bindings()
        detail.show(None)
        checks.focus()
        arrived, self._arrived = self._arrived, None
        if arrived is not None:  # the report came while the list was not in: no plan to draw before it
            self.show_report(arrived)
            return
        if self._started and not self.running:  # it failed before the list came: nothing is running
            return
        self._plan_from_index()
        self._take_progress()  # what came while the list was not in
        self.call_after_refresh(self._start_first_diagnosis)

    def _plan_from_index(self) -> None:
        """The list shows every built-in check as running as soon as it is in, before the engine answers: the
        shipped index is read without importing a check (plugins join when the diagnosis lists its checks)."""
        from torch_gpu_doctor.catalog import builtin_specs  # the shipped index, read after the first frame
        from torch_gpu_doctor.registry import RegistryError  # with the index

        only, skip = set(self.session.only), set(self.session.skip)
        try:
            specs = [s for s in builtin_specs() if (not only or s.id in only) and s.id not in skip]
        except (OSError, ValueError, RegistryError):  # a damaged install: the diagnosis lists them anyway
            return
        self.query_one(CheckList).plan(specs)

    # --- the diagnosis, in a worker -------------------------------------------------------------

    def _start_first_diagnosis(self) -> None:
        """The frame after the list's (at mount with an early child), unless it has started already: an `r`
        pressed in between, or the early start."""
        if not self._started:
            self.start_diagnosis()

    def start_diagnosis(self) -> None:
        if self.running:
            self.notify("The checks are still running.", severity="warning")
            return
        self.running = self._started = True
        self._findings.clear()
        self._probes_done.clear()
        self._pending.clear()
        self._progress_timer = self.set_interval(PROGRESS_EVERY_S, self._take_progress)
        self._diagnose()

    @work(thread=True, exit_on_error=False, group="diagnose")
    def _diagnose(self) -> None:
        diagnose_and_post(self.session, self.post_message, self._pending.append)

    def _take_progress(self) -> None:
        while self._pending and self.filled:  # events wait for the list they go into
            self._apply_progress(self._pending.popleft())

    def _stop_progress(self) -> None:
        self._pending.clear()
        if self._progress_timer is not None:
            self._progress_timer.stop()
            self._progress_timer = None

    def _apply_progress(self, event: DiagnosisEvent) -> None:
        checks = self.query_one(CheckList)
        status = self.query_one(StatusLine)
        if isinstance(event, ChecksListed):
            self._specs = {s.id: s for s in event.specs}
            self._probes = list(event.probes)
            checks.plan(event.specs)
            status.reading(0, len(self._probes), self._probes)
        elif isinstance(event, ProbeDone):
            self._probes_done.add(event.name)
            waiting = [p for p in self._probes if p not in self._probes_done]
            if waiting:
                status.reading(len(self._probes_done), len(self._probes), waiting)
            else:
                status.judging()
        elif isinstance(event, CheckDone):
            self._findings[event.check_id] = list(event.findings)
            checks.show(event.check_id, event.findings)
            if checks.selected_check == event.check_id:
                self._show_detail(event.check_id)

    def on_diagnosis_finished(self, message: DiagnosisFinished) -> None:
        self._stop_progress()
        self.running = False
        self._app.diagnosis_failed = False
        if not self.filled:  # the list joins now, with the report in it: no plan of running checks first
            self._arrived = message.report
            if not self._filling:
                self.call_next(self.after_first_frame)
            return
        self.show_report(message.report)

    def show_report(self, report: Report) -> None:
        """A finished report: this diagnosis's, or the one the smoke test or the wizard came back with."""
        self.report = self._app.last_report = report
        checks = self.query_one(CheckList)
        self._specs = {s.id: s for s in report.specs}
        self._findings = {}
        for finding in report.findings:
            self._findings.setdefault(finding.check_id, []).append(_with_its_causes_fix(finding, report))
        checks.show_all(self._findings)
        self.query_one(MachineHeader).show(report.facts)
        self.query_one(StatusLine).done(report.summary().counts, self._hint(report))
        roots = report.roots()  # the first root cause, not the first symptom in the list's order
        if checks.selected_check is None and roots:
            checks.select_check(roots[0].check_id)
        if checks.selected_check is None and checks.next_problem() is None and self._findings:
            checks.select_check(next(iter(self._findings)))
        if checks.selected_check is not None:
            self._show_detail(checks.selected_check)
        self._say_what_changed()
        self._open_what_was_asked()

    def _open_what_was_asked(self) -> None:
        """`gpu-doctor setup` or `--smoke`: open it once the first checks are in."""
        then, self.then = self.then, "doctor"
        if then == "setup":
            self.action_setup()
        elif then == "smoke":
            self.action_smoke()

    @staticmethod
    def _torch_trouble(report: Report) -> tuple[str, str] | None:
        """Why the setup wizard is worth offering, said long and short: torch missing, or a torch or
        driver check failing."""
        packages = report.facts.torch_packages
        if not isinstance(packages, Unavailable) and packages.version is None:
            return "torch is not installed", "no torch"
        torch_or_driver = ("torch.", "driver.")
        if any(f.status is Status.FAIL and f.check_id.startswith(torch_or_driver) for f in report.findings):
            return "torch cannot use the GPU yet", "torch not ready"
        return None

    def on_diagnosis_failed(self, message: DiagnosisFailed) -> None:
        self._stop_progress()
        self.running = False
        self._app.diagnosis_failed = True
        self.query_one(StatusLine).message(
            f"The diagnosis itself failed ({message.error}). This is a bug; please report it.", "bold red"
        )

    def _hint(self, report: Report) -> tuple[str, ...]:
        """What to press next, longest form first (the status line shows the longest that fits). Where
        torch cannot work yet, the setup wizard is offered there: a toast would cover the pane."""
        counts = report.summary().counts
        trouble = self._torch_trouble(report)
        if trouble:
            said, short = trouble
            return (
                f"{said}: w opens the setup wizard · n: next problem",
                f"{said}: w for setup",
                f"{short}: w for setup",
                "w: setup",
            )
        if counts.fail or counts.warn or counts.crash:
            return ("n: next problem · f: fix · s: smoke test", "n: next problem · f: fix", "n: next problem")
        if counts.unknown:  # not "all clear": some checks could not tell
            return (
                "Nothing fails; the unknown checks say what they could not read. s: smoke test",
                "Nothing fails; see the unknown checks",
            )
        return ("All clear. s: run the GPU smoke test", "All clear.")

    # --- the detail pane --------------------------------------------------------------------------

    @on(Tree.NodeHighlighted, "#checks")
    def _highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        check_id = event.node.data
        if check_id is not None and check_id == self.query_one(CheckList).selected_check:
            self._show_detail(check_id)  # an area's row keeps the pane as it was

    def _show_detail(self, check_id: str) -> None:
        findings = tuple(self._findings.get(check_id, ()))
        spec = self._specs.get(check_id)
        from torch_gpu_doctor.fixing.plan import runnable_argv  # the engine: after the first paint

        runnable = None
        fix = self._fix_of(findings)
        if fix is not None and self.session.can_apply and self.report is not None:
            python = target_python(self.report, self.session.python)
            runnable = runnable_argv(fix, python, self.report.facts)
        self.query_one(DetailPane).show(
            Shown(check_id, spec, findings, runnable, can_run_system=self.session.can_apply)
        )

    # --- actions ----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:  # noqa: ARG002
        """Until the list is in (a moment after the first frame) its keys are shown but do nothing: there is
        no check to move to, copy or fix yet. They all come alive at once, so that the footer is redrawn
        once (an `r` before the first diagnosis has started starts it, once)."""
        if not self.filled and action in NEEDS_THE_LIST:
            return None
        return True

    def action_next_problem(self) -> None:
        checks = self.query_one(CheckList)
        if checks.next_problem() is None:
            self.notify("No check fails or warns." if not self.running else "Still running…")
        checks.focus()

    def action_rerun(self) -> None:
        self.start_diagnosis()

    def action_copy(self) -> None:
        check_id = self.query_one(CheckList).selected_check
        fix = self._fix_of(self._findings.get(check_id or "", []))
        if fix is None or not fix.commands:
            self.notify("This check has no command to copy: what to do is in the pane.")
            return
        more = len(fix.commands) - 1
        self.copy(
            fix.commands[0].display(), f"{more} more in the pane, each with its own Copy" if more else ""
        )

    def on_detail_pane_copy_requested(self, message: DetailPane.CopyRequested) -> None:
        self.copy(message.text)

    def copy(self, text: str, also: str = "") -> None:
        self.app.copy_to_clipboard(text)
        self._app.copied.append(text)
        body = Text(text).plain + (f"\n({also})" if also else "")
        self.notify(body, title="Copied (also printed when you quit)")

    def action_smoke(self) -> None:
        if self.report is None or self.running:
            self.notify("Wait for the checks to finish.")
            return
        from torch_gpu_doctor.tui.screens.smoke import SmokeScreen  # a screen loads when it opens

        self.app.clear_notifications()  # a hint about this screen must not cover the next one
        self.app.push_screen(SmokeScreen(self.session, self.report), self._smoke_done)

    def _smoke_done(self, report: Report | None) -> None:
        if report is not None:
            self.show_report(report)

    def action_paste(self) -> None:
        from torch_gpu_doctor.tui.screens.paste import PasteScreen  # a screen loads when it opens

        self.app.clear_notifications()
        self.app.push_screen(PasteScreen())

    def action_fit(self) -> None:
        if self.report is None or self.running:
            self.notify("Wait for the checks to finish.")
            return
        from torch_gpu_doctor.tui.screens.fit import FitScreen  # a screen loads when it opens

        self.app.clear_notifications()
        self.app.push_screen(FitScreen(self.report))

    def action_setup(self) -> None:
        if self.report is None or self.running:
            self.notify("Wait for the checks to finish.")
            return
        from torch_gpu_doctor.tui.screens.setup import SetupScreen  # a screen loads when it opens

        self.app.clear_notifications()
        self.app.push_screen(SetupScreen(self.session, self.report), self._setup_done)

    def _setup_done(self, report: Report | None) -> None:
        if report is not None:
            self.show_report(report)

    # --- fixing -----------------------------------------------------------------------------------

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
            body = confirm_body(fix.text, command.argv, IN_TERMINAL, flag_words(fix))
            self.fixes.terminal(command.argv, body, self._ran_in_terminal, on_start=self._remember_statuses)

    def _fix_python_env(self, fix: Remediation) -> None:
        from torch_gpu_doctor.fixing.plan import runnable_argv  # the engine: after the first paint

        assert self.report is not None
        python = target_python(self.report, self.session.python)
        argv = runnable_argv(fix, python, self.report.facts)
        if argv is None:
            why = "copy the command with c" if fix.commands else "what to do is in the pane"
            self.notify(f"gpu-doctor does not run this fix itself: {why}.")
            return
        body = confirm_body(fix.text, argv, f"Into the Python environment of {python}", flag_words(fix))
        self.fixes.pip(argv, "Apply this fix?", body, self._fix_done, on_start=self._remember_statuses)

    def _remember_statuses(self) -> None:
        checks = self.query_one(CheckList)
        self._before = {check_id: checks.status_of(check_id) for check_id in self._findings}

    def _ran_in_terminal(self, outcome: RunOutcome) -> None:
        self.notify(f"{shlex.join(outcome.argv)} ended: {outcome.said}", timeout=8)
        self.start_diagnosis()

    def _fix_done(self, outcome: RunOutcome | None) -> None:
        # Done, or stopped part way (the environment may be half changed): look again. A failure pip
        # rolled back by itself changed nothing: nothing to look at.
        if outcome is not None and (outcome.ok or outcome.stopped_part_way):
            self.start_diagnosis()
        else:
            self._before = {}

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

    # --- saving: the report as JSON (e), a support bundle (b) ---------------------------------------

    def action_export(self) -> None:
        if self.report is None:
            self.notify("Wait for the checks to finish.")
            return
        from torch_gpu_doctor.render.json_report import render_json  # only when a report is saved

        path = Path.cwd() / f"{TOOL_NAME}-report-{datetime.now():%Y%m%d-%H%M%S}.json"
        try:
            with path.open("x", encoding="utf-8") as out:
                out.write(render_json(self.report))
        except OSError as exc:
            self.notify(f"Could not write {path}: {exc.strerror or exc}", severity="error")
            return
        self.notify(str(path), title="Report saved (JSON)")

    def action_bundle(self) -> None:
        if not self.session.can_apply:
            self.notify(
                "This is a capture (--root): a bundle records this machine, so run gpu-doctor without --root."
            )
            return
        if self.report is None or self.running:
            self.notify("Wait for the checks to finish.")
            return
        self.query_one(StatusLine).message("Recording this machine for a support bundle…")
        self._record_bundle()

    @work(thread=True, exit_on_error=False, group="bundle", exclusive=True)
    def _record_bundle(self) -> None:
        try:
            self.post_message(BundleRecorded(self.session.bundle()))
        except Exception as exc:  # a bundle that cannot be made is said on screen, never a traceback
            self.post_message(BundleFailed(f"{type(exc).__name__}: {exc}"))

    def on_bundle_failed(self, message: BundleFailed) -> None:
        self._restore_status()
        self.notify(f"No bundle was made: {message.error}", severity="error")

    def on_bundle_recorded(self, message: BundleRecorded) -> None:
        from torch_gpu_doctor.tui.bundle_save import offer_bundle  # the bundle writer: only when asked

        self._restore_status()
        offer_bundle(self, message.bundle)

    def _restore_status(self) -> None:
        if self.report is not None:
            self.query_one(StatusLine).done(self.report.summary().counts, self._hint(self.report))


def _word(status: Status | None) -> str:
    return status.value.upper() if status is not None else "not run"


def _with_its_causes_fix(finding: Finding, report: Report) -> Finding:
    """A symptom's next step is its root cause's fix: the pane shows it, and f and c act on it."""
    from torch_gpu_doctor.checks.support.causes import first_cause  # the engine: after the first paint

    root = first_cause(finding, report.findings)
    if root is None or root.remediation is None:
        return finding
    # the pane names the root, as the text report does ("caused by driver.secure_boot"), not every link
    return dataclasses.replace(finding, remediation=root.remediation, caused_by=(root.check_id,))
