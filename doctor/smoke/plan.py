"""How long each step may take before the watchdog calls it a hang, per mode, and the child's config line.

Budgets are generous ceilings, not targets: the standard mode takes under 15 s on one GPU, but a first CUDA call
can spend tens of seconds loading kernels (lazy loading, JIT from PTX), and a torch import from a network
filesystem is slow. A kernel that never returns is caught by its step's budget; a run that crawls through many
steps is caught by the total.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from torch_gpu_doctor.facts.smoke import SmokeMode
from torch_gpu_doctor.host.base import StepBudgets
from torch_gpu_doctor.records import dataclass

MIB = 1 << 20
# What each mode does and how big: sent to the child (doctor/probes/smoke.py) in its config line.
SIZES: dict[SmokeMode, dict[str, Any]] = {
    SmokeMode.QUICK: {
        "memory_share": 0.10,
        "transfer_bytes": 64 * MIB,
        "transfer_copies": 6,
        "transfer_kinds": ("h2d_pinned", "d2h_pinned"),
        "copy_bytes": 256 * MIB,
        "copy_repeats": 6,
        "matmul_n": 2048,
        "matmul_check_n": 256,
        "matmul_min_s": 0.05,
        "precisions": ("fp32", "fp16"),
        "conv": False,
        "train_steps": 0,
        "peer_bytes": 64 * MIB,
        "all_pairs": False,
        "allreduce_bytes": 16 * MIB,
        "allreduce_iters": 5,
        "cpu_n": 512,
    },
    SmokeMode.STANDARD: {
        "memory_share": 0.50,
        "transfer_bytes": 256 * MIB,
        "transfer_copies": 10,
        "transfer_kinds": ("h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable"),
        "copy_bytes": 1024 * MIB,
        "copy_repeats": 10,
        "matmul_n": 8192,
        "matmul_check_n": 512,
        "matmul_min_s": 0.25,
        "precisions": ("fp32", "tf32", "fp16", "bf16"),
        "conv": True,
        "train_steps": 30,
        "peer_bytes": 256 * MIB,
        "all_pairs": False,
        "allreduce_bytes": 64 * MIB,
        "allreduce_iters": 10,
        "cpu_n": 1024,
    },
    SmokeMode.DEEP: {
        "memory_share": 0.85,
        "transfer_bytes": 1024 * MIB,
        "transfer_copies": 20,
        "transfer_kinds": ("h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable"),
        "copy_bytes": 2048 * MIB,
        "copy_repeats": 20,
        "matmul_n": 8192,
        "matmul_check_n": 1024,
        "matmul_min_s": 1.0,
        "precisions": ("fp32", "tf32", "fp16", "bf16"),
        "conv": True,
        "train_steps": 100,
        "peer_bytes": 1024 * MIB,
        "all_pairs": True,
        "allreduce_bytes": 256 * MIB,
        "allreduce_iters": 20,
        "cpu_n": 2048,
    },
}


_STEP_S = {
    "import": 120.0,
    "cuda_init": 90.0,
    "memory": 60.0,
    "transfer": 30.0,
    "device_copy": 30.0,
    "matmul": 60.0,  # includes cuBLAS initialisation on first use
    "conv": 90.0,  # cuDNN loads its engines on first use
    "train": 60.0,
    "peer_access": 20.0,
    "peer_copy": 30.0,
    "all_reduce": 150.0,  # every rank imports torch and initialises NCCL; the child gives them 100 s
    "cpu_matmul": 60.0,
}
_SCALE = {SmokeMode.QUICK: 1.0, SmokeMode.STANDARD: 1.0, SmokeMode.DEEP: 3.0}
_TOTAL_S = {SmokeMode.QUICK: 300.0, SmokeMode.STANDARD: 600.0, SmokeMode.DEEP: 1800.0}
PER_EXTRA_GPU_S = {SmokeMode.QUICK: 60.0, SmokeMode.STANDARD: 120.0, SmokeMode.DEEP: 400.0}


def budgets(mode: SmokeMode, gpus: int = 1) -> StepBudgets:
    scale = _SCALE[mode]
    return StepBudgets(
        startup_s=60.0,
        steps={name: seconds * scale for name, seconds in _STEP_S.items()},
        default_step_s=30.0,
        total_s=_TOTAL_S[mode] + PER_EXTRA_GPU_S[mode] * max(0, gpus - 1),
    )


def child_config(mode: SmokeMode, gpus: Sequence[GpuAddress] = (), step_file: str | None = None) -> str:
    """The child's one argument: the mode, its sizes, NVML's NVIDIA GPUs (UUID and PCI address: torch before
    the PCI fields of its device properties finds each GPU's link through them), and the file in which it
    writes each step before it starts it (the breadcrumb's; None: no breadcrumb)."""
    known = [{"uuid": g.uuid, "bdf": g.bdf} for g in gpus]
    return json.dumps({"mode": mode.value, "sizes": SIZES[mode], "gpus": known, "step_file": step_file})


@dataclass(frozen=True)
class GpuAddress:
    uuid: str | None  # "GPU-8ee5f1e0-..." as NVML gives it
    bdf: str | None  # "0000:01:00.0"


def steps_per_gpu(mode: SmokeMode) -> int:
    """memory, each transfer, the device copy, each matmul precision, and conv and train where the mode has them."""
    sizes = SIZES[mode]
    return (
        2
        + len(sizes["transfer_kinds"])
        + len(sizes["precisions"])
        + bool(sizes["conv"])
        + bool(sizes["train_steps"])
    )
