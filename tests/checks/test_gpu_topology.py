"""gpu.topology (issue 20, item 3): the path between each pair of GPUs from NVML's answers, as real machines
print them (`nvidia-smi topo -m` / `topo -p2p rw` in public threads, cited per case), and the facts read from
a capture's and from the real binding's answers."""

from __future__ import annotations

import dataclasses
import json
import types
from typing import Any

import pytest

from tests.factories import facts, nvml_device, nvml_ok
from tests.facts.test_gpu_health_facts import FakeNVMLError, fake_pynvml
from torch_gpu_doctor.checks.gpu_topology import matrix, topology
from torch_gpu_doctor.facts.topology import (
    Ancestor,
    GpuLinks,
    GpuPair,
    NvLink,
    P2pStatus,
    TopologyFacts,
    read_topology,
)
from torch_gpu_doctor.host.nvml import RealNvml, RecordedNvml
from torch_gpu_doctor.host.recording import RecordingNvml
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.unavailable import Reason, Unavailable

LEVEL = {
    "NODE": Ancestor.NODE,
    "PIX": Ancestor.SINGLE,
    "PXB": Ancestor.MULTIPLE,
    "PHB": Ancestor.HOSTBRIDGE,
    "SYS": Ancestor.SYSTEM,
}
P2P = {"OK": P2pStatus.OK, "GNS": P2pStatus.GPU_NOT_SUPPORTED, "DR": P2pStatus.DISABLED_BY_REGKEY}
P2P |= {"TNS": P2pStatus.TOPOLOGY_NOT_SUPPORTED, "NS": P2pStatus.NOT_SUPPORTED}


def bus(i: int) -> str:
    return f"0000:{i + 1:02x}:00.0"


def machine(rows: list[str], p2p: str = "OK", links: dict[int, int] | None = None) -> Any:
    """Facts of a machine whose `nvidia-smi topo -m` printed these rows (the GPU columns only); NV# cells
    become NVLinks through NVSwitch (`links` overrides one GPU's count: a link down)."""
    cells = [row.split() for row in rows]
    count = len(cells)
    gpus = []
    for i, row in enumerate(cells):
        nv = next((int(c[2:]) for c in row if c.startswith("NV")), 0)
        n = (links or {}).get(i, nv)
        gpus.append(GpuLinks(i, bus(i), tuple(NvLink("0000:f0:00.0", "switch") for _ in range(n))))
    pairs = tuple(
        GpuPair(
            i,
            j,
            Ancestor.NODE if cells[i][j].startswith("NV") else LEVEL[cells[i][j]],
            P2P[p2p],
            P2P[p2p],
        )
        for i in range(count)
        for j in range(i + 1, count)
    )
    devices = tuple(nvml_device(i, bdf=bus(i)) for i in range(count))
    return facts(nvml=nvml_ok(devices=devices), topology=TopologyFacts(tuple(gpus), pairs))


# HazyResearch/ThunderKittens#167: an HGX H100, NV18 between every pair
H100_HGX = [" ".join("X" if i == j else "NV18" for j in range(8)) for i in range(8)]
# noonghunna/club-3090#1229: 2x RTX 5090 on one CPU, `topo -p2p rw` prints GNS
TWO_5090 = ["X PHB", "PHB X"]
# kubernetes/kubernetes#53497: 8 GPUs in pairs behind PCIe switches, two CPUs
PAIRS_TWO_SOCKETS = [
    "X PIX PHB PHB SYS SYS SYS SYS",
    "PIX X PHB PHB SYS SYS SYS SYS",
    "PHB PHB X PIX SYS SYS SYS SYS",
    "PHB PHB PIX X SYS SYS SYS SYS",
    "SYS SYS SYS SYS X PIX PHB PHB",
    "SYS SYS SYS SYS PIX X PHB PHB",
    "SYS SYS SYS SYS PHB PHB X PIX",
    "SYS SYS SYS SYS PHB PHB PIX X",
]


def test_an_hgx_h100_talks_over_nvlink_everywhere() -> None:
    finding = topology(machine(H100_HGX))
    assert finding.status is Status.PASS
    assert finding.summary == "8 GPUs: every pair over NVLink (NV18 through NVSwitch)."
    assert "GPU0 X    NV18 NV18" in finding.evidence[0].value
    assert "Peer-to-peer read/write: OK for every pair." in finding.evidence[0].value


def test_geforce_cards_go_through_host_memory_and_it_is_said_not_failed() -> None:
    finding = topology(machine(TWO_5090, p2p="GNS"))
    assert finding.status is Status.PASS
    assert finding.summary == "2 GPUs: both through host memory."
    assert "do not support peer-to-peer" in finding.details
    assert "GPU0 X    PHB" in finding.evidence[0].value
    assert "Peer-to-peer read/write: GNS for every pair." in finding.evidence[0].value


def test_not_supported_is_host_memory_too_without_naming_geforce() -> None:
    # noonghunna/club-3090#1125: two RTX 3090s on an EPYC board, NODE, `topo -p2p rw` prints NS
    finding = topology(machine(["X NODE", "NODE X"], p2p="NS"))
    assert finding.status is Status.PASS
    assert finding.summary == "2 GPUs: both through host memory."
    assert finding.details.startswith("NVML reports no peer-to-peer between GPUs 0-1")
    assert "Peer-to-peer read/write: NS for every pair." in finding.evidence[0].value


def test_pcie_levels_are_drawn_as_nvidia_smi_prints_them_and_sockets_get_numa_advice() -> None:
    f = machine(PAIRS_TWO_SOCKETS)
    finding = topology(f)
    assert finding.status is Status.PASS
    assert finding.summary == "8 GPUs: all 28 pairs peer-to-peer over PCIe."
    assert "numactl --cpunodebind=N --membind=N" in finding.details
    drawn = matrix(f.topology, f.topology.pairs).splitlines()
    assert drawn[1].split() == ["GPU0", "X", "PIX", "PHB", "PHB", "SYS", "SYS", "SYS", "SYS"]


def test_mixed_peer_to_peer_statuses_get_their_own_matrix() -> None:
    f = machine(["X PIX PHB", "PIX X PHB", "PHB PHB X"])
    refused = P2pStatus.TOPOLOGY_NOT_SUPPORTED
    pairs = tuple(
        dataclasses.replace(p, p2p_read=refused, p2p_write=refused) if p.second == 2 else p
        for p in f.topology.pairs
    )
    drawn = matrix(f.topology, pairs).splitlines()
    start = drawn.index("Peer-to-peer read/write:")
    assert drawn[start + 2].split() == ["GPU0", "X", "OK", "TNS"]


def test_an_nvlink_down_is_a_warning_naming_the_gpu() -> None:
    finding = topology(machine(H100_HGX, links={3: 17}))  # DCGM#198: "nvlinks being down" went unnoticed
    assert finding.status is Status.WARN
    assert finding.summary.startswith("GPU 3 has 17 active NVLinks where the other GPUs have 18")
    assert finding.remediation is not None
    assert finding.remediation.commands[0].argv == ("nvidia-smi", "nvlink", "-s", "-i", "3")


@pytest.mark.parametrize(
    ("links", "down"),
    [
        ({0: 11, 1: 11}, [0, 1]),  # a tie of counts: the best-linked GPUs set the norm, not the most common
        (dict.fromkeys(range(5), 16), [0, 1, 2, 3, 4]),  # five of eight below 18: still links down
        ({6: 0}, [6]),  # every link of one GPU down on an NVSwitch board
    ],
)
def test_links_down_are_found_whatever_the_counts(links: dict[int, int], down: list[int]) -> None:
    finding = topology(machine(H100_HGX, links=links))
    assert finding.status is Status.WARN
    assert finding.details == f"GPUs with fewer links: {', '.join(str(i) for i in down)}."
    assert "where the other GPUs have 18" in finding.summary


def test_a_gpu_without_a_bridge_beside_bridged_ones_is_no_fault() -> None:
    f = machine(["X NV4 PHB", "NV4 X PHB", "PHB PHB X"])
    bridged = tuple(
        dataclasses.replace(
            g, nvlinks=tuple(NvLink(bus(1 - g.index), "gpu") for _ in range(4)) if g.index < 2 else ()
        )
        for g in f.topology.gpus
    )
    finding = topology(dataclasses.replace(f, topology=dataclasses.replace(f.topology, gpus=bridged)))
    assert finding.status is Status.PASS
    assert "Only GPUs 0-1 share an NVLink" in finding.details


def test_peer_to_peer_disabled_in_the_driver_is_a_warning_with_where_to_look() -> None:
    finding = topology(machine(["X PIX", "PIX X"], p2p="DR"))
    assert finding.status is Status.WARN
    assert "disabled in the driver" in finding.summary
    assert finding.remediation is not None and "RegistryDwords" in finding.remediation.commands[0].argv


def test_a_platform_that_refuses_peer_to_peer_points_at_acs() -> None:
    finding = topology(machine(["X PXB", "PXB X"], p2p="TNS"))
    assert finding.status is Status.WARN
    assert finding.remediation is not None and "platform.iommu_p2p" in finding.remediation.text


def test_one_gpu_is_skipped_and_missing_answers_are_unknown() -> None:
    one = facts(nvml=nvml_ok(devices=(nvml_device(0),)))
    assert topology(one).status is Status.SKIP
    two = machine(TWO_5090, p2p="GNS")
    missing = dataclasses.replace(two, topology=Unavailable(Reason.NOT_SUPPORTED, "NVMLError_NotSupported"))
    assert topology(missing).status is Status.UNKNOWN
    pairs = two.topology.pairs
    blank = tuple(dataclasses.replace(p, p2p_read=Unavailable(Reason.NOT_SUPPORTED, "x")) for p in pairs)
    half = dataclasses.replace(two, topology=dataclasses.replace(two.topology, pairs=blank))
    finding = topology(half)
    assert finding.status is Status.UNKNOWN
    assert finding.remediation is not None and finding.remediation.commands[0].argv[:2] == (
        "nvidia-smi",
        "topo",
    )


# --- the facts, from a capture's answers and from the binding ---------------------------------------------


def recorded(devices: list[dict[str, Any]]) -> RecordedNvml:
    nvml = RecordedNvml({"init": None, "devices": devices})
    nvml.init()
    return nvml


def test_a_capture_is_read_pair_by_pair() -> None:
    devices: list[dict[str, Any]] = [
        {
            "pci_bus_id": "00000000:0A:00.0",
            "nvlinks": [{"remote_bus_id": "00000000:0B:00.0", "remote_type": "gpu"}] * 4,
            "topology_common_ancestor": [None, 30],
            "p2p_status_read": [None, 0],
            "p2p_status_write": [None, {"error": "NotSupported", "code": 3}],
        },
        {"pci_bus_id": "00000000:0B:00.0", "nvlinks": {"error": "NotSupported", "code": 3}},
    ]
    topo = read_topology(recorded(devices), 2)
    assert topo.gpus[0].nvlinks == (NvLink("0000:0b:00.0", "gpu"),) * 4
    assert topo.gpus[1].nvlinks == ()  # NotSupported: a GPU without NVLink
    assert isinstance(topo.pairs, tuple)
    (pair,) = topo.pairs
    assert (pair.common_ancestor, pair.p2p_read) == (Ancestor.HOSTBRIDGE, P2pStatus.OK)
    assert isinstance(pair.p2p_write, Unavailable) and pair.p2p_write.reason is Reason.NOT_SUPPORTED


@pytest.mark.parametrize(
    "garbage",
    [{"topology_common_ancestor": [None, 35]}, {"topology_common_ancestor": "50"}, {"nvlinks": [7]}],
)
def test_garbled_answers_are_unparseable_never_a_crash(garbage: dict[str, Any]) -> None:
    first: dict[str, Any] = {"pci_bus_id": "00000000:0A:00.0", **garbage}
    topo = read_topology(recorded([first, {}]), 2)
    assert isinstance(topo.pairs, tuple)
    values = [topo.gpus[0].nvlinks, topo.pairs[0].common_ancestor]
    assert any(isinstance(v, Unavailable) and v.reason is Reason.UNPARSEABLE for v in values)


def test_pairs_are_not_asked_past_the_limit() -> None:
    topo = read_topology(recorded([{}] * 40), 40)
    assert isinstance(topo.pairs, Unavailable) and "40 GPUs" in topo.pairs.detail


def test_the_binding_answers_pairs_with_plain_p2p_indices(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[Any] = []

    def p2p(h: object, other: object, index: Any) -> int:
        asked.append(index)
        if index == 1:
            raise FakeNVMLError(3)
        return 2

    def state(h: object, link: int) -> int:
        if link >= 2:
            raise FakeNVMLError(2)  # InvalidArgument: no such link
        return 1

    fake_pynvml(
        monkeypatch,
        nvmlDeviceGetCount=lambda: 2,
        nvmlDeviceGetP2PStatus=p2p,
        nvmlDeviceGetTopologyCommonAncestor=lambda h, other: 50,
        nvmlDeviceGetNvLinkState=state,
        nvmlDeviceGetNvLinkRemoteDeviceType=lambda h, link: 2,
        nvmlDeviceGetNvLinkRemotePciInfo=lambda h, link: types.SimpleNamespace(busId=b"00000000:05:00.0"),
    )
    nvml = RealNvml()
    nvml.init()
    assert nvml.device(0, "p2p_status_read") == [None, 2]
    assert nvml.device(0, "p2p_status_write") == [None, {"error": "NotSupported", "code": 3}]
    assert asked == [0, 1]  # never pynvml's NVML_P2P_CAPS_INDEX_READ, which is the tuple (0,)
    assert nvml.device(1, "topology_common_ancestor") == [50, None]
    assert nvml.device(0, "nvlinks") == [{"remote_bus_id": "00000000:05:00.0", "remote_type": "switch"}] * 2


def test_a_link_whose_far_end_cannot_be_read_is_still_a_link(monkeypatch: pytest.MonkeyPatch) -> None:
    """Review finding: one NotSupported from the remote-PCI call made the whole answer NotSupported, which
    reads as "no NVLink at all"."""

    def state(h: object, link: int) -> int:
        if link >= 18:
            raise FakeNVMLError(2)
        return 1

    def unknown(h: object, link: int) -> object:
        raise FakeNVMLError(3)

    fake_pynvml(
        monkeypatch,
        nvmlDeviceGetNvLinkState=state,
        nvmlDeviceGetNvLinkRemoteDeviceType=lambda h, link: 2,
        nvmlDeviceGetNvLinkRemotePciInfo=unknown,
    )
    nvml = RealNvml()
    nvml.init()
    answer = nvml.device(0, "nvlinks")
    assert answer == [{"remote_bus_id": None, "remote_type": "switch"}] * 18
    topo = read_topology(recorded([{"pci_bus_id": "00000000:0A:00.0", "nvlinks": answer}]), 1)
    assert isinstance(topo.gpus[0].nvlinks, tuple) and len(topo.gpus[0].nvlinks) == 18


def test_capture_records_the_topology_and_the_replay_reads_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """`gpu-doctor capture` writes what NVML answered (nvml.json); replayed, the topology facts are the same."""

    def state(h: object, link: int) -> int:
        if link >= 2:
            raise FakeNVMLError(2)
        return 1

    def p2p(h: object, other: object, index: int) -> int:
        if index == 1:
            raise FakeNVMLError(3)  # write status not supported: recorded as the pair's error
        return 0

    fake_pynvml(
        monkeypatch,
        nvmlDeviceGetCount=lambda: 2,
        nvmlDeviceGetPciInfo=lambda h: types.SimpleNamespace(
            busId=b"00000000:0A:00.0", pciDeviceId=0x233010DE
        ),
        nvmlDeviceGetP2PStatus=p2p,
        nvmlDeviceGetTopologyCommonAncestor=lambda h, other: 10,
        nvmlDeviceGetNvLinkState=state,
        nvmlDeviceGetNvLinkRemoteDeviceType=lambda h, link: 0,
        nvmlDeviceGetNvLinkRemotePciInfo=lambda h, link: types.SimpleNamespace(busId="00000000:0B:00.0"),
    )
    recording = RecordingNvml(RealNvml())
    recording.init()
    live = read_topology(recording, 2)
    replayed = read_topology(recorded(json.loads(json.dumps(recording.data))["devices"]), 2)
    assert replayed == live
    assert isinstance(live.pairs, tuple) and live.pairs[0].common_ancestor is Ancestor.SINGLE
    assert isinstance(live.pairs[0].p2p_write, Unavailable)
    assert live.gpus[0].nvlinks == (NvLink("0000:0b:00.0", "gpu"),) * 2
