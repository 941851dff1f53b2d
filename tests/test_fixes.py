from __future__ import annotations

from dataclasses import replace

import pytest

from tests.factories import facts, gpu, os_facts, python_facts
from torch_gpu_doctor.fixes.distro import Family, family
from torch_gpu_doctor.fixes.driver_install import driver_install
from torch_gpu_doctor.fixes.driver_plan import DriverPlan, plan_driver
from torch_gpu_doctor.fixes.kernel_modules import rebuild_initramfs
from torch_gpu_doctor.model import Command


@pytest.mark.parametrize(
    ("distro_id", "like", "expected"),
    [
        ("ubuntu", ("debian",), Family.UBUNTU),
        ("pop", ("ubuntu", "debian"), Family.POP),  # its own driver package (fixes/distro.py)
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


def plan(cc: str, distro: str = "ubuntu") -> DriverPlan:
    return plan_driver(facts(os=os_facts(distro, ()), python=python_facts(), gpus=(gpu(cc=cc),)))


@pytest.mark.parametrize(
    ("distro", "cc", "argv"),
    [
        # Ada: open modules recommended (NVIDIA, R560); the branch the newest default wheel's CUDA shipped with
        ("ubuntu", "8.9", ("sudo", "apt", "install", "nvidia-driver-595-open")),
        # Pascal: proprietary only, and R580 is its last branch (compat: architecture_last_driver)
        ("ubuntu", "6.1", ("sudo", "apt", "install", "nvidia-driver-580")),
        # Kepler: R470 is its last branch
        ("ubuntu", "3.7", ("sudo", "apt", "install", "nvidia-driver-470")),
        (
            "debian",
            "8.9",
            (
                "sudo",
                "apt",
                "install",
                "nvidia-open-kernel-dkms",
                "nvidia-driver",
                "firmware-misc-nonfree",
                "linux-headers-amd64",
            ),
        ),
        (
            "debian",
            "3.7",
            (
                "sudo",
                "apt",
                "install",
                "nvidia-tesla-470-driver",
                "firmware-misc-nonfree",
                "linux-headers-amd64",
            ),
        ),
        ("fedora", "8.6", ("sudo", "dnf", "install", "akmod-nvidia", "xorg-x11-drv-nvidia-cuda")),
        ("fedora", "6.1", ("sudo", "dnf", "install", "akmod-nvidia-580xx", "xorg-x11-drv-nvidia-580xx-cuda")),
        ("rocky", "12.0", ("sudo", "dnf", "install", "nvidia-open")),
        ("rocky", "7.0", ("sudo", "dnf", "install", "cuda-drivers")),
        ("arch", "8.9", ("sudo", "pacman", "-S", "--needed", "nvidia-open")),
        # sndirsch.github.io 2026-02-22 (SUSE's NVIDIA packager): G07 open for Turing+, G06 proprietary before
        (
            "opensuse-tumbleweed",
            "8.9",
            ("sudo", "zypper", "install", "nvidia-open-driver-G07-signed-kmp-meta"),
        ),
        (
            "opensuse-tumbleweed",
            "6.1",
            ("sudo", "zypper", "install", "nvidia-driver-G06-kmp-default", "nvidia-compute-utils-G06"),
        ),
        (
            "opensuse-tumbleweed",
            "3.7",
            ("sudo", "zypper", "install", "nvidia-gfxG05-kmp-default", "nvidia-computeG05"),
        ),
    ],
)
def test_driver_package_per_family_and_architecture(distro: str, cc: str, argv: tuple[str, ...]) -> None:
    os = os_facts(distro, ())
    if distro == "debian":  # the factory's 24.04 is Ubuntu's; Debian 12 still packages the R470 driver
        os = replace(os, distro_version="12")
    fix = driver_install(os, plan(cc, distro))
    assert fix.commands[-1].argv == argv
    assert fix.requires_root and fix.requires_reboot


def test_arch_legacy_branches_are_aur_only_and_unknown_distros_get_text() -> None:
    legacy = driver_install(os_facts("arch", ()), plan("6.1", "arch"))
    assert legacy.commands == () and "nvidia-580xx-dkms" in legacy.text
    unknown = driver_install(os_facts("gentoo", ()), plan("8.9", "gentoo"))
    assert unknown.commands == () and "nvidia.com" in unknown.text and "R595 or newer" in unknown.text


def test_plan_names_the_minimum_driver_and_the_module_flavour() -> None:
    blackwell = plan("12.0")
    assert (blackwell.min_driver, blackwell.open_modules) == ("580", True)
    assert "requires its open kernel modules" in blackwell.module_note
    pascal = plan("6.1")
    assert (pascal.min_driver, pascal.branch, pascal.torch, pascal.variant) == (
        "525.60.13",
        580,
        "2.14.1",
        "cu126",
    )
    assert not pascal.open_modules
    assert pascal.end_of_life == (
        "Pascal GPUs were last supported by driver R580 (CUDA ≤ 13.0), and CUDA 13+ torch wheels have no kernels "
        "for them: the newest combination that still works is torch 2.14.1 (cu126) on the R580 driver.",
    )
    mixed = plan_driver(facts(python=python_facts(), gpus=(gpu(cc="12.0"), gpu(cc="6.1", nvml_index=1))))
    assert "no single driver serves both" in mixed.module_note


def test_grace_hopper_requires_open_modules() -> None:
    gh200 = plan_driver(facts(python=python_facts(machine="aarch64"), gpus=(gpu(cc="9.0"),)))
    assert gh200.open_modules and "requires" in gh200.module_note
    x86_h100 = plan("9.0")
    assert x86_h100.open_modules and "recommends" in x86_h100.module_note


def test_initramfs_tool_per_family() -> None:
    assert rebuild_initramfs(os_facts("debian", ())).argv == ("sudo", "update-initramfs", "-u")
    assert rebuild_initramfs(os_facts("arch", ())).argv == ("sudo", "mkinitcpio", "-P")
    assert rebuild_initramfs(os_facts("fedora", ())).argv == ("sudo", "dracut", "--force")


def test_command_display_quotes_and_shows_stdin() -> None:
    assert Command(("echo", "a b")).display() == "echo 'a b'"
    shown = Command(("sudo", "tee", "/etc/x.conf"), stdin="blacklist nouveau\n").display()
    assert shown == "printf %s 'blacklist nouveau\n' | sudo tee /etc/x.conf"


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (("python", "-c", "import torch; print(1)"), 'python -c "import torch; print(1)"'),
        # env is a POSIX tool: cmd sets the variables in a child cmd, which PowerShell starts the same way
        (
            ("env", "NCCL_P2P_DISABLE=1", "NCCL_IB_DISABLE=1", "python", "SCRIPT.py"),
            'cmd /c "set NCCL_P2P_DISABLE=1&& set NCCL_IB_DISABLE=1&& python SCRIPT.py"',
        ),
        (
            ("env", "-u", "CUDA_VISIBLE_DEVICES", "python", "x.py"),
            'cmd /c "set CUDA_VISIBLE_DEVICES=&& python x.py"',
        ),
        (("env",), "env"),  # nothing to set: as it is
        # a POSIX path as the value: no cmd line sets it, so the command stays as written
        (
            ("env", "CUDA_HOME=/usr/local/cuda-12.1", "python", "setup.py"),
            "env CUDA_HOME=/usr/local/cuda-12.1 python setup.py",
        ),
    ],
)
def test_windows_lines_use_cmds_quotes_and_set(argv: tuple[str, ...], shown: str) -> None:
    assert Command(argv).display(windows=True) == shown


def test_a_command_fed_text_keeps_its_posix_line_on_windows() -> None:
    """Only a POSIX tool is fed text (sudo tee): cmd has no printf, and dropping the text would change it."""
    command = Command(("sudo", "tee", "/etc/x.conf"), stdin="blacklist nouveau\n")
    assert (
        command.display(windows=True)
        == command.display()
        == "printf %s 'blacklist nouveau\n' | sudo tee /etc/x.conf"
    )


def test_debian_13_has_no_kepler_driver_package() -> None:
    # apt-cache, 2026-11-25: bookworm has nvidia-tesla-470-driver 470.256.02~deb12u1, trixie has none
    trixie = replace(os_facts("debian", ()), distro_version="13")
    fix = driver_install(trixie, plan("3.7", "debian"))
    assert fix.commands == ()
    assert "Debian 13 packages no R470 driver" in fix.text
    bookworm = driver_install(replace(os_facts("debian", ()), distro_version="12"), plan("3.7", "debian"))
    assert "nvidia-tesla-470-driver" in bookworm.commands[-1].argv


def test_a_fix_that_shows_sudo_or_a_reboot_says_so_in_its_flags() -> None:
    """The flags are derived where a fix forgot them: set 19's review found `systemctl reboot` listed beside
    requires_reboot false in the JSON; a fix that declares them keeps them."""
    from torch_gpu_doctor.model import Command, Remediation, flag_words

    fix = Remediation("reload", (Command(("sudo", "rmmod", "nvidia_uvm")), Command(("systemctl", "reboot"))))
    assert (fix.requires_root, fix.requires_reboot) == (True, True)
    assert flag_words(fix)[:2] == ["needs root", "needs reboot"]
    plain = Remediation("look", (Command(("nvidia-smi",)),))
    assert (plain.requires_root, plain.requires_reboot) == (False, False)
    declared = Remediation("reboot later", requires_reboot=True)
    assert declared.requires_reboot and not declared.requires_root
