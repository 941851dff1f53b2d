"""Limits that bite PyTorch before RAM runs out: locked memory, /dev/shm and swap.

* `Max locked memory` (RLIMIT_MEMLOCK) bounds what a process may pin with mlock(); RDMA/InfiniBand transports
  (NCCL over IB, GPUDirect) register pinned buffers and fail with a small limit.
* /dev/shm is where DataLoader workers hand batches to the main process; Docker's default is 64 MiB
  (`size=65536k`), far below a batch of images, and the workers then die with "bus error".
* Swap from /proc/meminfo: a machine without swap has no slack when pinned buffers and workers peak.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import Enum

from torch_gpu_doctor.facts.meminfo import parse_meminfo
from torch_gpu_doctor.facts.mountinfo import MountEntry, mount_for_path, read_mountinfo
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

LIMITS = "/proc/self/limits"
RDMA_CLASS = "/sys/class/infiniband"
_NOT_GATHERED = Unavailable(Reason.NOT_APPLICABLE, "not gathered")
SHM_PATH = "/dev/shm"  # noqa: S108 - a fact about /dev/shm, not a temporary file
_SIZE = lazy(r"^(\d{1,20})([kmgt]?)$", re.IGNORECASE)
_SCALE = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
MEMORY_FILESYSTEMS = ("tmpfs", "ramfs")


@dataclass(frozen=True)
class LockedMemoryLimit:
    """RLIMIT_MEMLOCK as /proc/self/limits shows it; a byte count is None only when it is unlimited."""

    soft_bytes: int | None
    hard_bytes: int | None
    soft_unlimited: bool
    hard_unlimited: bool


class ShmSizeSource(str, Enum):
    MOUNT_OPTION = "mount_option"  # size=...k in mountinfo
    KERNEL_DEFAULT = "kernel_default"  # no size= shown: the kernel default, half of RAM
    UNLIMITED = "unlimited"  # size=0: tmpfs without a limit (RAM + swap bound it)


@dataclass(frozen=True)
class ShmFacts:
    path: str  # /dev/shm, as resolved through symlinks (/run/shm on old Debian/Ubuntu)
    mount_point: Maybe[str]  # the mount that holds it; differs from `path` when /dev/shm is no mount
    fs_type: Maybe[str]
    size_bytes: Maybe[int]
    size_source: Maybe[ShmSizeSource]
    free_bytes: Maybe[int]  # statvfs on the live machine only


@dataclass(frozen=True)
class MemoryLimitsFacts:
    locked_memory: Maybe[LockedMemoryLimit]
    shm: ShmFacts
    swap_total_bytes: Maybe[int]
    swap_free_bytes: Maybe[int]
    # RDMA devices (/sys/class/infiniband: InfiniBand, RoCE, EFA): registering memory there counts against
    # the locked-memory limit, so the limit matters only where they exist.
    rdma_devices: Maybe[tuple[str, ...]] = _NOT_GATHERED


def parse_locked_memory(text: str) -> LockedMemoryLimit | None:
    """The `Max locked memory` line of /proc/<pid>/limits (columns: soft, hard, units)."""
    for line in text.splitlines():
        if not line.startswith("Max locked memory"):
            continue
        words = line[len("Max locked memory") :].split()
        if len(words) < 2:
            return None
        (soft_ok, soft), (hard_ok, hard) = (_limit_value(w) for w in words[:2])
        if not (soft_ok and hard_ok):
            return None
        return LockedMemoryLimit(soft, hard, soft is None, hard is None)
    return None


def _limit_value(word: str) -> tuple[bool, int | None]:
    """(parsed, value): value None means `unlimited`; parsed False rejects the line."""
    if word == "unlimited":
        return True, None
    if word.isascii() and word.isdigit() and len(word) <= 20:
        return True, int(word)
    return False, None


def parse_size_option(value: str) -> int | None:
    """A tmpfs `size=` value in bytes. The kernel always prints KiB (`size=65536k`, mm/shmem.c)."""
    match = _SIZE.match(value.strip())
    if match is None:
        return None
    return int(match.group(1)) * _SCALE[match.group(2).lower()]


def shm_size(entry: MountEntry, mem_total: Maybe[int]) -> tuple[Maybe[int], Maybe[ShmSizeSource]]:
    """Size of a tmpfs mount: its `size=` option, or the kernel default (half of RAM) when none is shown.

    shmem_show_options() prints `size=` only when it differs from the default of totalram/2, so a missing
    option *means* half of MemTotal. size=0 means no limit at all.
    """
    if entry.fs_type not in MEMORY_FILESYSTEMS:
        why = Unavailable(Reason.NOT_APPLICABLE, f"{entry.mount_point} is {entry.fs_type}, not tmpfs")
        return why, why
    if entry.fs_type == "ramfs":  # ramfs has no size limit and no size option
        unlimited = Unavailable(Reason.NOT_APPLICABLE, "ramfs has no size limit")
        return unlimited, ShmSizeSource.UNLIMITED
    raw = entry.option("size")
    if raw is None:
        if isinstance(mem_total, Unavailable):
            return mem_total, ShmSizeSource.KERNEL_DEFAULT
        return mem_total // 2, ShmSizeSource.KERNEL_DEFAULT
    size = parse_size_option(raw)
    if size is None:
        bad = Unavailable(Reason.UNPARSEABLE, f"size={raw} on {entry.mount_point}")
        return bad, bad
    if size == 0:
        return Unavailable(Reason.NOT_APPLICABLE, "size=0: no tmpfs limit"), ShmSizeSource.UNLIMITED
    return size, ShmSizeSource.MOUNT_OPTION


def gather_shm(
    host: Host, mem_total: Maybe[int], free_space: Callable[[str], Maybe[int]] | None = None
) -> ShmFacts:
    """The shared-memory mount: what holds it, its size and (on the live machine) its free space."""
    resolved = host.realpath(SHM_PATH)
    path = SHM_PATH if isinstance(resolved, Unavailable) else resolved
    free: Maybe[int] = (
        free_space(path)
        if free_space is not None
        else Unavailable(Reason.NOT_SUPPORTED, "free space needs statvfs on the live machine")
    )
    entries = read_mountinfo(host)
    if isinstance(entries, Unavailable):
        return ShmFacts(path, entries, entries, entries, entries, free)
    entry = mount_for_path(entries, path)
    if entry is None:
        gone = Unavailable(Reason.NOT_FOUND, f"no mount holds {path}")
        return ShmFacts(path, gone, gone, gone, gone, free)
    if entry.mount_point != path:
        # Not a mount of its own: files there land on whatever holds the parent (the container's overlay).
        why = Unavailable(
            Reason.NOT_APPLICABLE,
            f"{path} is not a mount; it lives on {entry.fs_type} at {entry.mount_point}",
        )
        return ShmFacts(path, entry.mount_point, entry.fs_type, why, why, free)
    size, source = shm_size(entry, mem_total)
    return ShmFacts(path, entry.mount_point, entry.fs_type, size, source, free)


def gather_memory_limits(
    host: Host, free_space: Callable[[str], Maybe[int]] | None = None
) -> MemoryLimitsFacts:
    """Locked-memory limit, /dev/shm and swap. `free_space` (statvfs) is passed only for the live machine."""
    limits = host.read_text(LIMITS)
    locked: Maybe[LockedMemoryLimit]
    if isinstance(limits, Unavailable):
        locked = limits
    else:
        parsed = parse_locked_memory(limits)
        locked = parsed or Unavailable(Reason.UNPARSEABLE, f"{LIMITS}: no 'Max locked memory' line")
    meminfo_text = host.read_text("/proc/meminfo")
    meminfo = {} if isinstance(meminfo_text, Unavailable) else parse_meminfo(meminfo_text)

    def get(key: str) -> Maybe[int]:
        if isinstance(meminfo_text, Unavailable):
            return meminfo_text
        return (
            meminfo[key] if key in meminfo else Unavailable(Reason.UNPARSEABLE, f"{key} not in /proc/meminfo")
        )

    return MemoryLimitsFacts(
        locked_memory=locked,
        shm=gather_shm(host, get("MemTotal"), free_space),
        swap_total_bytes=get("SwapTotal"),
        swap_free_bytes=get("SwapFree"),
        rdma_devices=_rdma_devices(host),
    )


def _rdma_devices(host: Host) -> Maybe[tuple[str, ...]]:
    names = host.listdir(RDMA_CLASS)
    if isinstance(names, Unavailable):
        # No folder: no RDMA driver loaded, so no RDMA device (the ib_core class is created on load).
        return () if names.reason is Reason.NOT_FOUND else names
    return tuple(sorted(names))
