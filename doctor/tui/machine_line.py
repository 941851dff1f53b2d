"""The machine in one line for the header: GPUs, driver, torch build, target Python (pure, no UI).

The full line ("NVIDIA GeForce RTX 3080 (compute capability 8.6, 10 GiB) · driver 536.40 (CUDA ≤ 12.2) ·
torch 2.13.0+cpu · Python 3.10.12 /usr/bin/python3") is 106 columns: the header says less, step by step,
until it fits the terminal, and keeps the four things it names to the end (the Python path last of all).
"""

from __future__ import annotations

from torch_gpu_doctor.facts.describe import gib, gpu_inventory
from torch_gpu_doctor.facts.gpus import Gpu
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.torch import TorchPackages
from torch_gpu_doctor.model import escape_controls
from torch_gpu_doctor.unavailable import Unavailable

SEPARATOR = " · "  # between the head and the machine, and between the machine's parts
DETAIL_LEVELS = 4  # 0: everything; 3: GPU names, driver, torch and the interpreter's path only
_VENDOR_WORDS = ("NVIDIA ", "GeForce ", "AMD ", "Radeon ")


def machine_line(facts: Facts, level: int = 0) -> str:
    """The machine at one of DETAIL_LEVELS (0 says most)."""
    parts = (_gpus(facts, level), _driver(facts, level), _torch(facts), _python(facts, level))
    return escape_controls(SEPARATOR.join(parts))  # names and paths come from the machine: shown, never sent


def header_line(heads: tuple[str, ...], facts: Facts | None, width: int) -> tuple[str, str]:
    """(the bold head, the rest) of the header in at most `width` columns where that can be done: each head
    from the longest (the last may be "": the machine alone) with the machine line at the most detail that
    fits, then the interpreter's path cut from the left ("…/.venv/bin/python"). The rest starts with the
    separator when there is a head."""
    if facts is None:
        return heads[0], SEPARATOR + (
            "reading the capture…" if "replay" in heads[0] else "reading this machine…"
        )
    for head in heads:
        for level in range(DETAIL_LEVELS):
            rest = (SEPARATOR if head else "") + machine_line(facts, level)
            if len(head) + len(rest) <= width:
                return head, rest
    head = heads[-1]
    rest = (SEPARATOR if head else "") + machine_line(facts, DETAIL_LEVELS - 1)
    over = len(head) + len(rest) - width
    executable = _executable(facts)
    if executable and over > 0 and len(executable) - over - 1 >= 12:  # still names the environment's folder
        rest = rest[: len(rest) - len(executable)] + "…" + executable[over + 1 :]
    return head, rest


def _gpus(facts: Facts, level: int) -> str:
    if not facts.gpus:
        return facts.jetson_board.integrated_gpu() if facts.jetson_board is not None else "no GPU found"
    return gpu_inventory(facts.gpus, lambda g: _gpu(g, level))


def _gpu(gpu: Gpu, level: int) -> str:
    name = gpu.name if isinstance(gpu.name, str) else "unknown GPU"
    if level >= 1:
        for word in _VENDOR_WORDS:
            name = name.replace(word, "")
    extras = []
    if isinstance(gpu.compute_capability, str) and level <= 2:
        extras.append(
            f"compute capability {gpu.compute_capability}" if level == 0 else gpu.compute_capability
        )
    if isinstance(gpu.memory_total_bytes, int) and level <= 1:
        extras.append(gib(gpu.memory_total_bytes))
    return f"{name} ({', '.join(extras)})" if extras else name


def _driver(facts: Facts, level: int) -> str:
    if facts.jetson_board is not None:
        return facts.jetson_board.driver_words()
    driver = facts.driver
    if isinstance(driver, Unavailable) or not isinstance(driver.version, str):
        return "NVIDIA driver: none loaded" if facts.nvidia_gpus else "no NVIDIA driver"
    cuda = f" (CUDA ≤ {driver.cuda_version})" if isinstance(driver.cuda_version, str) and level <= 1 else ""
    return f"driver {driver.version}{cuda}"


def _torch(facts: Facts) -> str:
    packages = facts.torch_packages
    if not isinstance(packages, TorchPackages):
        return "torch: unknown"
    if packages.version is None:
        return "torch not installed"
    return f"torch {packages.version}"


def _executable(facts: Facts) -> str | None:
    py = facts.python
    return None if isinstance(py, Unavailable) else py.executable


def _python(facts: Facts, level: int) -> str:
    py = facts.python
    if isinstance(py, Unavailable):
        return "Python: unknown"
    if level >= 3:
        return py.executable
    version = f"Python {py.version}" if isinstance(py.version, str) else "Python"
    return f"{version} {py.executable}"
