"""Which disk backs a data directory, on fixture trees (tests/fixtures/storage-trees, README.md there says
where every value comes from) and on this machine."""

from __future__ import annotations

import filecmp
import importlib.util
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from torch_gpu_doctor.facts.block_devices import BlockDisk, StorageKind, describe_disk, leaf_devices
from torch_gpu_doctor.facts.storage import DeviceSource, StorageFacts, combined_kind, gather_storage
from torch_gpu_doctor.host.real import RealHost
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.serialize import from_json, to_json
from torch_gpu_doctor.unavailable import Reason, Unavailable

TREES = Path(__file__).resolve().parent.parent / "fixtures" / "storage-trees"


@dataclass(frozen=True)
class Case:
    scenario: str
    path: str
    mount_point: str
    fs_type: str
    device: str | None  # None: no block device (tmpfs, network)
    source: DeviceSource | None
    kind: StorageKind
    disks: tuple[tuple[str, str, str | None], ...]  # (name, transport, PCI address of the controller)


CASES = [
    Case("nvme-ext4-root", "/home/u/data", "/", "ext4", "nvme0n1p1", DeviceSource.DEVICE_NUMBER,
         StorageKind.NVME, (("nvme0n1", "pcie", "0000:3d:00.0"),)),
    Case("desktop-nvme-sata-hdd", "/data/imagenet", "/data", "ext4", "sda1", DeviceSource.DEVICE_NUMBER,
         StorageKind.SATA_SSD, (("sda", "sata", "0000:00:17.0"),)),
    Case("desktop-nvme-sata-hdd", "/mnt/archive disk/x", "/mnt/archive disk", "ext4", "sdb1",
         DeviceSource.DEVICE_NUMBER, StorageKind.HDD, (("sdb", "sata", "0000:00:17.0"),)),
    Case("desktop-nvme-sata-hdd", "/home", "/", "ext4", "nvme0n1p2", DeviceSource.DEVICE_NUMBER,
         StorageKind.NVME, (("nvme0n1", "pcie", "0000:02:00.0"),)),
    Case("lvm-on-nvme", "/var/lib/vz", "/", "ext4", "dm-1", DeviceSource.DEVICE_NUMBER, StorageKind.NVME,
         (("nvme0n1", "pcie", "0000:3d:00.0"),)),
    Case("md-raid1", "/srv/data", "/", "ext4", "md0", DeviceSource.DEVICE_NUMBER, StorageKind.HDD,
         (("sda", "sata", "0000:00:17.0"), ("sdb", "sata", "0000:00:17.0"))),
    Case("btrfs-nvme", "/home/u/ds", "/home", "btrfs", "nvme0n1p3", DeviceSource.BTRFS_DEVICES,
         StorageKind.NVME, (("nvme0n1", "pcie", "0000:3d:00.0"),)),
    Case("btrfs-dev-root", "/data", "/", "btrfs", "nvme0n1p2", DeviceSource.BTRFS_DEVICES, StorageKind.NVME,
         (("nvme0n1", "pcie", "0000:3d:00.0"),)),
    Case("nvme-multipath", "/data", "/", "ext4", "nvme0n1p2", DeviceSource.DEVICE_NUMBER, StorageKind.NVME,
         (("nvme0n1", "pcie", "0000:3d:00.0"),)),
    Case("virtio-vda", "/tmp", "/", "ext4", "vda", DeviceSource.DEVICE_NUMBER, StorageKind.VIRTUAL_DISK,
         (("vda", "virtio", "0000:00:02.0"),)),
    Case("docker-overlay", "/workspace", "/", "overlay", "vda1", DeviceSource.CONTAINER_BIND_MOUNT,
         StorageKind.VIRTUAL_DISK, (("vda", "virtio", "0000:00:07.0"),)),
    Case("nfs", "/mnt/netapp2/Store_ulcqfjrg/ds", "/mnt/netapp2/Store_ulcqfjrg", "nfs", None, None,
         StorageKind.NETWORK, ()),
    Case("ci-vm-captured", "/tmp/helperb-cap/mnt/sub vol/x", "/tmp/helperb-cap/mnt/sub vol", "btrfs", "loop0",
         DeviceSource.BTRFS_DEVICES, StorageKind.VIRTUAL_DISK, (("vda", "virtio", "0000:00:02.0"),)),
    Case("ci-vm-captured", "/tmp/helperb-cap/merged/x", "/tmp/helperb-cap/merged", "overlay", "vda",
         DeviceSource.OVERLAY_UPPERDIR, StorageKind.VIRTUAL_DISK, (("vda", "virtio", "0000:00:02.0"),)),
    Case("ci-vm-captured", "/tmp/helperb-cap/mnt/my data", "/tmp/helperb-cap/mnt/my data", "tmpfs", None, None,
         StorageKind.MEMORY, ()),
    Case("ci-vm-captured", "/dev/shm/batch", "/dev/shm", "tmpfs", None, None, StorageKind.MEMORY, ()),
    Case("hyperv-azure", "/data", "/", "ext4", "sda1", DeviceSource.DEVICE_NUMBER, StorageKind.VIRTUAL_DISK,
         (("sda", "hyperv", None),)),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.scenario}:{c.path}")
def test_backing_storage_of_a_path(case: Case) -> None:
    facts = gather_storage(RecordedHost(TREES / case.scenario), case.path)
    assert facts.mount_point == case.mount_point
    assert facts.fs_type == case.fs_type
    assert facts.kind is case.kind
    if case.device is None:
        assert isinstance(facts.device, Unavailable) and facts.device.reason is Reason.NOT_APPLICABLE
    else:
        assert facts.device == case.device
        assert facts.device_source is case.source
    assert isinstance(facts.disks, tuple)
    got = tuple(
        (d.name, d.transport, None if isinstance(d.pci_address, Unavailable) else d.pci_address)
        for d in facts.disks
    )
    assert got == case.disks


def _disk(scenario: str, path: str) -> BlockDisk:
    facts = gather_storage(RecordedHost(TREES / scenario), path)
    assert isinstance(facts.disks, tuple) and len(facts.disks) == 1
    return facts.disks[0]


def test_nvme_disk_carries_its_controller_model_and_size() -> None:
    disk = _disk("nvme-ext4-root", "/")
    assert disk.nvme_controller == "nvme0"
    assert disk.model == "Samsung SSD 970 EVO Plus 500GB"
    assert disk.size_bytes == 976773168 * 512  # `size` counts 512-byte sectors
    assert disk.rotational is False
    assert disk.sysfs_path == "/sys/devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1"


def test_native_multipath_finds_the_controller_through_the_subsystem() -> None:
    disk = _disk("nvme-multipath", "/")
    assert disk.sysfs_path == "/sys/devices/virtual/nvme-subsystem/nvme-subsys0/nvme0n1"
    assert (disk.nvme_controller, disk.pci_address, disk.model) == (
        "nvme0",
        "0000:3d:00.0",
        "Samsung SSD 970 EVO Plus 500GB",
    )


def test_scsi_strings_are_stripped_of_their_inquiry_padding() -> None:
    disk = _disk("desktop-nvme-sata-hdd", "/data")
    assert (disk.vendor, disk.model) == ("ATA", "SanDisk SD8SBAT1")


def test_virtual_disks_are_not_judged_by_rotational() -> None:
    # samples/sysfs/local-vm-virtio-blk-and-pci.txt: a virtio disk says rotational=1
    vda = _disk("virtio-vda", "/")
    assert vda.rotational is True and vda.kind is StorageKind.VIRTUAL_DISK and "rotational" in vda.note
    hyperv = _disk("hyperv-azure", "/")
    assert (hyperv.vendor, hyperv.model, hyperv.rotational) == ("Msft", "Virtual Disk", True)
    assert hyperv.kind is StorageKind.VIRTUAL_DISK


def test_loop_device_follows_its_backing_file_and_warns_about_the_page_cache() -> None:
    facts = gather_storage(RecordedHost(TREES / "ci-vm-captured"), "/tmp/helperb-cap/mnt/btr")
    assert "/tmp/helperb-cap/btr.img" in facts.note
    assert "loop/dio=0" in facts.note


@pytest.mark.parametrize(
    ("scenario", "reason"),
    [
        ("mountinfo-missing", Reason.NOT_FOUND),
        ("mountinfo-garbled", Reason.UNPARSEABLE),
        ("permission-denied", Reason.PERMISSION_DENIED),
    ],
)
def test_unreadable_mount_table_leaves_every_field_unknown_with_its_reason(
    scenario: str, reason: Reason
) -> None:
    facts = gather_storage(RecordedHost(TREES / scenario), "/data")
    for value in (facts.mount_point, facts.fs_type, facts.device, facts.disks, facts.kind):
        assert isinstance(value, Unavailable) and value.reason is reason


def _copy_with_errors(tmp_path: Path, scenario: str, file_errors: dict[str, str]) -> RecordedHost:
    target = tmp_path / scenario
    shutil.copytree(TREES / scenario, target, symlinks=True)
    (target / "host.json").write_text(json.dumps({"file_errors": file_errors}))
    return RecordedHost(target)


def test_members_of_a_volume_that_may_not_be_listed_make_the_kind_unknown(tmp_path: Path) -> None:
    host = _copy_with_errors(tmp_path, "lvm-on-nvme", {"/sys/block/dm-1/slaves": "permission_denied"})
    facts = gather_storage(host, "/")
    assert facts.device == "dm-1"
    assert isinstance(facts.kind, Unavailable) and facts.kind.reason is Reason.PERMISSION_DENIED


def test_an_unreadable_rotational_flag_makes_a_sata_disk_unknown(tmp_path: Path) -> None:
    host = _copy_with_errors(tmp_path, "desktop-nvme-sata-hdd", {})
    (
        tmp_path
        / "desktop-nvme-sata-hdd/root/sys/devices/pci0000:00/0000:00:17.0/ata3/host2/target2:0:0/2:0:0:0/block/sdb/queue/rotational"
    ).unlink()
    disk = describe_disk(host, "sdb")
    assert disk.transport == "sata"
    assert isinstance(disk.kind, Unavailable) and disk.kind.reason is Reason.NOT_FOUND


def test_a_slaves_cycle_ends_at_the_depth_limit(tmp_path: Path) -> None:
    # Not a real layout: a guard against a corrupt tree looping forever.
    root = tmp_path / "cycle" / "root"
    for a, b in (("dm-0", "dm-1"), ("dm-1", "dm-0")):
        (root / f"sys/devices/virtual/block/{a}/slaves").mkdir(parents=True, exist_ok=True)
        (root / f"sys/devices/virtual/block/{a}/slaves/{b}").symlink_to(f"../../{b}")
        (root / "sys/block").mkdir(parents=True, exist_ok=True)
        (root / f"sys/block/{a}").symlink_to(f"../devices/virtual/block/{a}")
    result = leaf_devices(RecordedHost(tmp_path / "cycle"), "dm-0")
    assert isinstance(result, Unavailable) and result.reason is Reason.FAILED


def test_combined_kind_of_disks_that_differ_is_mixed() -> None:
    ssd = _disk("desktop-nvme-sata-hdd", "/data")
    hdd = _disk("desktop-nvme-sata-hdd", "/mnt/archive disk")
    assert combined_kind((ssd, ssd)) is StorageKind.SATA_SSD
    assert combined_kind((ssd, hdd)) is StorageKind.MIXED
    assert isinstance(combined_kind(()), Unavailable)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.scenario}:{c.path}")
def test_storage_facts_round_trip_through_json(case: Case) -> None:
    facts = gather_storage(RecordedHost(TREES / case.scenario), case.path)
    data = json.loads(json.dumps(to_json(facts)))
    assert from_json(StorageFacts, data) == facts


def test_unknown_storage_round_trips_with_its_reason() -> None:
    facts = gather_storage(RecordedHost(TREES / "permission-denied"), "/")
    data = to_json(facts)
    assert data["kind"] is None and data["unavailable"]["kind"]["reason"] == "permission_denied"
    assert from_json(StorageFacts, data) == facts


def test_committed_trees_are_what_the_generator_writes(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("storage_trees_generate", TREES / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write(tmp_path)
    for scenario in module.SCENARIOS:
        _assert_same_tree(TREES / scenario, tmp_path / scenario)


def _assert_same_tree(committed: Path, generated: Path) -> None:
    def listing(base: Path) -> dict[str, str]:
        out = {}
        for path in sorted(base.rglob("*")):
            rel = path.relative_to(base).as_posix()
            if path.is_symlink():
                out[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                out[rel] = "file"
        return out

    assert listing(committed) == listing(generated)
    for rel, kind in listing(generated).items():
        if kind == "file":
            assert filecmp.cmp(committed / rel, generated / rel, shallow=False), rel


def test_this_machine_agrees_with_stat(tmp_path: Path) -> None:
    """Live: the device found through mountinfo is the one stat() reports, whenever that is a real one."""
    facts = gather_storage(RealHost("/"), str(tmp_path))
    assert isinstance(facts.mount_point, str)
    assert str(tmp_path.resolve()).startswith(facts.mount_point.rstrip("/"))
    dev = tmp_path.stat().st_dev
    if os.major(dev) == 0:
        pytest.skip(f"{tmp_path} is on an anonymous device ({facts.fs_type}); nothing to compare with")
    name = Path(os.path.realpath(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")).name
    assert facts.device == name
    assert isinstance(facts.disks, tuple) and facts.disks
    for disk in facts.disks:
        assert Path(f"/sys/block/{disk.name}").exists()
