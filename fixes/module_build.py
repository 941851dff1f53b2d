"""Building the nvidia module for a kernel that has none: its headers, then DKMS (or akmods on Fedora).

Header packages per family: `linux-headers-<release>` (Debian, Ubuntu), `kernel-devel-<release>` (Fedora,
RHEL), the kernel flavour's `-headers` package (Arch), `kernel-default-devel` (openSUSE). Ubuntu's prebuilt
modules come from `linux-modules-nvidia-<branch>-<release>` instead, when the module folder says so.
"""

from __future__ import annotations

from torch_gpu_doctor.facts.model import OsFacts
from torch_gpu_doctor.fixes.distro import Family, family
from torch_gpu_doctor.model import Command, Remediation, Target
from torch_gpu_doctor.unavailable import Unavailable

LOAD = Command(("sudo", "modprobe", "nvidia"), note="or reboot")


def _headers(fam: Family, release: str) -> Command | None:
    if fam in (Family.UBUNTU, Family.DEBIAN):
        return Command(("sudo", "apt", "install", f"linux-headers-{release}"))
    if fam in (Family.FEDORA, Family.RHEL):
        return Command(("sudo", "dnf", "install", f"kernel-devel-{release}"))
    if fam is Family.ARCH:
        return Command(
            ("sudo", "pacman", "-S", "--needed", "linux-headers"),
            note="for the linux kernel; linux-lts-headers, linux-zen-headers ... for those kernels",
        )
    if fam is Family.SUSE:
        return Command(("sudo", "zypper", "install", "kernel-default-devel"))
    return None


def build_module(
    os_facts: OsFacts | Unavailable, release: str, ubuntu_branch: int | None = None
) -> Remediation:
    """Install `release`'s headers and let DKMS (akmods on Fedora) build the nvidia module for it."""
    fam = family(os_facts)
    if fam is Family.UBUNTU and ubuntu_branch is not None:
        return Remediation(
            text=f"Install Ubuntu's prebuilt NVIDIA {ubuntu_branch} modules for kernel {release}, then load "
            "the module or reboot.",
            commands=(
                Command(("sudo", "apt", "install", f"linux-modules-nvidia-{ubuntu_branch}-{release}")),
                LOAD,
            ),
            requires_root=True,
            needs_network=True,
            target=Target.SYSTEM,
        )
    headers = _headers(fam, release)
    if headers is None:
        return Remediation(
            text=f"Install the kernel headers for {release} with your package manager, then run "
            f"`sudo dkms autoinstall -k {release}` and load the module (or reboot).",
            requires_root=True,
            needs_network=True,
            target=Target.SYSTEM,
        )
    if fam is Family.FEDORA:
        build = Command(("sudo", "akmods", "--force", "--kernels", release), note="akmods builds the module")
    else:
        build = Command(("sudo", "dkms", "autoinstall", "-k", release), note="DKMS builds the module")
    return Remediation(
        text=f"Install the kernel headers for {release} so the module can be built for it, build it, then "
        "load it (or reboot).",
        commands=(headers, build, LOAD),
        requires_root=True,
        needs_network=True,
        target=Target.SYSTEM,
    )
