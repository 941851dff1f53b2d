"""A GPU's own first driver (compat/cuda_matrix.json `first_linux_driver`): Blackwell is driven from R570 on,
whatever the minor-version floor of a wheel's CUDA says (525.60.13 for CUDA 12). The source is NVIDIA's
open-gpu-kernel-modules README, whose compatible-GPU table lists B200 from 570.86.15 and the GeForce RTX 5090
from 570.86.16."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

from torch_gpu_doctor.compat import CompatDataError
from torch_gpu_doctor.compat.torch_parse import load_torch_releases, parse_torch_compat
from torch_gpu_doctor.triage.pipeline import diagnose_paste


def _raw() -> Any:
    text = resources.files("torch_gpu_doctor.compat").joinpath("cuda_matrix.json").read_text(encoding="utf-8")
    return json.loads(text)


def test_blackwell_first_drivers_and_the_rest_have_none() -> None:
    data = load_torch_releases()
    assert (data.first_linux_driver("10.0"), data.first_linux_driver("12.0")) == ("570.86.15", "570.86.16")
    assert data.first_linux_driver("12.1") is None  # GB10: not checked, so not said
    assert data.first_linux_driver("8.9") is None


@pytest.mark.parametrize(
    ("table", "source", "error"),
    [
        ({"9.0": "570.86.15"}, "s", "is not a driver of this row"),  # a capability of another architecture
        ({"12.0": "R570"}, "s", "is not a driver of this row"),
        ({"12.0": "570.86.16"}, None, "needs its first_driver_source"),
    ],
)
def test_a_first_driver_row_is_checked(table: dict[str, str], source: str | None, error: str) -> None:
    raw = _raw()
    row = next(a for a in raw["architecture_last_driver"] if a["architecture"] == "Blackwell")
    row["first_linux_driver"] = table
    row.pop("first_driver_source", None)
    if source is not None:
        row["first_driver_source"] = source
    with pytest.raises(CompatDataError, match=error):
        parse_torch_compat(raw)


BLACKWELL_LINUX = (
    "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
    "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n"
    '  File "/home/u/venv/lib/python3.11/site-packages/torch/cuda/__init__.py", line 262, in _lazy_init\n'
)


def test_an_unread_driver_is_asked_for_the_gpus_own_floor() -> None:
    d = diagnose_paste(BLACKWELL_LINUX.encode(), "paste.txt")
    fix = d.result.cause.finding.remediation if d.result.cause is not None else None
    assert fix is not None and "if the driver is ≥ 570.86.16" in fix.text
    assert "525.60.13" not in fix.text


def test_on_windows_the_branch_is_named() -> None:
    text = BLACKWELL_LINUX.replace(
        "/home/u/venv/lib/python3.11/site-packages", "C:\\Users\\u\\venv\\Lib\\site-packages"
    )
    d = diagnose_paste(text.replace("/", "\\").encode(), "paste.txt")
    fix = d.result.cause.finding.remediation if d.result.cause is not None else None
    assert fix is not None and "and of the R570 branch or newer for this GPU" in fix.text


def test_the_last_toolkit_that_compiles_for_a_capability() -> None:
    """CUDA 11.0 dropped sm_30, CUDA 12.0 sm_35 and sm_37 (compat/cuda_matrix.json, with its sources)."""
    data = load_torch_releases()
    assert [data.last_codegen_major(cc) for cc in ("3.0", "3.5", "3.7")] == [10, 11, 11]
    assert data.last_codegen_major("8.6") is None  # still compiled for


@pytest.mark.parametrize(
    ("table", "error"),
    [({"5.0": 10}, "is not of this row"), ({"3.5": 11}, "ends after its architecture")],
)
def test_an_earlier_codegen_end_is_checked(table: dict[str, int], error: str) -> None:
    raw = _raw()
    row = next(a for a in raw["architecture_last_driver"] if a["architecture"] == "Kepler")
    row["codegen_ended_earlier"] = table
    with pytest.raises(CompatDataError, match=error):
        parse_torch_compat(raw)
