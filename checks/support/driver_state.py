"""Helpers shared by the driver-state checks (secure boot, module build, reboot pending)."""

from __future__ import annotations

from torch_gpu_doctor.checks.support.driver import module_loaded
from torch_gpu_doctor.facts.driver import DriverFacts
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.modinfo import ModuleInfo
from torch_gpu_doctor.unavailable import Unavailable


def loaded_module_version(driver: DriverFacts | Unavailable) -> str | None:
    """The running module's version, from the kernel's own files (not from the user-space library)."""
    if isinstance(driver, Unavailable):
        return None
    for reading in driver.readings:
        if reading.source in ("sysfs", "procfs") and isinstance(reading.version, str):
            return reading.version
    return None


def nvidia_loaded(facts: Facts) -> bool | None:
    """Is the nvidia module loaded? /proc/modules first, the module's version files second."""
    loaded = module_loaded(facts.kernel, "nvidia")
    if loaded:
        return True
    if loaded_module_version(facts.driver) is not None:
        return True
    return loaded


def module_on_disk(facts: Facts) -> ModuleInfo | None:
    module = facts.nvidia_module
    if isinstance(module, Unavailable) or isinstance(module.modinfo, Unavailable):
        return None
    return module.modinfo


def running_kernel(facts: Facts) -> str | None:
    module = facts.nvidia_module
    if not isinstance(module, Unavailable) and isinstance(module.running_kernel, str):
        return module.running_kernel
    if not isinstance(facts.os, Unavailable) and isinstance(facts.os.kernel_release, str):
        return facts.os.kernel_release
    return None
