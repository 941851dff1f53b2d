"""How long each step may take before the watchdog calls it a hang, per mode, and the child's config line.

Budgets are generous ceilings, not targets: the standard mode takes under 15 s on one GPU, but a first CUDA call
can spend tens of seconds loading kernels (lazy loading, JIT from PTX), and a torch import from a network
filesystem is slow. A kernel that never returns is caught by its step's budget; a run that crawls through many
steps is caught by the total.
"""

from __future__ import annotations

import json

from gpu_doctor.host.streaming import StepBudgets
from gpu_doctor.smoke.model import SmokeMode

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


def child_config(mode: SmokeMode) -> str:
    """The child's one argument."""
    return json.dumps({"mode": mode.value})
