"""Every figure the smoke test measured, next to what this GPU on this link should reach, with a verdict.

Expectations and their sources:
- host↔device (pinned): at least 65% of the link's per-direction bandwidth at the width it runs and the speed it
  trains up to (hardware.md §1.2; measured pinned copies reach 75-90%: 56.3 of 63 GB/s on Gen5 x16). Behind a
  Thunderbolt/USB4 tunnel: at least 2 GB/s, the 16 Gb/s minimum PCIe data rate of Thunderbolt 3 (§2.3).
- device memory copy (read + write): at least 50% of the datasheet memory bandwidth (compat-errata §4).
- matmul: at least 40% of the datasheet's dense peak for the precision. Peaks are boost-clock figures, and
  power-capped or warm cards sustain less (compat-errata §4 warns to compare with a fraction).
- peer copies and the all-reduce: at least half of what the slower GPU's PCIe link carries; NVLink goes far above.
Below an expectation is a warning, never a failure: slow is not broken.
"""

from __future__ import annotations

from torch_gpu_doctor.checks.pcie_link import loaded_bandwidth
from torch_gpu_doctor.compat.datasheets import GpuDatasheet, datasheet_for
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.pcie_link import PcieLinkPath
from torch_gpu_doctor.facts.smoke import SmokeDevice, SmokeRun, SmokeStep, StepStatus
from torch_gpu_doctor.facts.thunderbolt import gpu_tunnel
from torch_gpu_doctor.model import Figure, Status
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Unavailable

LINK_FRACTION = 0.65
TUNNEL_MIN_GBYTES_PER_S = 2.0
MEMORY_FRACTION = 0.5
MATMUL_FRACTION = 0.4
PEER_FRACTION = 0.5
PAGEABLE_SLOW_RATIO = 0.5  # pageable below half of pinned: worth the DataLoader advice

DIRECTION = {
    "h2d_pinned": "host→device (pinned)",
    "d2h_pinned": "device→host (pinned)",
    "h2d_pageable": "host→device (pageable)",
    "d2h_pageable": "device→host (pageable)",
}


@dataclass(frozen=True)
class Link:
    gbytes_per_s: float | None  # what the link carries per direction under load; None: unknown
    expected_min: float | None  # what pinned copies should reach over it
    words: str  # "a PCIe Gen4 x16 link", "a Thunderbolt/USB4 tunnel"
    tunnel: bool


def _num(value: float) -> str:
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def device_path(facts: Facts, device: SmokeDevice | None) -> PcieLinkPath | None:
    """The PCIe chain of a torch device: by its PCI bus id, or the only NVIDIA GPU's when torch does not say."""
    paths = facts.pcie if not isinstance(facts.pcie, Unavailable) else ()
    if device is not None and device.pci_bus_id:
        wanted = device.pci_bus_id.lower()
        return next((p for p in paths if p.bdf.lower() == wanted), None)
    nvidia = {g.bdf for g in facts.nvidia_gpus if g.bdf}
    candidates = [p for p in paths if p.bdf in nvidia]
    return candidates[0] if len(candidates) == 1 else None


def device_link(facts: Facts, device: SmokeDevice | None) -> Link:
    path = device_path(facts, device)
    if path is None or not path.hops:
        return Link(None, None, "its PCIe link (unknown here)", False)
    tunnel = gpu_tunnel(path, facts.thunderbolt)
    if tunnel.through_tunnel is True:
        return Link(None, TUNNEL_MIN_GBYTES_PER_S, "a Thunderbolt/USB4 tunnel", True)
    loaded = loaded_bandwidth(path, tunnel.virtual_port_bdfs)
    gpu = path.hops[0]
    gen, width = gpu.max_link.generation, gpu.current_link.width
    words = "a PCIe link"
    if isinstance(gen, int) and isinstance(width, int):
        words = f"a PCIe Gen{gen} x{width} link"
    return Link(loaded, None if loaded is None else LINK_FRACTION * loaded, words, False)


def _device(run: SmokeRun, index: int | None) -> SmokeDevice | None:
    return next((d for d in run.devices if d.index == index), None)


def _datasheet(run: SmokeRun, index: int | None) -> GpuDatasheet | None:
    device = _device(run, index)
    return datasheet_for(device.name, device.total_memory_bytes) if device is not None else None


def transfer_figures(facts: Facts, run: SmokeRun) -> list[Figure]:
    figures: list[Figure] = []
    for step in run.named("transfer"):
        value = step.numbers.get("gbytes_per_s")
        if step.status is not StepStatus.OK or value is None or step.variant not in DIRECTION:
            continue
        label = DIRECTION[step.variant]
        if step.variant.endswith("pageable"):
            figures.append(_pageable(run, step, label, value))
            continue
        link = device_link(facts, _device(run, step.device))
        best = step.numbers.get("best_gbytes_per_s")
        figures.append(_pinned(step.variant, step.device, label, value, link, best))
    return figures


def _pinned(
    key: str, device: int | None, label: str, value: float, link: Link, best: float | None = None
) -> Figure:
    """The median copy against the link. Where the median is below the expectation (but above half of it) and the
    best copy of the same timed batch reaches it, the link carried the rate and is not the bottleneck: something
    slowed some copies (on an H200 in a VM, 2026-11-27: copies right after the memory step read 45 GB/s, the best
    55, Gen5 x16)."""
    expected = link.expected_min
    if expected is None:
        sentence = f"{label} {_num(value)} GB/s (no PCIe link figure to compare with)"
        return Figure(key, device, label, value, "GB/s", None, "no PCIe link figure", Status.PASS, sentence)
    if link.tunnel or link.gbytes_per_s is None:
        source = "Thunderbolt 3 guarantees 16 Gb/s of PCIe data"
    else:
        source = f"{link.words} carries {_num(link.gbytes_per_s)} GB/s per direction"
    sentence = f"{label} {_num(value)} GB/s on {link.words} (expect ≥ {_num(expected)} GB/s)"
    status = Status.PASS if value >= expected else Status.WARN
    if status is Status.WARN and best is not None and best >= expected and value >= 0.5 * expected:
        # (a median under half the expectation is no passing variation: most copies were slow)
        sentence += (
            f"; the best copy ran at {_num(best)} GB/s, so the link carries the rate: "
            "some copies were slowed by something else (other work on the GPU or the host)"
        )
        return Figure(key, device, label, value, "GB/s", expected, source, Status.PASS, sentence)
    if status is Status.WARN:
        sentence += (
            ": the tunnel is slower than Thunderbolt 3 allows — see egpu.*"
            if link.tunnel
            else ": the link is the bottleneck — see pcie.link and pcie.link_under_load"
        )
    return Figure(key, device, label, value, "GB/s", expected, source, status, sentence)


def _pageable(run: SmokeRun, step: SmokeStep, label: str, value: float) -> Figure:
    pinned_step = run.find(
        "transfer", step.device, step.variant.replace("pageable", "pinned") if step.variant else None
    )
    pinned = pinned_step.numbers.get("gbytes_per_s") if pinned_step else None
    if pinned is None:
        return Figure(
            step.variant or "",
            step.device,
            label,
            value,
            "GB/s",
            None,
            "no pinned figure",
            Status.PASS,
            f"{label} {_num(value)} GB/s",
        )
    source = "pageable copies go through a staging buffer; pinned ones do not"
    sentence = f"{label} {_num(value)} GB/s, {value / pinned:.0%} of pinned"
    if value < PAGEABLE_SLOW_RATIO * pinned:
        sentence += ": use pin_memory=True in your DataLoader"
    return Figure(step.variant or "", step.device, label, value, "GB/s", None, source, Status.PASS, sentence)


def memory_bandwidth_figures(run: SmokeRun) -> list[Figure]:
    figures = []
    for step in run.named("device_copy"):
        value = step.numbers.get("gbytes_per_s")
        if step.status is not StepStatus.OK or value is None:
            continue
        label = "device memory copy (read + write)"
        sheet = _datasheet(run, step.device)
        if sheet is None:
            name = d.name if (d := _device(run, step.device)) else "this GPU"
            figures.append(
                Figure(
                    "device_copy",
                    step.device,
                    label,
                    value,
                    "GB/s",
                    None,
                    f"no datasheet figure for {name}",
                    Status.PASS,
                    f"{label} {_num(value)} GB/s (no datasheet figure for {name})",
                )
            )
            continue
        peak = sheet.memory_bandwidth_gbytes_per_s
        expected = MEMORY_FRACTION * peak
        head = f"{label} {_num(value)} GB/s; the {sheet.model} datasheet says {_num(peak)} GB/s (expect ≥ {_num(expected)})"
        status = Status.PASS if value >= expected else Status.WARN
        if status is Status.WARN:
            head += ": the memory runs slow — see gpu.throttle (clocks, power cap, temperature)"
        figures.append(
            Figure(
                "device_copy",
                step.device,
                label,
                value,
                "GB/s",
                expected,
                f"{sheet.model} datasheet",
                status,
                head,
            )
        )
    return figures


def matmul_figures(run: SmokeRun) -> list[Figure]:
    figures = []
    for step in run.named("matmul"):
        value = step.numbers.get("tflops")
        precision = step.variant or "?"
        if step.status is not StepStatus.OK or value is None:
            continue
        label = f"{precision} matmul"
        key = f"matmul_{precision}"
        sheet = _datasheet(run, step.device)
        peak = sheet.peak_tflops(precision) if sheet else None
        if sheet is None or peak is None:
            why = (
                "no datasheet figure"
                if sheet is None
                else f"no {precision} figure in the {sheet.model} datasheet"
            )
            figures.append(
                Figure(
                    key,
                    step.device,
                    label,
                    value,
                    "TFLOPS",
                    None,
                    why,
                    Status.PASS,
                    f"{label} {_num(value)} TFLOPS ({why})",
                )
            )
            continue
        expected = MATMUL_FRACTION * peak
        unconfirmed = f"{precision}_tflops" in sheet.unconfirmed
        head = (
            f"{label} {_num(value)} TFLOPS; the {sheet.model} peak is {_num(peak)}"
            f"{' (unconfirmed)' if unconfirmed else ''} (expect ≥ {_num(expected)})"
        )
        status = Status.PASS if value >= expected or unconfirmed else Status.WARN
        if status is Status.WARN:
            head += ": the GPU computes slowly — see gpu.throttle (clocks, power cap, temperature)"
        figures.append(
            Figure(
                key,
                step.device,
                label,
                value,
                "TFLOPS",
                expected,
                f"{sheet.model} datasheet, dense",
                status,
                head,
            )
        )
    return figures


def multi_gpu_figures(facts: Facts, run: SmokeRun) -> list[Figure]:
    figures = []
    for step in run.named("peer_copy") + run.named("all_reduce"):
        value = step.numbers.get("gbytes_per_s", step.numbers.get("busbw_gbytes_per_s"))
        if step.status is not StepStatus.OK or value is None:
            continue
        if step.name == "peer_copy":
            dst = (
                int(step.variant.split()[-1]) if step.variant and step.variant.split()[-1].isdigit() else None
            )
            indexes = [step.device, dst]
            key, label = f"peer_copy {step.device}->{dst}", f"GPU {step.device} → GPU {dst} copy"
        else:
            indexes = [d.index for d in run.devices]
            key, label = "all_reduce", f"all-reduce bus bandwidth ({step.texts.get('backend', 'nccl')})"
        links = [device_link(facts, _device(run, i)).gbytes_per_s for i in indexes]
        known = [b for b in links if b is not None]
        if not known or len(known) < len(links):
            figures.append(
                Figure(
                    key,
                    step.device,
                    label,
                    value,
                    "GB/s",
                    None,
                    "no PCIe link figures",
                    Status.PASS,
                    f"{label} {_num(value)} GB/s",
                )
            )
            continue
        expected = PEER_FRACTION * min(known)
        head = f"{label} {_num(value)} GB/s (expect ≥ {_num(expected)} GB/s, half of what the slower PCIe link carries)"
        status = Status.PASS if value >= expected else Status.WARN
        if status is Status.WARN:
            head += ": GPU-to-GPU traffic is slower than PCIe allows — see platform.iommu_p2p"
        figures.append(
            Figure(
                key, step.device, label, value, "GB/s", expected, "the slower GPU's PCIe link", status, head
            )
        )
    return figures


def smoke_figures(facts: Facts) -> tuple[Figure, ...]:
    """Every figure of the smoke run in `facts`, in the order the steps ran; () when none ran."""
    run = facts.smoke
    if isinstance(run, Unavailable):
        return ()
    figures = (
        transfer_figures(facts, run)
        + memory_bandwidth_figures(run)
        + matmul_figures(run)
        + multi_gpu_figures(facts, run)
    )
    # GPU by GPU (a stable sort keeps each GPU's figures in the order above); multi-GPU figures last
    return tuple(
        sorted(
            figures, key=lambda f: (f.key.startswith(("peer", "all")), f.key == "all_reduce", f.device or 0)
        )
    )
