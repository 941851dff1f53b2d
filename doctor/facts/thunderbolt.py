"""Thunderbolt / USB4 domains and devices from `/sys/bus/thunderbolt/devices` (hardware.md §2.1).

Entries there: `domainX` (one per host controller), routers `X-Y` (route string in hex; `X-0` is the host router),
retimers `X-Y:P.I` and XDomain services `<xdomain>.<service>` (skipped: they carry no PCIe tunnel). Every
attribute read here is 0444, so no root is needed (`key`, 0600, is not read).
"""

from __future__ import annotations

import posixpath
from enum import Enum

from torch_gpu_doctor.facts.pcie_link import FUNCTION_NAME, PcieLinkPath, parse_hex_attribute
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

TB_DEVICES = "/sys/bus/thunderbolt/devices"
_DOMAIN_NAME = lazy(r"^domain([0-9]{1,4})$")
_ROUTER_NAME = lazy(r"^([0-9]{1,4})-([0-9a-f]{1,16})$")
# switch.c prints rx_speed/tx_speed as "%u.0 Gb/s\n"; accept any short decimal.
_TB_SPEED = lazy(r"([0-9]{1,3}(?:\.[0-9]{1,3})?) Gb/s")


class TbSecurity(str, Enum):
    """`domainX/security` (Documentation/ABI/testing/sysfs-bus-thunderbolt)."""

    NONE = "none"  # every device authorized automatically (BIOS "Legacy mode")
    USER = "user"  # authorize by writing `authorized` (boltctl / GNOME do it)
    SECURE = "secure"  # user authorizes; devices with a key get a challenge
    DPONLY = "dponly"  # DisplayPort and USB only: no PCIe tunnels
    USBONLY = "usbonly"  # only the dock's USB controller: all PCIe links downstream of the dock removed
    NOPCIE = "nopcie"  # USB4 system with PCIe tunnelling disabled in the BIOS


# With these levels no eGPU can appear on PCI, whatever `authorized` says (hardware.md §2.4).
PCIE_BLOCKING_SECURITY = frozenset({TbSecurity.DPONLY, TbSecurity.USBONLY, TbSecurity.NOPCIE})


@dataclass(frozen=True)
class ThunderboltDomain:
    name: str  # "domain0"
    security: Maybe[TbSecurity]
    iommu_dma_protection: Maybe[bool]  # kernel 4.21+ (ABI doc); 1 = IOMMU guards DMA
    controller_bdf: Maybe[str]  # the PCI function the domain hangs under (the NHI)
    controller_path: Maybe[str]  # its resolved /sys/devices/... directory


@dataclass(frozen=True)
class ThunderboltDevice:
    name: str  # route: "0-1", "0-301"
    domain: str  # "domain0"
    is_host_router: bool  # "X-0": the computer's own controller, not a plugged device
    authorized: Maybe[int]  # 0 = no PCIe tunnels (no PCIe devices for it exist); 1, 2 = authorized
    vendor_id: Maybe[int]  # from the device DROM
    device_id: Maybe[int]
    vendor_name: Maybe[str]
    device_name: Maybe[str]
    unique_id: Maybe[str]
    generation: Maybe[int]  # 1-3 Thunderbolt, 4 = USB4 (kernel 5.5+)
    rx_lanes: Maybe[int]  # kernel 5.5+
    tx_lanes: Maybe[int]
    rx_lane_gbits_per_s: Maybe[float]  # per lane, Gb/s (10^9 bits/s)
    tx_lane_gbits_per_s: Maybe[float]


@dataclass(frozen=True)
class ThunderboltFacts:
    domains: tuple[ThunderboltDomain, ...]
    devices: tuple[ThunderboltDevice, ...]


def parse_security(text: str) -> Maybe[TbSecurity]:
    """`none` / `user` / `secure` / `dponly` / `usbonly` / `nopcie`; anything else is unparseable."""
    token = text.strip()
    try:
        return TbSecurity(token)
    except ValueError:
        return Unavailable(Reason.UNPARSEABLE, f"security level {token[:40]!r}")


def parse_tb_speed(text: str) -> Maybe[float]:
    """Per-lane speed of `rx_speed`/`tx_speed` (`20.0 Gb/s`) in Gb/s."""
    token = text.strip()
    match = _TB_SPEED.fullmatch(token)
    if match is None:
        return Unavailable(Reason.UNPARSEABLE, f"lane speed {token[:40]!r}")
    return float(match.group(1))


def parse_small_int(text: str, highest: int) -> Maybe[int]:
    """A `%u` attribute expected in 0..highest (`authorized`, `generation`, `rx_lanes`)."""
    token = text.strip()
    if not (token.isascii() and token.isdigit()) or len(token) > 4 or int(token) > highest:
        return Unavailable(Reason.UNPARSEABLE, f"{token[:40]!r} (expected 0..{highest})")
    return int(token)


def parse_drom_id(text: str) -> Maybe[int]:
    """`vendor`/`device` of a router, printed `%#x` (`0x41`; zero prints as `0`)."""
    token = text.strip()
    if token == "0":
        return 0
    value = parse_hex_attribute(token)
    return value if value is not None else Unavailable(Reason.UNPARSEABLE, f"id {token[:40]!r}")


def parse_name(text: str) -> Maybe[str]:
    """A DROM string (`vendor_name`, `device_name`) or `unique_id`: one non-empty printable line."""
    token = text.strip()
    if not token or "\n" in token or not token.isprintable():
        return Unavailable(Reason.UNPARSEABLE, f"{token[:40]!r}")
    return token


def gather_thunderbolt(host: Host) -> Maybe[ThunderboltFacts]:
    """Every domain and router under /sys/bus/thunderbolt/devices; unavailable when there is no such bus."""
    names = host.listdir(TB_DEVICES)
    if isinstance(names, Unavailable):
        if names.reason is Reason.NOT_FOUND:
            return Unavailable(Reason.NOT_FOUND, f"{TB_DEVICES}: no Thunderbolt/USB4 controller or driver")
        return names
    domains = []
    devices = []
    for name in names:
        if _DOMAIN_NAME.match(name):
            domains.append(_read_domain(host, name))
        elif route := _ROUTER_NAME.match(name):
            devices.append(_read_device(host, name, f"domain{route.group(1)}", int(route.group(2), 16) == 0))
    return ThunderboltFacts(tuple(domains), tuple(devices))


def _attr(host: Host, base: str, name: str) -> Maybe[str]:
    return host.read_text(f"{base}/{name}")


def _read_domain(host: Host, name: str) -> ThunderboltDomain:
    base = f"{TB_DEVICES}/{name}"
    security = _attr(host, base, "security")
    dma = _attr(host, base, "iommu_dma_protection")
    dma_flag = dma if isinstance(dma, Unavailable) else parse_small_int(dma, 1)
    controller_path: Maybe[str]
    real = host.realpath(base)
    if isinstance(real, Unavailable):
        controller_path = real
    elif FUNCTION_NAME.match(posixpath.basename(posixpath.dirname(real))):
        controller_path = posixpath.dirname(real)
    else:
        controller_path = Unavailable(Reason.NOT_FOUND, f"{real}: not below a PCI function")
    return ThunderboltDomain(
        name=name,
        security=security if isinstance(security, Unavailable) else parse_security(security),
        iommu_dma_protection=dma_flag if isinstance(dma_flag, Unavailable) else dma_flag == 1,
        controller_bdf=controller_path
        if isinstance(controller_path, Unavailable)
        else posixpath.basename(controller_path),
        controller_path=controller_path,
    )


def _read_device(host: Host, name: str, domain: str, is_host: bool) -> ThunderboltDevice:
    base = f"{TB_DEVICES}/{name}"

    def number(attr: str, highest: int) -> Maybe[int]:
        text = _attr(host, base, attr)
        return text if isinstance(text, Unavailable) else parse_small_int(text, highest)

    def text_of(attr: str) -> Maybe[str]:
        text = _attr(host, base, attr)
        return text if isinstance(text, Unavailable) else parse_name(text)

    def drom_id(attr: str) -> Maybe[int]:
        text = _attr(host, base, attr)
        return text if isinstance(text, Unavailable) else parse_drom_id(text)

    def speed(attr: str) -> Maybe[float]:
        text = _attr(host, base, attr)
        return text if isinstance(text, Unavailable) else parse_tb_speed(text)

    return ThunderboltDevice(
        name=name,
        domain=domain,
        is_host_router=is_host,
        authorized=number("authorized", 2),
        vendor_id=drom_id("vendor"),
        device_id=drom_id("device"),
        vendor_name=text_of("vendor_name"),
        device_name=text_of("device_name"),
        unique_id=text_of("unique_id"),
        generation=number("generation", 9),
        rx_lanes=number("rx_lanes", 9),  # 1 or 2; 3 on an asymmetric USB4 v2 direction (hardware.md §2.1)
        tx_lanes=number("tx_lanes", 9),
        rx_lane_gbits_per_s=speed("rx_speed"),
        tx_lane_gbits_per_s=speed("tx_speed"),
    )


# --- does a GPU's PCI path run through a Thunderbolt/USB4 tunnel? (hardware.md §2.2) ---------------------------

VENDOR_INTEL = 0x8086
VENDOR_AMD = 0x1022
# Intel Thunderbolt controllers' PCIe switch ports (drivers/thunderbolt/nhi.h; hardware.md §2.2): Win Ridge 2C,
# Alpine Ridge LP / C 4C / C 2C, Titan Ridge 2C / 4C / DD. Enclosures carry one too, so it shows up between the
# host and an eGPU ("JHL7540 Thunderbolt 3 bridge" hops in all-ways-egpu#37).
INTEL_TB_BRIDGES = frozenset({0x157E, 0x15C0, 0x15D3, 0x15DA, 0x15E7, 0x15EA, 0x15EF})
# Root ports that exist only to carry tunnels: Intel integrated TB3/4 (Ice Lake, Tiger Lake-LP/-H; the kernel's
# arch_pci_dev_is_removable() list, hardware.md §2.2) and AMD's "Family 19h USB4/Thunderbolt PCIe tunnel"
# (1022:14cd in pci.ids, the port all-ways-egpu#37 names). Their link numbers describe nothing (§1.3).
TUNNEL_ROOT_PORTS = frozenset(
    {(VENDOR_INTEL, d) for d in (0x8A1D, 0x8A1F, 0x8A21, 0x8A23, 0x9A23, 0x9A25, 0x9A27, 0x9A29)}
    | {(VENDOR_INTEL, d) for d in (0x9A2B, 0x9A2D, 0x9A2F, 0x9A31)}
    | {(VENDOR_AMD, 0x14CD)}
)


class TunnelRule(str, Enum):
    """Which of hardware.md §2.2's rules said "external"."""

    REMOVABLE = "removable"  # (a) the GPU or an ancestor reads `removable` (kernel 5.14+)
    INTEL_TB_BRIDGE = "intel_thunderbolt_bridge"  # (b) an ancestor is an Intel Thunderbolt switch port
    TUNNEL_ROOT_PORT = "tunnel_root_port"  # (b) an ancestor is a USB4/Thunderbolt tunnel root port
    CONTROLLER_PORT = "controller_port"  # (c) an ancestor is a downstream port of a domain's controller


@dataclass(frozen=True)
class TunnelEvidence:
    rule: TunnelRule
    bdf: str  # the hop that matched
    detail: str


@dataclass(frozen=True)
class GpuTunnel:
    bdf: str
    through_tunnel: Maybe[bool]
    evidence: tuple[TunnelEvidence, ...]
    virtual_port_bdfs: tuple[str, ...]  # tunnel root ports: skip them when looking for a bottleneck (§1.3)


def gpu_tunnel(path: PcieLinkPath, thunderbolt: Maybe[ThunderboltFacts]) -> GpuTunnel:
    """Whether the GPU of `path` sits behind a Thunderbolt/USB4 PCIe tunnel, and which rule says so.

    Rules, all rootless (hardware.md §2.2): (a) `removable` reads `removable` on the GPU or an ancestor; (b) an
    ancestor is an Intel TB switch port or a tunnel root port (ids above); (c) the domain has an authorized device
    and an ancestor is a downstream port of that domain's controller (a sibling of the port above its NHI). The
    kernel's own `is_thunderbolt` flag is not in sysfs, so without any rule firing the answer is False.
    """
    if not path.hops:
        why = path.sysfs_path if isinstance(path.sysfs_path, Unavailable) else None
        return GpuTunnel(path.bdf, why or Unavailable(Reason.NOT_FOUND, "no PCI path"), (), ())
    evidence: list[TunnelEvidence] = []
    virtual: list[str] = []
    removable = [h for h in path.hops if h.removable == "removable"]
    if removable:
        top = removable[-1]
        evidence.append(TunnelEvidence(TunnelRule.REMOVABLE, top.bdf, f"{top.bdf}/removable = removable"))
    for hop in path.hops[1:]:
        vendor, device = hop.vendor_id, hop.device_id
        if not (isinstance(vendor, int) and isinstance(device, int)):
            continue
        ids = f"{vendor:04x}:{device:04x}"
        if vendor == VENDOR_INTEL and device in INTEL_TB_BRIDGES:
            evidence.append(TunnelEvidence(TunnelRule.INTEL_TB_BRIDGE, hop.bdf, ids))
        if (vendor, device) in TUNNEL_ROOT_PORTS:
            evidence.append(TunnelEvidence(TunnelRule.TUNNEL_ROOT_PORT, hop.bdf, ids))
            virtual.append(hop.bdf)
    if isinstance(thunderbolt, ThunderboltFacts):
        evidence.extend(_controller_ports(path, thunderbolt))
    return GpuTunnel(path.bdf, bool(evidence), tuple(evidence), tuple(virtual))


def _controller_ports(path: PcieLinkPath, thunderbolt: ThunderboltFacts) -> list[TunnelEvidence]:
    found = []
    for domain in thunderbolt.domains:
        nhi = domain.controller_path
        if isinstance(nhi, Unavailable) or not _has_authorized_device(thunderbolt, domain.name):
            continue
        nhi_port = posixpath.dirname(nhi)
        if not FUNCTION_NAME.match(posixpath.basename(nhi_port)):
            continue  # an integrated NHI on the root bus: rule (b)'s root-port ids cover those
        upstream = posixpath.dirname(nhi_port)  # the controller's own switch upstream port
        if not FUNCTION_NAME.match(posixpath.basename(upstream)):
            continue  # NHI behind a root port: its siblings are other root ports (a laptop dGPU's, too)
        for hop in path.hops[1:]:
            if posixpath.dirname(hop.sysfs_path) == upstream and hop.sysfs_path != nhi_port:
                detail = f"downstream port of the {domain.name} controller (NHI {posixpath.basename(nhi)})"
                found.append(TunnelEvidence(TunnelRule.CONTROLLER_PORT, hop.bdf, detail))
    return found


def _has_authorized_device(thunderbolt: ThunderboltFacts, domain: str) -> bool:
    return any(
        d.domain == domain and not d.is_host_router and isinstance(d.authorized, int) and d.authorized >= 1
        for d in thunderbolt.devices
    )
