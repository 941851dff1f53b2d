"""Display-class PCI devices (NVIDIA and AMD) from sysfs, named from pci.ids, plus /proc/driver/nvidia/gpus."""

from __future__ import annotations

import posixpath

from torch_gpu_doctor.facts.bdf import normalize_bdf
from torch_gpu_doctor.facts.sysfs_attr import read_attribute
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable


@dataclass(frozen=True)
class ProcGpuInfo:
    """/proc/driver/nvidia/gpus/<BDF>/information"""

    bdf: str
    model: Maybe[str]
    uuid: Maybe[str]
    device_minor: Maybe[int]
    excluded: Maybe[bool]


@dataclass(frozen=True)
class PciDevice:
    bdf: str
    vendor_id: int
    device_id: int
    class_code: int  # 0x030000 VGA, 0x030200 3D controller, 0x038000 display other
    subsystem_vendor_id: Maybe[int]
    subsystem_device_id: Maybe[int]
    driver: str | None  # bound kernel driver (basename of the `driver` link), None when unbound
    sysfs_path: Maybe[str]  # resolved device directory
    name: Maybe[str]  # from pci.ids


PCI_DEVICES = "/sys/bus/pci/devices"
PROC_GPUS = "/proc/driver/nvidia/gpus"
PCI_IDS_PATHS = ("/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids", "/usr/share/pci.ids")
VENDOR_NVIDIA = 0x10DE
VENDOR_AMD = 0x1002
DISPLAY_CLASS = 0x03  # base class: 0x0300 VGA, 0x0302 3D controller, 0x0380 other display


def parse_hex(text: str) -> int | None:
    token = text.strip()
    try:
        return int(token, 16) if token.lower().startswith("0x") else None
    except ValueError:
        return None


def lookup_pci_ids(text: str, vendor_id: int, device_id: int) -> str | None:
    """The device name in pci.ids format: `vvvv  Vendor` then `\\tdddd  Device` lines."""
    vendor_tag = f"{vendor_id:04x}"
    device_tag = f"\t{device_id:04x}"
    in_vendor = False
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if not line.startswith("\t"):
            if in_vendor:
                return None
            in_vendor = line[:4].lower() == vendor_tag
            continue
        if in_vendor and line[:5].lower() == device_tag and not line.startswith("\t\t"):
            return line[5:].strip() or None
    return None


def parse_gpu_information(text: str) -> dict[str, str]:
    """`Key: \\t value` lines of /proc/driver/nvidia/gpus/<BDF>/information (nv-procfs.c)."""
    values = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            values[key.strip()] = value.strip()
    return values


def gather_pci(host: Host) -> tuple[PciDevice, ...] | Unavailable:
    names = host.listdir(PCI_DEVICES)
    if isinstance(names, Unavailable):
        return names
    pci_ids: str | Unavailable | None = None
    devices = []
    for name in names:
        bdf = normalize_bdf(name)
        if bdf is None:
            continue
        base = f"{PCI_DEVICES}/{name}"
        vendor = read_attribute(host, f"{base}/vendor", parse_hex)
        klass = read_attribute(host, f"{base}/class", parse_hex)
        if not isinstance(vendor, int) or vendor not in (VENDOR_NVIDIA, VENDOR_AMD):
            continue
        if not isinstance(klass, int) or klass >> 16 != DISPLAY_CLASS:
            continue
        device = read_attribute(host, f"{base}/device", parse_hex)
        if not isinstance(device, int):
            continue
        if pci_ids is None:
            pci_ids = _read_pci_ids(host)
        driver_link = host.readlink(f"{base}/driver")
        devices.append(
            PciDevice(
                bdf=bdf,
                vendor_id=vendor,
                device_id=device,
                class_code=klass,
                subsystem_vendor_id=read_attribute(host, f"{base}/subsystem_vendor", parse_hex),
                subsystem_device_id=read_attribute(host, f"{base}/subsystem_device", parse_hex),
                driver=None if isinstance(driver_link, Unavailable) else posixpath.basename(driver_link),
                sysfs_path=host.realpath(base),
                name=_name(pci_ids, vendor, device),
            )
        )
    return tuple(devices)


def _read_pci_ids(host: Host) -> str | Unavailable:
    last: Unavailable = Unavailable(Reason.NOT_FOUND, "pci.ids")
    for path in PCI_IDS_PATHS:
        text = host.read_text(path)
        if not isinstance(text, Unavailable):
            return text
        last = text
    return last


def _name(pci_ids: str | Unavailable | None, vendor: int, device: int) -> Maybe[str]:
    if pci_ids is None or isinstance(pci_ids, Unavailable):
        return pci_ids or Unavailable(Reason.NOT_FOUND, "pci.ids")
    found = lookup_pci_ids(pci_ids, vendor, device)
    return found or Unavailable(Reason.NOT_FOUND, f"{vendor:04x}:{device:04x} in pci.ids")


def gather_proc_gpus(host: Host) -> tuple[ProcGpuInfo, ...] | Unavailable:
    names = host.listdir(PROC_GPUS)
    if isinstance(names, Unavailable):
        return names
    infos = []
    for name in names:
        bdf = normalize_bdf(name)
        if bdf is None:
            continue
        text = host.read_text(f"{PROC_GPUS}/{name}/information")
        if isinstance(text, Unavailable):
            infos.append(ProcGpuInfo(bdf, text, text, text, text))
            continue
        fields = parse_gpu_information(text)

        def get(key: str, fields: dict[str, str] = fields) -> Maybe[str]:
            return fields.get(key) or Unavailable(Reason.UNPARSEABLE, f"no {key!r} line")

        minor = fields.get("Device Minor", "")
        excluded = fields.get("GPU Excluded")
        infos.append(
            ProcGpuInfo(
                bdf=bdf,
                model=get("Model"),
                uuid=get("GPU UUID"),
                device_minor=int(minor)
                if minor.isascii() and minor.isdigit() and len(minor) < 10  # "²".isdigit() too
                else Unavailable(Reason.UNPARSEABLE, "Device Minor"),
                excluded=excluded == "Yes"
                if excluded in ("Yes", "No")
                else Unavailable(Reason.NOT_SUPPORTED, "no 'GPU Excluded' line (older driver)"),
            )
        )
    return tuple(infos)
