"""pcie.link: does each GPU's PCIe link run at the width its card and slot allow?

Rules from hardware.md §1.4 and §8 trap 1: a lower *speed* with full width is idle power saving (normal); a
*width* below min(card max, upstream-port max) is a fault (seat, riser, bifurcation); a width equal to the
port's max but below the card's is a slot limit; NVML's "max width" is never trusted alone. The bottleneck is
the narrowest hop on the way to the root port, skipping Thunderbolt's virtual tunnel ports.
"""

from __future__ import annotations

from torch_gpu_doctor.checks.support.sizing import multi_gpu_link_advice
from torch_gpu_doctor.facts.gpus import Gpu
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.nvml import NvmlDevice
from torch_gpu_doctor.facts.pcie_link import LinkState, PcieLinkPath, link_gbytes_per_s, narrowest_hop
from torch_gpu_doctor.facts.thunderbolt import gpu_tunnel
from torch_gpu_doctor.facts.topology import all_pairs_nvlinked
from torch_gpu_doctor.model import Command, Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Unavailable

SLOW_LINK_GBYTES_PER_S = 7.0  # below about Gen3 x8: host<->GPU copies and multi-GPU traffic start to hurt


@dataclass(frozen=True)
class LinkVerdict:
    bdf: str
    status: Status
    sentence: str
    evidence: tuple[Evidence, ...]
    loaded_gbytes_per_s: float | None  # what the link gives under load: the smoke test's expectation
    slot_limited: bool = False  # narrower than the card because of the slot: worth naming, not a fault
    hop: str | None = None  # the device whose link is the narrow one, when it is not the GPU's own


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _describe(link: LinkState) -> str:
    gen, width = _int(link.generation), _int(link.width)
    return f"Gen{gen if gen else '?'} x{width if width else '?'}"


def loaded_bandwidth(path: PcieLinkPath, skip: tuple[str, ...] = ()) -> float | None:
    """GB/s per direction the chain gives under load: every hop back at its max speed, at its current width."""
    values: list[float] = []
    for hop in path.hops:
        gen = _int(hop.max_link.generation)
        width = _int(hop.current_link.width)
        if hop.bdf in skip or gen is None or width is None:
            continue
        bandwidth = link_gbytes_per_s(gen, width)
        if isinstance(bandwidth, float):
            values.append(bandwidth)
    return min(values) if values else None


@dataclass(frozen=True)
class _Hop:
    bdf: str
    width: int  # negotiated
    card_width: int  # this function's own max
    parent_bdf: str | None
    parent_width: int | None  # the upstream port's max; None: unknown


def _width_pairs(path: PcieLinkPath, skip: tuple[str, ...], tunnel: bool) -> list[_Hop]:
    """Each link on the chain as (downstream end, its upstream port). Behind a tunnel only the GPU's own link
    is judged: enclosure and tunnel ports report numbers that say nothing about the PCIe slot (§8 trap 3)."""
    hops = [h for h in path.hops if h.bdf not in skip]
    pairs: list[_Hop] = []
    for i, hop in enumerate(hops[:1] if tunnel else hops):
        # Links alternate up the chain: the GPU (or a switch's upstream port) reports the link above it, and
        # the downstream or root port above reports that same link again. Judging a root port's current
        # width against its own max would compare the link *below* it with the slot: an x8 card in an x16
        # slot would look like a fault. So only every other hop is one end of a new link.
        if i % 2:
            continue
        width, card = _int(hop.current_link.width), _int(hop.max_link.width)
        if width is None or card is None or width == 0:
            continue
        parent = hops[i + 1] if i + 1 < len(hops) else None
        parent_width = _int(parent.max_link.width) if parent else None
        pairs.append(_Hop(hop.bdf, width, card, parent.bdf if parent else None, parent_width))
    return pairs


def link_verdict(path: PcieLinkPath, facts: Facts) -> LinkVerdict:
    """One GPU's verdict over its whole chain; pure."""
    bdf = path.bdf
    if path.power_state == "D3cold":
        return LinkVerdict(bdf, Status.PASS, f"{bdf} is suspended (D3cold): no link to judge.", (), None)
    if not path.hops:
        why = path.sysfs_path if isinstance(path.sysfs_path, Unavailable) else "no sysfs entry"
        return LinkVerdict(bdf, Status.UNKNOWN, f"{bdf}: the PCIe path is unreadable ({why}).", (), None)
    tunnel = gpu_tunnel(path, facts.thunderbolt)
    through = tunnel.through_tunnel is True
    skip = tunnel.virtual_port_bdfs
    gpu = path.hops[0]
    pairs = _width_pairs(path, skip, through)
    if _int(gpu.current_link.width) is None or not pairs:
        return LinkVerdict(
            bdf,
            Status.UNKNOWN,
            f"{bdf}: no PCIe link width to read (virtual machines and conventional PCI have none).",
            (),
            None,
        )
    loaded = loaded_bandwidth(path, skip)
    ev = _evidence(path, skip, loaded)
    tail = _idle_note(path, skip) + (
        " It is behind a Thunderbolt/USB4 tunnel (see egpu.*)." if through else ""
    )
    for hop in pairs:
        allowed = min(hop.card_width, hop.parent_width) if hop.parent_width else hop.card_width
        if hop.width < allowed and hop.parent_width is not None:
            where = "the card" if hop.bdf == bdf else f"port {hop.bdf}"
            return LinkVerdict(
                bdf,
                Status.FAIL,
                f"{bdf}: {where} trained at x{hop.width} though both ends of that link support x{allowed}: "
                "reseat the card, check the riser or cable and the slot's bifurcation setting in the BIOS."
                + tail,
                ev,
                loaded,
            )
        if hop.width < allowed:
            return LinkVerdict(
                bdf,
                Status.WARN,
                f"{bdf}: the link above {hop.bdf} runs at x{hop.width} of x{hop.card_width}; the slot's own width "
                "is not readable, so a narrow slot and a bad seat look the same here." + tail,
                ev,
                loaded,
                hop=hop.bdf,
            )
    limited = [h for h in pairs if h.parent_width is not None and h.parent_width < h.card_width]
    if limited:
        hop = limited[0]
        slow = loaded is not None and loaded < SLOW_LINK_GBYTES_PER_S
        return LinkVerdict(
            bdf,
            Status.WARN if slow else Status.PASS,
            f"{bdf} is limited by its slot to x{hop.width} (the card supports x{hop.card_width})"
            + (f": about {loaded:.1f} GB/s to the GPU under load" if loaded is not None else "")
            + (", slow for loading data and multi-GPU work." if slow else ".")
            + tail,
            ev,
            loaded,
            slot_limited=True,
        )
    return LinkVerdict(
        bdf,
        Status.PASS,
        f"{bdf} runs at its full width x{pairs[0].width}"
        + (f" (about {loaded:.1f} GB/s under load)." if loaded is not None else ".")
        + tail,
        ev,
        loaded,
    )


def _idle_note(path: PcieLinkPath, skip: tuple[str, ...]) -> str:
    gpu = path.hops[0]
    parent = next((h for h in path.hops[1:] if h.bdf not in skip), None)
    cur, card = _int(gpu.current_link.generation), _int(gpu.max_link.generation)
    port = _int(parent.max_link.generation) if parent else None
    tops = [g for g in (card, port) if g]
    if cur and tops and cur < min(tops):
        return f" Now at Gen{cur}: normal at idle, it returns to Gen{min(tops)} under load."
    return ""


def _evidence(path: PcieLinkPath, skip: tuple[str, ...], loaded: float | None) -> tuple[Evidence, ...]:
    items = [
        Evidence(f"{h.bdf} link", f"{_describe(h.current_link)} of max {_describe(h.max_link)}", "sysfs")
        for h in path.hops
        if h.bdf not in skip
    ]
    narrow = narrowest_hop(path.hops, skip)
    if narrow is not None:
        items.append(Evidence("narrowest hop now", narrow.bdf, "sysfs walk to the root port"))
    if loaded is not None:
        items.append(
            Evidence("expected host↔GPU bandwidth", f"{loaded:.1f} GB/s per direction", "link rates")
        )
    return tuple(items)


def nvml_verdict(bdf: str, device: NvmlDevice) -> LinkVerdict | None:
    """Judge a GPU from NVML alone when sysfs has no link files. NVML's max width may be the card's rather
    than the slot's (hardware.md §1.4), so a narrower link is a warning that says it cannot tell."""
    width, top = _int(device.pcie_link_width_current), _int(device.pcie_link_width_max)
    gen, top_gen = _int(device.pcie_link_gen_current), _int(device.pcie_link_gen_max)
    if width is None or top is None:
        return None
    idle = (
        f" Now at Gen{gen}: normal at idle, it returns to Gen{top_gen} under load."
        if gen and top_gen and gen < top_gen
        else ""
    )
    loaded = link_gbytes_per_s(top_gen, width) if top_gen else None
    speed = f" (about {loaded:.1f} GB/s under load)" if isinstance(loaded, float) else ""
    ev = (Evidence(f"{bdf} link", f"Gen{gen} x{width} of max Gen{top_gen} x{top}", "NVML"),)
    value = loaded if isinstance(loaded, float) else None
    if width < top:
        return LinkVerdict(
            bdf,
            Status.WARN,
            f"{bdf} runs at x{width} of x{top}{speed}; sysfs has no link files here and NVML's max may be the "
            "card's rather than the slot's, so a narrow slot and a bad seat look the same." + idle,
            ev,
            value,
        )
    return LinkVerdict(
        bdf, Status.PASS, f"{bdf} runs at its full width x{width}{speed} (NVML)." + idle, ev, value
    )


def _with_nvml(verdict: LinkVerdict, facts: Facts) -> LinkVerdict:
    if verdict.status is not Status.UNKNOWN or isinstance(facts.nvml, Unavailable):
        return verdict
    device = next((d for d in facts.nvml.devices if d.bdf == verdict.bdf), None)
    fallback = nvml_verdict(verdict.bdf, device) if device else None
    return fallback or verdict


_RANK = {Status.PASS: 0, Status.SKIP: 0, Status.UNKNOWN: 1, Status.WARN: 2, Status.FAIL: 3}


def _gpu_paths(facts: Facts) -> list[PcieLinkPath]:
    pcie = facts.pcie
    if isinstance(pcie, Unavailable):
        return []
    wanted = {g.bdf for g in facts.gpus if isinstance(g.bdf, str) and _is_discrete(g)}
    return [p for p in pcie if p.bdf in wanted]


def _is_discrete(gpu: Gpu) -> bool:
    return gpu.vendor in ("nvidia", "amd")


@check("pcie.link", "Each GPU's PCIe link runs at the width its card and slot allow", "pcie")
def pcie_link(facts: Facts) -> Finding:
    """
    ## What it checks
    For every GPU, the negotiated PCIe generation and width against what the card and its upstream port can
    do, read from sysfs on the whole path up to the root port, and the narrowest hop on that path.

    ## Why it matters
    A card that trained at x4 or x1 (a loose card, a cheap riser, a slot wired for fewer lanes) moves data to
    the GPU several times slower. A lower speed at idle is not a problem: NVIDIA GPUs drop to Gen1 to save
    power and return to full speed under load.

    ## How to fix
    A link narrower than both the card and the slot allow: power off, reseat the card, replace the riser or
    cable, and check the slot's bifurcation setting in the BIOS. A slot limit (an x16 card in an x8 or x4
    slot): move the card to a full-width slot wired to the CPU.
    """
    cid = "pcie.link"
    wsl = not isinstance(facts.os, Unavailable) and facts.os.is_wsl
    if wsl:  # the GPU is paravirtualised through /dev/dxg: Linux sees no PCIe link at all
        return Finding(
            cid, Status.SKIP, "WSL2 reaches the GPU through /dev/dxg: the PCIe link is Windows' to see."
        )
    if isinstance(facts.pcie, Unavailable):
        return Finding(cid, Status.UNKNOWN, f"The PCIe links could not be read: {facts.pcie}.")
    paths = _gpu_paths(facts)
    if not paths:
        return Finding(cid, Status.SKIP, "No discrete GPU on the PCI bus.")
    verdicts = [_with_nvml(link_verdict(p, facts), facts) for p in paths]
    worst = max(verdicts, key=lambda v: _RANK.get(v.status, 0))
    evidence = tuple(e for v in verdicts for e in v.evidence)
    if len(verdicts) == 1:
        return Finding(cid, worst.status, worst.sentence, evidence=evidence, remediation=_remedy(worst))
    problems = [v for v in verdicts if _RANK.get(v.status, 0) > 0]
    limited = [v for v in verdicts if v.slot_limited]
    rates = [(v.bdf, v.loaded_gbytes_per_s) for v in verdicts if v.loaded_gbytes_per_s]
    advice = multi_gpu_link_advice(rates, all_pairs_nvlinked(facts.topology))
    if not problems and limited:
        return Finding(
            cid,
            Status.PASS,
            f"{len(limited)} of {len(verdicts)} GPUs: {limited[0].sentence}"
            + (f" Also: {', '.join(v.bdf for v in limited[1:])}." if len(limited) > 1 else ""),
            details="\n".join([*(v.sentence for v in verdicts), advice]).strip(),
            evidence=evidence,
        )
    if not problems:
        return Finding(
            cid,
            Status.PASS,
            f"All {len(verdicts)} GPUs run at their full width.",
            details=advice,
            evidence=evidence,
        )
    first = max(problems, key=lambda v: _RANK.get(v.status, 0))
    others = [v.bdf for v in problems if v is not first]
    return Finding(
        cid,
        worst.status,
        f"{len(problems)} of {len(verdicts)} GPUs: {first.sentence}"
        + (f" Also: {', '.join(others)} (details with -v)." if others else ""),
        details="\n".join(v.sentence for v in problems),
        evidence=evidence,
        remediation=_remedy(first),
    )


def _remedy(verdict: LinkVerdict) -> Remediation | None:
    """A narrow link: reseat what trained below both ends; move a card out of a narrow slot; check the rest."""
    if verdict.status not in (Status.FAIL, Status.WARN):
        return None
    lspci = Command(
        ("sudo", "lspci", "-vv", "-s", verdict.bdf), note="LnkCap: what it can do; LnkSta: what it runs at"
    )
    if verdict.status is Status.FAIL:
        text = (
            "Power off, reseat the card (and its riser or cable, or replace them), and check the slot's "
            "bifurcation setting in the firmware setup; then compare LnkSta with LnkCap again."
        )
    elif verdict.slot_limited:
        text = (
            "Move the card to a slot wired for its full width (the board manual lists each slot's electrical "
            "width; the top x16 slot on the CPU's lanes is usual). A board with only a narrow slot cannot do "
            "better: the GPU works, but loading data onto it is slower."
        )
    else:
        text = (
            "Look up the slot's electrical width in the board manual: if it is wider than the link, power off and "
            "reseat the card (and riser); if not, move the card to a wider slot."
        )
    return Remediation(text=text, commands=(lspci,), requires_root=True, target=Target.SYSTEM)
