"""Disk read speed with O_DIRECT: real small measurements, refusals with reasons, and cleanup."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from torch_gpu_doctor.facts.measurements import DiskRead
from torch_gpu_doctor.host.real import RealHost
from torch_gpu_doctor.measure.disk_read import (
    DEFAULT_MAX_FILE_BYTES,
    FreeSpace,
    filesystem_type,
    free_space,
    measure_disk_read,
)
from torch_gpu_doctor.serialize import from_json, to_json
from torch_gpu_doctor.unavailable import Reason, Unavailable

LIVE = RealHost()  # the measurements read this machine's sysfs and mountinfo through it

MIB = 1 << 20


def _leftovers(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.startswith(".gpu-doctor-read-")]


@pytest.fixture
def disk_dir(tmp_path: Path) -> Path:
    """A directory on a real disk: pytest's tmp_path, unless that is a RAM filesystem here."""
    if filesystem_type(LIVE, str(tmp_path)) in ("tmpfs", "ramfs"):
        pytest.skip(f"{tmp_path} is on a RAM filesystem")
    return tmp_path


def test_free_space_of_a_directory(tmp_path: Path) -> None:
    space = free_space(str(tmp_path))
    assert isinstance(space.free_bytes, int) and isinstance(space.total_bytes, int)
    assert 0 <= space.free_bytes <= space.total_bytes  # a full disk is 0: the types and the bound, no amount
    st = os.statvfs(tmp_path)
    assert space.total_bytes == st.f_blocks * st.f_frsize
    gone = free_space(str(tmp_path / "missing"))
    assert isinstance(gone.free_bytes, Unavailable) and gone.free_bytes.reason is Reason.NOT_FOUND


def test_a_small_direct_read_and_the_file_is_gone(disk_dir: Path) -> None:
    result = measure_disk_read(LIVE, str(disk_dir), time_budget_s=1.0, max_file_bytes=32 * MIB)
    assert isinstance(result.read_mb_per_s, float), result.read_mb_per_s
    # the write stops at half the budget: on a busy machine the file is shorter (a time, never asserted)
    assert result.block_bytes <= result.file_bytes <= 32 * MIB
    assert result.file_bytes % result.block_bytes == 0
    assert 0 < result.bytes_read <= result.file_bytes
    assert result.read_mb_per_s == pytest.approx(result.bytes_read / result.seconds / 1e6)
    assert result.read_mb_per_s > 0  # a figure; how fast is benchmarks/' question, not a test's
    assert result.threads == 1 and "O_DIRECT" in result.method
    assert _leftovers(disk_dir) == []


def test_tmpfs_is_refused_by_type_because_it_accepts_o_direct() -> None:
    """Linux ≥ 6.6 lets tmpfs open files with O_DIRECT (verified on the CI VM, 6.18), so only the
    filesystem type keeps a RAM copy from passing as a disk read."""
    shm = "/dev/shm"
    if not Path(shm).is_dir() or filesystem_type(LIVE, shm) != "tmpfs":
        pytest.skip("no tmpfs /dev/shm here")
    before = _leftovers(Path(shm))
    result = measure_disk_read(LIVE, shm, time_budget_s=0.5)
    assert isinstance(result.read_mb_per_s, Unavailable)
    assert result.read_mb_per_s.reason is Reason.NOT_APPLICABLE
    assert "tmpfs" in result.read_mb_per_s.detail and "RAM" in result.read_mb_per_s.detail
    assert result.bytes_read == 0 and _leftovers(Path(shm)) == before


def test_a_refused_o_direct_says_so_and_removes_the_file(disk_dir: Path) -> None:
    # ramfs (and tmpfs before Linux 6.6, some FUSE filesystems) answer open(O_DIRECT) with EINVAL: verified on
    # the CI VM with a ramfs mount. The opener stands in for such a filesystem.
    def refusing(path: str, flags: int) -> int:
        if flags & os.O_DIRECT:
            raise OSError(errno.EINVAL, "Invalid argument", path)
        return os.open(path, flags)

    result = measure_disk_read(LIVE, str(disk_dir), time_budget_s=0.5, opener=refusing, fs_type="ramfs-like")
    assert isinstance(result.read_mb_per_s, Unavailable)
    assert result.read_mb_per_s.reason is Reason.NOT_SUPPORTED
    assert "O_DIRECT" in result.read_mb_per_s.detail and "page cache" in result.read_mb_per_s.detail
    assert _leftovers(disk_dir) == []


def test_ctrl_c_still_removes_the_file(disk_dir: Path) -> None:
    calls: list[int] = []

    def interrupted_at_read(path: str, flags: int) -> int:
        calls.append(flags)
        if flags & os.O_ACCMODE == os.O_RDONLY:
            raise KeyboardInterrupt
        return os.open(path, flags)

    with pytest.raises(KeyboardInterrupt):
        measure_disk_read(
            LIVE, str(disk_dir), time_budget_s=0.5, max_file_bytes=16 * MIB, opener=interrupted_at_read
        )
    assert len(calls) == 2  # it got as far as opening the written file for reading
    assert _leftovers(disk_dir) == []


@pytest.mark.parametrize(
    ("code", "reason", "words"),
    [
        (errno.ENOSPC, Reason.FAILED, "no space"),
        (errno.EROFS, Reason.NOT_SUPPORTED, "read-only"),
        (errno.EIO, Reason.FAILED, "error"),
    ],
)
def test_expected_os_errors_become_reasons(disk_dir: Path, code: int, reason: Reason, words: str) -> None:
    def failing(path: str, flags: int) -> int:
        raise OSError(code, os.strerror(code), path)

    result = measure_disk_read(LIVE, str(disk_dir), time_budget_s=0.5, opener=failing)
    assert isinstance(result.read_mb_per_s, Unavailable)
    assert result.read_mb_per_s.reason is reason
    assert words in result.read_mb_per_s.detail.lower()
    assert _leftovers(disk_dir) == []


def test_a_directory_nobody_may_write_is_permission_denied() -> None:
    # sysfs refuses new files even to root (EACCES, seen on the CI VM)
    result = measure_disk_read(LIVE, "/sys", time_budget_s=0.5)
    assert (
        isinstance(result.read_mb_per_s, Unavailable)
        and result.read_mb_per_s.reason is Reason.PERMISSION_DENIED
    )


def test_a_missing_directory_is_not_found(tmp_path: Path) -> None:
    result = measure_disk_read(LIVE, str(tmp_path / "nope"), time_budget_s=0.5, fs_type="ext4")
    assert isinstance(result.read_mb_per_s, Unavailable) and result.read_mb_per_s.reason is Reason.NOT_FOUND


def test_results_round_trip_through_json(disk_dir: Path) -> None:
    measured = measure_disk_read(LIVE, str(disk_dir), time_budget_s=0.5, max_file_bytes=16 * MIB)
    refused = measure_disk_read(LIVE, "/sys", time_budget_s=0.5)
    for result in (measured, refused):
        assert from_json(DiskRead, to_json(result)) == result
    space = free_space(str(disk_dir))
    assert from_json(FreeSpace, to_json(space)) == space


class SteppingClock:
    """Each reading is `step` seconds after the last, `later_step` once past `switch_at`: the budget's
    arithmetic, whatever this disk's speed."""

    def __init__(self, step: float, later_step: float, switch_at: float) -> None:
        self.now, self.step, self.later_step, self.switch_at = 0.0, step, later_step, switch_at

    def __call__(self) -> float:
        self.now += self.step if self.now < self.switch_at else self.later_step
        return self.now


@pytest.mark.slow
def test_the_default_budget_stops_writing_and_reading(disk_dir: Path) -> None:
    # A block per 0.05 s while writing: half of 2.5 s is 25 blocks of 8 MiB, far from the 1 GiB cap. A block
    # per 0.2 s while reading: the deadline comes before the whole file is read.
    result = measure_disk_read(LIVE, str(disk_dir), clock=SteppingClock(0.05, 0.2, switch_at=1.3))
    assert isinstance(result.read_mb_per_s, float)
    assert result.file_bytes < DEFAULT_MAX_FILE_BYTES
    assert 0 < result.bytes_read < result.file_bytes
    assert result.seconds <= 2.5
    assert _leftovers(disk_dir) == []
