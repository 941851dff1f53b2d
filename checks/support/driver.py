"""Helpers shared by the driver checks: how they read and show the driver facts."""

from __future__ import annotations

from torch_gpu_doctor.facts.describe import fact
from torch_gpu_doctor.facts.driver import DriverFacts
from torch_gpu_doctor.facts.kernel import KernelFacts
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.driver_install import OPEN_MODULE_MIN_CC
from torch_gpu_doctor.model import Evidence
from torch_gpu_doctor.unavailable import Unavailable


def is_wsl(facts: Facts) -> bool:
    return not isinstance(facts.os, Unavailable) and facts.os.is_wsl


def driver_evidence(driver: DriverFacts) -> list[Evidence]:
    items = [fact(f"driver version ({r.source})", r.version, r.origin) for r in driver.readings]
    items.append(
        fact("newest CUDA the driver supports", driver.cuda_version, driver.cuda_version_source or "-")
    )
    items.append(fact("kernel module flavour", driver.kernel_module_flavor, "/proc/driver/nvidia/version"))
    items.append(fact("user-space NVML library", driver.userspace_library, "libnvidia-ml.so.1"))
    return items


def module_loaded(kernel: KernelFacts | Unavailable, name: str) -> bool | None:
    if isinstance(kernel, Unavailable) or isinstance(kernel.modules, Unavailable):
        return None
    return any(m.name == name and m.loaded for m in kernel.modules)


def before_turing(cc: object) -> bool:
    if not isinstance(cc, str) or "." not in cc:
        return False
    major, _, minor = cc.partition(".")
    return major.isdigit() and minor.isdigit() and (int(major), int(minor)) < OPEN_MODULE_MIN_CC


def capabilities(facts: Facts) -> list[str]:
    return [g.compute_capability for g in facts.nvidia_gpus if isinstance(g.compute_capability, str)]
