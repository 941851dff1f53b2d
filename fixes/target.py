"""What the fixes are for: the diagnosed interpreter's platform and Python, the installed torch, the GPUs."""

from __future__ import annotations

from torch_gpu_doctor.compat import load_matrix
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command
from torch_gpu_doctor.unavailable import Unavailable

_LOCAL = lazy(r"\+.*$")


def target_platform(facts: Facts) -> str | None:
    """The wheel platform of the diagnosed interpreter: linux_x86_64, linux_aarch64 or windows."""
    py = facts.python
    if isinstance(py, Unavailable) or not isinstance(py.machine, str):
        return None
    system = py.system if isinstance(py.system, str) else "Linux"
    if system == "Windows":
        return "windows"
    machine = py.machine.lower()
    if system == "Linux" and machine in ("x86_64", "amd64"):
        return "linux_x86_64"
    if system == "Linux" and machine in ("aarch64", "arm64"):
        return "linux_aarch64"
    return None


def platform_gap(facts: Facts) -> str | None:
    """Why no wheel platform is known for the diagnosed interpreter, naming the fact (and why it is missing);
    None when target_platform() knows it."""
    if target_platform(facts) is not None:
        return None
    py = facts.python
    if isinstance(py, Unavailable):
        return f"the diagnosed Python is unknown ({py})"
    if not isinstance(py.machine, str):
        return f"the machine architecture of {py.executable} is unknown ({py.machine})"
    system = py.system if isinstance(py.system, str) else "an unknown OS"
    return (
        f"{py.executable} runs on {system} {py.machine}, for which PyTorch publishes no CUDA wheels "
        "(gpu-doctor chooses wheels for Linux x86_64, Linux aarch64 and Windows)"
    )


def python_minor(facts: Facts) -> str | None:
    py = facts.python
    if isinstance(py, Unavailable) or not isinstance(py.version, str):
        return None
    return ".".join(py.version.split(".")[:2])


def installed_torch(facts: Facts) -> str | None:
    """The installed torch version without its local tag ("2.5.1"), or None (also for a paste's placeholder of a
    torch whose version it does not show: no release is "closest" to it; blind set 22 got torch 1.13.1)."""
    packages = facts.torch_packages
    if isinstance(packages, Unavailable) or packages.version is None or not packages.version[:1].isdigit():
        return None
    return _LOCAL.sub("", packages.version)


def installed_variant(facts: Facts) -> str | None:
    """The installed torch's variant as the wheel index names it: cu126, rocm6.2 or cpu."""
    packages = facts.torch_packages
    if isinstance(packages, Unavailable) or packages.version is None:
        return None
    if packages.cuda is not None:
        return "cu" + "".join(packages.cuda.split(".")[:2])
    if packages.hip is not None:
        return "rocm" + ".".join(packages.hip.split(".")[:2])
    return "cpu"


def gpu_capabilities(facts: Facts) -> list[str]:
    """The distinct compute capabilities of the NVIDIA GPUs the driver exposes (all of them when none is
    exposed), in GPU order: identical GPUs are judged once (128 H100s are one "9.0", not 128, issue 21)."""
    usable = [g for g in facts.nvidia_gpus if g.nvml_index is not None] or list(facts.nvidia_gpus)
    return list(dict.fromkeys(g.compute_capability for g in usable if isinstance(g.compute_capability, str)))


def driver_system(facts: Facts) -> str:
    """Whose driver numbering applies: "windows" under WSL2 and on Windows, else "linux"."""
    os_facts = facts.os
    if not isinstance(os_facts, Unavailable) and (os_facts.is_wsl or os_facts.system == "Windows"):
        return "windows"
    return "windows" if target_platform(facts) == "windows" else "linux"


def on_windows(facts: Facts) -> bool:
    """The diagnosed machine runs Windows itself (WSL is Linux: its own os facts say is_wsl)."""
    return not isinstance(facts.os, Unavailable) and facts.os.system == "Windows"


def python_command(facts: Facts) -> str:
    """The interpreter to put in a command: the diagnosed one, else `python` (a paste that does not say)."""
    python = facts.python
    return python.executable if not isinstance(python, Unavailable) and python.executable else "python"


def pip_reinstall(facts: Facts, *args: str, note: str = "") -> Command:
    """`python -m pip install --force-reinstall ARGS` with the paste's or the machine's own interpreter."""
    return Command((python_command(facts), "-m", "pip", "install", "--force-reinstall", *args), note=note)


def driver_max_cuda(facts: Facts) -> str | None:
    """The newest CUDA the driver runs: what it reports, or, for a driver installed but not loaded, what its
    libraries' version gives (compat table): the CUDA it will run once its module loads."""
    driver = facts.driver
    if isinstance(driver, Unavailable):
        return None
    if isinstance(driver.cuda_version, str):
        return driver.cuda_version
    version = next(
        (v for v in (driver.userspace_version, driver.installed_module_version) if isinstance(v, str)), None
    )
    return load_matrix().max_cuda_for_driver(version, driver_system(facts)) if version else None
