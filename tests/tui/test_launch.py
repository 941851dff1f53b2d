"""The TUI's exit code: the last report's, or an internal error when the app or a diagnosis broke."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.tui.conftest import HOSTS, report_of
from torch_gpu_doctor.exit_codes import ExitCode
from torch_gpu_doctor.tui.launch import _exit_code


def _app(**fields: Any) -> Any:
    defaults: dict[str, Any] = {"return_code": 0, "diagnosis_failed": False, "last_report": None}
    return SimpleNamespace(**{**defaults, **fields})


def test_the_last_reports_exit_code() -> None:
    assert _exit_code(_app(last_report=report_of("egpu-not-authorized"))) == ExitCode.FINDINGS
    assert _exit_code(_app(last_report=report_of("rtx4090-workstation-healthy"))) == ExitCode.OK


def test_a_crash_is_an_internal_error_whatever_the_report_said() -> None:
    healthy = report_of("rtx4090-workstation-healthy")
    assert _exit_code(_app(return_code=1, last_report=healthy)) == ExitCode.INTERNAL
    assert _exit_code(_app(diagnosis_failed=True)) == ExitCode.INTERNAL


def test_quitting_before_the_first_report_is_an_interruption() -> None:
    assert _exit_code(_app()) == ExitCode.INTERRUPTED


def test_quitting_stops_what_is_still_running(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 21: a probe or the smoke test still running when the person quits must not outlive the doctor
    (children run in their own sessions). Here the app "quits" while a child it started sleeps on."""
    import os
    import subprocess

    from torch_gpu_doctor.host import process
    from torch_gpu_doctor.host.recorded import RecordedHost
    from torch_gpu_doctor.model import Status
    from torch_gpu_doctor.tui import launch
    from torch_gpu_doctor.tui.app import DoctorApp

    started: list[subprocess.Popen[bytes]] = []

    def run(self: Any) -> None:
        child = process.spawn(["sleep", "600"], os.environ)
        assert not isinstance(child, process.NotStarted)
        started.append(child)

    monkeypatch.setattr(DoctorApp, "run", run)
    host = RecordedHost(HOSTS / "rtx4090-workstation-healthy")
    code = launch.run_tui(host, "python3", replay=True, data_dir=None, plugins=False, fail_on=Status.FAIL)
    assert code == ExitCode.INTERRUPTED
    assert started and started[0].wait(timeout=30) is not None  # ended: stopped by run_tui, not by us
