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
