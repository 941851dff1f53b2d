"""gpu_label: the name and PCI address a finding uses for one GPU."""

from __future__ import annotations

from dataclasses import replace

from tests.factories import gpu
from torch_gpu_doctor.facts.describe import gpu_label
from torch_gpu_doctor.unavailable import Reason, Unavailable


def test_label_with_pci_address() -> None:
    assert gpu_label(gpu()) == "NVIDIA GeForce RTX 4090 at 0000:01:00.0"


def test_label_without_pci_address_is_just_the_name() -> None:
    """A collect_env report has no PCI address: "RTX 4090 at no PCI address" reads as a fault."""
    unknown = replace(gpu(), bdf=Unavailable(Reason.NOT_RECORDED, "not in the collect_env report"))
    assert gpu_label(unknown) == "NVIDIA GeForce RTX 4090"


def test_label_without_name() -> None:
    assert (
        gpu_label(replace(gpu(), name=Unavailable(Reason.NOT_FOUND, "no name")))
        == "unknown GPU at 0000:01:00.0"
    )
