"""PCIe link of each GPU and of every hop up to its root port, from sysfs (hardware.md §1).

`/sys/bus/pci/devices/<BDF>` links into `/sys/devices/pci<DDDD>:<BB>/<root port>/.../<BDF>`; every path component
named like a PCI function is a hop. Each hop's `current_link_*` describes one link (its LnkSta): an endpoint's or
upstream port's link above it, a downstream or root port's link below it. A GPU's own files describe only its
upstream link, so the bottleneck is the minimum over the whole chain, as the kernel computes it in
`pcie_bandwidth_available()` (drivers/pci/pci.c, hardware.md §1.3).
"""

from __future__ import annotations

import math
import posixpath
from collections.abc import Iterable

from torch_gpu_doctor.facts.bdf import normalize_bdf
from torch_gpu_doctor.facts.sysfs_attr import read_attribute
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

PCI_DEVICES = "/sys/bus/pci/devices"
MAX_HOPS = 16  # real chains are root port + a few switches (eGPU + on-card switch: ~6); this bounds garbage
PCI_BRIDGE_CLASS = 0x0604  # class >> 8: PCI-to-PCI bridge, which every PCIe root/switch port is

# The kernel names functions "%04x:%02x:%02x.%d" (probe.c); VMD domains (10000+) print 5 hex digits.
FUNCTION_NAME = lazy(r"^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
_HOST_BRIDGE_NAME = lazy(r"^pci[0-9a-f]{4,8}:[0-9a-f]{2}$")
# "8 GT/s" (kernel 4.13-5.6) and "8.0 GT/s PCIe" (5.7+); ASCII digits only, few enough to stay finite.
_SPEED = lazy(r"([0-9]{1,3}(?:\.[0-9]{1,3})?) ?GT/s(?: PCIe)?")
_UNKNOWN_SPEEDS = ("Unknown", "Unknown speed")  # pci_speed_string() fallbacks, new and old
_GENERATION_BY_GTS = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}
_GTS_BY_GENERATION = {gen: gts for gts, gen in _GENERATION_BY_GTS.items()}
# Usable GB/s (10^9 bytes/s) per lane and direction: GT/s x encoding efficiency / 8 bits.
_LANE_GBYTES_PER_S = {
    1: 2.5 * 8 / 10 / 8,  # 8b/10b                     = 0.25
    2: 5.0 * 8 / 10 / 8,  # 8b/10b                     = 0.5
    3: 8.0 * 128 / 130 / 8,  # 128b/130b               ≈ 0.985
    4: 16.0 * 128 / 130 / 8,  # 128b/130b              ≈ 1.969
    5: 32.0 * 128 / 130 / 8,  # 128b/130b              ≈ 3.938
    6: 64.0 * 242 / 256 / 8,  # PAM4 FLIT, 242 of 256 B ≈ 7.563
}
MAX_WIDTH = 63  # LnkSta's negotiated-width field is 6 bits; PCIe defines up to x32


@dataclass(frozen=True)
class LinkState:
    """One link as a port reports it: the negotiated (`current`) or the capable (`max`) state."""

    speed_gts: Maybe[float]
    generation: Maybe[int]
    width: Maybe[int]
    bandwidth_gbytes_per_s: Maybe[float]  # per direction, before TLP/DLLP overhead


@dataclass(frozen=True)
class PcieHop:
    """One PCI function on the way from a GPU to its root port."""

    bdf: str
    sysfs_path: str  # resolved /sys/devices/... directory
    on_root_bus: bool  # directly below the host bridge: a root port (or the device itself, if integrated)
    vendor_id: Maybe[int]
    device_id: Maybe[int]
    class_code: Maybe[int]
    is_bridge: Maybe[bool]  # class 0x0604xx: a root port or a switch port
    current_link: LinkState
    max_link: LinkState
    removable: Maybe[str]  # "removable" / "fixed" / "unknown"; not_found: the kernel did not mark it (5.14+)


@dataclass(frozen=True)
class PcieLinkPath:
    """A GPU's PCIe chain. `hops[0]` is the GPU itself, `hops[-1]` the hop nearest the root complex."""

    bdf: str
    sysfs_path: Maybe[str]
    power_state: Maybe[str]  # D0 / D3hot / D3cold: a suspended GPU has no trained link to judge
    hops: tuple[PcieHop, ...]
    truncated: bool  # more than MAX_HOPS functions above the GPU: only the nearest were read
    narrowest_bdf: Maybe[
        str
    ]  # the hop with the lowest current bandwidth (ties: nearer the root, as the kernel)
    negotiated_gbytes_per_s: Maybe[float]  # its bandwidth: the expected host<->device ceiling right now
    capable_gbytes_per_s: Maybe[float]  # the lowest max-link bandwidth on the chain: what it could reach


def parse_link_speed(text: str) -> Maybe[float]:
    """GT/s from `current_link_speed`/`max_link_speed`, in either kernel vocabulary (hardware.md §1.1).

    `8 GT/s` (4.13-5.6) and `8.0 GT/s PCIe` (5.7+) both give 8.0; `Unknown`/`Unknown speed` (the kernel could
    not decode the speed field) and anything else are unavailable, never a guess.
    """
    token = text.strip()
    if token in _UNKNOWN_SPEEDS:
        return Unavailable(Reason.NOT_SUPPORTED, f"the kernel reports {token!r}")
    match = _SPEED.fullmatch(token)
    if match is None:
        return Unavailable(Reason.UNPARSEABLE, f"link speed {token[:40]!r}")
    return float(match.group(1))


def parse_link_width(text: str) -> Maybe[int]:
    """Lane count from `current_link_width`/`max_link_width` (`%u\\n`)."""
    token = text.strip()
    if not (token.isascii() and token.isdigit()) or len(token) > 2 or int(token) > MAX_WIDTH:
        return Unavailable(Reason.UNPARSEABLE, f"link width {token[:40]!r}")
    return int(token)


def speed_generation(gts: float) -> Maybe[int]:
    """PCIe generation of a signalling rate: 2.5 GT/s = Gen1 ... 64 GT/s = Gen6."""
    generation = _GENERATION_BY_GTS.get(gts)
    if generation is None:
        return Unavailable(Reason.UNPARSEABLE, f"{gts:g} GT/s is not a PCIe signalling rate")
    return generation


def lane_gbytes_per_s(generation: int) -> Maybe[float]:
    """Usable bandwidth of one lane in GB/s (10^9 bytes/s), per direction.

    Formula: rate (GT/s) x encoding efficiency / 8 bits. Gen1-2 use 8b/10b (0.25 and 0.5 GB/s), Gen3-5
    128b/130b (0.985, 1.969, 3.938), the kernel's own `PCIE_SPEED2MBS_ENC` figures (drivers/pci/pci.h, table in
    hardware.md §1.2). Gen6 runs PAM4 in 256-byte FLITs of which 242 carry TLP and DLLP bytes (the rest is CRC
    and FEC), so 64 x 242/256 / 8 ≈ 7.563 GB/s; the kernel applies no factor there (8.0). All figures are
    link-layer ceilings: real DMA stays below them (x16 Gen5 links measure ~56 of 63 GB/s, hardware.md §1.2).
    """
    rate = _LANE_GBYTES_PER_S.get(generation)
    if rate is None:
        return Unavailable(Reason.UNPARSEABLE, f"PCIe generation {generation}")
    return rate


def link_gbytes_per_s(generation: int, width: int) -> Maybe[float]:
    """Bandwidth of a `width`-lane link of `generation`, per direction (NVML's gen/width fields fit here too)."""
    if width == 0:
        return Unavailable(Reason.NOT_APPLICABLE, "width 0: the link is down")
    rate = lane_gbytes_per_s(generation)
    return rate if isinstance(rate, Unavailable) else rate * width


def link_state(speed_text: Maybe[str], width_text: Maybe[str]) -> LinkState:
    """A LinkState from the raw sysfs texts (either may already be unavailable)."""
    speed = speed_text if isinstance(speed_text, Unavailable) else parse_link_speed(speed_text)
    width = width_text if isinstance(width_text, Unavailable) else parse_link_width(width_text)
    generation = speed if isinstance(speed, Unavailable) else speed_generation(speed)
    return LinkState(speed, generation, width, _bandwidth(generation, width))


def link_state_from_generation(generation: Maybe[int], width: Maybe[int]) -> LinkState:
    """A LinkState from NVML's generation and width numbers (`NvmlDevice.pcie_link_*`)."""
    speed: Maybe[float]
    if isinstance(generation, Unavailable):
        speed = generation
    elif generation in _GTS_BY_GENERATION:
        speed = _GTS_BY_GENERATION[generation]
    else:
        speed = generation = Unavailable(Reason.UNPARSEABLE, f"PCIe generation {generation}")
    return LinkState(speed, generation, width, _bandwidth(generation, width))


def _bandwidth(generation: Maybe[int], width: Maybe[int]) -> Maybe[float]:
    if isinstance(generation, Unavailable):
        return generation
    if isinstance(width, Unavailable):
        return width
    return link_gbytes_per_s(generation, width)


def narrowest_hop(hops: Iterable[PcieHop], skip: Iterable[str] = ()) -> PcieHop | None:
    """The hop with the lowest known current bandwidth; `skip` names hops to ignore (e.g. virtual tunnel ports).

    Ties go to the hop nearer the root, as `pcie_bandwidth_available()` names it (`next_bw <= bw` while walking
    up): the kernel's "limited by ... at <BDF>" line and this agree.
    """
    skipped = set(skip)
    best: PcieHop | None = None
    for hop in hops:
        bandwidth = hop.current_link.bandwidth_gbytes_per_s
        if hop.bdf in skipped or isinstance(bandwidth, Unavailable):
            continue
        known = best.current_link.bandwidth_gbytes_per_s if best else None
        if not isinstance(known, float) or bandwidth <= known:
            best = hop
    return best


def _lowest(values: Iterable[Maybe[float]]) -> float | None:
    known = [v for v in values if not isinstance(v, Unavailable) and math.isfinite(v)]
    return min(known) if known else None


def gather_pcie_links(host: Host, bdfs: Iterable[str]) -> tuple[PcieLinkPath, ...]:
    """The PCIe chain of each GPU address (any spelling normalize_bdf accepts), once per distinct address."""
    seen: dict[str, None] = {}
    for bdf in bdfs:
        seen.setdefault(normalize_bdf(bdf) or bdf, None)
    return tuple(gather_pcie_link(host, bdf) for bdf in seen)


def gather_pcie_link(host: Host, bdf: str) -> PcieLinkPath:
    """Resolve the GPU's sysfs directory, read every hop up to the root port, and find the narrowest one."""
    normal = normalize_bdf(bdf)
    if normal is None:
        bad = Unavailable(Reason.UNPARSEABLE, f"PCI address {bdf[:40]!r}")
        return _unreadable(bdf, bad)
    bus_path = f"{PCI_DEVICES}/{normal}"
    real = host.realpath(bus_path)  # a symlink loop answers here (too many levels), before any walk
    if isinstance(real, Unavailable):
        return _unreadable(normal, real)
    if not host.is_dir(real):
        return _unreadable(normal, Unavailable(Reason.NOT_FOUND, bus_path))
    functions = _function_dirs(real)
    truncated = len(functions) > MAX_HOPS
    hops = tuple(_read_hop(host, path) for path in functions[:MAX_HOPS])
    narrowest = narrowest_hop(hops)
    negotiated: Maybe[float]
    if narrowest is not None:
        negotiated = narrowest.current_link.bandwidth_gbytes_per_s
    elif hops:
        negotiated = hops[0].current_link.bandwidth_gbytes_per_s  # every hop unknown: say why for the GPU
    else:
        negotiated = Unavailable(Reason.UNPARSEABLE, f"{real}: no PCI function in the path")
    lowest_max = _lowest(h.max_link.bandwidth_gbytes_per_s for h in hops)
    capable: Maybe[float]
    if lowest_max is not None:
        capable = lowest_max
    else:  # no hop knows its max: say why for the GPU
        capable = hops[0].max_link.bandwidth_gbytes_per_s if hops else _why(negotiated)
    return PcieLinkPath(
        bdf=normal,
        sysfs_path=real,
        power_state=_read_word(host, f"{real}/power_state"),
        hops=hops,
        truncated=truncated,
        narrowest_bdf=narrowest.bdf if narrowest else _why(negotiated),
        negotiated_gbytes_per_s=negotiated,
        capable_gbytes_per_s=capable,
    )


def _why(value: Maybe[float]) -> Unavailable:
    return value if isinstance(value, Unavailable) else Unavailable(Reason.NOT_FOUND, "no link known")


def _unreadable(bdf: str, why: Unavailable) -> PcieLinkPath:
    return PcieLinkPath(bdf, why, why, (), False, why, why, why)


def _function_dirs(real: str) -> list[str]:
    """The PCI-function directories of a resolved sysfs path, the device first and the root port last."""
    parts = real.split("/")
    dirs = ["/".join(parts[: i + 1]) for i, name in enumerate(parts) if FUNCTION_NAME.match(name)]
    return dirs[::-1]


def _read_hop(host: Host, path: str) -> PcieHop:
    klass = read_attribute(host, f"{path}/class", parse_hex_attribute)
    return PcieHop(
        bdf=posixpath.basename(path),
        sysfs_path=path,
        on_root_bus=bool(_HOST_BRIDGE_NAME.match(posixpath.basename(posixpath.dirname(path)))),
        vendor_id=read_attribute(host, f"{path}/vendor", parse_hex_attribute),
        device_id=read_attribute(host, f"{path}/device", parse_hex_attribute),
        class_code=klass,
        is_bridge=klass if isinstance(klass, Unavailable) else klass >> 8 == PCI_BRIDGE_CLASS,
        current_link=link_state(
            host.read_text(f"{path}/current_link_speed"), host.read_text(f"{path}/current_link_width")
        ),
        max_link=link_state(
            host.read_text(f"{path}/max_link_speed"), host.read_text(f"{path}/max_link_width")
        ),
        removable=_read_word(host, f"{path}/removable"),
    )


def parse_hex_attribute(text: str) -> int | None:
    """`0x10de`-style sysfs ids (`0x%04x`, `0x%06x`); None for anything else."""
    token = text.strip()
    if not token.lower().startswith("0x") or not 2 < len(token) <= 10:
        return None
    digits = token[2:]
    return int(digits, 16) if all(c in "0123456789abcdefABCDEF" for c in digits) else None


def _read_word(host: Host, path: str) -> Maybe[str]:
    """A one-word attribute (`D0`, `removable`); anything with spaces or control characters is garbage."""
    text = host.read_text(path)
    if isinstance(text, Unavailable):
        return text
    token = text.strip()
    if not token or len(token) > 32 or not token.isascii() or not token.isalnum():
        return Unavailable(Reason.UNPARSEABLE, f"{path}: {token[:40]!r}")
    return token
