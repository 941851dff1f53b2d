"""Verdicts on ordinary setups that a first version got wrong (found in review): each must stay right."""

from __future__ import annotations

from dataclasses import replace

from tests.factories import driver, facts, gpu, nvml_device, nvml_error, nvml_ok, os_facts
from torch_gpu_doctor.checks.driver_installed import driver_installed
from torch_gpu_doctor.checks.driver_nvml import driver_nvml
from torch_gpu_doctor.checks.gpu_present import gpu_present
from torch_gpu_doctor.facts.gpus import join_gpus
from torch_gpu_doctor.facts.pci import PciDevice
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.unavailable import Reason, Unavailable

LOST = Unavailable(Reason.FAILED, "NVMLError_GpuIsLost")


def test_container_with_some_of_the_hosts_gpus_passes() -> None:
    gpus = (
        gpu(bdf="0000:01:00.0", nvml_index=0),
        *(gpu(bdf=f"0000:0{i}:00.0", nvml_index=None) for i in range(2, 9)),
    )
    f = gpu_present(facts(gpus=gpus, os=replace(os_facts(), container="docker")))
    assert f.status is Status.PASS
    assert "1 of the host's 8 NVIDIA GPUs was passed to this docker container" in f.summary


def test_same_gpus_outside_a_container_fail() -> None:
    gpus = (gpu(bdf="0000:01:00.0", nvml_index=0), gpu(bdf="0000:02:00.0", nvml_index=None))
    assert gpu_present(facts(gpus=gpus)).status is Status.FAIL


def test_lost_gpu_is_not_counted_twice_and_fails_nvml() -> None:
    pci = tuple(
        PciDevice(
            f"0000:0{i}:00.0",
            0x10DE,
            0x2330,
            0x030200,
            0x10DE,
            0x16C1,
            "nvidia",
            f"/sys/devices/x/0{i}",
            "H100",
        )
        for i in range(1, 3)
    )
    devices = (nvml_device(0, "0000:01:00.0"), replace(nvml_device(1), bdf=LOST, name=LOST, uuid=LOST))
    nvml = nvml_ok(devices=devices)
    joined = join_gpus(pci, nvml, ())
    assert len(joined) == 2  # the lost GPU is the second PCI device, not a third GPU
    f = driver_nvml(facts(nvml=nvml, gpus=joined))
    assert f.status is Status.FAIL
    assert "GPU 1 stopped responding" in f.summary
    assert f.remediation is not None and f.remediation.requires_reboot


def test_nvml_that_hung_makes_gpu_present_unknown() -> None:
    hung = Unavailable(Reason.TIMED_OUT, "probe nvml did not finish")
    f = gpu_present(facts(nvml=hung, gpus=(gpu(nvml_index=None),)))
    assert f.status is Status.UNKNOWN


def test_nvml_that_cannot_count_gpus_fails() -> None:
    nvml = replace(nvml_ok(), device_count=Unavailable(Reason.FAILED, "NVMLError_Unknown"), devices=())
    f = driver_nvml(facts(nvml=nvml))
    assert f.status is Status.FAIL
    assert "could not list the GPUs" in f.summary


def test_driver_preinstalled_on_a_cpu_instance_is_skipped() -> None:
    f = driver_nvml(facts(gpus=(), nvml=nvml_error("DriverNotLoaded", 9)))
    assert f.status is Status.SKIP


def test_unreadable_pci_bus_and_silent_nvml_is_unknown() -> None:
    denied = Unavailable(Reason.PERMISSION_DENIED, "/sys/bus/pci/devices")
    f = gpu_present(facts(gpus=(), pci=denied, nvml=nvml_error("LibraryNotFound", 12)))
    assert f.status is Status.UNKNOWN


def test_gpu_reserved_for_a_vm_warns_not_fails() -> None:
    gpus = (
        gpu(bdf="0000:01:00.0", nvml_index=0),
        gpu(bdf="0000:02:00.0", nvml_index=None, kernel_driver="vfio-pci"),
    )
    assert gpu_present(facts(gpus=gpus)).status is Status.WARN


def test_jetson_integrated_gpu_is_found() -> None:
    f = gpu_present(
        facts(gpus=(), nvml=nvml_error("LibraryNotFound", 12), driver=driver("35.3.1", is_jetson=True))
    )
    assert f.status is Status.PASS
    assert "Jetson" in f.summary


def test_open_module_on_pascal_fails_with_the_proprietary_driver() -> None:
    f = driver_installed(facts(gpus=(gpu(name="Tesla P4", cc="6.1", nvml_index=None),)))
    assert f.status is Status.FAIL
    assert "does not support Tesla P4" in f.summary
