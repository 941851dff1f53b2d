"""The NVIDIA driver package for the user's distribution."""

from __future__ import annotations

from gpu_doctor.facts.model import OsFacts
from gpu_doctor.fixes.distro import Family, family
from gpu_doctor.model import Command, Remediation, Target
from gpu_doctor.unavailable import Unavailable

NVIDIA_DOWNLOADS = "https://www.nvidia.com/Download/index.aspx"
OPEN_MODULE_MIN_CC = (7, 5)  # NVIDIA's open kernel modules support Turing and newer only


def _needs_proprietary(capabilities: list[str]) -> bool:
    for cc in capabilities:
        major, _, minor = cc.partition(".")
        if major.isdigit() and minor.isdigit() and (int(major), int(minor)) < OPEN_MODULE_MIN_CC:
            return True
    return False


def driver_install(os_facts: OsFacts | Unavailable, capabilities: list[str]) -> Remediation:
    """Install the distribution's NVIDIA driver; `capabilities` are the GPUs' compute capabilities."""
    legacy = _needs_proprietary(capabilities)
    fam = family(os_facts)
    commands: tuple[Command, ...]
    if fam is Family.UBUNTU:
        commands = (
            Command(
                ("sudo", "ubuntu-drivers", "install"),
                note="installs the branch Ubuntu recommends for your GPU",
            ),
        )
        text = "Install the NVIDIA driver Ubuntu recommends for this GPU, then reboot."
    elif fam is Family.DEBIAN:
        commands = (
            Command(("sudo", "apt", "update")),
            Command(
                ("sudo", "apt", "install", "nvidia-driver", "firmware-misc-nonfree", "linux-headers-amd64"),
                note="needs contrib, non-free and non-free-firmware in your APT sources; on arm64: linux-headers-arm64",
            ),
        )
        text = (
            "Install Debian's NVIDIA driver packages (DKMS builds the module for your kernel), then reboot."
        )
    elif fam is Family.FEDORA:
        commands = (
            Command(
                ("sudo", "dnf", "install", "akmod-nvidia", "xorg-x11-drv-nvidia-cuda"),
                note="from the RPM Fusion nonfree repository; wait for akmods to build the module before rebooting",
            ),
        )
        text = "Install the NVIDIA driver from RPM Fusion, wait a few minutes for the module to build, then reboot."
    elif fam is Family.RHEL:
        commands = (
            Command(
                ("sudo", "dnf", "install", "nvidia-open" if not legacy else "cuda-drivers"),
                note="from NVIDIA's CUDA repository for your RHEL-compatible release",
            ),
        )
        text = "Install the driver from NVIDIA's CUDA repository for your release, then reboot."
    elif fam is Family.ARCH:
        if legacy:
            commands = ()
            text = (
                "Pre-Turing GPUs need the proprietary 580 legacy branch, which Arch ships only in the AUR "
                "(nvidia-580xx-dkms): build it with your AUR helper, then reboot."
            )
        else:
            commands = (
                Command(
                    ("sudo", "pacman", "-S", "--needed", "nvidia-open"),
                    note="Turing (RTX 20 / GTX 16) and newer",
                ),
            )
            text = "Install the NVIDIA driver package for your kernel, then reboot."
    elif fam is Family.SUSE:
        commands = (
            Command(
                ("sudo", "zypper", "install", "nvidia-open-driver-G06-signed-kmp-default"),
                note="open kernel module, Turing and newer; older GPUs need the G05 proprietary driver",
            ),
        )
        text = "Install openSUSE's signed NVIDIA driver, then reboot."
    else:
        commands = ()
        text = f"Install the NVIDIA driver for your distribution (or from {NVIDIA_DOWNLOADS}), then reboot."
    return Remediation(
        text=text,
        commands=commands,
        requires_root=bool(commands),
        requires_reboot=True,
        needs_network=True,
        target=Target.SYSTEM,
    )
