"""Which disk a data directory really reads from: mount → block device → partitions, dm, md, loop → disks.

`st_dev` is not the way in: btrfs, overlay, NFS and tmpfs report an anonymous device (major 0), and a btrfs
subvolume's `st_dev` does not even match the major:minor its mountinfo line shows (0:40 vs 0:39 on this
project's CI VM). So the path is matched to its mount in /proc/self/mountinfo (longest mount point), and the
mount's MAJ:MIN, or its source device when MAJ is 0, is followed through sysfs.
"""

from __future__ import annotations

from dataclasses import replace
from enum import Enum

from torch_gpu_doctor.facts.block_devices import (
    MAX_DEPTH,
    BlockDisk,
    StorageKind,
    describe_disk,
    leaf_devices,
    loop_backing_file,
    loop_direct_io,
    name_for_dev_path,
    name_for_device_number,
)
from torch_gpu_doctor.facts.mountinfo import MountEntry, mount_for_path, read_mountinfo
from torch_gpu_doctor.facts.pcie_link import PcieLinkPath, gather_pcie_links
from torch_gpu_doctor.host.base import DiskSpace, Host
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

MEMORY_FILESYSTEMS = frozenset({"tmpfs", "ramfs", "devtmpfs"})
NETWORK_FILESYSTEMS = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph", "glusterfs", "lustre", "gpfs", "beegfs", "afs"}
    | {"9p", "virtiofs"}  # a host folder shared into a VM or WSL2 (/mnt/c is 9p there)
    | {"fuse.sshfs", "fuse.glusterfs", "fuse.s3fs", "fuse.rclone", "fuse.gcsfuse", "fuse.ceph-fuse"}
    | {"fuse.juicefs", "fuse.goofys", "fuse.blobfuse", "fuse.blobfuse2", "fuse.mountpoint-s3"}
)


_NOT_ASKED = Unavailable(Reason.NOT_APPLICABLE, "not gathered")


class DeviceSource(str, Enum):
    """How the block device under a mount was found."""

    DEVICE_NUMBER = "device_number"  # the mount's MAJ:MIN through /sys/dev/block
    MOUNT_SOURCE = "mount_source"  # MAJ is 0 (anonymous): the /dev path in the mount's source field
    BTRFS_DEVICES = "btrfs_devices"  # every device of the btrfs filesystem, /sys/fs/btrfs/<fsid>/devices
    OVERLAY_UPPERDIR = "overlay_upperdir"  # overlay: the mount holding its upper (writable) directory
    CONTAINER_BIND_MOUNT = "container_bind_mount"  # inside a container: the disk of its /etc/hosts bind


@dataclass(frozen=True)
class StorageFacts:
    path: str  # as asked
    resolved_path: Maybe[str]  # symlinks resolved
    mount_point: Maybe[str]
    fs_type: Maybe[str]
    mount_source: Maybe[str]
    device: Maybe[str]  # the block device the filesystem sits on: nvme0n1p2, dm-0, md0, loop0
    device_source: Maybe[DeviceSource]
    disks: Maybe[tuple[BlockDisk, ...]]  # the physical disks at the bottom; () for tmpfs and network
    kind: Maybe[StorageKind]
    note: str = ""
    space: Maybe[DiskSpace] = _NOT_ASKED  # statvfs of the path (live machine, or as captured)
    nvme_links: Maybe[tuple[PcieLinkPath, ...]] = _NOT_ASKED  # each NVMe controller's PCIe chain


@dataclass(frozen=True)
class _Backing:
    device: Maybe[str]
    source: Maybe[DeviceSource]
    disks: Maybe[tuple[BlockDisk, ...]]
    kind: Maybe[StorageKind]
    note: str = ""


def _unknown(why: Unavailable, note: str = "") -> _Backing:
    return _Backing(why, why, why, why, note)


def _no_device(kind: StorageKind, why: str) -> _Backing:
    none = Unavailable(Reason.NOT_APPLICABLE, why)
    return _Backing(none, none, (), kind)


def combined_kind(disks: tuple[BlockDisk, ...]) -> Maybe[StorageKind]:
    """One kind for a volume: the disks' common kind, MIXED when they differ, unknown if any is unknown."""
    kinds: list[StorageKind] = []
    for disk in disks:
        if isinstance(disk.kind, Unavailable):
            return disk.kind
        kinds.append(disk.kind)
    if not kinds:
        return Unavailable(Reason.NOT_FOUND, "no disk under this device")
    return kinds[0] if len(set(kinds)) == 1 else StorageKind.MIXED


def gather_storage(host: Host, path: str) -> StorageFacts:
    """The mount, block device, physical disks and kind of storage behind `path`, its free space, and the
    PCIe link of every NVMe controller under it (an x4 SSD in an x2 or older slot is a silent limiter)."""
    facts = _gather(host, path, 0)
    space = host.disk_space(path)
    links: Maybe[tuple[PcieLinkPath, ...]] = Unavailable(Reason.NOT_APPLICABLE, "no NVMe disk")
    if isinstance(facts.disks, Unavailable):
        links = facts.disks  # which disks, and so whether any is NVMe, is not known
    else:
        addresses = sorted(
            {
                d.pci_address
                for d in facts.disks
                if d.kind == StorageKind.NVME and isinstance(d.pci_address, str)
            }
        )
        if addresses:
            links = gather_pcie_links(host, addresses)
    return replace(facts, space=space, nvme_links=links)


def _gather(host: Host, path: str, depth: int) -> StorageFacts:
    resolved = host.realpath(path)
    entries = read_mountinfo(host)
    if isinstance(resolved, Unavailable):
        return _nothing_known(path, resolved, resolved)
    if isinstance(entries, Unavailable):
        return _nothing_known(path, resolved, entries)
    entry = mount_for_path(entries, resolved)
    if entry is None:
        gone = Unavailable(Reason.NOT_FOUND, f"no mount in /proc/self/mountinfo holds {resolved}")
        return _nothing_known(path, resolved, gone)
    backing = _backing(host, entries, entry, depth)
    return StorageFacts(
        path=path,
        resolved_path=resolved,
        mount_point=entry.mount_point,
        fs_type=entry.fs_type,
        mount_source=entry.source,
        device=backing.device,
        device_source=backing.source,
        disks=backing.disks,
        kind=backing.kind,
        note=backing.note,
    )


def _nothing_known(path: str, resolved: Maybe[str], why: Unavailable) -> StorageFacts:
    return StorageFacts(path, resolved, why, why, why, why, why, why, why)


def _backing(host: Host, entries: tuple[MountEntry, ...], entry: MountEntry, depth: int) -> _Backing:
    fs = entry.fs_type
    if depth > MAX_DEPTH:
        return _unknown(Unavailable(Reason.FAILED, f"storage nested deeper than {MAX_DEPTH} levels"))
    if fs in MEMORY_FILESYSTEMS:
        return _no_device(StorageKind.MEMORY, f"{fs} lives in RAM")
    if fs in NETWORK_FILESYSTEMS:
        return _no_device(StorageKind.NETWORK, f"{fs} from {entry.source}")
    if fs == "zfs":
        return _unknown(Unavailable(Reason.NOT_SUPPORTED, f"ZFS dataset {entry.source}: see `zpool status`"))
    if fs == "overlay":
        return _overlay(host, entries, entry, depth)
    if fs.startswith("fuse"):
        why = f"FUSE filesystem {fs} ({entry.source}): its storage is the daemon's own"
        return _unknown(Unavailable(Reason.NOT_SUPPORTED, why))
    if entry.major != 0:
        device = name_for_device_number(host, entry.major, entry.minor)
        return _from_device(host, device, DeviceSource.DEVICE_NUMBER, depth)
    if fs == "btrfs":
        return _btrfs(host, entry, depth)
    return _from_device(host, name_for_dev_path(host, entry.source), DeviceSource.MOUNT_SOURCE, depth)


def _from_device(
    host: Host, device: Maybe[str], source: DeviceSource, depth: int, note: str = ""
) -> _Backing:
    if isinstance(device, Unavailable):
        return _unknown(device, note)
    return _from_devices(host, device, (device,), source, depth, note)


def _from_devices(
    host: Host, device: str, devices: tuple[str, ...], source: DeviceSource, depth: int, note: str = ""
) -> _Backing:
    """Follow each device down to its disks; a loop device continues with the storage of its backing file."""
    disks: list[BlockDisk] = []
    notes = [note] if note else []
    for name in devices:
        leaves = leaf_devices(host, name)
        if isinstance(leaves, Unavailable):
            return _Backing(device, source, leaves, leaves, note)
        for leaf in leaves:
            backing_file = loop_backing_file(host, leaf)
            if backing_file is None:
                disks.append(describe_disk(host, leaf))
                continue
            below = _gather(host, backing_file, depth + 1)
            notes.append(f"{leaf} reads the file {backing_file}")
            if loop_direct_io(host, leaf) is False:
                # Measured on the CI VM: O_DIRECT reads of a fresh file on btrfs-on-loop ran at 2 GB/s on a
                # 0.8 GB/s disk, because loop/dio=0 serves them from the backing file's page cache.
                notes.append(f"{leaf} has loop/dio=0: its reads go through the page cache of that file")
            if isinstance(below.disks, Unavailable):
                return _Backing(device, source, below.disks, below.kind, "; ".join(notes))
            disks.extend(below.disks)
    found = tuple(disks)
    return _Backing(device, source, found, combined_kind(found), "; ".join(notes))


def _btrfs(host: Host, entry: MountEntry, depth: int) -> _Backing:
    """btrfs shows an anonymous MAJ:MIN and one source device; /sys/fs/btrfs/<fsid>/devices lists all."""
    named = name_for_dev_path(host, entry.source)
    filesystems = host.listdir("/sys/fs/btrfs")
    members: list[tuple[str, ...]] = []
    for fsid in () if isinstance(filesystems, Unavailable) else filesystems:
        devices = host.listdir(f"/sys/fs/btrfs/{fsid}/devices")
        if not isinstance(devices, Unavailable) and devices:
            members.append(devices)
    if not isinstance(named, Unavailable):
        for devices in members:
            if named in devices:
                return _from_devices(host, named, devices, DeviceSource.BTRFS_DEVICES, depth)
        return _from_device(host, named, DeviceSource.MOUNT_SOURCE, depth)
    if len(members) == 1:  # `/dev/root` names no device, but a single btrfs filesystem is this one
        only = members[0]
        return _from_devices(host, only[0], only, DeviceSource.BTRFS_DEVICES, depth)
    return _unknown(named)


def _overlay(host: Host, entries: tuple[MountEntry, ...], entry: MountEntry, depth: int) -> _Backing:
    """overlay: new files go to `upperdir`, so its mount is the disk. Inside a container that path belongs
    to the host's namespace and resolves back to the overlay itself; the container's /etc/hosts bind mount
    comes from the same Docker data root on the host and names the disk instead."""
    upper = entry.option("upperdir")
    inner = mount_for_path(entries, upper) if upper else None
    if inner is not None and inner.mount_id != entry.mount_id and inner.mount_point != entry.mount_point:
        below = _backing(host, entries, inner, depth + 1)
        note = f"overlay upper directory {upper} is on {inner.mount_point}"
        return _Backing(below.device, DeviceSource.OVERLAY_UPPERDIR, below.disks, below.kind, note)
    for bind in entries:
        if bind.major != 0 and bind.parent_id == entry.mount_id and "/containers/" in bind.root:
            device = name_for_device_number(host, bind.major, bind.minor)
            note = f"overlay in a container: assumed on the disk of the {bind.mount_point} bind mount"
            return _from_device(host, device, DeviceSource.CONTAINER_BIND_MOUNT, depth, note)
    why = "overlay whose layers are outside this mount namespace"
    return _unknown(Unavailable(Reason.NOT_SUPPORTED, why))
