"""Small shared phrasing helpers so every check words GPUs and sizes the same way."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from torch_gpu_doctor.facts.gpus import Gpu
from torch_gpu_doctor.model import Evidence
from torch_gpu_doctor.unavailable import Maybe, Unavailable


def gib(n: int) -> str:
    return f"{n / 2**30:.0f} GiB"


def gpu_label(gpu: Gpu) -> str:
    """`NVIDIA H100 at 0000:01:00.0`, or just the name where the PCI address is unknown (a pasted report)."""
    name = gpu.name if isinstance(gpu.name, str) else "unknown GPU"
    return f"{name} at {gpu.bdf}" if isinstance(gpu.bdf, str) else name


def gpu_inventory(gpus: tuple[Gpu, ...], one: Callable[[Gpu], str] | None = None) -> str:
    """`2× NVIDIA H100 80GB HBM3 (compute capability 9.0, 80 GiB)`; `one` words a single GPU otherwise."""
    parts = []
    for text, n in Counter((one or _one)(g) for g in gpus).items():
        parts.append(f"{n}× {text}" if n > 1 else text)
    return ", ".join(parts)


def _one(gpu: Gpu) -> str:
    name = gpu.name if isinstance(gpu.name, str) else "unknown GPU"
    extras = []
    if isinstance(gpu.compute_capability, str):
        extras.append(f"compute capability {gpu.compute_capability}")
    if isinstance(gpu.memory_total_bytes, int):
        extras.append(gib(gpu.memory_total_bytes))
    return f"{name} ({', '.join(extras)})" if extras else name


def shown(value: Maybe[object]) -> str:
    return f"unavailable ({value})" if isinstance(value, Unavailable) else str(value)


def fact(label: str, value: Maybe[object], source: str) -> Evidence:
    return Evidence(label, shown(value), source)
