"""Helpers shared by the gpu.* health checks: which GPUs NVML answered for, and how to name them."""

from __future__ import annotations

from collections.abc import Iterable

from torch_gpu_doctor.checks.support.driver import is_wsl
from torch_gpu_doctor.facts.describe import gpu_label
from torch_gpu_doctor.facts.gpu_health import GpuHealth
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.model import Finding, Status
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

NO_DRIVER = ("NVMLError_LibraryNotFound", "NVMLError_DriverNotLoaded")


def gpu_name(facts: Facts, index: int, bdf: Maybe[str]) -> str:
    """`NVIDIA A100-SXM4-80GB at 0000:9e:00.0`, or `GPU 2` when nothing better is known."""
    gpu = next((g for g in facts.nvidia_gpus if g.nvml_index == index), None)
    if gpu is not None:
        return gpu_label(gpu)
    return bdf if isinstance(bdf, str) else f"GPU {index}"


def health_or_finding(cid: str, facts: Facts) -> tuple[GpuHealth, ...] | Finding:
    """The per-GPU health answers, or the finding that says why there are none to judge."""
    if is_wsl(facts):
        return Finding(cid, Status.SKIP, "In WSL2 these GPU settings belong to the Windows driver.")
    if not facts.nvidia_gpus:
        return Finding(cid, Status.SKIP, "No NVIDIA GPU here.")
    health = facts.gpu_health
    if isinstance(health, Unavailable):
        if health.detail in NO_DRIVER:  # nothing to read until a driver runs: driver.installed says so
            loaded = not isinstance(facts.driver, Unavailable) and isinstance(facts.driver.version, str)
            if (
                loaded
            ):  # the module runs but NVML is missing here (a container without the utility capability)
                return Finding(cid, Status.SKIP, "NVML is not available here to ask (see driver.nvml).")
            return Finding(cid, Status.SKIP, "No NVIDIA driver is running to ask (see driver.installed).")
        return Finding(cid, Status.UNKNOWN, f"NVML did not answer ({health}); see driver.nvml.")
    if not health:
        return Finding(cid, Status.UNKNOWN, "NVML lists no GPU although an NVIDIA GPU is on the PCI bus.")
    return health


def all_unsupported(values: Iterable[object]) -> bool:
    items = list(values)
    return bool(items) and all(isinstance(v, Unavailable) and v.reason is Reason.NOT_SUPPORTED for v in items)
