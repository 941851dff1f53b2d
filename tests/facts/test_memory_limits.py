"""Locked-memory limit, /dev/shm size and swap, on real captures (sources beside each) and on this machine."""

from __future__ import annotations

import json
import os
import resource
import shutil
from pathlib import Path

import psutil
import pytest

from torch_gpu_doctor.facts.memory_limits import (
    LockedMemoryLimit,
    MemoryLimitsFacts,
    ShmSizeSource,
    gather_memory_limits,
    parse_locked_memory,
    parse_size_option,
)
from torch_gpu_doctor.host.real import RealHost
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.serialize import from_json, to_json
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

TREES = Path(__file__).resolve().parent.parent / "fixtures" / "storage-trees"
CAPTURES = TREES / "captures"
MIB = 1 << 20


def test_locked_memory_of_the_ci_vm() -> None:
    # `cat /proc/self/limits` on this project's CI VM; the 64k one under `prlimit --memlock=65536:65536`
    limit = parse_locked_memory((CAPTURES / "ci-vm-limits.txt").read_text())
    assert limit == LockedMemoryLimit(8 * MIB, 8 * MIB, False, False)
    small = parse_locked_memory((CAPTURES / "ci-vm-limits-64k.txt").read_text())
    assert small == LockedMemoryLimit(65536, 65536, False, False)


def test_unlimited_locked_memory() -> None:
    # The CI VM's line with the values the kernel prints for RLIM_INFINITY (fs/proc/base.c proc_pid_limits);
    # the same line appears in public notes of NCCL/RDMA setups after `ulimit -l unlimited`.
    line = "Max locked memory         unlimited            unlimited            bytes     \n"
    assert parse_locked_memory(line) == LockedMemoryLimit(None, None, True, True)
    mixed = "Max locked memory         65536                unlimited            bytes     \n"
    assert parse_locked_memory(mixed) == LockedMemoryLimit(65536, None, False, True)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Max locked memory\n",
        "Max locked memory         lots                 8388608              bytes\n",
        "Max open files            20000                20000                files\n",
    ],
)
def test_limits_without_a_usable_locked_memory_line(text: str) -> None:
    assert parse_locked_memory(text) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("65536k", 64 * MIB),
        ("24684092k", 24684092 * 1024),
        ("0k", 0),
        ("2g", 2 << 30),
        ("12x", None),
        ("", None),
    ],
)
def test_tmpfs_size_option(value: str, expected: int | None) -> None:
    assert parse_size_option(value) == expected


def _facts(scenario: str) -> MemoryLimitsFacts:
    return gather_memory_limits(RecordedHost(TREES / scenario))


def test_docker_shm_is_64_mib() -> None:
    # opentelemetry-java-instrumentation's container mountinfo: `tmpfs shm rw,size=65536k`
    shm = _facts("docker-overlay").shm
    assert (shm.mount_point, shm.fs_type, shm.size_bytes, shm.size_source) == (
        "/dev/shm",
        "tmpfs",
        64 * MIB,
        ShmSizeSource.MOUNT_OPTION,
    )


def test_shm_without_size_option_is_half_of_ram() -> None:
    # Fedora host mountinfo (no size=) with the CI VM's /proc/meminfo (MemTotal 24684092 kB)
    facts = _facts("nvme-ext4-root")
    assert facts.shm.size_source is ShmSizeSource.KERNEL_DEFAULT
    assert facts.shm.size_bytes == 24684092 * 1024 // 2
    assert (facts.swap_total_bytes, facts.swap_free_bytes) == (0, 0)


def test_shm_default_without_meminfo_is_unknown_but_says_so() -> None:
    shm = _facts("lvm-on-nvme").shm  # Proxmox mountinfo, no meminfo recorded
    assert shm.size_source is ShmSizeSource.KERNEL_DEFAULT
    assert isinstance(shm.size_bytes, Unavailable) and shm.size_bytes.reason is Reason.NOT_FOUND


def test_stacked_shm_mount_of_the_ci_vm() -> None:
    facts = _facts("ci-vm-captured")
    assert facts.shm.size_bytes == 24684092 * 1024
    assert facts.locked_memory == LockedMemoryLimit(8 * MIB, 8 * MIB, False, False)
    assert (
        isinstance(facts.shm.free_bytes, Unavailable) and facts.shm.free_bytes.reason is Reason.NOT_SUPPORTED
    )


def _tree_with(
    tmp_path: Path, scenario: str, mountinfo: str, links: dict[str, str] | None = None
) -> RecordedHost:
    target = tmp_path / scenario
    shutil.copytree(TREES / scenario, target, symlinks=True)
    (target / "root/proc/self/mountinfo").write_text(mountinfo)
    for link, to in (links or {}).items():
        (target / "root" / link).parent.mkdir(parents=True, exist_ok=True)
        (target / "root" / link).symlink_to(to)
    return RecordedHost(target)


def test_shm_that_is_no_mount_lives_on_its_parent(tmp_path: Path) -> None:
    # The container's mountinfo without its /dev/shm line: files there land on the /dev tmpfs.
    docker = (TREES / "docker-overlay/root/proc/self/mountinfo").read_text()
    without = "".join(line + "\n" for line in docker.splitlines() if " /dev/shm " not in line)
    shm = gather_memory_limits(_tree_with(tmp_path, "docker-overlay", without)).shm
    assert (shm.mount_point, shm.fs_type) == ("/dev", "tmpfs")
    assert isinstance(shm.size_bytes, Unavailable) and shm.size_bytes.reason is Reason.NOT_APPLICABLE


def test_shm_through_the_run_shm_symlink(tmp_path: Path) -> None:
    # docker/docker mountinfo_linux_test.go ubuntuMountInfo (Ubuntu 14.04): /run/shm is the tmpfs and
    # /dev/shm a symlink to it; no size= (half of RAM).
    ubuntu = (
        "19 20 0:15 / /run rw,nosuid,noexec,relatime - tmpfs tmpfs rw,size=205044k,mode=755\n"
        "20 1 253:0 / / rw,relatime - ext4 /dev/disk/by-label/DOROOT rw,errors=remount-ro,data=ordered\n"
        "27 19 0:20 / /run/shm rw,nosuid,nodev,relatime - tmpfs none rw\n"
    )
    host = _tree_with(tmp_path, "nvme-ext4-root", ubuntu, {"dev/shm": "/run/shm"})
    shm = gather_memory_limits(host).shm
    assert (shm.path, shm.mount_point, shm.size_source) == (
        "/run/shm",
        "/run/shm",
        ShmSizeSource.KERNEL_DEFAULT,
    )


def test_shm_with_size_zero_has_no_limit(tmp_path: Path) -> None:
    # size=0 is how shmem_show_options() prints a tmpfs without a block limit (max_blocks 0)
    line = "471 466 0:150 / /dev/shm rw,nosuid,nodev,noexec,relatime - tmpfs shm rw,size=0k\n"
    shm = gather_memory_limits(_tree_with(tmp_path, "docker-overlay", line)).shm
    assert shm.size_source is ShmSizeSource.UNLIMITED
    assert isinstance(shm.size_bytes, Unavailable)


def test_permission_denied_is_reported_not_guessed() -> None:
    facts = _facts("permission-denied")
    assert (
        isinstance(facts.locked_memory, Unavailable)
        and facts.locked_memory.reason is Reason.PERMISSION_DENIED
    )
    assert (
        isinstance(facts.shm.size_bytes, Unavailable)
        and facts.shm.size_bytes.reason is Reason.PERMISSION_DENIED
    )


def test_free_space_is_asked_for_the_resolved_path() -> None:
    asked: list[str] = []

    def fake_free(path: str) -> Maybe[int]:
        asked.append(path)
        return 12345

    facts = gather_memory_limits(RecordedHost(TREES / "docker-overlay"), fake_free)
    assert facts.shm.free_bytes == 12345 and asked == ["/dev/shm"]


@pytest.mark.parametrize("scenario", ["ci-vm-captured", "docker-overlay", "lvm-on-nvme", "permission-denied"])
def test_memory_limits_round_trip_through_json(scenario: str) -> None:
    facts = _facts(scenario)
    assert from_json(MemoryLimitsFacts, json.loads(json.dumps(to_json(facts)))) == facts


def _statvfs_free(path: str) -> Maybe[int]:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def test_this_machine_agrees_with_getrlimit_psutil_and_statvfs() -> None:
    facts = gather_memory_limits(RealHost("/"), _statvfs_free)
    soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    assert isinstance(facts.locked_memory, LockedMemoryLimit)
    assert facts.locked_memory.soft_bytes == (None if soft == resource.RLIM_INFINITY else soft)
    assert facts.locked_memory.hard_bytes == (None if hard == resource.RLIM_INFINITY else hard)
    assert facts.swap_total_bytes == psutil.swap_memory().total
    if facts.shm.fs_type == "tmpfs" and facts.shm.size_source is ShmSizeSource.MOUNT_OPTION:
        st = os.statvfs(facts.shm.path)
        assert facts.shm.size_bytes == st.f_blocks * st.f_frsize
        assert isinstance(facts.shm.free_bytes, int) and 0 <= facts.shm.free_bytes <= facts.shm.size_bytes
