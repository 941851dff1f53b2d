"""storage.data_dir, storage.nvme_link, storage.read_speed: the disk a training job reads its data from."""

from __future__ import annotations

from torch_gpu_doctor.facts.block_devices import StorageKind
from torch_gpu_doctor.facts.describe import gib
from torch_gpu_doctor.facts.measurements import not_measured
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.pcie_link import PcieLinkPath, link_gbytes_per_s
from torch_gpu_doctor.facts.storage import StorageFacts
from torch_gpu_doctor.model import Evidence, Finding, Status
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Reason, Unavailable

LOW_FREE_BYTES = 10 << 30  # one large checkpoint
LOW_FREE_FRACTION = 0.05
PARALLEL_FILESYSTEMS = frozenset({"lustre", "gpfs", "beegfs", "ceph", "fuse.ceph-fuse", "glusterfs"})
KIND_WORDS = {
    StorageKind.NVME: "an NVMe SSD",
    StorageKind.SATA_SSD: "a SATA SSD",
    StorageKind.SSD: "an SSD",
    StorageKind.HDD: "a spinning hard disk",
    StorageKind.VIRTUAL_DISK: "a virtual disk",
    StorageKind.NETWORK: "a network filesystem",
    StorageKind.MEMORY: "RAM (tmpfs)",
    StorageKind.MIXED: "a volume over disks of different kinds",
}
# The slowest sequential read that is still normal for a kind, single stream at queue depth 1 with MiB
# blocks (hardware.md §5.2: ratings are QD-deep; one Python reader gets ~1-3 GB/s from a fast NVMe).
READ_FLOOR_MB_PER_S = {
    StorageKind.NVME: 500.0,
    StorageKind.SATA_SSD: 200.0,
    StorageKind.SSD: 100.0,
    StorageKind.HDD: 50.0,
}
ANY_FLOOR_MB_PER_S = 50.0  # below this every epoch waits on the disk, whatever the disk is
INTERFACE_MB_PER_S = {StorageKind.SATA_SSD: 600.0, StorageKind.HDD: 280.0}  # SATA 6 Gb/s; fast 3.5" disks


def _where(storage: StorageFacts) -> str:
    mount = storage.mount_point if isinstance(storage.mount_point, str) else "?"
    fs = storage.fs_type if isinstance(storage.fs_type, str) else "?"
    return f"{storage.path} ({fs} at {mount})"


def _storage_evidence(storage: StorageFacts) -> list[Evidence]:
    evidence = [Evidence("mount", _where(storage), "/proc/self/mountinfo")]
    if isinstance(storage.device, str):
        evidence.append(Evidence("block device", storage.device, "/sys/dev/block"))
    for disk in storage.disks if isinstance(storage.disks, tuple) else ():
        model = disk.model if isinstance(disk.model, str) else "model unknown"
        kind = disk.kind.value if isinstance(disk.kind, StorageKind) else str(disk.kind)
        evidence.append(Evidence(f"disk {disk.name}", f"{kind}, {model}", f"/sys/block/{disk.name}"))
    if storage.note:
        evidence.append(Evidence("note", storage.note, "gpu-doctor"))
    return evidence


def _describe_kind(storage: StorageFacts) -> str:
    kind = storage.kind
    if not isinstance(kind, StorageKind):
        return "storage of unknown kind"
    if kind is StorageKind.NETWORK and isinstance(storage.fs_type, str):
        return f"a network filesystem ({storage.fs_type})"
    return KIND_WORDS[kind]


@check("storage.data_dir", "The data folder is on local, fast storage with room to spare", "storage")
def data_dir(facts: Facts) -> Finding:
    """
    ## What it checks
    For the data folder (`--data-dir`, default: the current folder): the mount that holds it, the block
    devices and disks below it (through partitions, LVM/device-mapper, md RAID, loop files, btrfs and
    container overlays), what kind of storage that is (NVMe, SATA SSD, hard disk, network, RAM, virtual disk;
    `rotational` is not trusted on virtual disks), and its free space.

    ## Why it matters
    A DataLoader reading many small files from a spinning disk, an NFS share or a Windows drive mounted into
    WSL2 (`/mnt/c`) keeps the GPU waiting; a nearly full disk makes the next checkpoint save fail, hours in.

    ## How to fix
    Copy the dataset to a local SSD (in WSL2, into the Linux filesystem, e.g. `~/data`), or pack small files
    into larger shards (WebDataset, TFRecord-style tar files); free space or point checkpoints elsewhere.
    """
    cid = "storage.data_dir"
    storage = facts.storage
    if isinstance(storage, Unavailable):
        return Finding(cid, Status.UNKNOWN, f"Could not tell where the data folder is stored: {storage}.")
    if isinstance(storage.mount_point, Unavailable):
        return Finding(
            cid, Status.UNKNOWN, f"Could not find the mount that holds {storage.path}: {storage.mount_point}."
        )
    evidence = _storage_evidence(storage)
    space = storage.space
    low_space = ""
    if not isinstance(space, Unavailable):
        evidence.append(Evidence("free", f"{gib(space.free_bytes)} of {gib(space.total_bytes)}", "statvfs"))
        if space.free_bytes < LOW_FREE_BYTES and space.free_bytes < LOW_FREE_FRACTION * space.total_bytes:
            low_space = f"only {gib(space.free_bytes)} free of {gib(space.total_bytes)}"
    what = f"{storage.path} is on {_describe_kind(storage)}"
    fs = storage.fs_type if isinstance(storage.fs_type, str) else ""
    wsl = not isinstance(facts.os, Unavailable) and facts.os.is_wsl
    if wsl and fs in ("9p", "drvfs", "v9fs"):
        return Finding(
            cid,
            Status.WARN,
            f"{storage.path} is a Windows folder seen through WSL2's 9p bridge ({fs}): reading a dataset from "
            "there is many times slower than from the Linux filesystem.",
            details="Copy the dataset into the WSL2 filesystem (for example ~/data) and read it from there.",
            evidence=tuple(evidence),
        )
    kind = storage.kind
    if isinstance(kind, Unavailable):
        status = Status.SKIP if kind.reason is Reason.NOT_SUPPORTED else Status.UNKNOWN
        return Finding(
            cid,
            status,
            f"Could not tell what kind of storage holds {_where(storage)}: {kind}.",
            evidence=tuple(evidence),
        )
    if low_space:
        return Finding(
            cid,
            Status.WARN,
            f"{what}, with {low_space}: the next checkpoint save may fail.",
            evidence=tuple(evidence),
        )
    if kind is StorageKind.HDD:
        return Finding(
            cid,
            Status.WARN,
            f"{what}: about 150-250 MB/s when read in order and far less for many small files, so the GPU will "
            "wait for data.",
            details="Copy the dataset to an SSD, or pack small files into large shards read in order.",
            evidence=tuple(evidence),
        )
    if kind is StorageKind.NETWORK and fs not in PARALLEL_FILESYSTEMS:
        return Finding(
            cid,
            Status.WARN,
            f"{what}: every epoch is read over the network, which is usually slower than a local SSD.",
            details="If the GPU sits idle waiting for batches, copy the dataset to a local disk first (a scratch or "
            "/tmp SSD on clusters), or use more DataLoader workers to hide the latency.",
            evidence=tuple(evidence),
        )
    tail = ""
    if kind is StorageKind.MEMORY:
        tail = ": fast, but it uses RAM and is gone after a reboot"
    elif kind is StorageKind.NETWORK:
        tail = ", a parallel filesystem built for this"
    free = f", {gib(space.free_bytes)} free" if not isinstance(space, Unavailable) else ""
    return Finding(cid, Status.PASS, f"{what}{tail}{free}.", evidence=tuple(evidence))


def _nvme_link_sentence(path: PcieLinkPath) -> tuple[Status, str]:
    if not path.hops:
        return Status.UNKNOWN, f"{path.bdf}: no PCIe link files"
    disk, parent = path.hops[0], path.hops[1] if len(path.hops) > 1 else None
    cur, top = disk.current_link, disk.max_link
    if not all(isinstance(v, int) for v in (cur.width, top.width, cur.generation, top.generation)):
        return Status.UNKNOWN, f"{path.bdf}: link state not readable"
    assert isinstance(cur.width, int) and isinstance(top.width, int)
    assert isinstance(cur.generation, int) and isinstance(top.generation, int)
    port_width = parent.max_link.width if parent is not None else None
    port_gen = parent.max_link.generation if parent is not None else None
    allowed = min(top.width, port_width) if isinstance(port_width, int) else top.width
    here = f"Gen{cur.generation} x{cur.width}"
    if cur.width < allowed and isinstance(port_width, int):
        return (
            Status.WARN,
            f"the NVMe controller at {path.bdf} trained at x{cur.width} though it and its port support x{allowed}: "
            "reseat the drive or check an adapter or riser",
        )
    notes = []
    if isinstance(port_width, int) and port_width < top.width:
        notes.append(f"the slot gives x{port_width} of the drive's x{top.width}")
    best_gen = min(top.generation, port_gen) if isinstance(port_gen, int) else top.generation
    if cur.generation < best_gen:
        notes.append(f"Gen{cur.generation} now of Gen{best_gen} possible (may be power saving)")
    bw = link_gbytes_per_s(cur.generation, cur.width)
    ceiling = f", up to {bw:.1f} GB/s" if isinstance(bw, float) else ""
    return Status.PASS, f"the NVMe controller at {path.bdf} runs at {here}{ceiling}" + (
        f" ({'; '.join(notes)})" if notes else ""
    )


@check("storage.nvme_link", "The data disk's NVMe controller has its full PCIe link", "storage")
def nvme_link(facts: Facts) -> Finding:
    """
    ## What it checks
    For each NVMe controller under the data folder: its PCIe link (`current_link_speed/width` against its own
    maximum and its port's), read from sysfs as for GPUs.

    ## Why it matters
    An x4 NVMe SSD in an M.2 slot wired for x2, sharing lanes with SATA ports, or behind a bad adapter, reads
    at half its rated speed or less, with no error anywhere.

    ## How to fix
    Move the drive to an M.2 slot wired to the CPU with four lanes (the board manual lists which slots share
    lanes), reseat it, or replace the adapter.
    """
    cid = "storage.nvme_link"
    storage = facts.storage
    if isinstance(storage, Unavailable):
        return Finding(cid, Status.UNKNOWN, f"Could not tell where the data folder is stored: {storage}.")
    links = storage.nvme_links
    if isinstance(links, Unavailable):
        if links.reason is Reason.NOT_APPLICABLE:
            return Finding(cid, Status.SKIP, f"{storage.path} is not on an NVMe disk.")
        return Finding(cid, Status.UNKNOWN, f"Could not read the NVMe controller's link: {links}.")
    verdicts = [_nvme_link_sentence(path) for path in links]
    if not verdicts:
        return Finding(cid, Status.SKIP, f"{storage.path} is not on an NVMe disk.")
    worst = max((v[0] for v in verdicts), key=lambda s: (s is Status.WARN, s is Status.UNKNOWN))
    evidence = tuple(
        Evidence(f"link of {p.bdf}", sentence, f"/sys/bus/pci/devices/{p.bdf}")
        for p, (_, sentence) in zip(links, verdicts, strict=True)
    )
    text = "; ".join(s for _, s in verdicts)
    return Finding(cid, worst, f"{text[0].upper()}{text[1:]}.", evidence=evidence)


def _interface_mb_per_s(storage: StorageFacts) -> float | None:
    kind = storage.kind
    if kind is StorageKind.NVME and isinstance(storage.nvme_links, tuple):
        rates = []
        for path in storage.nvme_links:
            if path.hops and isinstance(path.hops[0].max_link.generation, int):
                width = path.hops[0].current_link.width
                if isinstance(width, int):
                    bw = link_gbytes_per_s(path.hops[0].max_link.generation, width)
                    if isinstance(bw, float):
                        rates.append(bw * 1000)
        return min(rates) if rates else None
    return INTERFACE_MB_PER_S.get(kind) if isinstance(kind, StorageKind) else None


@check("storage.read_speed", "The data disk reads fast enough for training", "storage")
def read_speed(facts: Facts) -> Finding:
    """
    ## What it checks
    With `--measure`: one sequential read of a temporary file written in the data folder, with `O_DIRECT`
    (never from the page cache) in MiB blocks from one thread, next to what the disk's interface carries (the
    NVMe controller's PCIe link, SATA's 600 MB/s) and the least that is normal for that kind of disk. The
    file is at most 1 GiB and is always removed.

    ## Why it matters
    This single-stream figure is a lower bound of what a DataLoader gets; when even it is far below the
    disk's normal range, the disk, its link or its filesystem is the bottleneck of every epoch.

    ## How to fix
    See storage.data_dir and storage.nvme_link: move the dataset to a faster local disk, give the drive its
    full link, and check the drive's health (`sudo smartctl -a /dev/nvme0`).
    """
    cid = "storage.read_speed"
    measured = facts.measurements
    why = measured if isinstance(measured, Unavailable) else measured.disk
    if isinstance(why, Unavailable):
        quiet = (Reason.NOT_APPLICABLE, Reason.NOT_RECORDED, Reason.NOT_SUPPORTED)
        status = Status.SKIP if why.reason in quiet else Status.UNKNOWN
        return Finding(cid, status, not_measured("Read speed", why))
    disk = why
    rate = disk.read_mb_per_s
    if isinstance(rate, Unavailable):
        status = (
            Status.SKIP if rate.reason in (Reason.NOT_APPLICABLE, Reason.NOT_SUPPORTED) else Status.UNKNOWN
        )
        return Finding(cid, status, f"Read speed of {disk.directory} not measured: {rate.detail}.")
    evidence = [Evidence("sequential read", f"{rate:.0f} MB/s", disk.method)]
    storage = facts.storage if not isinstance(facts.storage, Unavailable) else None
    kind = storage.kind if storage is not None and isinstance(storage.kind, StorageKind) else None
    interface = _interface_mb_per_s(storage) if storage is not None else None
    if interface is not None:
        evidence.append(Evidence("interface ceiling", f"{interface:.0f} MB/s", "storage.nvme_link / SATA"))
    if storage is not None and storage.note:
        evidence.append(Evidence("note", storage.note, "gpu-doctor"))
    floor = READ_FLOOR_MB_PER_S.get(kind, ANY_FLOOR_MB_PER_S) if kind is not None else ANY_FLOOR_MB_PER_S
    words = KIND_WORDS.get(kind, "this storage") if kind is not None else "this storage"
    said = f"{disk.directory} reads at {rate:.0f} MB/s"
    ceiling = f" (its interface carries up to {interface:.0f} MB/s)" if interface is not None else ""
    if rate < floor:
        return Finding(
            cid,
            Status.WARN,
            f"{said}{ceiling}: slow for {words}, which normally gives at least {floor:.0f} MB/s to one reader.",
            details="A failing or overheating drive, a narrow link, a throttled cloud volume or a busy disk all "
            "look like this; check storage.nvme_link and the drive's SMART data.",
            evidence=tuple(evidence),
        )
    return Finding(
        cid,
        Status.PASS,
        f"{said}{ceiling}, normal for {words} read by one thread at queue depth 1.",
        evidence=tuple(evidence),
    )
