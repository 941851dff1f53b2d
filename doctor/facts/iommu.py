"""IOMMU state and what it does to peer-to-peer traffic between NVIDIA GPUs, from what a user may read.

ACS (Access Control Services) lives in PCIe extended config space, which sysfs `config` hides from non-root
readers beyond 64 bytes (hardware.md §1.1), so its control bits are never read here. What is readable:
`/sys/class/iommu/*` (one entry per active IOMMU unit: dmar0, ivhd0), `/sys/kernel/iommu_groups/<n>/{type,devices}`
(type is `DMA`, `DMA-FQ`, `identity`, `blocked` or `unmanaged`: drivers/iommu/iommu.c `iommu_group_show_type`),
each device's `iommu_group` link, and `/proc/cmdline`.

The kernel turns ACS on when an IOMMU driver initialises and isolates a device in its own IOMMU group only when
ACS P2P Request/Completion Redirect (with Source Validation and Upstream Forwarding) is enabled on every port
between it and the root (`pci_device_group` → `pci_acs_path_enabled(..., REQ_ACS_FLAGS)`, drivers/iommu/iommu.c).
So two GPUs below the same PCIe switch that sit in *different* groups prove that the switch's downstream ports
redirect their peer-to-peer requests up to the root complex: "IO virtualization (also known as VT-d or IOMMU) can
interfere with GPU Direct by redirecting all PCI point-to-point traffic to the CPU root complex, causing a
significant performance reduction or even a hang" (NCCL troubleshooting guide, "PCI Access Control Services").
`pcie_acs_override=` (an out-of-tree VFIO patch) makes groups lie about ACS; then the answer is unknown.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from torch_gpu_doctor.facts.bdf import normalize_bdf
from torch_gpu_doctor.facts.pcie_link import FUNCTION_NAME
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

if TYPE_CHECKING:
    from torch_gpu_doctor.facts.pci import PciDevice

IOMMU_CLASS = "/sys/class/iommu"
IOMMU_GROUPS = "/sys/kernel/iommu_groups"
PCI_DEVICES = "/sys/bus/pci/devices"
VENDOR_NVIDIA = 0x10DE
TRANSLATED_TYPES = (
    "DMA",
    "DMA-FQ",
    "DMA-SQ",
)  # addresses go through IOMMU page tables; identity = passthrough
NO_SHARED_SWITCH = Unavailable(
    Reason.NOT_APPLICABLE, "no shared PCIe switch: their traffic crosses the root complex"
)
_CMDLINE_KEYS = (
    "intel_iommu=",
    "amd_iommu=",
    "iommu=",
    "iommu.passthrough=",
    "iommu.strict=",
    "pcie_acs_override=",
)


@dataclass(frozen=True)
class GpuIommu:
    bdf: str
    upstream: Maybe[tuple[str, ...]]  # PCI functions from the root port down to the GPU's own upstream port
    group: Maybe[str]  # IOMMU group number (the `iommu_group` link); not_found: no IOMMU covers it
    domain_type: Maybe[str]  # the group's default domain: DMA / DMA-FQ (translated) or identity (passthrough)
    group_devices: Maybe[tuple[str, ...]]


@dataclass(frozen=True)
class GpuPairRoute:
    """How peer-to-peer traffic between two NVIDIA GPUs travels."""

    first: str
    second: str
    shared_bridge: (
        str | None
    )  # the deepest PCI function above both (a PCIe switch); None: only the root complex
    turn_ports: tuple[str, ...]  # the switch ports just below it on each side: where ACS redirect acts
    acs_redirect: Maybe[bool]  # True: Linux isolates them, so those ports send P2P up to the root complex


@dataclass(frozen=True)
class IommuFacts:
    units: Maybe[tuple[str, ...]]  # /sys/class/iommu entries
    group_count: Maybe[int]  # /sys/kernel/iommu_groups entries; 0: no IOMMU is translating or isolating
    cmdline_options: tuple[
        str, ...
    ]  # intel_iommu=, amd_iommu=, iommu=, iommu.passthrough=, pcie_acs_override=
    gpus: tuple[GpuIommu, ...]
    pairs: tuple[GpuPairRoute, ...]  # only pairs below one root port (routes_below_shared_ports)

    @property
    def acs_override(self) -> bool:
        return any(o.startswith("pcie_acs_override=") for o in self.cmdline_options)

    @property
    def active(self) -> bool | None:
        """Whether an IOMMU has groups; None when that could not be read."""
        if isinstance(self.group_count, int):
            return self.group_count > 0
        return None


def iommu_cmdline_options(cmdline: str) -> tuple[str, ...]:
    return tuple(w for w in cmdline.split() if w.startswith(_CMDLINE_KEYS))


def upstream_functions(sysfs_path: str) -> tuple[str, ...]:
    """The PCI functions above a device in its resolved sysfs path, root port first (the device excluded)."""
    names = [p for p in sysfs_path.split("/") if FUNCTION_NAME.match(p)]
    return tuple(names[:-1])


def pair_route(a: GpuIommu, b: GpuIommu, override: bool) -> GpuPairRoute:
    if isinstance(a.upstream, Unavailable):
        return GpuPairRoute(a.bdf, b.bdf, None, (), a.upstream)
    if isinstance(b.upstream, Unavailable):
        return GpuPairRoute(a.bdf, b.bdf, None, (), b.upstream)
    depth = 0
    while depth < min(len(a.upstream), len(b.upstream)) and a.upstream[depth] == b.upstream[depth]:
        depth += 1
    if depth == 0:
        return GpuPairRoute(a.bdf, b.bdf, None, (), NO_SHARED_SWITCH)
    turns = tuple((*path, bdf)[depth] for path, bdf in ((a.upstream, a.bdf), (b.upstream, b.bdf)))
    return GpuPairRoute(a.bdf, b.bdf, a.upstream[depth - 1], turns, _redirect(a, b, override))


def routes_below_shared_ports(gpus: tuple[GpuIommu, ...], override: bool) -> tuple[GpuPairRoute, ...]:
    """The routes that can hold a PCIe switch: between GPUs below one root port. GPUs on separate root ports
    share no switch (their traffic crosses the root complex whatever ACS says), so their pairs say nothing and
    are not listed: the facts grow with the GPUs per root port, not with the square of all GPUs (issue 21).
    A GPU whose path is unknown is listed once, with the first other GPU, so that the unknown is seen."""
    by_port: dict[str, list[GpuIommu]] = {}
    routes: list[GpuPairRoute] = []
    paired: set[frozenset[str]] = set()
    for gpu in gpus:
        if isinstance(gpu.upstream, Unavailable):
            other = next((o for o in gpus if o is not gpu), None)
            if other is not None and frozenset((gpu.bdf, other.bdf)) not in paired:
                paired.add(frozenset((gpu.bdf, other.bdf)))
                routes.append(pair_route(gpu, other, override))
        elif gpu.upstream:
            by_port.setdefault(gpu.upstream[0], []).append(gpu)
    for members in by_port.values():
        routes += [pair_route(a, b, override) for i, a in enumerate(members) for b in members[i + 1 :]]
    return tuple(routes)


def _redirect(a: GpuIommu, b: GpuIommu, override: bool) -> Maybe[bool]:
    if override:
        return Unavailable(Reason.NOT_SUPPORTED, "pcie_acs_override= makes IOMMU groups ignore ACS")
    for gpu in (a, b):
        if isinstance(gpu.group, Unavailable):
            if gpu.group.reason is Reason.NOT_FOUND:
                return Unavailable(
                    Reason.NOT_APPLICABLE,
                    f"{gpu.bdf} has no IOMMU group: Linux enabled no ACS (firmware-set ACS needs root to read)",
                )
            return gpu.group
    return a.group != b.group


def gather_iommu(host: Host, pci: tuple[PciDevice, ...] | Unavailable) -> IommuFacts | Unavailable:
    if isinstance(pci, Unavailable):
        return pci
    cmdline = host.read_text("/proc/cmdline")
    options = () if isinstance(cmdline, Unavailable) else iommu_cmdline_options(cmdline)
    groups = host.listdir(IOMMU_GROUPS)
    group_count: Maybe[int]
    if isinstance(groups, Unavailable):
        # No /sys/kernel/iommu_groups: a kernel built without IOMMU support, so no IOMMU at all.
        group_count = 0 if groups.reason is Reason.NOT_FOUND else groups
    else:
        group_count = len(groups)
    gpus = tuple(_gpu(host, d.bdf) for d in pci if d.vendor_id == VENDOR_NVIDIA)
    override = any(o.startswith("pcie_acs_override=") for o in options)
    pairs = routes_below_shared_ports(gpus, override)
    units = host.listdir(IOMMU_CLASS)
    return IommuFacts(
        units=() if isinstance(units, Unavailable) and units.reason is Reason.NOT_FOUND else units,
        group_count=group_count,
        cmdline_options=options,
        gpus=gpus,
        pairs=pairs,
    )


def _gpu(host: Host, bdf: str) -> GpuIommu:
    base = f"{PCI_DEVICES}/{bdf}"
    resolved = host.realpath(base)
    upstream: Maybe[tuple[str, ...]] = (
        resolved if isinstance(resolved, Unavailable) else upstream_functions(resolved)
    )
    link = host.readlink(f"{base}/iommu_group")
    if isinstance(link, Unavailable):
        return GpuIommu(bdf, upstream, link, link, link)
    group = posixpath.basename(link.rstrip("/"))
    if not group.isascii() or not group.isdigit():
        bad = Unavailable(Reason.UNPARSEABLE, f"{base}/iommu_group -> {link[:60]}")
        return GpuIommu(bdf, upstream, bad, bad, bad)
    kind = host.read_text(f"{IOMMU_GROUPS}/{group}/type")
    members = host.listdir(f"{IOMMU_GROUPS}/{group}/devices")
    return GpuIommu(
        bdf=bdf,
        upstream=upstream,
        group=group,
        domain_type=kind if isinstance(kind, Unavailable) else _domain_type(kind),
        group_devices=members if isinstance(members, Unavailable) else _bdfs(members),
    )


def _domain_type(text: str) -> Maybe[str]:
    token = text.strip()
    known = (*TRANSLATED_TYPES, "identity", "blocked", "unmanaged", "unknown")
    return token if token in known else Unavailable(Reason.UNPARSEABLE, f"IOMMU group type {token[:40]!r}")


def _bdfs(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(b for b in (normalize_bdf(n) for n in names) if b is not None)
