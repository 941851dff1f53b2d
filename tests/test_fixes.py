from __future__ import annotations

import pytest

from gpu_doctor.fixes.distro import Family, family
from gpu_doctor.fixes.driver_install import driver_install
from gpu_doctor.fixes.kernel_modules import rebuild_initramfs
from gpu_doctor.model import Command
from tests.factories import os_facts


@pytest.mark.parametrize(
    ("distro_id", "like", "expected"),
    [
        ("ubuntu", ("debian",), Family.UBUNTU),
        ("pop", ("ubuntu", "debian"), Family.UBUNTU),
        ("debian", (), Family.DEBIAN),
        ("rocky", ("rhel", "centos", "fedora"), Family.RHEL),
        ("fedora", (), Family.FEDORA),
        ("endeavouros", ("arch",), Family.ARCH),
        ("opensuse-tumbleweed", ("opensuse", "suse"), Family.SUSE),
        ("somethingnew", ("ubuntu",), Family.UBUNTU),
        ("gentoo", (), Family.UNKNOWN),
    ],
)
def test_family(distro_id: str, like: tuple[str, ...], expected: Family) -> None:
    assert family(os_facts(distro_id, like)) is expected


def test_driver_packages_per_family() -> None:
    def first(distro: str, caps: list[str]) -> tuple[str, ...]:
        return driver_install(os_facts(distro, ()), caps).commands[-1].argv

    assert first("debian", ["8.6"])[:4] == ("sudo", "apt", "install", "nvidia-driver")
    assert first("fedora", ["8.6"]) == ("sudo", "dnf", "install", "akmod-nvidia", "xorg-x11-drv-nvidia-cuda")
    assert first("arch", ["8.9"])[-1] == "nvidia-open"
    # Pascal has no open kernel module, and its legacy driver is AUR-only: no pacman command at all
    legacy = driver_install(os_facts("arch", ()), ["6.1"])
    assert legacy.commands == () and "AUR" in legacy.text
    unknown = driver_install(os_facts("gentoo", ()), [])
    assert unknown.commands == () and "nvidia.com" in unknown.text


def test_initramfs_tool_per_family() -> None:
    assert rebuild_initramfs(os_facts("debian", ())).argv == ("sudo", "update-initramfs", "-u")
    assert rebuild_initramfs(os_facts("arch", ())).argv == ("sudo", "mkinitcpio", "-P")
    assert rebuild_initramfs(os_facts("fedora", ())).argv == ("sudo", "dracut", "--force")


def test_command_display_quotes_and_shows_stdin() -> None:
    assert Command(("echo", "a b")).display() == "echo 'a b'"
    shown = Command(("sudo", "tee", "/etc/x.conf"), stdin="blacklist nouveau\n").display()
    assert shown == "printf %s 'blacklist nouveau\n' | sudo tee /etc/x.conf"
