"""storage.* over StorageFacts gathered from the storage trees (provenance in their README)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from tests.factories import facts, os_facts
from torch_gpu_doctor.checks.storage import data_dir, nvme_link, read_speed
from torch_gpu_doctor.facts.measurements import DiskRead, Measurements
from torch_gpu_doctor.facts.storage import StorageFacts, gather_storage
from torch_gpu_doctor.host.base import DiskSpace
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.unavailable import Reason, Unavailable

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "storage-trees"
GIB = 1 << 30
NVME = "0000:3d:00.0"  # nvme-ext4-root: the controller below root port 0000:00:1d.0
PORT = "0000:00:1d.0"
NOT_ASKED = Unavailable(Reason.NOT_APPLICABLE, "run with --measure")


def storage_of(tree: str | Path, path: str) -> StorageFacts:
    root = tree if isinstance(tree, Path) else TREES / tree
    return gather_storage(RecordedHost(root), path)


# -- storage.data_dir ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tree", "path", "status", "says"),
    [
        ("nvme-ext4-root", "/home/me/data", Status.PASS, "/home/me/data is on an NVMe SSD."),
        ("desktop-nvme-sata-hdd", "/data/imagenet", Status.PASS, "/data/imagenet is on a SATA SSD."),
        (
            "desktop-nvme-sata-hdd",
            "/mnt/archive disk/x",
            Status.WARN,
            "is on a spinning hard disk: about 150-250",
        ),
        ("md-raid1", "/srv", Status.WARN, "/srv is on a spinning hard disk"),
        ("lvm-on-nvme", "/var/lib", Status.PASS, "/var/lib is on an NVMe SSD."),
        ("virtio-vda", "/", Status.PASS, "/ is on a virtual disk."),
        ("hyperv-azure", "/", Status.PASS, "/ is on a virtual disk."),
        (
            "nfs",
            "/mnt/netapp2/Store_ulcqfjrg/ds",
            Status.WARN,
            "is on a network filesystem (nfs): every epoch is read over the network",
        ),
        ("ci-vm-captured", "/dev/shm", Status.PASS, "/dev/shm is on RAM (tmpfs): fast, but it uses RAM"),
    ],
)
def test_kind_of_storage(tree: str, path: str, status: Status, says: str) -> None:
    finding = data_dir(facts(storage=storage_of(tree, path)))
    assert (finding.status, says in finding.summary) == (status, True), finding.summary


def test_a_parallel_filesystem_is_not_treated_as_slow_nfs() -> None:
    lustre = replace(storage_of("nfs", "/mnt/netapp2/Store_ulcqfjrg/ds"), fs_type="lustre")
    finding = data_dir(facts(storage=lustre))
    assert finding.status is Status.PASS and "a parallel filesystem built for this" in finding.summary


def test_a_windows_drive_in_wsl2_warns() -> None:
    windows = replace(storage_of("nfs", "/mnt/netapp2/Store_ulcqfjrg/ds"), path="/mnt/c/data", fs_type="9p")
    finding = data_dir(facts(storage=windows, os=os_facts(wsl=True)))
    assert finding.status is Status.WARN and "WSL2's 9p bridge" in finding.summary


def test_almost_full_disk_warns_and_free_space_is_shown() -> None:
    nvme = storage_of("nvme-ext4-root", "/home")
    full = data_dir(facts(storage=replace(nvme, space=DiskSpace(3 * GIB, 500 * GIB))))
    assert full.status is Status.WARN and "only 3 GiB free of 500 GiB" in full.summary
    roomy = data_dir(facts(storage=replace(nvme, space=DiskSpace(300 * GIB, 500 * GIB))))
    assert roomy.status is Status.PASS and roomy.summary.endswith("NVMe SSD, 300 GiB free.")
    small_but_fine = data_dir(facts(storage=replace(nvme, space=DiskSpace(8 * GIB, 40 * GIB))))
    assert small_but_fine.status is Status.PASS  # 20 % free of a small disk is not "almost full"


@pytest.mark.parametrize(
    ("tree", "status"),
    [
        ("mountinfo-missing", Status.UNKNOWN),
        ("mountinfo-garbled", Status.UNKNOWN),
        ("permission-denied", Status.UNKNOWN),
    ],
)
def test_unreadable_mount_table_is_unknown(tree: str, status: Status) -> None:
    finding = data_dir(facts(storage=storage_of(tree, "/")))
    assert finding.status is status and "Could not find the mount" in finding.summary


def test_zfs_is_skipped_with_the_tool_to_use() -> None:
    zfs = replace(
        storage_of("nvme-ext4-root", "/"),
        fs_type="zfs",
        kind=Unavailable(Reason.NOT_SUPPORTED, "ZFS dataset rpool/ROOT: see `zpool status`"),
    )
    finding = data_dir(facts(storage=zfs))
    assert finding.status is Status.SKIP and "zpool status" in finding.summary


def test_storage_facts_missing_is_unknown() -> None:
    assert data_dir(facts()).status is Status.UNKNOWN


# -- storage.nvme_link --------------------------------------------------------------------------------------


def nvme_tree(tmp_path: Path, width: str, port_width: str, speed: str = "8.0 GT/s PCIe") -> Path:
    """nvme-ext4-root plus the PCIe link files of its controller and port, in the kernel's format."""
    root = tmp_path / "cap"
    shutil.copytree(TREES / "nvme-ext4-root", root, symlinks=True)
    devices = root / "root/sys/devices/pci0000:00"
    values = {
        devices / PORT: ("8.0 GT/s PCIe", "8.0 GT/s PCIe", port_width, port_width, "0x060400"),
        devices / PORT / NVME: (speed, "8.0 GT/s PCIe", width, "4", "0x010802"),
    }
    for directory, (cur, top, cur_w, top_w, cls) in values.items():
        for name, value in (
            ("current_link_speed", cur),
            ("max_link_speed", top),
            ("current_link_width", cur_w),
            ("max_link_width", top_w),
            ("class", cls),
        ):
            (directory / name).write_text(value + "\n")
    bus = root / "root/sys/bus/pci/devices"
    bus.mkdir(parents=True, exist_ok=True)
    for bdf, target in ((PORT, f"pci0000:00/{PORT}"), (NVME, f"pci0000:00/{PORT}/{NVME}")):
        (bus / bdf).symlink_to(f"../../../devices/{target}")
    return root


def test_nvme_at_full_width_passes_with_its_ceiling(tmp_path: Path) -> None:
    storage = storage_of(nvme_tree(tmp_path, "4", "4"), "/home")
    finding = nvme_link(facts(storage=storage))
    assert finding.status is Status.PASS
    assert finding.summary == "The NVMe controller at 0000:3d:00.0 runs at Gen3 x4, up to 3.9 GB/s."


def test_nvme_trained_narrower_than_both_ends_warns(tmp_path: Path) -> None:
    finding = nvme_link(facts(storage=storage_of(nvme_tree(tmp_path, "2", "4"), "/home")))
    assert finding.status is Status.WARN
    assert "trained at x2 though it and its port support x4" in finding.summary


def test_nvme_in_an_x2_slot_is_a_limit_not_a_fault(tmp_path: Path) -> None:
    finding = nvme_link(facts(storage=storage_of(nvme_tree(tmp_path, "2", "2"), "/home")))
    assert finding.status is Status.PASS
    assert "(the slot gives x2 of the drive's x4)" in finding.summary


def test_nvme_at_a_lower_speed_is_mentioned_not_failed(tmp_path: Path) -> None:
    tree = nvme_tree(tmp_path, "4", "4", speed="2.5 GT/s PCIe")
    finding = nvme_link(facts(storage=storage_of(tree, "/home")))
    assert finding.status is Status.PASS and "Gen1 now of Gen3 possible" in finding.summary


def test_nvme_link_files_missing_is_unknown() -> None:
    finding = nvme_link(facts(storage=storage_of("nvme-ext4-root", "/home")))
    assert finding.status is Status.UNKNOWN


def test_nvme_link_is_skipped_off_nvme() -> None:
    assert nvme_link(facts(storage=storage_of("virtio-vda", "/"))).status is Status.SKIP


# -- storage.read_speed -------------------------------------------------------------------------------------


def read(rate: float | Unavailable, directory: str = "/home") -> Measurements:
    disk = DiskRead(directory, rate, 1 << 30, 0.5, 1 << 30, 8 << 20, 1, "O_DIRECT test read")
    return Measurements(NOT_ASKED, disk)


def test_read_speed_skipped_without_measure() -> None:
    finding = read_speed(facts(measurements=Measurements(NOT_ASKED, NOT_ASKED)))
    assert finding.status is Status.SKIP and "run with --measure" in finding.summary


def test_fast_nvme_read_passes_next_to_its_link(tmp_path: Path) -> None:
    storage = storage_of(nvme_tree(tmp_path, "4", "4"), "/home")
    finding = read_speed(facts(storage=storage, measurements=read(2100.0)))
    assert finding.status is Status.PASS
    assert finding.summary == (
        "/home reads at 2100 MB/s (its interface carries up to 3938 MB/s), normal for an NVMe SSD read by one "
        "thread at queue depth 1."
    )


def test_slow_nvme_read_warns(tmp_path: Path) -> None:
    storage = storage_of(nvme_tree(tmp_path, "4", "4"), "/home")
    finding = read_speed(facts(storage=storage, measurements=read(180.0)))
    assert finding.status is Status.WARN and "slow for an NVMe SSD" in finding.summary


def test_sata_ssd_and_hdd_have_their_own_floors() -> None:
    ssd = storage_of("desktop-nvme-sata-hdd", "/data")
    hdd = storage_of("desktop-nvme-sata-hdd", "/mnt/archive disk")
    assert read_speed(facts(storage=ssd, measurements=read(480.0))).status is Status.PASS
    assert read_speed(facts(storage=ssd, measurements=read(120.0))).status is Status.WARN
    assert read_speed(facts(storage=hdd, measurements=read(120.0))).status is Status.PASS
    assert read_speed(facts(storage=hdd, measurements=read(30.0))).status is Status.WARN


def test_tmpfs_refusal_is_a_skip_and_a_failure_is_unknown() -> None:
    refused = Unavailable(Reason.NOT_APPLICABLE, "/dev/shm is on tmpfs, which lives in RAM")
    assert read_speed(facts(measurements=read(refused))).status is Status.SKIP
    denied = Unavailable(Reason.PERMISSION_DENIED, "/data: Permission denied")
    assert read_speed(facts(measurements=read(denied))).status is Status.UNKNOWN
