"""Opt-in timed measurements (`--measure`): RAM copy bandwidth and the data directory's sequential read.

They run on the live machine through `Host.measure` (only when it was created with `measure=True`), after
every other probe (a torch import or an NVML scan
running beside them would steal the bandwidth they measure); a capture replays their recorded results.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from torch_gpu_doctor.host.base import Host, Measurement
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.serialize import DecodeError, from_json
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

STREAM_CACHE_MULTIPLE = 4  # STREAM's rule: all sources together at least this many times the cache
# RamBandwidth.copy_routine, which stores the copy used: glibc's large-copy (non-temporal) path forced whatever
# the size (measure.ram_bandwidth), or whatever the C library chose for the size (older recordings).
ROUTINE_NON_TEMPORAL = "non-temporal"
ROUTINE_LIBC = "libc"


@dataclass(frozen=True)
class RamBandwidth:
    """Best copy bandwidth over all threads. Bytes count as STREAM Copy does: 2 × bytes copied (one read,
    one write per byte; the write-allocate read of the destination is not counted, so DRAM moves more)."""

    bandwidth_gb_per_s: Maybe[float]  # 10^9 bytes per second
    bytes_per_trial: int  # counted bytes of one timed trial (all threads)
    seconds: Maybe[float]  # duration of the best trial
    trials: int  # timed trials after the warm-up
    threads: int
    buffer_bytes: int  # per thread, per array (source and destination are each this big), as copied
    cache_bytes: int  # total last-level cache the buffers were sized against
    method: str
    copy_routine: str = ROUTINE_LIBC  # ROUTINE_NON_TEMPORAL or ROUTINE_LIBC

    @property
    def cache_multiple(self) -> float:
        """All sources together over the last-level cache: under STREAM_CACHE_MULTIPLE, part of each copy
        may come from the cache (a machine whose cache is too large for the memory cap, or arrays cut by
        slow memory), so the figure is an upper bound of what the RAM does."""
        return self.buffer_bytes * self.threads / self.cache_bytes if self.cache_bytes > 0 else math.inf


@dataclass(frozen=True)
class DiskRead:
    """One O_DIRECT sequential read pass over a freshly written file. MB = 10^6 bytes."""

    directory: str
    read_mb_per_s: Maybe[float]
    bytes_read: int
    seconds: float  # of the read phase only
    file_bytes: int  # size of the test file that was written
    block_bytes: int
    threads: int
    method: str


@dataclass(frozen=True)
class Measurements:
    ram: Maybe[RamBandwidth]
    disk: Maybe[DiskRead]


def gather_measurements(host: Host, data_dir: str) -> Measurements:
    """What the host answers: a live machine measures only when it was created with `measure=True`
    (`--measure`), a capture replays what was recorded."""
    ram = host.measure(Measurement.RAM_BANDWIDTH, "")
    disk = host.measure(Measurement.DISK_READ, data_dir)
    return Measurements(_decode(RamBandwidth, ram), _decode(DiskRead, disk))


def _decode(kind: type[Any], data: Mapping[str, Any] | Unavailable) -> Any:
    if isinstance(data, Unavailable):
        return data
    try:
        return from_json(kind, dict(data))
    except DecodeError as exc:
        return Unavailable(Reason.UNPARSEABLE, f"{kind.__name__}: {exc}")


def not_measured(what: str, why: Unavailable) -> str:
    """One sentence for a measurement that is missing: not asked for, not in the capture, or failed."""
    if why.reason is Reason.NOT_RECORDED:
        return f"{what} was not measured when this capture was made."
    if why.reason is Reason.NOT_APPLICABLE and "--measure" in why.detail:
        return f"{what} not measured (run with --measure)."
    return f"{what} not measured: {why.detail or why.reason.value}."
