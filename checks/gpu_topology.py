"""gpu.topology: how the GPUs talk to each other, from NVML (what `nvidia-smi topo -m` and `topo -p2p rw` show).

NCCL moves data between two GPUs over NVLink when they have one, else peer-to-peer over PCIe when the GPUs and
the platform allow it, else through host memory (a copy out and a copy in, across the CPU interconnect when the
GPUs sit on different sockets). The check says which path each pair gets, draws the matrix, and warns only where
something on this machine can be changed: an NVLink that is down, peer-to-peer turned off in the driver, or a
platform that blocks it. A path the hardware dictates (GeForce cards have no peer-to-peer; two sockets) is
stated with its consequence, never as a failure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.topology import (
    LEVEL_WORDS,
    Ancestor,
    GpuLinks,
    GpuPair,
    P2pStatus,
    TopologyFacts,
    nvlink_count,
)
from torch_gpu_doctor.model import Command, Evidence, Finding, Remediation, Status
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Unavailable

ID = "gpu.topology"
SOURCE = "NVML (nvidia-smi topo -m)"
P2P_WORDS = {
    P2pStatus.OK: "OK",
    P2pStatus.CHIPSET_NOT_SUPPORTED: "CNS",
    P2pStatus.GPU_NOT_SUPPORTED: "GNS",
    P2pStatus.TOPOLOGY_NOT_SUPPORTED: "TNS",
    P2pStatus.DISABLED_BY_REGKEY: "DR",
    P2pStatus.NOT_SUPPORTED: "NS",
    P2pStatus.UNKNOWN: "U",
}
# what the platform, not the GPU, refuses: the cases a change of slots, BIOS or IOMMU settings can mend
PLATFORM_REFUSALS = (P2pStatus.CHIPSET_NOT_SUPPORTED, P2pStatus.TOPOLOGY_NOT_SUPPORTED)
TOPO = Command(("nvidia-smi", "topo", "-m"), "the connection matrix, as the driver sees it")
P2P = Command(("nvidia-smi", "topo", "-p2p", "rw"), "peer-to-peer read/write status per pair")


def cell(topo: TopologyFacts, pair: GpuPair) -> str:
    """The pair's entry of the matrix, in `nvidia-smi topo -m`'s words."""
    links, _ = nvlink_count(topo, pair)
    if links:
        return f"NV{links}"
    level = pair.common_ancestor
    return "?" if isinstance(level, Unavailable) else LEVEL_WORDS[level][0]


def path(topo: TopologyFacts, pair: GpuPair) -> str:
    """How NCCL moves data between the two GPUs."""
    if nvlink_count(topo, pair)[0]:
        return "NVLink"
    if pair.p2p_read is P2pStatus.OK and pair.p2p_write is P2pStatus.OK:
        return "peer-to-peer over PCIe"
    if _unanswered(pair):
        # NCCL's own cutoff stops peer-to-peer short of the link between CPU sockets (NCCL_P2P_LEVEL: PHB by
        # default, "SYS: use P2P between NUMA nodes" only when asked): whatever the GPUs allow
        return "host memory" if pair.common_ancestor is Ancestor.SYSTEM else "unknown"
    return "host memory"


def matrix(topo: TopologyFacts, pairs: tuple[GpuPair, ...]) -> str:
    """The connection matrix as `nvidia-smi topo -m` draws it, then peer-to-peer as `topo -p2p rw` would: one
    line when every pair has the same status, else its own matrix (narrow enough for the TUI's pane)."""
    indices = [g.index for g in topo.gpus]
    cells = {(p.first, p.second): p for p in pairs}

    def pair(a: int, b: int) -> GpuPair | None:
        return cells.get((min(a, b), max(a, b)))

    def p2p(found: GpuPair | None) -> str:
        if (
            found is None
            or isinstance(found.p2p_read, Unavailable)
            or isinstance(found.p2p_write, Unavailable)
        ):
            return "?"
        read, write = P2P_WORDS[found.p2p_read], P2P_WORDS[found.p2p_write]
        return read if read == write else f"{read}/{write}"

    def grid(entry: Callable[[GpuPair | None], str]) -> list[str]:
        texts = {(a, b): "X" if a == b else entry(pair(a, b)) for a in indices for b in indices}
        width = max([len(t) for t in texts.values()] + [4]) + 1
        head = " " * 5 + "".join(f"GPU{i}".ljust(width) for i in indices)
        rows = [f"GPU{a}".ljust(5) + "".join(texts[a, b].ljust(width) for b in indices) for a in indices]
        return [head.rstrip(), *(r.rstrip() for r in rows)]

    lines = grid(lambda found: "?" if found is None else cell(topo, found))
    statuses = {p2p(p) for p in pairs}
    if len(statuses) == 1:
        lines.append(f"Peer-to-peer read/write: {next(iter(statuses))} for every pair.")
    else:
        lines += ["Peer-to-peer read/write:", *grid(p2p)]
    lines.append(
        "NV# = # NVLinks; PIX, PXB, PHB, NODE, SYS = the PCIe path (one switch, several, the CPU's host bridge, "
        "between host bridges, across CPU sockets); OK = peer-to-peer works, GNS = the GPU does not support "
        "it, NS = not supported, CNS/TNS = the chipset/topology refuses it, DR = disabled in the driver, "
        "U = unknown."
    )
    return "\n".join(lines)


def _down_links(topo: TopologyFacts) -> list[GpuLinks]:
    """GPUs with fewer active NVLinks than the best-linked GPU: a link is down. On an NVSwitch baseboard every
    GPU is wired to the switches, so a GPU with none active counts too; GPUs joined by bridges are compared
    only among those that have a link (a third GPU without a bridge is not a fault)."""
    counts = {g.index: len(g.nvlinks) for g in topo.gpus if isinstance(g.nvlinks, tuple)}
    switched = any(
        link.remote_type == "switch" for g in topo.gpus if isinstance(g.nvlinks, tuple) for link in g.nvlinks
    )
    usual = max(counts.values(), default=0)
    if usual == 0:
        return []
    return [
        g
        for g in topo.gpus
        if g.index in counts and counts[g.index] < usual and (counts[g.index] or switched)
    ]


def _unanswered(pair: GpuPair) -> bool:
    return isinstance(pair.p2p_read, Unavailable) or isinstance(pair.p2p_write, Unavailable)


def _first_reason(pairs: list[GpuPair]) -> str:
    for pair in pairs:
        for value in (pair.p2p_read, pair.p2p_write, pair.common_ancestor):
            if isinstance(value, Unavailable):
                return str(value)
    return "no answer"


def _names(pairs: list[GpuPair]) -> str:
    shown = ", ".join(f"{p.first}-{p.second}" for p in pairs[:6])
    return shown + (f" and {len(pairs) - 6} more" if len(pairs) > 6 else "")


@check(ID, "The GPUs reach each other over the fastest path they have", "gpu")
def topology(facts: Facts) -> Finding:
    """
    ## What it checks
    With two or more NVIDIA GPUs, from NVML (no torch needed): each GPU's active NVLinks and what they reach
    (another GPU or an NVSwitch), and for every pair the closest common point of their PCIe paths (one switch,
    several, the CPU's host bridge, across CPU sockets) and whether peer-to-peer reads and writes are allowed.
    It draws the matrix `nvidia-smi topo -m` prints and names the path NCCL takes for each pair: NVLink,
    peer-to-peer over PCIe, or through host memory.

    ## Why it matters
    Multi-GPU training exchanges gradients (data parallel) or activations (tensor and pipeline parallel)
    between GPUs at every step. Over NVLink that takes a fraction of the time it takes over PCIe; through
    host memory each transfer is copied twice and, between CPU sockets, crosses their interconnect as well.
    An NVLink that is down, or peer-to-peer turned off in the driver or refused by the platform, slows every
    step without any error message.

    ## How to fix
    For a link that is down: `nvidia-smi nvlink -s` shows which; reset the GPU or reboot, and report a link
    that stays down to the vendor. For peer-to-peer disabled in the driver: remove the driver option or VM
    setting that turns it off. For a platform that refuses it: see platform.iommu_p2p (ACS and the IOMMU), and
    put GPUs that work together under one CPU or PCIe switch. Across CPU sockets, keep a job's GPUs on one
    socket where it can, and bind each process to its GPU's NUMA node.
    """
    nvml, topo = facts.nvml, facts.topology
    count = max(
        len(nvml.devices) if not isinstance(nvml, Unavailable) else 0,
        len(topo.gpus) if not isinstance(topo, Unavailable) else 0,  # a pasted matrix, without NVML's list
    )
    if count < 2:
        return Finding(
            ID, Status.SKIP, "Fewer than two NVIDIA GPUs: there is no connection between GPUs to check."
        )
    if isinstance(topo, Unavailable):
        return Finding(
            ID,
            Status.UNKNOWN,
            f"How the {count} GPUs are connected is not known: {topo}.",
            remediation=Remediation("Run these on the machine to see the connections.", (TOPO, P2P)),
        )
    if isinstance(topo.pairs, Unavailable):
        return Finding(
            ID,
            Status.UNKNOWN,
            f"The GPU pairs were not read: {topo.pairs}.",
            remediation=Remediation("nvidia-smi draws the matrix for any number of GPUs.", (TOPO,)),
        )
    pairs = topo.pairs
    evidence = (Evidence("connections", "\n" + matrix(topo, pairs), SOURCE),)
    unknown = [p for p in pairs if path(topo, p) == "unknown"]
    if unknown:
        return Finding(
            ID,
            Status.UNKNOWN,
            f"Whether GPUs {_names(unknown)} can reach each other directly is not known "
            f"({_first_reason(unknown)}).",
            evidence=evidence,
            remediation=Remediation("Run these on the machine to see the connections.", (TOPO, P2P)),
        )
    down = _down_links(topo)
    if down:
        worst = down[0]
        assert isinstance(worst.nvlinks, tuple)
        usual = max(len(g.nvlinks) for g in topo.gpus if isinstance(g.nvlinks, tuple))
        return Finding(
            ID,
            Status.WARN,
            f"GPU {worst.index} has {len(worst.nvlinks)} active NVLinks where the other GPUs have {usual}: "
            "a link is down, and every transfer to or from it is slower.",
            details=f"GPUs with fewer links: {', '.join(str(g.index) for g in down)}.",
            evidence=evidence,
            remediation=Remediation(
                "See which link is down; a GPU reset or a reboot brings a link back after a transient fault. "
                "A link that stays down after a reboot is a hardware fault: report it to the vendor.",
                (
                    Command(
                        ("nvidia-smi", "nvlink", "-s", "-i", str(worst.index)), "each link's state and speed"
                    ),
                ),
            ),
        )
    no_nvlink = [p for p in pairs if not nvlink_count(topo, p)[0]]
    regkey = [p for p in no_nvlink if P2pStatus.DISABLED_BY_REGKEY in (p.p2p_read, p.p2p_write)]
    if regkey:
        return Finding(
            ID,
            Status.WARN,
            f"Peer-to-peer between GPUs {_names(regkey)} is disabled in the driver, so their traffic goes "
            "through host memory.",
            details=(
                "NVML reports the status 'disabled by regkey': a driver registry option (NVreg_RegistryDwords) "
                "or, in a virtual machine, the hypervisor's setting turns it off."
            ),
            evidence=evidence,
            remediation=Remediation(
                "Look for the option that sets it and remove it (then reload the driver or reboot); in a VM, "
                "ask the provider whether GPU peer-to-peer can be enabled.",
                (
                    Command(
                        ("grep", "-rs", "RegistryDwords", "/etc/modprobe.d", "/proc/driver/nvidia/params")
                    ),
                    P2P,
                ),
            ),
        )
    refused = [p for p in no_nvlink if p.p2p_read in PLATFORM_REFUSALS or p.p2p_write in PLATFORM_REFUSALS]
    if refused:
        return Finding(
            ID,
            Status.WARN,
            f"The platform refuses peer-to-peer between GPUs {_names(refused)}: their traffic goes through host "
            "memory although the GPUs support it.",
            details=(
                "NVML reports 'chipset not supported' or 'topology not supported': the PCIe path between them "
                "(ACS redirect on a switch, an IOMMU in translated mode, or a root complex without peer-to-peer "
                "forwarding) does not let the GPUs address each other."
            ),
            evidence=evidence,
            remediation=Remediation(
                "See platform.iommu_p2p for ACS and the IOMMU; otherwise put the GPUs that work together under "
                "one PCIe switch or one CPU. Until then NCCL_P2P_DISABLE=1 keeps NCCL off a path that may hang.",
                (P2P, Command(("nvidia-smi", "topo", "-m"))),
            ),
        )
    return Finding(ID, Status.PASS, _summary(topo, pairs), details=_advice(topo, pairs), evidence=evidence)


def _summary(topo: TopologyFacts, pairs: tuple[GpuPair, ...]) -> str:
    paths = Counter(path(topo, p) for p in pairs)
    gpus = len(topo.gpus)
    if paths["NVLink"] == len(pairs):
        switched = nvlink_count(topo, pairs[0])[1]
        via = " through NVSwitch" if switched else ""
        every = "every pair" if len(pairs) > 1 else "both"
        return f"{gpus} GPUs: {every} over NVLink ({cell(topo, pairs[0])}{via})."
    words = {"NVLink": "over NVLink", "host memory": "through host memory"}
    if len(paths) == 1:
        way = next(iter(paths))
        return (
            f"{gpus} GPUs: {'both' if len(pairs) == 1 else f'all {len(pairs)} pairs'} {words.get(way, way)}."
        )
    parts = [f"{n} {'pair' if n == 1 else 'pairs'} {words.get(way, way)}" for way, n in paths.most_common()]
    return f"{gpus} GPUs: " + ", ".join(parts) + "."


def _advice(topo: TopologyFacts, pairs: tuple[GpuPair, ...]) -> str:
    lines = []
    # pairs NVML refused peer-to-peer; across sockets with no answer, the sockets' line below says it
    host = [p for p in pairs if path(topo, p) == "host memory" and not _unanswered(p)]
    if host and all(P2pStatus.GPU_NOT_SUPPORTED in (p.p2p_read, p.p2p_write) for p in host):
        lines.append(
            "These GPUs do not support peer-to-peer (NVIDIA leaves it off on GeForce cards), so NCCL copies "
            "through host memory: data-parallel training works and scales with large per-GPU batches; tensor "
            "parallelism across them is slow."
        )
    elif host:
        lines.append(
            f"NVML reports no peer-to-peer between GPUs {_names(host)}, so NCCL copies through host memory: "
            "data-parallel training works and scales with large per-GPU batches; tensor parallelism across "
            "them is slow."
        )
    nvlinked = [p for p in pairs if path(topo, p) == "NVLink"]
    if nvlinked and len(nvlinked) < len(pairs):
        lines.append(
            f"Only GPUs {_names(nvlinked)} share an NVLink: keep tensor-parallel groups inside those pairs."
        )
    sockets = [p for p in pairs if p.common_ancestor is Ancestor.SYSTEM and path(topo, p) != "NVLink"]
    if sockets:
        lines.append(
            f"GPUs {_names(sockets)} reach each other across the link between CPU sockets (NUMA nodes): keep "
            "a job's GPUs on one socket where it can, and bind each process to its GPU's NUMA node (`numactl --cpunodebind=N --membind=N`; "
            "`nvidia-smi topo -m` shows each GPU's NUMA node)."
        )
    return "\n".join(lines)
