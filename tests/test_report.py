"""Exit codes from findings (DESIGN §4): threshold, incomplete runs, required checks."""

from __future__ import annotations

import pytest

from torch_gpu_doctor.exit_codes import ExitCode
from torch_gpu_doctor.model import CheckSpec, Explanation, Finding, Status
from torch_gpu_doctor.report import summarize

EXPLAIN = Explanation("w", "y", "f")
SPECS = (
    CheckSpec("a.required", "t", "a", EXPLAIN, required=True),
    CheckSpec("a.optional", "t", "a", EXPLAIN),
)


def _run(*statuses: tuple[str, Status], fail_on: Status = Status.FAIL) -> int:
    findings = tuple(Finding(cid, status, "s") for cid, status in statuses)
    return summarize(findings, SPECS, fail_on).exit_code


@pytest.mark.parametrize(
    ("statuses", "fail_on", "code"),
    [
        ((("a.required", Status.PASS), ("a.optional", Status.SKIP)), Status.FAIL, ExitCode.OK),
        ((("a.required", Status.PASS), ("a.optional", Status.WARN)), Status.FAIL, ExitCode.OK),
        ((("a.required", Status.PASS), ("a.optional", Status.WARN)), Status.WARN, ExitCode.FINDINGS),
        ((("a.required", Status.FAIL), ("a.optional", Status.CRASH)), Status.FAIL, ExitCode.FINDINGS),
        ((("a.required", Status.PASS), ("a.optional", Status.CRASH)), Status.FAIL, ExitCode.INCOMPLETE),
        ((("a.required", Status.UNKNOWN),), Status.FAIL, ExitCode.INCOMPLETE),
        ((("a.optional", Status.UNKNOWN),), Status.FAIL, ExitCode.OK),
        ((("probe.nvml", Status.CRASH),), Status.FAIL, ExitCode.INCOMPLETE),
    ],
)
def test_exit_codes(statuses: tuple[tuple[str, Status], ...], fail_on: Status, code: ExitCode) -> None:
    assert _run(*statuses, fail_on=fail_on) == code


def test_worst_status_is_reported() -> None:
    findings = (Finding("a.optional", Status.WARN, "s"), Finding("a.required", Status.PASS, "s"))
    assert summarize(findings, SPECS, Status.FAIL).status is Status.WARN
