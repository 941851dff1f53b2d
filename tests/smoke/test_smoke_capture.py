"""`capture --smoke` stores the streamed run; `--root` replays it line by line, and says when there is none."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.smoke.lines import healthy_h100
from torch_gpu_doctor.facts.smoke import SmokeMode, SmokeRun, parse_smoke
from torch_gpu_doctor.host.base import CommandStatus, StepBudgets
from torch_gpu_doctor.host.real import RealHost
from torch_gpu_doctor.host.recorded import CaptureError, RecordedHost
from torch_gpu_doctor.host.recording import RecordingHost

BUDGETS = StepBudgets(1.0, {}, 1.0, 1.0)


def test_a_captured_smoke_run_replays_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    live = healthy_h100()
    monkeypatch.setattr(RealHost, "run_smoke", lambda *_args: live)
    recorder = RecordingHost(RealHost())
    assert recorder.run_smoke("python3", "{}", BUDGETS, None) == live
    recorder.write(tmp_path / "cap", "python3")
    seen: list[str] = []
    replayed = RecordedHost(tmp_path / "cap").run_smoke("python3", "{}", BUDGETS, seen.append)
    assert replayed == live and seen == list(live.lines)
    run = parse_smoke(replayed, SmokeMode.STANDARD)
    assert isinstance(run, SmokeRun) and run == parse_smoke(live, SmokeMode.STANDARD)


def test_a_capture_without_a_smoke_run_says_so(tmp_path: Path) -> None:
    RecordingHost(RealHost()).write(tmp_path / "cap", "python3")
    run = RecordedHost(tmp_path / "cap").run_smoke("python3", "{}", BUDGETS, None)
    assert run.status is CommandStatus.NOT_RECORDED
    assert "capture --smoke" in str(parse_smoke(run, SmokeMode.QUICK))


def test_a_damaged_smoke_file_is_a_capture_error(tmp_path: Path) -> None:
    RecordingHost(RealHost()).write(tmp_path / "cap", "python3")
    (tmp_path / "cap" / "smoke.json").write_text('{"argv": [], "status": "exploded"}')
    with pytest.raises(CaptureError, match=r"smoke\.json"):
        RecordedHost(tmp_path / "cap")
