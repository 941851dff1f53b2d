"""platform.iommu_p2p with in-memory Facts, and on the trees of tests/fixtures/platform-trees."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.factories import facts, gpu
from tests.facts.platform_tree import tree
from torch_gpu_doctor.checks.platform_iommu import iommu_p2p
from torch_gpu_doctor.facts.gpus import Gpu
from torch_gpu_doctor.facts.iommu import NO_SHARED_SWITCH, GpuIommu, GpuPairRoute, IommuFacts, gather_iommu
from torch_gpu_doctor.facts.model import NOT_GATHERED, Facts
from torch_gpu_doctor.facts.pci import gather_pci
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.unavailable import Reason, Unavailable

A, B = "0000:03:00.0", "0000:04:00.0"
TWO_GPUS = (gpu(bdf=A), gpu(bdf=B, nvml_index=1))


def gpu_iommu(bdf: str, port: str, group: str, kind: str = "DMA-FQ") -> GpuIommu:
    return GpuIommu(bdf, ("0000:00:01.0", "0000:01:00.0", port), group, kind, (bdf,))


def switch_pair(redirect: bool | Unavailable) -> GpuPairRoute:
    return GpuPairRoute(A, B, "0000:01:00.0", ("0000:02:00.0", "0000:02:01.0"), redirect)


def io(
    pairs: tuple[GpuPairRoute, ...],
    groups: int | Unavailable = 12,
    kind: str = "DMA-FQ",
    cmdline: tuple[str, ...] = ("intel_iommu=on",),
) -> IommuFacts:
    return IommuFacts(
        units=("dmar0",),
        group_count=groups,
        cmdline_options=cmdline,
        gpus=(gpu_iommu(A, "0000:02:00.0", "5", kind), gpu_iommu(B, "0000:02:01.0", "6", kind)),
        pairs=pairs,
    )


def machine(value: IommuFacts | Unavailable, gpus: tuple[Gpu, ...] = TWO_GPUS) -> Facts:
    return facts(iommu=value, gpus=gpus)


def test_separate_groups_below_one_switch_warn_with_setpci() -> None:
    f = iommu_p2p(machine(io((switch_pair(True),))))
    assert f.status is Status.WARN
    assert f.summary.startswith(
        f"GPUs {A} and {B} share PCIe switch 0000:01:00.0 but sit in separate IOMMU groups"
    )
    assert "through IOMMU address translation (DMA-FQ)" in f.summary
    assert f.remediation is not None and f.remediation.requires_root
    assert [c.display() for c in f.remediation.commands] == [
        "sudo setpci -s 0000:02:00.0 ECAP_ACS+0x6.w=0000",
        "sudo setpci -s 0000:02:01.0 ECAP_ACS+0x6.w=0000",
    ]


def test_passthrough_domains_are_not_called_translated() -> None:
    f = iommu_p2p(machine(io((switch_pair(True),), kind="identity")))
    assert f.status is Status.WARN and "translation" not in f.summary


def test_one_gpu_skips() -> None:
    assert iommu_p2p(machine(io(()), gpus=(gpu(),))).status is Status.SKIP


def test_gpus_without_a_pci_address_do_not_count() -> None:
    # WSL2 and some VMs: NVML lists GPUs that are not on this PCI bus.
    off_bus = tuple(replace(g, on_pci_bus=False) for g in TWO_GPUS)
    assert iommu_p2p(machine(io(()), gpus=off_bus)).status is Status.SKIP


@pytest.mark.parametrize(
    ("value", "status"),
    [(NOT_GATHERED, Status.SKIP), (Unavailable(Reason.PERMISSION_DENIED, "/sys"), Status.UNKNOWN)],
)
def test_unavailable_facts(value: Unavailable, status: Status) -> None:
    assert iommu_p2p(machine(value)).status is status


def test_denied_group_listing_is_unknown_not_no_iommu() -> None:
    f = iommu_p2p(machine(io((), groups=Unavailable(Reason.PERMISSION_DENIED, "/sys/kernel/iommu_groups"))))
    assert f.status is Status.UNKNOWN


def test_no_iommu_passes_and_says_what_only_root_sees() -> None:
    off = Unavailable(Reason.NOT_APPLICABLE, f"{A} has no IOMMU group")
    f = iommu_p2p(machine(io((switch_pair(off),), groups=0)))
    assert f.status is Status.PASS and f.summary.startswith("No IOMMU is active")
    assert "sudo lspci -vvv | grep ACSCtl" in f.details


def test_one_group_below_the_switch_passes() -> None:
    f = iommu_p2p(machine(io((switch_pair(False),))))
    assert f.status is Status.PASS and "one IOMMU group" in f.summary


def test_separate_root_ports_pass() -> None:
    pair = GpuPairRoute(A, B, None, (), NO_SHARED_SWITCH)
    f = iommu_p2p(machine(io((pair,))))
    assert f.status is Status.PASS and "separate root ports" in f.summary
    assert f.details == "IOMMU domain type of the GPUs: DMA-FQ."


def test_acs_override_is_unknown() -> None:
    override = Unavailable(Reason.NOT_SUPPORTED, "pcie_acs_override= makes IOMMU groups ignore ACS")
    f = iommu_p2p(machine(io((switch_pair(override),), cmdline=("pcie_acs_override=downstream",))))
    assert f.status is Status.UNKNOWN and "pcie_acs_override" in f.summary


def test_unreadable_path_is_unknown_not_separate_root_ports() -> None:
    pair = GpuPairRoute(A, B, None, (), Unavailable(Reason.NOT_FOUND, f"/sys/bus/pci/devices/{B}"))
    assert iommu_p2p(machine(io((pair,)))).status is Status.UNKNOWN


def test_plx_tree_end_to_end() -> None:
    host = tree("iommu-plx-switch-acs")
    pci = gather_pci(host)
    assert not isinstance(pci, Unavailable)
    gpus = tuple(gpu(bdf=d.bdf, nvml_index=i) for i, d in enumerate(p for p in pci if p.vendor_id == 0x10DE))
    f = iommu_p2p(facts(pci=pci, gpus=gpus, iommu=gather_iommu(host, pci)))
    assert f.status is Status.WARN
    assert "(and 5 more GPU pairs)" in f.summary and "(DMA-FQ)" in f.summary
    assert f.remediation is not None and len(f.remediation.commands) == 4
