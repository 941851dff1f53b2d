"""What the class tests of the blind sets ask of a corpus paste: its diagnosis, and its cause in three parts."""

from __future__ import annotations

from pathlib import Path

from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste

PASTES = Path(__file__).parent / "pastes"


def diagnosed(name: str) -> PasteDiagnosis:
    return diagnose_paste((PASTES / name).read_bytes(), name)


def cause_of(d: PasteDiagnosis) -> tuple[str, str, str]:
    """The cause's check, its summary, and its first command (or "" without one)."""
    cause = d.result.cause
    assert cause is not None
    fix = cause.finding.remediation
    first = fix.commands[0].display() if fix is not None and fix.commands else ""
    return cause.finding.check_id, cause.finding.summary, first
