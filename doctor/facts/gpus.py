"""Join PCI devices, NVML devices and /proc/driver/nvidia/gpus into one list of GPUs, by normalised BDF."""

from __future__ import annotations

from torch_gpu_doctor.compat import load_matrix
from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.facts.nvml import NvmlDevice, NvmlFacts
from torch_gpu_doctor.facts.pci import VENDOR_NVIDIA, PciDevice, ProcGpuInfo
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable


@dataclass(frozen=True)
class Gpu:
    """One GPU, joined across sysfs, NVML and /proc/driver/nvidia by normalised PCI address."""

    bdf: Maybe[str]
    vendor: str  # "nvidia" | "amd"
    device_id: Maybe[int]
    name: Maybe[str]
    name_source: str | None
    compute_capability: Maybe[str]
    compute_capability_source: str | None
    memory_total_bytes: Maybe[int]
    uuid: Maybe[str]
    kernel_driver: str | None
    on_pci_bus: bool  # seen in /sys/bus/pci
    nvml_index: int | None  # None: the NVIDIA driver does not expose it
    excluded: bool | None  # "GPU Excluded: Yes" in /proc/driver/nvidia


_BRACKET = lazy(r"\[(.+?)\]")


def display_name_from_pci_ids(raw: str) -> str:
    """pci.ids says `AD102 [GeForce RTX 4090]`: the bracketed part is the marketing name."""
    found = _BRACKET.search(raw)
    return found.group(1) if found else raw


def join_gpus(
    pci: tuple[PciDevice, ...] | Unavailable,
    nvml: NvmlFacts | Unavailable,
    proc: tuple[ProcGpuInfo, ...] | Unavailable,
) -> tuple[Gpu, ...]:
    pci_devices = () if isinstance(pci, Unavailable) else pci
    nvml_devices = () if isinstance(nvml, Unavailable) else nvml.devices
    proc_by_bdf = {} if isinstance(proc, Unavailable) else {p.bdf: p for p in proc}
    nvml_by_bdf = {d.bdf: d for d in nvml_devices if isinstance(d.bdf, str)}
    gpus = []
    seen_nvml: set[int] = set()
    for dev in pci_devices:
        nv = nvml_by_bdf.get(dev.bdf)
        if nv is not None:
            seen_nvml.add(nv.index)
        gpus.append(_gpu(dev, nv, proc_by_bdf.get(dev.bdf)))
    # GPUs NVML sees but sysfs does not (WSL2, some containers, a virtual PCI tree).
    for nv in nvml_devices:
        if pci_devices and not isinstance(nv.bdf, str):
            continue  # its bus id query failed (a lost GPU): it is one of the PCI devices, not another GPU
        if nv.index not in seen_nvml:
            bdf = nv.bdf if isinstance(nv.bdf, str) else None
            gpus.append(_gpu(None, nv, proc_by_bdf.get(bdf) if bdf else None))
    return tuple(gpus)


def _gpu(dev: PciDevice | None, nv: NvmlDevice | None, proc: ProcGpuInfo | None) -> Gpu:
    name, name_source = _name(dev, nv, proc)
    cc, cc_source = _compute_capability(nv, name, dev)
    bdf: Maybe[str] = dev.bdf if dev else (nv.bdf if nv else Unavailable(Reason.NOT_FOUND, "no PCI address"))
    device_id: Maybe[int]
    if dev is not None:
        device_id = dev.device_id
    elif nv is not None and isinstance(nv.pci_device_id, int):
        device_id = nv.pci_device_id >> 16  # NVML packs 0xDEVICEVENDOR
    else:
        device_id = Unavailable(Reason.NOT_FOUND, "no PCI device id")
    missing = Unavailable(Reason.NOT_APPLICABLE, "the NVIDIA driver does not expose this GPU")
    uuid: Maybe[str] = nv.uuid if nv else (proc.uuid if proc else missing)
    return Gpu(
        bdf=bdf,
        vendor="nvidia" if dev is None or dev.vendor_id == VENDOR_NVIDIA else "amd",
        device_id=device_id,
        name=name,
        name_source=name_source,
        compute_capability=cc,
        compute_capability_source=cc_source,
        memory_total_bytes=nv.memory_total_bytes if nv else missing,
        uuid=uuid,
        kernel_driver=dev.driver if dev else None,
        on_pci_bus=dev is not None,
        nvml_index=nv.index if nv else None,
        excluded=proc.excluded if proc and isinstance(proc.excluded, bool) else None,
    )


def _name(
    dev: PciDevice | None, nv: NvmlDevice | None, proc: ProcGpuInfo | None
) -> tuple[Maybe[str], str | None]:
    if nv and isinstance(nv.name, str):
        return nv.name, "nvml"
    if proc and isinstance(proc.model, str):
        return proc.model, "procfs"
    if dev and isinstance(dev.name, str):
        return display_name_from_pci_ids(dev.name), "pci.ids"
    if dev:
        return Unavailable(
            Reason.NOT_FOUND, f"device {dev.vendor_id:04x}:{dev.device_id:04x} is not in pci.ids"
        ), None
    return Unavailable(Reason.NOT_FOUND, "no name"), None


def _compute_capability(
    nv: NvmlDevice | None, name: Maybe[str], dev: PciDevice | None
) -> tuple[Maybe[str], str | None]:
    if nv and isinstance(nv.compute_capability, str):
        return nv.compute_capability, "nvml"
    if dev is not None and dev.vendor_id != VENDOR_NVIDIA:
        return Unavailable(Reason.NOT_APPLICABLE, "not an NVIDIA GPU"), None
    if dev is not None:
        # The device id is exact; names are matched by words and may be missing (no pci.ids, no driver).
        by_id = load_torch_releases().gpu_by_pci_id(f"{dev.device_id:04x}")
        if by_id is not None:
            return by_id.compute_capability, f"compat table (PCI id 10de:{dev.device_id:04x}, {by_id.name})"
    if isinstance(name, str):
        model = load_matrix().gpu_by_name(name)
        if model is not None:
            return model.compute_capability, f"compat table ({model.name})"
        return Unavailable(Reason.NOT_FOUND, f"{name!r} is not in the compat table"), None
    return Unavailable(Reason.NOT_FOUND, "unknown GPU model"), None
