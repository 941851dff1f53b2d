"""/proc/self/mountinfo parsing and the mount that holds a path, on real lines (sources beside each)."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch_gpu_doctor.facts.mountinfo import (
    mount_for_path,
    parse_mountinfo,
    parse_mountinfo_line,
    read_mountinfo,
    unescape,
)
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.unavailable import Reason, Unavailable

TREES = Path(__file__).resolve().parent.parent / "fixtures" / "storage-trees"
CI_VM = (TREES / "captures" / "ci-vm-mountinfo.txt").read_text()  # this project's CI VM, cat on 2026-11-22


def test_a_line_with_two_optional_fields_and_an_escaped_source() -> None:
    # docker/docker mountinfo_linux_test.go fedoraMountinfo (a Fedora 20 host): a CIFS share whose UNC path
    # has spaces, escaped as \040 in the source field.
    line = (
        "31 21 0:23 / /DATA/foo_bla_bla rw,relatime - cifs //foo/BLA\\040BLA\\040BLA/ rw,sec=ntlm,"
        "cache=loose,unc=\\\\foo\\BLA BLA BLA,username=my_login"
    )
    entry = parse_mountinfo_line(line)
    assert entry is not None
    assert (entry.mount_id, entry.parent_id, entry.major, entry.minor) == (31, 21, 0, 23)
    assert entry.fs_type == "cifs"
    assert entry.source == "//foo/BLA BLA BLA/"
    # alpha-unito/streamflow#1058: an NFS mount with the `master:1939` optional field before ` - `
    nfs = parse_mountinfo_line(
        "4174 4102 0:173 / /mnt/netapp2/Store_ulcqfjrg rw,noatime master:1939 - nfs "
        "10.117.49.202:/Store_ulcqfjrg rw,vers=3,rsize=32768"
    )
    assert nfs is not None
    assert (nfs.mount_point, nfs.fs_type, nfs.source) == (
        "/mnt/netapp2/Store_ulcqfjrg",
        "nfs",
        "10.117.49.202:/Store_ulcqfjrg",
    )
    assert nfs.option("vers") == "3"
    assert nfs.option("nconnect") is None


def test_escaped_spaces_in_the_mount_point_of_the_ci_vm() -> None:
    entries = parse_mountinfo(CI_VM)
    points = {e.mount_point for e in entries}
    assert "/tmp/helperb-cap/mnt/sub vol" in points
    assert "/tmp/helperb-cap/mnt/my data" in points
    sub = next(e for e in entries if e.mount_point == "/tmp/helperb-cap/mnt/sub vol")
    assert (sub.root, sub.fs_type, sub.source, sub.device_number) == ("/@data", "btrfs", "/dev/loop0", "0:39")
    assert unescape("a\\011b\\012c\\134d") == "a\tb\nc\\d"


def test_a_line_that_ends_after_its_source_still_parses() -> None:
    # opentelemetry-java-instrumentation CgroupV2ContainerIdExtractorTest: the last line has no super options
    entry = parse_mountinfo_line("386 468 0:152 / /sys/firmware ro,relatime - tmpfs tmpfs ")
    assert entry is not None
    assert (entry.fs_type, entry.source, entry.super_options) == ("tmpfs", "tmpfs", ())


@pytest.mark.parametrize(
    "line",
    [
        "27 1 254:0 / / rw,relatime",  # cut before the separator
        "27 1 vda / / rw,relatime - ext4 /dev/vda rw",  # MAJ:MIN not numeric
        "27 1 254:0 / / rw,relatime -",  # nothing after the separator
        "x 1 254:0 / / rw - ext4 /dev/vda rw",  # mount id not numeric
        "",
    ],
)
def test_garbled_lines_are_skipped(line: str) -> None:
    assert parse_mountinfo_line(line) is None


def _mount_point(text: str, path: str) -> str:
    entry = mount_for_path(parse_mountinfo(text), path)
    assert entry is not None
    return entry.mount_point


def test_longest_mount_point_wins_and_prefixes_respect_path_boundaries() -> None:
    assert _mount_point(CI_VM, "/tmp/helperb-cap/mnt/btr/x") == "/tmp/helperb-cap/mnt/btr"
    # /tmp/helperb-cap/mnt/btrfs-other is NOT under the /tmp/helperb-cap/mnt/btr mount
    assert _mount_point(CI_VM, "/tmp/helperb-cap/mnt/btrfs-other") == "/"
    assert _mount_point(CI_VM, "/tmp/helperb-cap/mnt/../mnt/btr") == "/tmp/helperb-cap/mnt/btr"
    assert _mount_point(CI_VM, "/sys/fs/cgroup/memory/x") == "/sys/fs/cgroup/memory"


def test_a_second_mount_on_the_same_point_hides_the_first() -> None:
    # The CI VM mounts /dev/shm twice (ids 25 and 30): the later line is the visible one.
    entry = mount_for_path(parse_mountinfo(CI_VM), "/dev/shm/x")
    assert entry is not None and entry.mount_id == 30


def test_read_mountinfo_says_why_when_unreadable_or_garbled() -> None:
    missing = read_mountinfo(RecordedHost(TREES / "mountinfo-missing"))
    assert isinstance(missing, Unavailable) and missing.reason is Reason.NOT_FOUND
    garbled = read_mountinfo(RecordedHost(TREES / "mountinfo-garbled"))
    assert isinstance(garbled, Unavailable) and garbled.reason is Reason.UNPARSEABLE
    denied = read_mountinfo(RecordedHost(TREES / "permission-denied"))
    assert isinstance(denied, Unavailable) and denied.reason is Reason.PERMISSION_DENIED
