"""Removing a Linux NVIDIA driver that was installed inside WSL, per distribution family.

Only the driver goes: the CUDA toolkit (`cuda-toolkit-12-x`) and the NVIDIA Container Toolkit belong in WSL.
When the installed packages are known they are named; otherwise the package manager is asked which package owns
the library file.
"""

from __future__ import annotations

from torch_gpu_doctor.facts.model import OsFacts
from torch_gpu_doctor.fixes.distro import Family, family
from torch_gpu_doctor.model import Command, Remediation, Target
from torch_gpu_doctor.unavailable import Unavailable

_KEEP = (
    "Keep the CUDA toolkit (cuda-toolkit-12-x, not `cuda` or `cuda-drivers`) and the NVIDIA Container Toolkit: "
    "they are right for WSL. Open a new shell afterwards."
)


def remove_linux_driver(
    os_facts: OsFacts | Unavailable, packages: tuple[str, ...], files: tuple[str, ...]
) -> Remediation:
    fam = family(os_facts)
    commands = _remove(fam, packages) if packages else tuple(_owner(fam, f) for f in files[:2])
    how = (
        "Remove the Linux NVIDIA driver packages from this WSL distribution"
        if packages
        else "Find the package that installed these files and remove it"
    )
    return Remediation(
        text=f"{how}; WSL reaches the GPU through the Windows driver's libraries in /usr/lib/wsl/lib. {_KEEP}",
        commands=tuple(c for c in commands if c is not None),
        requires_root=True,
        destructive=True,
        target=Target.SYSTEM,
    )


def _remove(fam: Family, packages: tuple[str, ...]) -> tuple[Command, ...]:
    if fam in (Family.UBUNTU, Family.DEBIAN):
        return (Command(("sudo", "apt-get", "purge", *packages)),)
    if fam is Family.ARCH:
        return (Command(("sudo", "pacman", "-Rns", *packages)),)
    return ()


def _owner(fam: Family, path: str) -> Command | None:
    if fam in (Family.UBUNTU, Family.DEBIAN):
        return Command(("dpkg", "-S", path), note="then: sudo apt-get purge <that package>")
    if fam is Family.ARCH:
        return Command(("pacman", "-Qo", path), note="then: sudo pacman -Rns <that package>")
    if fam in (Family.FEDORA, Family.RHEL):
        return Command(("rpm", "-qf", path), note="then: sudo dnf remove <that package>")
    if fam is Family.SUSE:
        return Command(("rpm", "-qf", path), note="then: sudo zypper remove <that package>")
    return None
