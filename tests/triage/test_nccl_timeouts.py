"""A watchdog timeout on a one-element collective (ranks waiting at a barrier while one rank works alone) and
one on gradient traffic (a rank that stalled or took another path) ask for different first steps; each on its
real paste (tests/triage/pastes, MANIFEST.json)."""

from __future__ import annotations

from pathlib import Path

from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste

PASTES = Path(__file__).parent / "pastes"


def diagnosed(name: str) -> PasteDiagnosis:
    return diagnose_paste((PASTES / name).read_bytes(), name)


def test_a_one_element_collective_that_times_out_raises_the_process_group_timeout() -> None:
    """ColBERT#318: rank 0 clusters 111M points while the others wait in ALLREDUCE NumelIn=1 for 600000 ms;
    the thread's fix was a longer timeout in the process group."""
    d = diagnosed("colbert-318-nccl-watchdog-timeout-long-rank0-step.txt")
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "nccl.communication"
    assert "synchronisation point" in cause.finding.summary
    fix = cause.finding.remediation
    assert fix is not None and "init_process_group" in fix.text and "timeout=datetime.timedelta" in fix.text
    assert not any(c.argv[:2] == ("sudo", "dmesg") for c in fix.commands)


def test_a_gradient_sized_collective_that_times_out_looks_for_the_stalled_rank_first() -> None:
    """BasicSR#737: ALLREDUCE NumelIn=9801523 at SeqNum 808, mid-training: a rank stalled or diverged, and
    raising the timeout is the last resort."""
    d = diagnosed("basicsr-737-nccl-timeout.txt")
    cause = d.result.cause
    assert cause is not None and "one rank stalled or took another path" in cause.finding.summary
    fix = cause.finding.remediation
    assert fix is not None and fix.commands[0].argv[:2] == ("sudo", "dmesg")
