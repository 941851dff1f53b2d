"""The machine in one line for the header: GPUs, driver, torch build, target Python (pure, no UI)."""

from __future__ import annotations

from gpu_doctor.describe import gpu_inventory
from gpu_doctor.facts.model import Facts
from gpu_doctor.facts.torch import TorchPackages
from gpu_doctor.unavailable import Unavailable


def machine_line(facts: Facts) -> str:
    return " · ".join((_gpus(facts), _driver(facts), _torch(facts), _python(facts)))


def _gpus(facts: Facts) -> str:
    return gpu_inventory(facts.gpus) if facts.gpus else "no GPU found"


def _driver(facts: Facts) -> str:
    driver = facts.driver
    if isinstance(driver, Unavailable) or not isinstance(driver.version, str):
        return "NVIDIA driver: none loaded" if facts.nvidia_gpus else "no NVIDIA driver"
    cuda = f" (CUDA ≤ {driver.cuda_version})" if isinstance(driver.cuda_version, str) else ""
    return f"driver {driver.version}{cuda}"


def _torch(facts: Facts) -> str:
    packages = facts.torch_packages
    if not isinstance(packages, TorchPackages):
        return "torch: unknown"
    if packages.version is None:
        return "torch not installed"
    return f"torch {packages.version}"


def _python(facts: Facts) -> str:
    py = facts.python
    if isinstance(py, Unavailable):
        return "Python: unknown"
    version = f"Python {py.version}" if isinstance(py.version, str) else "Python"
    return f"{version} {py.executable}"
