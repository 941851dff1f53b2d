"""Each NVIDIA GPU's own PCIe link, as fleets compare it: sysfs first, NVML where sysfs is silent."""

from __future__ import annotations

from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.nvml import NvmlDevice
from torch_gpu_doctor.facts.pcie_link import PcieHop, PcieLinkPath
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Unavailable


@dataclass(frozen=True)
class GpuLink:
    """The link between a GPU and the port above it (`hops[0]` and `hops[1]` of its PCIe path)."""

    bdf: str
    generation: int | None  # the fastest it can train to: the lower of both ends' max
    width: int | None  # lanes it runs at now
    current_generation: int | None  # now: Gen1 at idle is normal, so never a verdict on its own
    max_width: int | None  # the GPU's own max (NVML's may be the card's rather than the slot's)
    source: str  # "sysfs", "NVML", "sysfs+NVML" or "nothing readable"


def _int(value: Maybe[int]) -> int | None:
    return value if isinstance(value, int) else None


def nvml_devices(facts: Facts) -> tuple[NvmlDevice, ...] | Unavailable:
    nvml = facts.nvml
    if isinstance(nvml, Unavailable):
        return nvml
    if isinstance(nvml.device_count, Unavailable):
        return nvml.device_count
    return nvml.devices


def gpu_links(facts: Facts) -> tuple[GpuLink, ...] | str:
    """Every NVIDIA GPU's link, by bus address; a sentence when there is no NVIDIA GPU at all.

    The generation is the lower of both ends' *max*: GPUs drop to Gen1 at idle, so the current speed says
    nothing about what the link can do. The width is the current one: lanes stay trained at idle."""
    paths = {} if isinstance(facts.pcie, Unavailable) else {p.bdf: p for p in facts.pcie}
    devices = nvml_devices(facts)
    nvml = {} if isinstance(devices, Unavailable) else {d.bdf: d for d in devices if isinstance(d.bdf, str)}
    bdfs = sorted({g.bdf for g in facts.nvidia_gpus if isinstance(g.bdf, str)} | set(nvml))
    if not bdfs:
        return "no NVIDIA GPU found" + (f" (NVML: {devices})" if isinstance(devices, Unavailable) else "")
    return tuple(_link(bdf, paths.get(bdf), nvml.get(bdf)) for bdf in bdfs)


def _capable_generation(ends: tuple[PcieHop, ...]) -> int | None:
    gens = [_int(h.max_link.generation) for h in ends]
    known = [g for g in gens if g is not None]
    return min(known) if len(ends) == 2 and len(known) == 2 else None


def _link(bdf: str, path: PcieLinkPath | None, device: NvmlDevice | None) -> GpuLink:
    gen = width = current = top = None
    sources = []
    if path is not None and path.hops:
        gpu = path.hops[0]
        gen = _capable_generation(path.hops[:2])
        width, top = _int(gpu.current_link.width), _int(gpu.max_link.width)
        current = _int(gpu.current_link.generation)
        if (gen, width, current, top) != (None, None, None, None):
            sources.append("sysfs")
    if device is not None:
        nvml = (
            _int(device.pcie_link_gen_max),
            _int(device.pcie_link_width_current),
            _int(device.pcie_link_gen_current),
            _int(device.pcie_link_width_max),
        )
        if None in (gen, width, current, top) and nvml != (None, None, None, None):
            sources.append("NVML")
        gen = gen if gen is not None else nvml[0]
        width = width if width is not None else nvml[1]
        current = current if current is not None else nvml[2]
        top = top if top is not None else nvml[3]
    return GpuLink(bdf, gen, width, current, top, "+".join(sources) or "nothing readable")
