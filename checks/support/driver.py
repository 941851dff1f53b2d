"""Helpers shared by the driver checks: how they read and show the driver facts."""

from __future__ import annotations

from torch_gpu_doctor.compat import load_matrix
from torch_gpu_doctor.compat.torch_releases import version_key
from torch_gpu_doctor.facts.describe import fact
from torch_gpu_doctor.facts.driver import DriverFacts
from torch_gpu_doctor.facts.kernel import KernelFacts
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.driver_install import OPEN_MODULE_MIN_CC
from torch_gpu_doctor.fixes.target import driver_system
from torch_gpu_doctor.model import Evidence
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Unavailable


@dataclass(frozen=True)
class ForwardCompat:
    """A libcuda reporting a newer CUDA than its driver's branch runs: a forward-compatibility copy."""

    reported: str  # the CUDA the loaded libcuda reports ("11.8")
    own: str  # the newest CUDA the driver's branch runs itself ("11.4")
    needed: str  # the oldest driver that runs the reported CUDA itself ("520.61.05")


def forward_compat(facts: Facts) -> ForwardCompat | None:
    """The CUDA the loaded libcuda reports (nvidia-smi's 'CUDA Version', NVML, torch's driver warning) above what
    the driver's own branch supports: a forward-compatibility libcuda (cuda-compat, a CUDA image's
    /usr/local/cuda/compat) is loaded in place of the driver's. None where the driver runs that CUDA itself,
    where the CUDA was only looked up in the table, or where the table cannot say. Linux only, by branch: the
    table's minimum is the toolkit's bundled driver, and earlier drivers of the same branch already report its
    CUDA (Windows 535.98 shows 12.2, whose minimum is 536.25); cuda-compat is a Linux package."""
    driver = facts.driver
    if isinstance(driver, Unavailable) or not isinstance(driver.version, str) or driver.is_jetson:
        return None
    reported = driver.cuda_version
    if not isinstance(reported, str) or driver.cuda_version_source == "compat table":
        return None
    if driver_system(facts) != "linux":
        return None
    matrix = load_matrix()
    needed = matrix.min_driver_for(reported, "linux")
    own = matrix.max_cuda_for_driver(driver.version, "linux")
    if needed is None or own is None or version_key(driver.version)[0] >= version_key(needed)[0]:
        return None
    return ForwardCompat(reported, own, needed)


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
