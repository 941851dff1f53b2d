"""Libraries with a CUDA runtime of their own (compat/runtime_builds.json): each row sourced, its lines in order,
a malformed row refused, and a driver too old for CTranslate2's CUDA 12 build answered with its last CUDA 11
build, not another torch (blind set 28: whisperX#720, torch 2.0.0+cu118 working beside it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from torch_gpu_doctor.compat import CompatDataError
from torch_gpu_doctor.compat.runtime_builds import load_runtime_builds, parse_runtime_builds, runtime_library
from torch_gpu_doctor.triage.pipeline import diagnose_paste

PASTES = Path(__file__).resolve().parents[1] / "triage" / "pastes"


def test_every_row_is_sourced_and_its_lines_go_oldest_first() -> None:
    for library in load_runtime_builds():
        assert library.source and library.modules
        firsts = [tuple(int(p) for p in line.first.split(".")) for line in library.lines]
        assert firsts == sorted(firsts), library.name
        assert library.lines[-1].last is None  # the current line has no last release yet


def test_ctranslate2s_lines_by_cuda_and_cudnn() -> None:
    ct2 = runtime_library("faster_whisper")
    assert ct2 is not None and ct2 is runtime_library("CTranslate2 (faster-whisper's engine)")
    assert ct2.last_for("11") == "3.24.0"
    assert ct2.last_for("12", "8") == "4.4.0"
    assert ct2.last_for("10") is None
    assert runtime_library("torch") is None


@pytest.mark.parametrize(
    "row",
    [
        {"name": "x", "modules": ["x"], "shown_as": "X", "lines": [], "source": "s"},
        {
            "name": "x",
            "modules": ["x"],
            "shown_as": "X",
            "lines": [{"from": "1.0", "cuda": "11"}],
            "source": "s",
        },
        {
            "name": "x",
            "shown_as": "X",
            "lines": [{"from": "1", "cuda": "1", "cudnn": "1", "last": None}],
            "source": "s",
        },
    ],
)
def test_a_malformed_row_is_refused(row: dict[str, Any]) -> None:
    with pytest.raises(CompatDataError):
        parse_runtime_builds({"libraries": [row]})


def test_a_driver_too_old_for_ctranslate2_pins_its_cuda_11_build_first() -> None:
    d = diagnose_paste((PASTES / "whisperx-720-ct2-driver-insufficient.txt").read_bytes(), "x")
    cause = d.result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert cause.finding.summary.startswith("The NVIDIA driver is older than the CUDA runtime of CTranslate2")
    first = cause.finding.remediation.commands[0].argv
    assert first == ("python", "-m", "pip", "install", "ctranslate2==3.24.0")
