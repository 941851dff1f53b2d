"""Which number formats a compute capability runs fast (compat/precision.json), and the one to use.

Read by `gpu-doctor fit` (the default precision, bytes per value) and, later, a gpu.precision check. Compute
capabilities are compared as (major, minor): "8.9" >= "8.0", "10.0" > "9.0".
"""

from __future__ import annotations

import functools
import json
from typing import Any

from torch_gpu_doctor.compat import CompatDataError
from torch_gpu_doctor.package_data import package_text
from torch_gpu_doctor.records import dataclass

PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4", "fp4")
# what a model is trained or run in by default, best first, when the GPU runs it fast (the guides' advice:
# bf16 from Ampere, fp16 mixed precision on Volta and Turing, fp32 before)
PREFERRED = ("bf16", "fp16", "fp32")


@dataclass(frozen=True)
class PrecisionRow:
    precision: str
    bytes: float  # per value, as stored
    tensor_cores_from: tuple[int, int] | None  # None: no tensor-core path (fp32), or none of its own (int4)
    slow_on: tuple[tuple[int, int], ...]  # compute capabilities that run it at a fraction of FP32's rate
    source: str


def capability(text: str) -> tuple[int, int]:
    """ "8.9" -> (8, 9). Raises ValueError for anything else."""
    major, _, minor = text.strip().partition(".")
    return int(major), int(minor or 0)


def _row(raw: dict[str, Any]) -> PrecisionRow:
    try:
        name = raw["precision"]
        if name not in PRECISIONS:
            raise CompatDataError(f"precision.json: unknown precision {name!r}")
        start = raw["tensor_cores_from"]
        return PrecisionRow(
            name,
            float(raw["bytes"]),
            capability(start) if start is not None else None,
            tuple(capability(c) for c in raw["slow_on"]),
            str(raw["source"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise CompatDataError(f"precision.json: malformed row {raw!r}: {exc}") from exc


@functools.cache
def precision_table() -> dict[str, PrecisionRow]:
    text = package_text("torch_gpu_doctor.compat", "precision.json")
    rows = [_row(r) for r in json.loads(text)["precisions"]]
    table = {r.precision: r for r in rows}
    if set(table) != set(PRECISIONS):
        raise CompatDataError(f"precision.json: expected the rows {PRECISIONS}, found {tuple(table)}")
    return table


def bytes_per_value(precision: str) -> float:
    return precision_table()[precision].bytes


def runs_fast(precision: str, cc: tuple[int, int]) -> bool:
    """Full rate on this compute capability: on tensor cores where the format has them, else FP32's units."""
    row = precision_table()[precision]
    if cc in row.slow_on:
        return False
    if precision == "fp16" and cc == (6, 0):  # P100: FP16 at twice FP32, without tensor cores
        return True
    return row.tensor_cores_from is None or cc >= row.tensor_cores_from


def best_precision(cc: tuple[int, int] | None) -> str:
    """The precision to train or run in on this GPU: bf16 from Ampere, fp16 on Volta/Turing, else fp32.
    Without a GPU to ask (None): bf16, what today's GPUs and checkpoints use."""
    if cc is None:
        return "bf16"
    return next((p for p in PREFERRED if runs_fast(p, cc)), "fp32")
