from __future__ import annotations

from tests.factories import facts, gpu, nvml_error, os_facts
from torch_gpu_doctor.checks.gpu_present import gpu_present
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.unavailable import Reason, Unavailable


def test_all_visible_passes_and_names_the_gpus() -> None:
    f = gpu_present(facts(gpus=(gpu(), gpu(bdf="0000:02:00.0", nvml_index=1))))
    assert f.status is Status.PASS
    assert "2× NVIDIA GeForce RTX 4090 (compute capability 8.9, 24 GiB)" in f.summary


def test_no_gpu_fails() -> None:
    f = gpu_present(facts(gpus=(), nvml=nvml_error("LibraryNotFound", 12)))
    assert f.status is Status.FAIL
    assert "No NVIDIA GPU" in f.summary
    assert "--gpus all" in f.details


def test_no_gpu_in_wsl_points_at_the_windows_driver() -> None:
    f = gpu_present(facts(gpus=(), os=os_facts(wsl=True)))
    assert f.status is Status.FAIL
    assert "WSL2" in f.details and "wsl --update" in f.details


def test_unreadable_bus_and_no_nvml_is_unknown_not_fail() -> None:
    denied = Unavailable(Reason.PERMISSION_DENIED, "/sys/bus/pci/devices")
    f = gpu_present(facts(gpus=(), pci=denied, nvml=Unavailable(Reason.TIMED_OUT, "nvml")))
    assert f.status is Status.UNKNOWN


def test_amd_only_is_not_a_problem_but_left_to_the_amd_checks() -> None:
    amd = gpu(vendor="amd", name="Navi 22 [Radeon RX 6700 XT]", nvml_index=None, kernel_driver="amdgpu")
    f = gpu_present(facts(gpus=(amd,)))
    assert f.status is Status.SKIP
    assert "AMD" in f.summary and "amd.* checks" in f.summary


def test_no_gpu_names_the_command_that_lists_nvidia_devices() -> None:
    f = gpu_present(facts(gpus=()))
    assert f.status is Status.FAIL
    assert f.remediation is not None
    assert f.remediation.commands[0].argv == ("lspci", "-nn", "-d", "10de:")


def test_a_gpu_the_driver_holds_but_cannot_start_points_at_the_kernel_log() -> None:
    stuck = gpu(bdf="0000:01:00.0", nvml_index=None, kernel_driver="nvidia")
    f = gpu_present(facts(gpus=(stuck,)))
    assert f.status is Status.FAIL
    assert f.remediation is not None
    assert f.remediation.commands[0].argv[:3] == ("sudo", "journalctl", "-k")
    assert "RmInitAdapter" in f.remediation.text


def test_a_gpu_without_any_driver_leaves_the_fix_to_its_cause() -> None:
    bare = gpu(bdf="0000:01:00.0", nvml_index=None, kernel_driver=None)
    f = gpu_present(facts(gpus=(bare,)))
    assert f.status is Status.FAIL
    assert f.remediation is None  # driver.installed carries it: checks/support/causes.json


def test_hidden_gpus_say_why_per_gpu() -> None:
    hidden = (
        gpu(bdf="0000:01:00.0", nvml_index=None, kernel_driver="nouveau"),
        gpu(bdf="0000:02:00.0", nvml_index=None, kernel_driver="vfio-pci"),
        gpu(bdf="0000:03:00.0", nvml_index=None, kernel_driver="nvidia", excluded=True),
        gpu(bdf="0000:04:00.0", nvml_index=0),
    )
    f = gpu_present(facts(gpus=hidden))
    assert f.status is Status.FAIL
    assert f.summary.startswith("3 of 4 NVIDIA GPUs")
    assert "(1 usable)" in f.summary
    assert "0000:01:00.0: the open-source nouveau driver" in f.details
    assert "0000:02:00.0: it is bound to vfio-pci" in f.details
    assert "0000:03:00.0: the NVIDIA driver excluded it" in f.details
