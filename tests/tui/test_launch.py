"""The TUI's exit code: the last report's, or an internal error when the app or a diagnosis broke."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from tests.tui.conftest import report_of
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
