"""Removing a Linux NVIDIA driver that was installed inside WSL, per distribution family.

Only the driver goes: the CUDA toolkit (`cuda-toolkit-12-x`) and the NVIDIA Container Toolkit belong in WSL.
When the installed packages are known they are named; otherwise the package manager is asked which package owns
the library file.
"""

from __future__ import annotations

from torch_gpu_doctor.facts.platform import OsFacts
from torch_gpu_doctor.fixes.distro import filled, recipe_for_files
from torch_gpu_doctor.model import Command, Remediation, Target
from torch_gpu_doctor.unavailable import Unavailable

_KEEP = (
    "Keep the CUDA toolkit (cuda-toolkit-12-x, not `cuda` or `cuda-drivers`) and the NVIDIA Container Toolkit: "
    "they are right for WSL. Open a new shell afterwards."
)


def remove_linux_driver(
    os_facts: OsFacts | Unavailable, packages: tuple[str, ...], files: tuple[str, ...]
) -> Remediation:
    how = recipe_for_files(os_facts, files)
    commands: tuple[Command, ...]
    if packages:
        commands = (Command((*how.remove, *packages)),) if how.remove is not None else ()
    else:
        commands = tuple(filled(how.owner, path=f) for f in files[:2]) if how.owner is not None else ()
    what = (
        "Remove the Linux NVIDIA driver packages from this WSL distribution"
        if packages
        else "Find the package that installed these files and remove it"
    )
    return Remediation(
        text=f"{what}; WSL reaches the GPU through the Windows driver's libraries in /usr/lib/wsl/lib. {_KEEP}",
        commands=commands,
        requires_root=True,
        destructive=True,
        target=Target.SYSTEM,
    )


def wsl_driver_unreached() -> Remediation:
    """NVML inside WSL2 that does not reach the Windows driver: WSL's own nvidia-smi tells the two causes apart
    (a Linux driver package's library loaded in place of /usr/lib/wsl/lib's, or WSL itself not reaching it)."""
    return Remediation(
        text="Run WSL's own nvidia-smi, which uses the Windows driver's libraries directly. If it lists the GPU, a "
        "Linux NVIDIA driver package in this distribution shadows them: remove that package (the driver only; "
        "the CUDA toolkit stays) and open a new shell. If it fails too, WSL does not reach the driver: restart "
        "WSL from Windows (`wsl --shutdown`), make sure the distribution runs as WSL 2 (`wsl -l -v` in "
        "PowerShell), update WSL (`wsl --update`) and the NVIDIA driver on Windows, and do not start WSL "
        "elevated (as administrator) beside a normal session.",
        commands=(
            Command(("/usr/lib/wsl/lib/nvidia-smi",), note="WSL's own, inside the distribution"),
            Command(("wsl.exe", "--shutdown"), note="from Windows, if WSL's own fails too", runs_here=False),
            Command(("wsl.exe", "-l", "-v"), note="in PowerShell: VERSION must be 2", runs_here=False),
        ),
        target=Target.SYSTEM,
    )
