"""pcie.link over the sysfs trees of tests/fixtures/sysfs-trees (provenance of every value in its README)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.factories import facts, gpu, nvml_device
from torch_gpu_doctor.checks.pcie_link import link_verdict, nvml_verdict, pcie_link
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.pcie_link import gather_pcie_links
from torch_gpu_doctor.facts.thunderbolt import gather_thunderbolt
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.unavailable import Reason, Unavailable

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "sysfs-trees"


def machine(scenario: str, bdf: str, vendor: str = "nvidia") -> Facts:
    host = RecordedHost(TREES / scenario)
    return facts(
        gpus=(replace(gpu(bdf=bdf), vendor=vendor),),
        pcie=gather_pcie_links(host, [bdf]),
        thunderbolt=gather_thunderbolt(host),
    )


@pytest.mark.parametrize(
    ("scenario", "bdf", "vendor", "status", "says"),
    [
        # club-3090#1095: x16 card below a root port whose max width is 8, idle at 2.5 GT/s
        (
            "rtx3090-x8-slot-idle",
            "0000:0b:00.0",
            "nvidia",
            Status.PASS,
            "limited by its slot to x8 (the card supports x16): about 15.8 GB/s to the GPU under load.",
        ),
        # janhq/jan#183: Gen1 at idle with the full x16 width is power saving, not a fault
        (
            "rtx4090-riser-idle-gen1",
            "0000:01:00.0",
            "nvidia",
            Status.PASS,
            "runs at its full width x16 (about 31.5 GB/s under load). Now at Gen1: normal at idle",
        ),
        (
            "rtx4090-riser-idle-old-kernel",
            "0000:01:00.0",
            "nvidia",
            Status.PASS,
            "Now at Gen1: normal at idle",
        ),
        # geerlingguy#480: a Pi's single Gen2 x1 lane, about 0.5 GB/s
        (
            "quadro-rtx8000-pi-x1",
            "0000:01:00.0",
            "nvidia",
            Status.WARN,
            "limited by its slot to x1 (the card supports x16): about 0.5 GB/s",
        ),
        # nokyan/resources#512: the on-card switch's upstream port runs x8 of x16; the root port's width is unknown
        (
            "amd-gpu-onboard-switch",
            "0000:03:00.0",
            "amd",
            Status.WARN,
            "the link above 0000:01:00.0 runs at x8 of x16",
        ),
        # a virtio VM: no link files at all
        ("virtio-vm", "0000:00:02.0", "nvidia", Status.UNKNOWN, "no PCIe link width to read"),
        # all-ways-egpu#37: the eGPU is judged below the tunnel and said to be behind it
        (
            "egpu-thunderbolt-authorized",
            "0000:66:00.0",
            "amd",
            Status.PASS,
            "behind a Thunderbolt/USB4 tunnel",
        ),
    ],
)
def test_link_verdicts_on_real_chains(
    scenario: str, bdf: str, vendor: str, status: Status, says: str
) -> None:
    f = pcie_link(machine(scenario, bdf, vendor))
    assert f.status is status, f.summary
    assert says in f.summary, f.summary


def test_a_link_narrower_than_both_ends_is_a_fault() -> None:
    # the x8-slot 3090 chain, with the root port's max raised to x16: x8 is now a bad seat or riser
    base = machine("rtx3090-x8-slot-idle", "0000:0b:00.0")
    assert not isinstance(base.pcie, Unavailable)
    path = base.pcie[0]
    port = path.hops[1]
    wide_port = replace(port, max_link=replace(port.max_link, width=16))
    f = pcie_link(replace(base, pcie=(replace(path, hops=(path.hops[0], wide_port)),)))
    assert f.status is Status.FAIL
    assert "the card trained at x8 though both ends of that link support x16" in f.summary


def test_expected_bandwidth_is_published_for_the_smoke_test() -> None:
    base = machine("rtx3090-x8-slot-idle", "0000:0b:00.0")
    assert not isinstance(base.pcie, Unavailable)
    verdict = link_verdict(base.pcie[0], base)
    assert verdict.loaded_gbytes_per_s == pytest.approx(16.0 * 128 / 130 / 8 * 8)  # Gen4 x8
    assert any(e.label == "expected host↔GPU bandwidth" for e in pcie_link(base).evidence)


def test_unreadable_links_and_no_gpu() -> None:
    assert pcie_link(facts(pcie=Unavailable(Reason.PERMISSION_DENIED, "sysfs"))).status is Status.UNKNOWN
    assert pcie_link(facts(gpus=(), pcie=())).status is Status.SKIP
    broken = machine("broken-link-files", "0000:01:00.0")
    assert pcie_link(broken).status in (Status.UNKNOWN, Status.PASS)  # garbage never crashes or cries wolf


def test_nvml_fills_in_when_sysfs_has_no_link_files() -> None:
    # thamada-RTX4060Ti-q.txt: an x8 card at x4, Gen 4/4 under load; NVML cannot say whether the slot is x4
    narrow = nvml_verdict(
        "0000:01:00.0",
        nvml_device(pcie_link_gen_current=4, pcie_link_width_current=4, pcie_link_width_max=8),
    )
    assert narrow is not None and narrow.status is Status.WARN
    assert "runs at x4 of x8 (about 7.9 GB/s under load)" in narrow.sentence
    idle = nvml_verdict("0000:01:00.0", nvml_device())  # Gen1 of Gen4 at x16 of x16
    assert idle is not None and idle.status is Status.PASS and "Now at Gen1: normal at idle" in idle.sentence
