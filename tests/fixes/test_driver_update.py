"""A driver older than the program's CUDA runtime (code 35, "driver version is insufficient"): the first step
is the driver where it lives, never `nvidia-smi` when the driver's CUDA is already known."""

from __future__ import annotations

from dataclasses import replace

from tests.factories import driver, facts, os_facts
from torch_gpu_doctor.fixes.cuda_init import init_error_fix
from torch_gpu_doctor.model import Target
from torch_gpu_doctor.unavailable import Reason, Unavailable

OLD = driver("515.48.07", cuda_version="11.7")


def test_ubuntu_gets_its_driver_package_first() -> None:
    fix = init_error_fix("", "driver_too_old", facts(driver=OLD, os=os_facts("ubuntu")))
    assert fix is not None
    assert fix.text.startswith("The driver runs CUDA ≤ 11.7; this program was built for a newer CUDA.")
    assert fix.commands[0].argv == ("sudo", "ubuntu-drivers", "install")  # no wheel plan: Ubuntu's choice
    assert fix.requires_root and fix.requires_reboot and fix.target is Target.SYSTEM
    assert fix.text.endswith("Or use a build of the program for CUDA ≤ 11.7.")


def test_wsl_and_windows_update_the_windows_driver() -> None:
    wsl = init_error_fix("", "driver_too_old", facts(driver=OLD, os=os_facts(wsl=True)))
    windows = init_error_fix(
        "", "driver_too_old", facts(driver=OLD, os=replace(os_facts(), system="Windows"))
    )
    assert wsl is not None and windows is not None
    assert "update the NVIDIA driver on Windows" in wsl.text and "wsl" in wsl.text and not wsl.commands
    assert "never install a Linux driver inside WSL" in wsl.text
    assert "Update the NVIDIA driver" in windows.text and not windows.commands
    assert "apt" not in windows.text


def test_a_container_updates_the_hosts_driver() -> None:
    fix = init_error_fix("", "driver_too_old", facts(driver=OLD, os=os_facts("ubuntu")), in_container=True)
    assert fix is not None and not fix.commands
    assert "the driver is the host's" in fix.text and "an image built for the CUDA" in fix.text


def test_nothing_known_asks_nvidia_smi_for_the_drivers_cuda() -> None:
    """No OS and no driver version: no package to name, so the one command is the one that shows the CUDA."""
    gone = Unavailable(Reason.NOT_RECORDED, "not in the paste")
    fix = init_error_fix("", "driver_too_old", facts(driver=gone, os=gone))
    assert fix is not None and [c.argv for c in fix.commands] == [("nvidia-smi",)]
    assert fix.text.startswith("The driver is older than the CUDA runtime this program was built with.")


def test_without_facts_the_generic_step_stands() -> None:
    fix = init_error_fix("", "driver_too_old")
    assert fix is not None and [c.argv for c in fix.commands] == [("nvidia-smi",)]


def test_error_804_with_the_drivers_cuda_known_installs_the_driver() -> None:
    """804 on a GeForce: no forward compatibility to bridge a CUDA newer than the driver's; the driver's CUDA is
    known, so the step is the driver where it lives, not nvidia-smi again."""
    known = init_error_fix(
        "cuda_error_804_forward_compat", "forward_compat", facts(driver=OLD, os=os_facts("ubuntu"))
    )
    assert known is not None and known.text.startswith(
        "Error 804: the program's CUDA is newer than the driver's"
    )
    assert known.commands[0].argv == ("sudo", "ubuntu-drivers", "install")
    boxed = init_error_fix(
        "cuda_error_804_forward_compat", "forward_compat", facts(driver=OLD), in_container=True
    )
    assert boxed is not None and "the driver is the host's" in boxed.text and not boxed.commands
    unknown = init_error_fix("cuda_error_804_forward_compat", "forward_compat")
    assert unknown is not None and unknown.commands[0].argv == ("nvidia-smi",)
