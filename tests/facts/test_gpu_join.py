"""Compute capability of a GPU the driver does not expose comes from its PCI device id when it can."""

from __future__ import annotations

from torch_gpu_doctor.facts.gpus import join_gpus
from torch_gpu_doctor.facts.pci import PciDevice
from torch_gpu_doctor.unavailable import Reason, Unavailable

NO_NAME = Unavailable(Reason.NOT_FOUND, "pci.ids")
NO_NVML = Unavailable(Reason.NOT_FOUND, "NVMLError_LibraryNotFound")


def _device(device_id: int) -> PciDevice:
    return PciDevice(
        "0000:01:00.0", 0x10DE, device_id, 0x030000, NO_NAME, NO_NAME, None, "/sys/devices/x", NO_NAME
    )


def test_pci_id_gives_the_compute_capability_without_a_name() -> None:
    # Debian pci.ids: 2684 AD102 [GeForce RTX 4090]; compat table: RTX 4090 = 8.9
    (gpu,) = join_gpus((_device(0x2684),), NO_NVML, ())
    assert gpu.compute_capability == "8.9"
    assert gpu.compute_capability_source == "compat table (PCI id 10de:2684, GeForce RTX 4090)"


def test_unknown_pci_id_without_a_name_stays_unknown() -> None:
    (gpu,) = join_gpus((_device(0xFFFF),), NO_NVML, ())
    assert isinstance(gpu.compute_capability, Unavailable)
