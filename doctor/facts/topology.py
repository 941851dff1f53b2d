"""How the NVIDIA GPUs are connected to each other, as NVML tells it (what `nvidia-smi topo -m` and `nvidia-smi
topo -p2p rw` print): each GPU's active NVLinks and what is at their other end (a GPU, an NVSwitch), and for
each pair of GPUs the closest common ancestor on the PCIe tree and whether peer-to-peer reads and writes work.
No torch is needed. Every answer may fail on its own (NotSupported on a GPU without NVLink, for instance).
"""

from __future__ import annotations

import contextlib
from enum import IntEnum
from typing import Any

from torch_gpu_doctor.facts.bdf import normalize_bdf
from torch_gpu_doctor.facts.nvml import ask_device, error_unavailable, per_device_session
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.host.nvml import Nvml, NvmlError
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

# Pairs grow with the square of the GPUs: past this many, the pairs are not asked (no one host has more GPUs
# than this today; a larger count is a big NVL system whose fabric nvidia-smi and DCGM describe better).
MAX_TOPOLOGY_GPUS = 32
MAX_NVLINKS = 64  # NVML_NVLINK_MAX_LINKS is 18 on Hopper, 36 in current headers


class Ancestor(IntEnum):
    """nvmlGpuTopologyLevel_t, and the words `nvidia-smi topo -m` prints for each."""

    INTERNAL = 0  # two GPUs on one board (K80, GTX 690)
    SINGLE = 10  # PIX: at most one PCIe bridge
    MULTIPLE = 20  # PXB: several PCIe bridges, not the host bridge
    HOSTBRIDGE = 30  # PHB: through the CPU's PCIe host bridge
    NODE = 40  # NODE: between host bridges within one NUMA node
    SYSTEM = 50  # SYS: across the interconnect between CPU sockets (QPI/UPI, Infinity Fabric)


# what `nvidia-smi topo -m` prints for each level, and the words the report says it in
LEVEL_WORDS = {
    Ancestor.INTERNAL: ("BRD", "on one board"),
    Ancestor.SINGLE: ("PIX", "through one PCIe switch"),
    Ancestor.MULTIPLE: ("PXB", "through several PCIe switches"),
    Ancestor.HOSTBRIDGE: ("PHB", "through the CPU's PCIe host bridge"),
    Ancestor.NODE: ("NODE", "between PCIe host bridges of one CPU"),
    Ancestor.SYSTEM: ("SYS", "across the link between CPU sockets"),
}


class P2pStatus(IntEnum):
    """nvmlGpuP2PStatus_t, and the abbreviations of `nvidia-smi topo -p2p rw`."""

    OK = 0
    CHIPSET_NOT_SUPPORTED = 1  # CNS
    GPU_NOT_SUPPORTED = 2  # GNS: GeForce cards since the RTX 40 series, for instance
    TOPOLOGY_NOT_SUPPORTED = 3  # TNS
    DISABLED_BY_REGKEY = 4  # DR
    NOT_SUPPORTED = 5  # NS
    UNKNOWN = 6  # U


@dataclass(frozen=True)
class NvLink:
    remote_bdf: Maybe[str]  # the device at the other end: a GPU's or an NVSwitch's PCI address
    remote_type: str  # "gpu", "switch", "ibmnpu" or "unknown"


@dataclass(frozen=True)
class GpuLinks:
    index: int  # NVML index
    bdf: Maybe[str]
    nvlinks: Maybe[tuple[NvLink, ...]]  # the active links; () when the GPU has none


@dataclass(frozen=True)
class GpuPair:
    first: int  # NVML indices, first < second
    second: int
    common_ancestor: Maybe[Ancestor]
    p2p_read: Maybe[P2pStatus]
    p2p_write: Maybe[P2pStatus]


@dataclass(frozen=True)
class TopologyFacts:
    gpus: tuple[GpuLinks, ...]
    pairs: Maybe[tuple[GpuPair, ...]]  # every pair once; unavailable past MAX_TOPOLOGY_GPUS


def nvlink_count(topo: TopologyFacts, pair: GpuPair) -> tuple[int, bool]:
    """The NVLinks joining the pair, and whether they go through NVSwitches (every GPU on the fabric then
    reaches every other with all of its links, as `nvidia-smi topo -m` prints it: NV18 on an HGX H100)."""
    by_index = {g.index: g for g in topo.gpus}
    first, second = by_index.get(pair.first), by_index.get(pair.second)
    if first is None or second is None:
        return 0, False
    ours, theirs = first.nvlinks, second.nvlinks
    if isinstance(ours, Unavailable) or isinstance(theirs, Unavailable):
        return 0, False
    direct = sum(1 for link in ours if link.remote_type == "gpu" and link.remote_bdf == second.bdf)
    if direct:
        return direct, False
    switched = min(
        sum(1 for link in ours if link.remote_type == "switch"),
        sum(1 for link in theirs if link.remote_type == "switch"),
    )
    return (switched, True) if switched else (0, False)


def all_pairs_nvlinked(topology: Maybe[TopologyFacts]) -> bool:
    """Whether NVLink joins every pair of GPUs (False when not known)."""
    if isinstance(topology, Unavailable) or isinstance(topology.pairs, Unavailable) or not topology.pairs:
        return False
    return all(nvlink_count(topology, p)[0] for p in topology.pairs)


def _nvlinks(raw: Any) -> Maybe[tuple[NvLink, ...]]:
    if isinstance(raw, Unavailable):
        # no NVLink at all is how a GPU without it answers: an empty list, not a missing fact
        return () if raw.reason is Reason.NOT_SUPPORTED else raw
    if not isinstance(raw, list) or len(raw) > MAX_NVLINKS:
        return Unavailable(Reason.UNPARSEABLE, f"nvlinks={raw!r}"[:120])
    links = []
    for entry in raw:
        if not isinstance(entry, dict) or not isinstance(entry.get("remote_type"), str):
            return Unavailable(Reason.UNPARSEABLE, f"nvlinks entry {entry!r}"[:120])
        bus = entry.get("remote_bus_id")
        bdf = normalize_bdf(bus) if isinstance(bus, str) else None
        remote: Maybe[str] = bdf or (
            Unavailable(Reason.FAILED, "NVML did not give the far end's PCI address")
            if bus is None
            else Unavailable(Reason.UNPARSEABLE, f"remote busId {bus!r}"[:80])
        )
        links.append(NvLink(remote, entry["remote_type"]))
    return tuple(links)


def _entry(raw: Any, other: int, query: str, kind: type[IntEnum]) -> Maybe[Any]:
    """Entry `other` of a pair query's list, as the enum it names."""
    if isinstance(raw, Unavailable):
        return raw
    if not isinstance(raw, list) or other >= len(raw):
        return Unavailable(Reason.UNPARSEABLE, f"{query}={raw!r}"[:120])
    value = raw[other]
    if isinstance(value, dict) and isinstance(value.get("error"), str):
        return error_unavailable(NvmlError(value["error"]))
    if isinstance(value, int) and not isinstance(value, bool):
        with contextlib.suppress(ValueError):
            return kind(value)
    return Unavailable(Reason.UNPARSEABLE, f"{query}[{other}]={value!r}"[:120])


def _bdf(nvml: Nvml, index: int) -> Maybe[str]:
    bus = ask_device(nvml, index, "pci_bus_id")
    if isinstance(bus, Unavailable):
        return bus
    return (normalize_bdf(bus) if isinstance(bus, str) else None) or Unavailable(
        Reason.UNPARSEABLE, f"busId {bus!r}"[:80]
    )


def read_topology(nvml: Nvml, count: int) -> TopologyFacts:
    gpus = tuple(GpuLinks(i, _bdf(nvml, i), _nvlinks(ask_device(nvml, i, "nvlinks"))) for i in range(count))
    if count > MAX_TOPOLOGY_GPUS:
        skipped = Unavailable(
            Reason.NOT_APPLICABLE, f"{count} GPUs: pairs are read for at most {MAX_TOPOLOGY_GPUS}"
        )
        return TopologyFacts(gpus, skipped)
    pairs = []
    for first in range(count):
        answers = {
            q: ask_device(nvml, first, q)
            for q in ("topology_common_ancestor", "p2p_status_read", "p2p_status_write")
        }
        for second in range(first + 1, count):
            pairs.append(
                GpuPair(
                    first,
                    second,
                    _entry(answers["topology_common_ancestor"], second, "topology_common_ancestor", Ancestor),
                    _entry(answers["p2p_status_read"], second, "p2p_status_read", P2pStatus),
                    _entry(answers["p2p_status_write"], second, "p2p_status_write", P2pStatus),
                )
            )
    return TopologyFacts(gpus, tuple(pairs))


def gather_topology(host: Host) -> TopologyFacts | Unavailable:
    return per_device_session(host, read_topology)
