"""One measured figure beside its expectation and verdict (computed by checks/smoke_figures.py)."""

from __future__ import annotations

from dataclasses import dataclass

from torch_gpu_doctor.model import Status


@dataclass(frozen=True)
class Figure:
    key: str  # h2d_pinned, device_copy, matmul_fp16, peer_copy 0->1, all_reduce
    device: int | None
    label: str
    value: float
    unit: str  # "GB/s" | "TFLOPS"
    expected_min: float | None  # None: nothing to compare with (no datasheet entry, no link figure)
    expectation: str  # where the expectation comes from, in words
    status: Status  # PASS or WARN; a missing expectation is PASS with the reason in `expectation`
    sentence: str  # the figure, its expectation and the verdict, as the user reads it
