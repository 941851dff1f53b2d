"""What one interactive session diagnoses and may change: the front end's only door to the engine.

The screens never reach for a Host or the runner themselves; they ask the session from worker threads. Tests
build a session around a fixture host (or a prepared report) and drive the real screens with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING

from torch_gpu_doctor.facts.smoke import SmokeMode
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Unavailable

if TYPE_CHECKING:  # the engine loads in the first worker, after the first paint
    from torch_gpu_doctor.bundle.build import Bundle
    from torch_gpu_doctor.events import EventSink
    from torch_gpu_doctor.facts.smoke import UnfinishedRun
    from torch_gpu_doctor.host.base import Host
    from torch_gpu_doctor.report import Report
    from torch_gpu_doctor.smoke.breadcrumb import Breadcrumb
    from torch_gpu_doctor.smoke.run import SmokeProgress
    from torch_gpu_doctor.tui.early import EarlyDiagnosis

    DiagnoseFn = Callable[[EventSink], Report]


@dataclass
class Session:
    host: Host
    python: str
    data_dir: str | None = None
    plugins: bool = True
    fail_on: Status = Status.FAIL
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    # False for a capture (--root): its fixes are shown and copied, never run on this machine.
    can_apply: bool = True
    smoke_mode: SmokeMode = SmokeMode.STANDARD
    breadcrumb: Breadcrumb | None = None
    previous_smoke: UnfinishedRun | None = None
    # Tests replace the diagnosis (e.g. a fixture's report with a fake pip as its interpreter).
    diagnose_override: DiagnoseFn | None = field(default=None, repr=False)
    # The first diagnosis, already running in a child started before Textual loaded (start_early).
    early: EarlyDiagnosis | None = field(default=None, repr=False)
    _taking: EarlyDiagnosis | None = field(default=None, repr=False)  # the one a worker is taking now
    _early_report: bool = False  # the worker has the early child's report (and is about to post it)
    closed: bool = False  # the app quit: nothing more is diagnosed

    def start_early(self) -> None:
        """Start the first diagnosis now, in a forked child, so that it runs while the app starts (issue 21):
        call it before Textual is imported. Where fork is missing, the worker diagnoses as before."""
        from torch_gpu_doctor.tui.early import EarlyDiagnosis  # no Textual and no engine: cheap to load

        self.early = EarlyDiagnosis.start(self._diagnose_here)

    def close(self, wait_s: float = 0.0) -> None:
        """The app quits: a first diagnosis still running in its child is stopped (its probes with it), and a
        worker waiting for it gets no report and makes none (SessionClosed). Waits at most `wait_s`."""
        self.closed = True
        early = self.early or self._taking
        if early is not None:
            early.close(wait_s=wait_s)

    def diagnose(self, on_event: EventSink) -> Report:
        """In a worker: the early child's report the first time (when it delivers one), else a diagnosis here."""
        early, self.early = self.early, None
        if early is not None:
            self._taking = early
            try:
                report = early.take(on_event)
                self._early_report = report is not None
            finally:
                self._taking = None
            if report is not None:
                return report
        if self.closed:
            from torch_gpu_doctor.tui.early import SessionClosed  # loaded: the session started the child

            raise SessionClosed
        return self._diagnose_here(on_event)

    def report_on_its_way(self) -> bool:
        """The early child's report has been read from its pipe, and a worker is unpickling or posting it: a
        screen can wait for it rather than draw the checks as running first."""
        taking = self._taking
        return self._early_report or (taking is not None and taking.delivered)

    def _diagnose_here(self, on_event: EventSink) -> Report:
        if self.diagnose_override is not None:
            return self.diagnose_override(on_event)
        from torch_gpu_doctor.runner import diagnose  # the engine loads in the worker, after the first paint

        return diagnose(
            self.host,
            self.python,
            self.only,
            self.skip,
            self.fail_on,
            plugins=self.plugins,
            data_dir=self.data_dir,
            on_event=on_event,
        )

    def bundle(self) -> Bundle:
        """This machine recorded again and redacted, as `gpu-doctor bundle` does (not written yet)."""
        from pathlib import Path

        from torch_gpu_doctor.bundle.build import record_and_bundle  # only when b records a bundle

        data_dir = self.data_dir or str(Path.cwd())
        return record_and_bundle(
            self.host, self.python, data_dir, include_identifiers=False, plugins=self.plugins
        )

    def smoke(
        self, report: Report, mode: SmokeMode, on_progress: Callable[[SmokeProgress], object]
    ) -> Report:
        """The report again, with the smoke test's figures and checks: the other facts are not re-read."""
        from torch_gpu_doctor.runner import rerun_with_smoke  # in the smoke worker, after the first paint
        from torch_gpu_doctor.smoke.run import SmokeRequest  # only when the smoke test runs

        if self.can_apply and self.breadcrumb is None:  # this machine: leave the crash-safe breadcrumb
            import os

            from torch_gpu_doctor.smoke.breadcrumb import (  # only when the smoke test runs
                Breadcrumb,
                state_dir,
            )

            self.breadcrumb = Breadcrumb(state_dir(os.environ))
            self.previous_smoke = self.breadcrumb.unfinished()
        previous, self.previous_smoke = self.previous_smoke, None  # reported once, by the first run

        def progress(item: SmokeProgress) -> None:
            on_progress(item)

        request = SmokeRequest(mode, self.breadcrumb, previous, progress)
        return rerun_with_smoke(report, self.host, self.python, request, self.plugins)


def target_python(report: Report, fallback: str) -> str:
    """The interpreter a fix installs into: the one the report diagnosed."""
    py = report.facts.python
    return fallback if isinstance(py, Unavailable) else py.executable
