"""Multi-threaded RAM copy bandwidth, STREAM-Copy style, in the standard library only.

Why it works without numpy: `ctypes.memmove` is a CFUNCTYPE foreign call, and ctypes releases the GIL around
such calls, so N threads copy in parallel (measured on this project's 2-vCPU CI VM: 1 thread 15.6 GB/s,
2 threads 23.0 GB/s). Pure-Python loops or bytearray slicing cannot reach DRAM speed (hardware.md §5.1).

Why it is not fooled by caches: each thread copies its own source into its own destination, and the sources
together are at least four times the last-level cache (STREAM's rule), pre-touched so that no page is the
shared zero page and no copy pays page faults. The best of several timed copies after a warm-up is reported.

Why the arrays are anonymous mappings advised MADV_HUGEPAGE: touching them is part of the time budget, and a
server's last-level cache can be 480 MiB (a Xeon 6 host behind this project's 2-vCPU CI VM), so the arrays
reach several GiB. With 4 KiB pages that is 262,144 page faults a GiB, measured at 0.5-2.8 s per GiB on the VM
(calloc zeroes, then memset touches again); with 2 MiB pages it is 0.15-0.2 s per GiB. Where transparent
huge pages are off the advice is ignored and the arrays are ordinary pages.

Why the copy runs in a child with GLIBC_TUNABLES: glibc's memmove picks its stores by size. Above
`x86_non_temporal_threshold` (3/4 of the L3 that CPUID reports, which in a VM can be the host's: 240 MiB
on this project's CI VM, whose sysfs says 32 MiB) it streams with non-temporal stores; below, it writes through
the cache and pays a read of every destination line first. Arrays sized from sysfs, or cut short by slow page
faults, fell on either side from one run to the next, and the temporal side measured 0.72 of the other on
the CI VM (2 threads, C memcpy reference at STREAM sizes) and 0.22-0.75 under load on a 480 MiB-L3 host
(issue 21). The tunable is read once, when the process starts, so the copy runs in a child started with
the threshold set below every array: the copy routine is the large-copy one whatever the sizes
(`host.real.measure_ram_in_child`, whose child is `measure.ram_child`; `RamBandwidth.copy_routine`).

Why the cache is the larger of sysfs's and CPUID's: in a VM CPUID can report the host's L3 while sysfs
reports the guest's share, and the guest's copies still hit the host's. On the CI VM (sysfs 32 MiB, CPUID
320 MiB) arrays sized on 32 MiB read 1.14x a 1280 MiB STREAM reference, and 1.7x when the host was fast;
sized on 320 MiB they read 0.99-1.02x.

Why a trial copies two 16 MiB segments, not the whole arrays: on a machine whose CPUs are busy, two copy
threads hold their CPUs together only between the scheduler's preemptions, a few milliseconds. Whole-array
trials (two copies of 640 MiB a thread) never fitted there and measured the CPU share left to them, 0.62 of
the memory's figure with two busy loops on the CI VM; 3 ms trials catch the moments both run and read
0.99-1.03x a reference at real-time priority (`benchmarks/hardware_speed.py --load 2`). Successive trials
walk the arrays segment by segment, so a segment comes back only after all the sources (4x the cache)
streamed past it: no trial copies from the cache (arrays cut below two segments are one segment copied
twice, as before, and their cache multiple says so).
"""

from __future__ import annotations

import contextlib
import ctypes
import mmap
import os
import platform
import sys
import threading
import time
from collections.abc import Callable, Mapping

from torch_gpu_doctor.facts.measurements import (
    ROUTINE_LIBC,
    ROUTINE_NON_TEMPORAL,
    STREAM_CACHE_MULTIPLE,
    RamBandwidth,
)
from torch_gpu_doctor.facts.meminfo import parse_meminfo
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

DEFAULT_LLC_BYTES = 64 << 20  # when sysfs does not say: larger than most desktop L3s
MIN_BUFFER_BYTES = 16 << 20
MAX_TOTAL_BYTES = 8 << 30  # sources + destinations, all threads (and never over a quarter of MemAvailable)
TOUCH_SHARE = 0.6  # of the time budget, at most, for preparing the arrays (a trial of 8 GiB takes ~0.4 s)
TOUCH_CHUNK_BYTES = 32 << 20  # the deadline is looked at between chunks
MAX_TRIALS = 100
COPIES_PER_TRIAL = 2  # segments a thread copies in one trial, so its staggered wake-up is a small part
SEGMENT_BYTES = 16 << 20  # one copy of one thread: 2 segments x 2 threads last ~3 ms at 50 GB/s
SC_LEVEL3_CACHE_SIZE = 194  # glibc's bits/confname.h; what `getconf LEVEL3_CACHE_SIZE` reads
CPU_DIR = "/sys/devices/system/cpu"
NON_TEMPORAL_TUNABLE = "glibc.cpu.x86_non_temporal_threshold"  # since glibc 2.26 (2017)
NON_TEMPORAL_FROM_BYTES = (
    1 << 19
)  # strictly below every array the copy uses, 1 MiB at least (glibc's floor: 0x4040)


def parse_cache_size(text: str) -> int | None:
    """A sysfs cache `size` ("32768K", cacheinfo's `%uK`) in bytes."""
    text = text.strip()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    digits = text[:-1] if text[-1:].upper() in "KMG" else text
    return int(digits) * scale if digits.isascii() and digits.isdigit() else None


def _read(host: Host, path: str) -> str | None:
    text = host.read_text(path)
    return None if isinstance(text, Unavailable) else text.strip()


def total_llc_bytes(host: Host, max_cpus: int = 4096) -> Maybe[int]:
    """Size of the last-level cache times the number of distinct instances (an EPYC has one L3 per CCX)."""
    indexes = host.listdir(f"{CPU_DIR}/cpu0/cache")
    if isinstance(indexes, Unavailable):
        return indexes
    best: tuple[int, str, int] | None = None  # (level, index directory, size)
    for index in indexes:
        base = f"{CPU_DIR}/cpu0/cache/{index}"
        level, kind, size = (_read(host, f"{base}/{name}") for name in ("level", "type", "size"))
        parsed = parse_cache_size(size or "")
        if level is None or not level.isdigit() or kind == "Instruction" or parsed is None:
            continue
        if best is None or int(level) > best[0]:
            best = (int(level), index, parsed)
    if best is None:
        return Unavailable(Reason.NOT_FOUND, f"{CPU_DIR}/cpu0/cache: no data or unified cache")
    cpus = host.listdir(CPU_DIR)
    shared: set[str] = set()
    for cpu in () if isinstance(cpus, Unavailable) else cpus[:max_cpus]:
        if cpu.startswith("cpu") and cpu[3:].isdigit():
            shared_list = _read(host, f"{CPU_DIR}/{cpu}/cache/{best[1]}/shared_cpu_list")
            if shared_list:
                shared.add(shared_list)
    return best[2] * max(1, len(shared))


def buffer_size(threads: int, cache_bytes: int, available_bytes: int | None = None) -> int:
    """Per-thread array size: all sources together ≥ 4 × the cache, within a memory cap."""
    per_thread = max(MIN_BUFFER_BYTES, -(-STREAM_CACHE_MULTIPLE * cache_bytes // threads))
    cap = MAX_TOTAL_BYTES if available_bytes is None else min(MAX_TOTAL_BYTES, available_bytes // 4)
    per_thread = min(per_thread, max(1 << 20, cap // (2 * threads)))
    return per_thread // 4096 * 4096


def measure_ram_bandwidth(
    host: Host,
    threads: int | None = None,
    time_budget_s: float = 2.5,
    cache_bytes: int | None = None,
    buffer_bytes: int | None = None,
    clock: Callable[[], float] = time.perf_counter,
    cpuid_cache_bytes: int = 0,
) -> RamBandwidth:
    """Copy bandwidth with `threads` threads (default: the CPUs this process may run on), ≤ time_budget_s.

    The arrays are sized on the larger of the host's last-level cache (sysfs) and `cpuid_cache_bytes`, the L3
    that the CPU itself reports (cpuid_l3_bytes(), passed by the child that measures this machine: a recorded
    host has no CPU to ask).

    Preparing the arrays gets at most TOUCH_SHARE of the budget: where fresh memory is slow to touch (a VM
    whose balloon hands freed pages back to its host), the arrays are cut to what was touched in that time.
    The result says how large they were next to the cache (`cache_multiple`), so a reader can tell a
    figure taken on arrays cut short: below glibc's non-temporal threshold memcpy writes through the cache,
    and such figures came out low under load (memory.bandwidth then says so and does not judge).
    """
    started = clock()
    cpus = sorted(os.sched_getaffinity(0))
    threads = threads or len(cpus)
    if cache_bytes is None:
        found = total_llc_bytes(host)
        cache_bytes = max(DEFAULT_LLC_BYTES if isinstance(found, Unavailable) else found, cpuid_cache_bytes)
    planned = buffer_bytes or buffer_size(threads, cache_bytes, _available_bytes(host))
    pinned = threads <= len(cpus)
    deadlines = (started + TOUCH_SHARE * time_budget_s, started + time_budget_s)
    copies = _timed_copies(threads, planned, deadlines, clock, cpus[:threads] if pinned else None)
    size = planned if copies is None else copies.buffer_bytes
    routine = ROUTINE_NON_TEMPORAL if non_temporal_forced(os.environ) else ROUTINE_LIBC
    method = _method(threads, size, planned, cache_bytes, pinned, routine)
    if copies is None:
        why = Unavailable(Reason.FAILED, f"could not allocate {2 * threads * size >> 20} MiB")
        return RamBandwidth(why, 0, why, 0, threads, size, cache_bytes, method, routine)
    counted = 2 * copies.segment_bytes * threads * COPIES_PER_TRIAL
    if len(copies.times) < 2:
        why = Unavailable(Reason.TIMED_OUT, f"no timed copy fitted in {time_budget_s:g} s after the warm-up")
        return RamBandwidth(why, counted, why, 0, threads, size, cache_bytes, method, routine)
    best = min(copies.times[1:])  # the first copy warms TLBs and wakes cores: STREAM drops it too
    trials = len(copies.times) - 1
    gbps = counted / best / 1e9
    return RamBandwidth(gbps, counted, best, trials, threads, size, cache_bytes, method, routine)


def _method(threads: int, size: int, planned: int, cache_bytes: int, pinned: bool, routine: str) -> str:
    multiple = size * threads / cache_bytes
    how = (
        f"glibc memmove with non-temporal stores ({NON_TEMPORAL_TUNABLE} set to "
        f"{NON_TEMPORAL_FROM_BYTES >> 10} KiB)"
        if routine == ROUTINE_NON_TEMPORAL
        else "ctypes.memmove (the C library picks its stores by size)"
    )
    return (
        f"{how} copy, {threads} thread(s), {size >> 20} MiB source + destination per thread "
        f"(sources {multiple:.1f}× the {cache_bytes >> 20} MiB last-level cache"
        + ("" if size == planned else f"; cut from {planned >> 20} MiB: touching fresh memory was slow")
        + f"); best trial after a warm-up; each trial copies the next {COPIES_PER_TRIAL} segments of at most "
        f"{SEGMENT_BYTES >> 20} MiB of every array, bytes counted as STREAM Copy (2 × copied)"
        + ("; one thread pinned per CPU" if pinned else "")
    )


def _available_bytes(host: Host) -> int | None:
    text = host.read_text("/proc/meminfo")
    return None if isinstance(text, Unavailable) else parse_meminfo(text).get("MemAvailable")


def _mapped(size: int) -> ctypes.Array[ctypes.c_char]:
    """`size` bytes of anonymous memory, not touched yet, on huge pages where the kernel allows them.

    The ctypes array keeps its mapping alive (it holds the buffer export); both go when the array goes.
    """
    try:
        mapping = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except OSError as exc:  # ENOMEM: the same "could not allocate" as a failed malloc
        raise MemoryError(str(exc)) from exc
    with contextlib.suppress(AttributeError, OSError):  # no THP in this kernel or Python: small pages
        mapping.madvise(mmap.MADV_HUGEPAGE)
    return (ctypes.c_char * size).from_buffer(mapping)


def _touch_pair(
    source: ctypes.Array[ctypes.c_char],
    target: ctypes.Array[ctypes.c_char],
    deadline: float,
    clock: Callable[[], float],
) -> int:
    """Write both arrays chunk by chunk (every page private and resident, none the shared zero page) until
    they are done or the deadline passes; returns how many leading bytes of each were touched."""
    size = len(source)
    base_source, base_target = ctypes.addressof(source), ctypes.addressof(target)
    done = 0
    while done < size:
        if done and clock() > deadline:
            break
        step = min(TOUCH_CHUNK_BYTES, size - done)
        ctypes.memset(base_source + done, 0x5A, step)
        ctypes.memset(base_target + done, 0, step)
        done += step
    return done


@dataclass(frozen=True)
class _Copies:
    times: list[float]  # trial durations, the warm-up first
    buffer_bytes: int  # per thread, per array, as copied (a whole number of segments)
    segment_bytes: int  # what one thread copies in one go; a trial is COPIES_PER_TRIAL of them


def segments(copy_bytes: int) -> tuple[int, int]:
    """(segment size, segment count) for arrays of `copy_bytes`: segments of SEGMENT_BYTES at most, whole
    pages, covering as much of the arrays as whole segments can."""
    length = max(4096, min(copy_bytes, SEGMENT_BYTES) // 4096 * 4096)
    return length, max(1, copy_bytes // length)


def cpuid_l3_bytes() -> int:
    """The L3 size glibc reads from CPUID (sysconf(_SC_LEVEL3_CACHE_SIZE)); 0 where it is not known (not
    glibc, not Linux, or the CPU does not say). In a VM it can be the host's L3, larger than sysfs says."""
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return 0
    try:
        sysconf = ctypes.CDLL(None).sysconf
    except (OSError, AttributeError):
        return 0
    sysconf.restype, sysconf.argtypes = ctypes.c_long, [ctypes.c_int]
    return max(0, int(sysconf(SC_LEVEL3_CACHE_SIZE)))


def _pin_this_thread(cpu: int) -> None:
    """Linux applies sched_setaffinity(0, ...) to the calling thread only; the main thread is left alone."""
    with contextlib.suppress(OSError):  # a cpuset changed under us: an unpinned copy is still a copy
        os.sched_setaffinity(0, {cpu})


def _timed_copies(
    threads: int,
    size: int,
    deadlines: tuple[float, float],
    clock: Callable[[], float],
    pins: list[int] | None = None,
) -> _Copies | None:
    """Prepare the arrays until deadlines[0], then run trials until deadlines[1]: all threads start together,
    a trial ends when the last one is done. None: a worker could not allocate its arrays.

    Every worker copies as many bytes as the slowest one could touch in time, so the threads stay balanced.

    With `pins`, worker i runs only on CPU pins[i] (as STREAM and likwid-bench pin theirs): two copies
    never share a core while another core idles, and no copy migrates mid-trial. Each worker allocates and
    first touches its own arrays after pinning, so on a multi-socket machine they sit in the memory of the
    socket that copies them (Linux places a page where it is first touched), as STREAM initialises its
    arrays in the threads that copy them.

    Each worker stamps its own start and end: the trial lasts from the first start to the last end. The
    main thread's clock after the barrier would start late whenever the workers run first (three threads
    on two CPUs), and a late start makes the copy look faster than it was.
    """
    touch_deadline, deadline = deadlines
    go = threading.Barrier(threads + 1)
    done = threading.Barrier(threads + 1)
    ready = threading.Barrier(threads + 1)
    stop = threading.Event()
    failed = threading.Event()
    starts = [0.0] * threads
    ends = [0.0] * threads
    touched = [size] * threads
    # segment size, segment count, trial number: set by the main thread before each `go`, which publishes them
    plan = [0, 1, 0]

    def copy(index: int) -> None:
        if pins is not None:
            _pin_this_thread(pins[index])
        try:
            source, target = _mapped(size), _mapped(size)
            touched[index] = _touch_pair(source, target, touch_deadline, clock)
        except MemoryError:
            failed.set()
        ready.wait()
        if failed.is_set():
            source = target = (ctypes.c_char * 1)()  # no trial runs: only the stop signal comes
        base_source, base_target = ctypes.addressof(source), ctypes.addressof(target)
        while True:
            go.wait()
            if stop.is_set():
                return
            length, count, trial = plan
            starts[index] = clock()
            for step in range(COPIES_PER_TRIAL):
                offset = (trial * COPIES_PER_TRIAL + step) % count * length
                ctypes.memmove(base_target + offset, base_source + offset, length)  # the GIL is released
            ends[index] = clock()
            done.wait()

    workers = [threading.Thread(target=copy, args=(i,), daemon=True) for i in range(threads)]
    for worker in workers:
        worker.start()
    ready.wait()  # every worker has its arrays (or one could not get them: no trial runs)
    plan[:2] = segments(min(touched) // 4096 * 4096)
    times: list[float] = []
    try:
        while not failed.is_set() and len(times) < MAX_TRIALS + 1:
            plan[2] = len(times)
            go.wait()
            done.wait()
            times.append(max(ends) - min(starts))
            # Stop when one more trial like the slowest so far would pass the deadline, but always time one
            # trial after the warm-up, even when a loaded machine made the warm-up end late: fewer trials
            # rather than no figure (issue 21: 1 run in 5 under load had none). The probe's own timeout
            # still bounds the whole measurement.
            now = clock()
            if len(times) > 1 and (now > deadline or now + max(times) > deadline):
                break
    finally:
        stop.set()
        go.wait()
        for worker in workers:
            worker.join()
    return None if failed.is_set() else _Copies(times, plan[0] * plan[1], plan[0])


def non_temporal_env(environ: Mapping[str, str]) -> dict[str, str] | None:
    """`environ` with glibc's non-temporal threshold set below every array, or None where the C library has
    no such tunable (not glibc on x86-64: musl, macOS, Arm, whose memcpy do not switch stores this way).

    Appended last, so it wins over the same tunable already in GLIBC_TUNABLES (glibc applies them in order);
    the user's other tunables are kept."""
    libc, version = platform.libc_ver()
    if platform.machine().lower() not in ("x86_64", "amd64") or libc != "glibc":
        return None
    major, _, minor = version.partition(".")
    if not (major.isdigit() and minor.isdigit()) or (int(major), int(minor)) < (2, 26):
        return None
    ours = f"{NON_TEMPORAL_TUNABLE}={NON_TEMPORAL_FROM_BYTES:#x}"
    theirs = environ.get("GLIBC_TUNABLES", "")
    return {**environ, "GLIBC_TUNABLES": f"{theirs}:{ours}" if theirs else ours}


def non_temporal_forced(environ: Mapping[str, str]) -> bool:
    """Whether this process started with the threshold `non_temporal_env` sets (the last setting wins)."""
    if non_temporal_env({}) is None:
        return False
    settings = [item.partition("=") for item in environ.get("GLIBC_TUNABLES", "").split(":")]
    values = [value for name, _, value in settings if name == NON_TEMPORAL_TUNABLE]
    return bool(values) and values[-1] == f"{NON_TEMPORAL_FROM_BYTES:#x}"


def child_argv(python: str, threads: int | None, time_budget_s: float) -> list[str]:
    """The command line of the child that measures (measure/ram_child.py)."""
    argv = [python, "-m", "torch_gpu_doctor.measure.ram_child", "--budget", f"{time_budget_s:g}"]
    return argv + (["--threads", str(threads)] if threads is not None else [])
