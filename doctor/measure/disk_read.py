"""Sequential read speed of the disk under a data directory, never from the page cache; and free space.

A file is written first with O_DIRECT (bounded in size and time), then read back with O_DIRECT: each
`preadv` goes to the device, whatever the page cache holds. It is one stream at queue depth 1 with 8 MiB reads, so
it is a lower bound of what the disk can do (vendor ratings use deep queues). The file is always removed,
on errors and on Ctrl-C too.

Memory filesystems are refused by type, not by O_DIRECT: tmpfs accepts O_DIRECT since Linux 6.6 (verified on
this project's CI VM, Linux 6.18), so the flag alone would let a RAM copy pass as a disk read.
"""

from __future__ import annotations

import errno
import mmap
import os
import tempfile
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from torch_gpu_doctor.facts.measurements import DiskRead
from torch_gpu_doctor.facts.mountinfo import mount_for_path, read_mountinfo
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

DEFAULT_BLOCK_BYTES = 8 << 20
DEFAULT_MAX_FILE_BYTES = 1 << 30
MIN_FILE_BYTES = 16 << 20
WRITE_SHARE = 0.5  # of the time budget, at most, for writing the file
MEMORY_FILESYSTEMS = ("tmpfs", "ramfs")


@dataclass(frozen=True)
class FreeSpace:
    path: str
    free_bytes: Maybe[int]  # available to an unprivileged user (f_bavail)
    total_bytes: Maybe[int]


def free_space(path: str) -> FreeSpace:
    """statvfs of the filesystem holding `path` on the live machine."""
    try:
        st = os.statvfs(path)
    except OSError as exc:
        why = _why(exc, path)
        return FreeSpace(path, why, why)
    return FreeSpace(path, st.f_bavail * st.f_frsize, st.f_blocks * st.f_frsize)


def free_bytes(path: str) -> Maybe[int]:
    """Free bytes only, in the shape gather_memory_limits(free_space=...) takes."""
    return free_space(path).free_bytes


def _why(exc: OSError, path: str) -> Unavailable:
    code = exc.errno
    if code in (errno.EACCES, errno.EPERM):
        return Unavailable(Reason.PERMISSION_DENIED, f"{path}: {exc.strerror}")
    if code in (errno.ENOENT, errno.ENOTDIR):
        return Unavailable(Reason.NOT_FOUND, path)
    if code == errno.EROFS:
        return Unavailable(Reason.NOT_SUPPORTED, f"{path}: read-only filesystem, cannot write a test file")
    if code in (errno.ENOSPC, errno.EDQUOT):
        return Unavailable(Reason.FAILED, f"{path}: no space left for the test file")
    return Unavailable(Reason.FAILED, f"{path}: {exc.strerror or exc}")


def filesystem_type(host: Host, directory: str) -> str | None:
    """The type of the mount that holds `directory` on the live machine, from /proc/self/mountinfo."""
    entries = read_mountinfo(host)
    if isinstance(entries, Unavailable):
        return None
    entry = mount_for_path(entries, os.path.realpath(directory))
    return None if entry is None else entry.fs_type


def measure_disk_read(
    host: Host,
    directory: str,
    *,
    time_budget_s: float = 2.5,  # + the last block and the unlink: within 3 s
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    fs_type: str | None = None,
    clock: Callable[[], float] = time.perf_counter,
    opener: Callable[[str, int], int] = os.open,
) -> DiskRead:
    """Write a test file in `directory` (≤ max_file_bytes, ≤ half the budget), then time O_DIRECT reads.

    `host` answers which filesystem holds `directory` (its mountinfo)."""
    started = clock()
    method = (
        f"O_DIRECT preadv, {block_bytes >> 20} MiB blocks, queue depth 1, 1 thread, one pass over a file "
        "written with O_DIRECT first"
    )

    def nothing(why: Unavailable, file_bytes: int = 0) -> DiskRead:
        return DiskRead(directory, why, 0, 0.0, file_bytes, block_bytes, 1, method)

    if not hasattr(os, "O_DIRECT"):
        return nothing(Unavailable(Reason.NOT_SUPPORTED, "this OS has no O_DIRECT"))
    fs_type = fs_type or filesystem_type(host, directory)
    if fs_type in MEMORY_FILESYSTEMS:
        why = f"{directory} is on {fs_type}, which lives in RAM: a read there measures memory, not a disk"
        return nothing(Unavailable(Reason.NOT_APPLICABLE, why))
    path: str | None = None
    fd = -1
    buffer = mmap.mmap(-1, block_bytes)  # anonymous maps are page-aligned, as O_DIRECT requires
    try:
        # Create the file first: a read-only or forbidden directory answers with its own reason.
        created, path = tempfile.mkstemp(prefix=".gpu-doctor-read-", dir=directory)
        os.close(created)
        target = _file_size(directory, max_file_bytes, block_bytes)
        if isinstance(target, Unavailable):
            return nothing(target)
        # Written with O_DIRECT too: buffered writes would return at RAM speed and leave a backlog for
        # fsync that no deadline bounds (1 GiB on a 150 MB/s disk is 7 s).
        fd = _open_direct(opener, path, os.O_WRONLY)
        if fd < 0:
            why = f"{directory} ({fs_type or 'unknown filesystem'}) refuses O_DIRECT; a buffered read would time the page cache"
            return nothing(Unavailable(Reason.NOT_SUPPORTED, why))
        written = _write(fd, buffer, target, started + WRITE_SHARE * time_budget_s, clock)
        os.close(fd)
        fd = -1
        if written < block_bytes:
            return nothing(Unavailable(Reason.TIMED_OUT, "writing the test file used the whole budget"))
        fd = _open_direct(opener, path, os.O_RDONLY)
        if fd < 0:
            why = f"{directory} ({fs_type or 'unknown filesystem'}) refuses O_DIRECT reads"
            return nothing(Unavailable(Reason.NOT_SUPPORTED, why), written)
        bytes_read, seconds = _read(fd, buffer, written, started + time_budget_s, clock)
        if bytes_read == 0 or seconds <= 0:
            return nothing(Unavailable(Reason.TIMED_OUT, "no read finished within the budget"), written)
        return DiskRead(
            directory, bytes_read / seconds / 1e6, bytes_read, seconds, written, block_bytes, 1, method
        )
    except OSError as exc:
        return nothing(_why(exc, directory))
    finally:  # on every way out, Ctrl-C included
        if fd >= 0:
            with suppress(OSError):
                os.close(fd)
        buffer.close()
        if path is not None:
            with suppress(OSError):
                Path(path).unlink()


def _open_direct(opener: Callable[[str, int], int], path: str, mode: int) -> int:
    """An O_DIRECT descriptor, or -1 when the filesystem refuses the flag (EINVAL at open)."""
    try:
        return opener(path, mode | os.O_DIRECT)
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            return -1
        raise


def _file_size(directory: str, max_file_bytes: int, block_bytes: int) -> Maybe[int]:
    """The test file's size: at most half the free space, whole blocks, at least MIN_FILE_BYTES."""
    space = free_space(directory)
    if isinstance(space.free_bytes, Unavailable):
        return space.free_bytes
    target = min(max_file_bytes, space.free_bytes // 2) // block_bytes * block_bytes
    if target < max(MIN_FILE_BYTES, block_bytes):
        why = f"{directory}: only {space.free_bytes >> 20} MiB free, too little for a test file"
        return Unavailable(Reason.FAILED, why)
    return target


def _write(fd: int, buffer: mmap.mmap, target: int, deadline: float, clock: Callable[[], float]) -> int:
    """Random (incompressible) blocks until `target` bytes or the deadline, then fsync (metadata)."""
    buffer[:] = os.urandom(len(buffer))
    written = 0
    while written < target and (written == 0 or clock() < deadline):
        buffer[:8] = written.to_bytes(8, "little")  # no two blocks alike: nothing to deduplicate
        written += os.write(fd, buffer)
    os.fsync(fd)
    return written // len(buffer) * len(buffer)


def _read(
    fd: int, buffer: mmap.mmap, size: int, deadline: float, clock: Callable[[], float]
) -> tuple[int, float]:
    """One sequential pass, stopping at the deadline; (bytes, seconds)."""
    offset = 0
    begin = clock()
    while offset < size and (offset == 0 or clock() < deadline):
        count = os.preadv(fd, [buffer], offset)
        if count <= 0:
            break
        offset += count
    return offset, clock() - begin
