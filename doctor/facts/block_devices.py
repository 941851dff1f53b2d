"""Block devices in sysfs: from a device name down to the physical disks, and what kind each disk is.

Layout (kernel ABI, real links in tests/fixtures/storage-trees/README.md):
`/sys/class/block/<name>` links to `/sys/devices/.../block/<disk>[/<partition>]`; a partition has a
`partition` file and its parent directory is the whole disk; dm and md devices list what they are built
from in `/sys/block/<dev>/slaves/`; NVMe namespaces sit under their controller
(`.../<BDF>/nvme/nvme0/nvme0n1`) or, with native multipath, under `/sys/devices/virtual/nvme-subsystem/`.
"""

from __future__ import annotations

import posixpath
import re
from enum import Enum
from typing import NamedTuple

from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

MAX_DEPTH = 8  # dm on md on dm... is rare beyond 3; sysfs never needs more, and a loop must end
BDF = lazy(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
NVME_NAMESPACE = lazy(r"^nvme\d+(c\d+)?n\d+$")
NVME_CONTROLLER = lazy(r"^nvme\d+$")
# (vendor, model prefix) of disks a hypervisor emulates: their `rotational` says nothing about the medium.
# Strings as the kernel logs them (`scsi 0:0:0:0: Direct-Access  Msft  Virtual Disk  1.0`, `VMware Virtual
# disk`), libvirt's `QEMU HARDDISK`, VirtualBox's `VBOX HARDDISK`, and the NVMe model of an Amazon EBS volume
# (`AMZN_NVME_EBS_MN` in amazon-ec2-utils' ebsnvme-id).
VIRTUAL_MODELS = (
    ("Msft", "Virtual Disk"),
    ("VMware", "Virtual disk"),
    ("QEMU", "QEMU HARDDISK"),
    ("", "QEMU HARDDISK"),
    ("", "VBOX HARDDISK"),
    ("", "Amazon Elastic Block Store"),
)


class StorageKind(str, Enum):
    NVME = "nvme"
    SATA_SSD = "sata_ssd"
    SSD = "ssd"  # non-rotational, neither NVMe nor SATA: SAS, USB, eMMC
    HDD = "hdd"
    VIRTUAL_DISK = "virtual_disk"  # virtio, Xen, Hyper-V, VMware, QEMU, EBS: the real medium is hidden
    NETWORK = "network"  # NFS, SMB, NVMe over fabrics, ...
    MEMORY = "memory"  # tmpfs, ramfs, zram: RAM, not storage
    MIXED = "mixed"  # a volume over disks of different kinds


@dataclass(frozen=True)
class BlockDisk:
    name: str  # nvme0n1, sda, vda
    sysfs_path: Maybe[str]  # under /sys/devices
    kind: Maybe[StorageKind]
    transport: Maybe[
        str
    ]  # pcie (NVMe), sata, sas, usb, scsi, mmc, virtio, xen, hyperv, tcp/rdma/fc (NVMe-oF)
    rotational: Maybe[bool]  # queue/rotational as read; meaningless on a virtual disk
    model: Maybe[str]
    vendor: Maybe[str]  # device/vendor as read: SCSI vendor ("ATA" behind libata) or a virtio id (0x1af4)
    nvme_controller: Maybe[str]  # nvme0
    pci_address: Maybe[str]  # PCI function of the disk's controller (NVMe, AHCI, HBA, virtio)
    size_bytes: Maybe[int]
    logical_block_size: Maybe[int]
    note: str = ""  # why this kind, when it is not plain


def _text(host: Host, path: str) -> Maybe[str]:
    text = host.read_text(path)
    return text if isinstance(text, Unavailable) else text.strip()


def _int(host: Host, path: str) -> Maybe[int]:
    text = _text(host, path)
    if isinstance(text, Unavailable):
        return text
    if not (text.isascii() and text.isdigit()):
        return Unavailable(Reason.UNPARSEABLE, f"{path}: {text[:40]!r}")
    return int(text)


def name_for_device_number(host: Host, major: int, minor: int) -> Maybe[str]:
    """The kernel name of block device MAJ:MIN, through the /sys/dev/block/MAJ:MIN link."""
    link = f"/sys/dev/block/{major}:{minor}"
    if not host.exists(link):
        return Unavailable(Reason.NOT_FOUND, link)
    target = host.realpath(link)
    return target if isinstance(target, Unavailable) else posixpath.basename(target)


def name_for_dev_path(host: Host, source: str) -> Maybe[str]:
    """The kernel name behind a /dev path from a mount source (/dev/sda1, /dev/mapper/vg-root, by-uuid)."""
    if not source.startswith("/dev/"):
        return Unavailable(Reason.NOT_APPLICABLE, f"mount source {source!r} is not a device")
    if source.startswith("/dev/mapper/"):
        wanted = source.removeprefix("/dev/mapper/")
        names = host.listdir("/sys/block")
        for name in () if isinstance(names, Unavailable) else names:
            if name.startswith("dm-") and _text(host, f"/sys/block/{name}/dm/name") == wanted:
                return name
    resolved = host.realpath(source)  # /dev/disk/by-uuid/... and /dev/mapper/* are links on a live /dev
    name = posixpath.basename(source if isinstance(resolved, Unavailable) else resolved)
    if host.exists(f"/sys/class/block/{name}"):
        return name
    return Unavailable(Reason.NOT_FOUND, f"{source}: no /sys/class/block/{name}")


def whole_disk(host: Host, name: str) -> str:
    """The disk a partition belongs to (its sysfs parent directory); a disk is its own."""
    if not host.exists(f"/sys/class/block/{name}/partition"):
        return name
    target = host.realpath(f"/sys/class/block/{name}")
    return name if isinstance(target, Unavailable) else posixpath.basename(posixpath.dirname(target))


def leaf_devices(host: Host, name: str, depth: int = 0) -> Maybe[tuple[str, ...]]:
    """The disks at the bottom of a stack of dm/md devices and partitions, in slave order, deduplicated."""
    if depth > MAX_DEPTH:
        return Unavailable(Reason.FAILED, f"{name}: block devices nested deeper than {MAX_DEPTH}")
    disk = whole_disk(host, name)
    slaves = host.listdir(f"/sys/block/{disk}/slaves")
    if isinstance(slaves, Unavailable) and slaves.reason is not Reason.NOT_FOUND:
        return slaves  # a dm/md device whose members we may not list is not itself a disk
    if isinstance(slaves, Unavailable) or not slaves:
        return (disk,)
    leaves: list[str] = []
    for slave in slaves:
        below = leaf_devices(host, slave, depth + 1)
        if isinstance(below, Unavailable):
            return below
        leaves.extend(n for n in below if n not in leaves)
    return tuple(leaves)


def loop_backing_file(host: Host, name: str) -> str | None:
    """The file a loop device reads from (a path in the host's mount namespace), if it is one."""
    text = _text(host, f"/sys/block/{name}/loop/backing_file")
    return None if isinstance(text, Unavailable) or not text else text


def loop_direct_io(host: Host, name: str) -> bool | None:
    """loop/dio: whether a loop device bypasses the page cache of its backing file (None: not said)."""
    text = _text(host, f"/sys/block/{name}/loop/dio")
    return None if isinstance(text, Unavailable) or text not in ("0", "1") else text == "1"


def _nvme_controller(host: Host, components: list[str]) -> tuple[Maybe[str], Maybe[str]]:
    """(controller name, its sysfs path) for a namespace: the `nvme/nvmeN` parent, or the controllers linked
    from its nvme-subsystem directory under native multipath (a live one first)."""
    if "nvme" in components:
        at = len(components) - 1 - components[::-1].index("nvme")
        if at + 1 < len(components) and NVME_CONTROLLER.match(components[at + 1]):
            return components[at + 1], "/".join(components[: at + 2])
    subsys = [i for i, c in enumerate(components) if c.startswith("nvme-subsys")]
    if not subsys:
        gone = Unavailable(Reason.NOT_FOUND, "no NVMe controller in " + "/".join(components))
        return gone, gone
    subsys_dir = "/".join(components[: subsys[-1] + 1])
    entries = host.listdir(subsys_dir)
    if isinstance(entries, Unavailable):
        return entries, entries
    controllers = [e for e in entries if NVME_CONTROLLER.match(e)]
    live = [c for c in controllers if _text(host, f"/sys/class/nvme/{c}/state") == "live"]
    for chosen in live + controllers:
        path = host.realpath(f"{subsys_dir}/{chosen}")
        return chosen, path
    gone = Unavailable(Reason.NOT_FOUND, f"{subsys_dir}: no controller linked")
    return gone, gone


def _virtual_model(vendor: Maybe[str], model: Maybe[str]) -> bool:
    if isinstance(model, Unavailable):
        return False
    vendor_text = "" if isinstance(vendor, Unavailable) else vendor
    return any(model.startswith(m) and (not v or vendor_text == v) for v, m in VIRTUAL_MODELS)


def _scsi_transport(components: list[str]) -> str:
    lowered = [c.lower() for c in components]
    if any(c.startswith("vmbus") for c in lowered):
        return "hyperv"
    if any(re.match(r"^ata\d+$", c) for c in components):
        return "sata"
    if any(re.match(r"^usb\d+$", c) for c in components):
        return "usb"
    if any(c.startswith(("end_device-", "port-")) for c in components):
        return "sas"
    if any(re.match(r"^virtio\d+$", c) for c in components):
        return "virtio"  # virtio-scsi
    return "scsi"


class _Verdict(NamedTuple):
    kind: Maybe[StorageKind]
    transport: Maybe[str]
    note: str = ""


_NOT_ROTATIONAL = "virtual disk: queue/rotational does not describe the medium behind it"


def describe_disk(host: Host, name: str) -> BlockDisk:
    """What a whole disk is: transport, medium, model, and the PCI function of its controller."""
    base = f"/sys/block/{name}"
    sysfs = host.realpath(base)
    components = [] if isinstance(sysfs, Unavailable) else sysfs.split("/")
    rotational = _rotational(host, f"{base}/queue/rotational")
    model, vendor = _text(host, f"{base}/device/model"), _text(host, f"{base}/device/vendor")
    size = _int(host, f"{base}/size")  # 512-byte sectors whatever the logical block size
    not_nvme = Unavailable(Reason.NOT_APPLICABLE, f"{name} is not NVMe")
    controller: Maybe[str] = not_nvme
    pci = _pci(components)
    if NVME_NAMESPACE.match(name):
        controller, model, pci, verdict = _nvme(host, components, model, pci)
    else:
        verdict = _classify(name, components, rotational, vendor, model)
    return BlockDisk(
        name=name,
        sysfs_path=sysfs,
        kind=verdict.kind,
        transport=verdict.transport,
        rotational=rotational,
        model=model,
        vendor=vendor,
        nvme_controller=controller,
        pci_address=pci,
        size_bytes=size if isinstance(size, Unavailable) else size * 512,
        logical_block_size=_int(host, f"{base}/queue/logical_block_size"),
        note=verdict.note,
    )


def _rotational(host: Host, path: str) -> Maybe[bool]:
    text = _text(host, path)
    if isinstance(text, Unavailable):
        return text
    if text not in ("0", "1"):
        return Unavailable(Reason.UNPARSEABLE, f"{path}: {text[:40]!r}")
    return text == "1"


def _pci(components: list[str]) -> Maybe[str]:
    found = [c for c in components if BDF.match(c)]
    return found[-1] if found else Unavailable(Reason.NOT_FOUND, "no PCI function above this disk in sysfs")


def _classify(
    name: str, components: list[str], rotational: Maybe[bool], vendor: Maybe[str], model: Maybe[str]
) -> _Verdict:
    if re.match(r"^(zram|ram)\d+$", name):
        return _Verdict(StorageKind.MEMORY, name.rstrip("0123456789"))
    if name.startswith("vd"):
        return _Verdict(StorageKind.VIRTUAL_DISK, "virtio", _NOT_ROTATIONAL)
    if name.startswith("xvd") or any(c.startswith("vbd-") for c in components):
        return _Verdict(StorageKind.VIRTUAL_DISK, "xen", _NOT_ROTATIONAL)
    if name.startswith("mmcblk"):
        return _Verdict(StorageKind.SSD, "mmc")
    if not name.startswith("sd"):
        unknown = Unavailable(Reason.NOT_SUPPORTED, f"{name}: not a kind of disk gpu-doctor knows")
        return _Verdict(unknown, unknown)
    transport = _scsi_transport(components)
    if transport in ("hyperv", "virtio") or _virtual_model(vendor, model):
        return _Verdict(StorageKind.VIRTUAL_DISK, transport, _NOT_ROTATIONAL)
    if isinstance(rotational, Unavailable):
        return _Verdict(rotational, transport)
    if rotational:
        return _Verdict(StorageKind.HDD, transport)
    return _Verdict(StorageKind.SATA_SSD if transport == "sata" else StorageKind.SSD, transport)


def _nvme(
    host: Host, components: list[str], model: Maybe[str], pci: Maybe[str]
) -> tuple[Maybe[str], Maybe[str], Maybe[str], _Verdict]:
    """(controller, model, PCI function of the controller, verdict) for an NVMe namespace."""
    controller, controller_path = _nvme_controller(host, components)
    if isinstance(controller, Unavailable):
        return controller, model, pci, _Verdict(StorageKind.NVME, controller)
    transport = _text(host, f"/sys/class/nvme/{controller}/transport")
    if isinstance(model, Unavailable):
        model = _text(host, f"/sys/class/nvme/{controller}/model")
    if not isinstance(controller_path, Unavailable):
        pci = _pci(controller_path.split("/"))
    if isinstance(pci, Unavailable) and transport == "pcie":
        pci = _text(host, f"/sys/class/nvme/{controller}/address")
    if transport in ("tcp", "rdma", "fc") or "nvme-fabrics" in components:
        no_pci = Unavailable(Reason.NOT_APPLICABLE, "NVMe over fabrics: no local PCI function")
        return controller, model, no_pci, _Verdict(StorageKind.NETWORK, transport)
    if _virtual_model(Unavailable(Reason.NOT_APPLICABLE), model):
        return controller, model, pci, _Verdict(StorageKind.VIRTUAL_DISK, transport, _NOT_ROTATIONAL)
    return controller, model, pci, _Verdict(StorageKind.NVME, transport)
