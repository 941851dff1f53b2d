"""Our RAM bandwidth and disk read speed next to reference tools, on the same machine, in one run.

Budget (DESIGN §7): each measurement ≤ 3 s and within 15% of a STREAM/fio-style reference.

RAM, one thread and all threads: ours, exactly as the doctor runs it (a child started with glibc's
non-temporal threshold set below every array, `host.real.measure_ram_in_child`; bytes counted as STREAM Copy = 2 × copied),
against a STREAM-style Copy (`stream_copy.c`, compiled here with OpenMP) whose threads each memcpy their own
chunk: the same C-library copy ours calls, driven by pinned OpenMP threads and STREAM's timing rules, on arrays
advised onto transparent huge pages as ours are (and, for context, once more on malloc's 4 KiB pages). The
reference sizes its arrays on its own, never from ours: sources 4 × the larger of the L3 that glibc's
sysconf reports (CPUID's, which in a VM can be the host's) and the sysfs total, so a plain memcpy of them
takes glibc's large-copy path. It runs with the copy routine made explicit as ours is (the ratio row), and
once with glibc's own choice (context: on a VM whose CPUID reports the host's L3, STREAM-size arrays can
still fall under the threshold). `--load N` keeps N busy loops running through every round; the ratio rows
then take the reference at real-time priority (`chrt --fifo 1`, root or CAP_SYS_NICE), so the busy loops
cannot take its CPUs mid-copy and it measures the memory, not the CPU share left to it. Time-shared, its
640 MiB-a-thread copies each span many scheduler slices and fell to 0.66 of its quiet figure although busy
loops move no memory; that time-shared reference stays as a context row. For context,
not for the ratio: `mbw -t0` (glibc memcpy, unpinned, which reports MiB copied: ×2 to count the same
way), STREAM's own compiler-built `c[j] = a[j]` loop, `likwid-bench`'s hand-written AVX non-temporal Copy
kernel at one and all threads (what the memory can do with the best copy loop, which the C library's memcpy
may not reach: the one-thread rows show how much of any gap is the copy routine), and `sysbench memory`
read and write throughput. Disk: ours (O_DIRECT, 8 MiB blocks, QD1, one thread) against
`fio --direct=1 --rw=read --bs=8M --iodepth=1 --ioengine=psync` on a file of the same size in the same
directory; a deep-queue fio run (libaio, QD32, 1 MiB) shows what the device can do.

Missing tools are installed from the distribution's packages (apt-get or dnf) when running as root or
with passwordless sudo; otherwise that reference is skipped with a note.

    python benchmarks/hardware_speed.py --dir /data --rounds 3
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from torch_gpu_doctor.facts.measurements import RamBandwidth
from torch_gpu_doctor.host.real import RealHost, measure_ram_in_child
from torch_gpu_doctor.measure.disk_read import measure_disk_read
from torch_gpu_doctor.measure.ram_bandwidth import (
    DEFAULT_LLC_BYTES,
    cpuid_l3_bytes,
    measure_ram_bandwidth,
    non_temporal_env,
    total_llc_bytes,
)
from torch_gpu_doctor.serialize import from_json
from torch_gpu_doctor.unavailable import Unavailable

LIVE = RealHost()  # the measurements read this machine's sysfs and mountinfo through it

PACKAGES = {"mbw": "mbw", "sysbench": "sysbench", "fio": "fio", "likwid-bench": "likwid", "gcc": "gcc"}
STREAM_SOURCE = Path(__file__).with_name("stream_copy.c")
MIB = 1 << 20


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _privilege_prefix() -> list[str] | None:
    if os.geteuid() == 0:
        return []
    sudo = shutil.which("sudo")
    if sudo and subprocess.run([sudo, "-n", "true"], capture_output=True, check=False).returncode == 0:
        return [sudo, "-n"]
    return None


def ensure_tools(wanted: Sequence[str], install: bool) -> dict[str, str]:
    """Paths of the reference tools, installing missing ones from the distribution when allowed."""
    missing = [t for t in wanted if shutil.which(t) is None]
    if missing and install:
        prefix = _privilege_prefix()
        manager = shutil.which("apt-get") or shutil.which("dnf")
        if prefix is None:
            log(f"note: {', '.join(missing)} missing and no root or passwordless sudo: skipping them")
        elif manager is None:
            log(f"note: {', '.join(missing)} missing and neither apt-get nor dnf here: skipping them")
        else:
            packages = sorted({PACKAGES[t] for t in missing})
            log(f"installing {' '.join(packages)} with {Path(manager).name} ...")
            env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            argv = [*prefix, manager, "install", "-y", "-q", *packages]
            proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False, timeout=600)
            if proc.returncode != 0 and Path(manager).name == "apt-get":  # stale package lists
                subprocess.run([*prefix, manager, "update", "-q"], capture_output=True, env=env, check=False)
                proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False, timeout=600)
            if proc.returncode != 0:
                log(f"note: installing failed ({proc.stderr.strip()[-300:]}); skipping those references")
    found = {t: shutil.which(t) for t in wanted}
    return {t: p for t, p in found.items() if p}


def _run(argv: Sequence[str], timeout: float = 300) -> str:
    proc = subprocess.run(list(argv), capture_output=True, text=True, check=False, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return proc.stdout


def mbw_copy_gb_per_s(mbw: str, array_mib: int) -> float:
    """mbw's memcpy test, best of 20 runs as ours is a best trial, converted to STREAM counting: mbw
    reports MiB copied per second (one array), STREAM counts the read and the write."""
    out = _run([mbw, "-q", "-n", "20", "-t0", str(array_mib)])
    runs = [float(m) for m in re.findall(r"^\d+\s+Method: MEMCPY.*Copy:\s+([\d.]+) MiB/s", out, re.MULTILINE)]
    if not runs:
        raise RuntimeError(f"mbw output not understood: {out[-300:]}")
    return 2 * max(runs) * MIB / 1e9


def build_stream(gcc: str, directory: str) -> str:
    """Compile stream_copy.c with OpenMP; returns the binary's path."""
    binary = str(Path(directory) / "stream_copy")
    _run([gcc, "-O2", "-fopenmp", str(STREAM_SOURCE), "-o", binary], timeout=120)
    return binary


def reference_bytes_per_thread(threads: int) -> int:
    """STREAM's rule on the reference's own reading of the cache: all sources 4 × the larger of glibc's L3
    (`getconf LEVEL3_CACHE_SIZE`, from CPUID: in a VM it can be the host's) and lscpu's total ("L3 cache:
    32 MiB (1 instance)"), at least 64 MiB a thread."""
    candidates = [0]
    with contextlib.suppress(RuntimeError, OSError, subprocess.TimeoutExpired, ValueError):
        candidates.append(int(_run(["getconf", "LEVEL3_CACHE_SIZE"], timeout=10).strip() or 0))
    with contextlib.suppress(RuntimeError, OSError, subprocess.TimeoutExpired):
        found = re.search(r"^L3 cache:\s+([\d.]+)\s*([KMG])i?B", _run(["lscpu"], timeout=10), re.MULTILINE)
        if found:
            candidates.append(
                int(float(found.group(1)) * {"K": 1 << 10, "M": MIB, "G": 1 << 30}[found.group(2)])
            )
    return max(64 * MIB, 4 * max(candidates) // threads) // 4096 * 4096


def stream_copy_gb_per_s(
    binary: str,
    kernel: str,
    threads: int,
    bytes_per_thread: int,
    pages: str = "huge",
    routine: str = "forced",
    realtime: bool = False,
) -> float:
    """The STREAM-style Copy, best of 20 after a dropped first timing, one pinned thread per CPU; `pages`
    "huge" advises transparent huge pages as ours does, "small" leaves the arrays to malloc; `routine`
    "forced" starts it with the doctor's non-temporal threshold, "glibc" leaves glibc to choose by size;
    `realtime` runs it under SCHED_FIFO so that busy loops cannot preempt it."""
    base = dict(os.environ)
    if routine == "forced":
        base = non_temporal_env(base) or base
    env = {**base, "OMP_NUM_THREADS": str(threads), "OMP_PROC_BIND": "true", "OMP_PLACES": "cores"}
    priority = ["chrt", "--fifo", "1"] if realtime else []
    proc = subprocess.run(
        [*priority, binary, kernel, str(bytes_per_thread), "20", pages],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    match = re.fullmatch(r"Copy: ([\d.]+)\n", proc.stdout)
    if proc.returncode != 0 or match is None:
        raise RuntimeError(f"stream_copy exited {proc.returncode}: {proc.stdout[-200:]}{proc.stderr[-200:]}")
    return float(match.group(1)) / 1e3


def sysbench_gb_per_s(sysbench: str, threads: int, block_mib: int, oper: str) -> float:
    """sysbench memory throughput (each byte read or written once), per-thread blocks of block_mib rounded
    down to a power of two (sysbench 1.0.20 refuses other block sizes: "Invalid value for memory-block-size")."""
    block_mib = 1 << (max(1, block_mib).bit_length() - 1)
    out = _run(
        [
            sysbench,
            "memory",
            f"--threads={threads}",
            f"--memory-block-size={block_mib}M",
            f"--memory-total-size={block_mib * threads * 40}M",
            f"--memory-oper={oper}",
            "--memory-access-mode=seq",
            "run",
        ]
    )
    match = re.search(r"MiB transferred \(([\d.]+) MiB/sec\)", out)
    if match is None:
        raise RuntimeError(f"sysbench output not understood: {out[-300:]}")
    return float(match.group(1)) * MIB / 1e9


def likwid_copy_gb_per_s(likwid: str, threads: int, total_mib: int) -> float:
    """likwid-bench's Copy kernel with non-temporal stores (glibc's memmove uses them for large copies, so
    a plain-store kernel would pay write-allocate traffic ours does not), working set split over `threads`
    threads; MByte/s there are 10^6 bytes and count both streams, as STREAM does."""
    flags = Path("/proc/cpuinfo").read_text().split()
    kernel = "copy_mem_avx" if "avx" in flags else "copy_mem"
    out = _run([likwid, "-t", kernel, "-w", f"N:{total_mib}MB:{threads}"])
    match = re.search(r"^MByte/s:\s+([\d.]+)", out, re.MULTILINE)
    if match is None:
        raise RuntimeError(f"likwid-bench output not understood: {out[-300:]}")
    return float(match.group(1)) / 1e3


def fio_read_mb_per_s(fio: str, directory: str, size_mib: int, deep: bool = False) -> float:
    """fio sequential O_DIRECT read; by default the same shape as ours (8 MiB, QD1, psync, one job)."""
    shape = (
        ["--bs=1M", "--iodepth=32", "--ioengine=libaio"]
        if deep
        else ["--bs=8M", "--iodepth=1", "--ioengine=psync"]
    )
    with tempfile.TemporaryDirectory(prefix=".gpu-doctor-fio-", dir=directory) as work:
        out = _run(
            [
                fio,
                "--name=seqread",
                f"--directory={work}",
                f"--size={size_mib}M",
                "--rw=read",
                "--direct=1",
                *shape,
                "--numjobs=1",
                "--output-format=json",
            ],
            timeout=600,
        )
    return float(json.loads(out)["jobs"][0]["read"]["bw_bytes"]) / 1e6


def _median(samples: list[float]) -> float:
    return statistics.median(samples) if samples else float("nan")


def _row(name: str, ours: list[float], ref: list[float], unit: str) -> None:
    """Medians, their ratio, and the median of each round's own ratio: a shared VM's memory can switch
    between two speeds from one minute to the next (the CI VM: about 50 and 65 GB/s), and a round's two
    figures, taken seconds apart, mostly share one."""
    o, r = _median(ours), _median(ref)
    ratio = f"{o / r:5.2f}" if ref and r > 0 else "  n/a"
    ref_text = f"{r:9.2f}" if ref else "      n/a"
    paired = [a / b for a, b in zip(ours, ref, strict=False) if b > 0] if len(ours) == len(ref) else []
    rounds = f"  by round {_median(paired):5.2f}" if paired else ""
    print(f"{name:<44} ours {o:9.2f} {unit:<5} reference {ref_text} {unit:<5} ratio {ratio}{rounds}")


class Samples:
    """Per-round results; medians are reported."""

    def __init__(self) -> None:
        self.values: dict[str, list[float]] = {}

    def add(self, key: str, value: float) -> None:
        self.values.setdefault(key, []).append(value)
        log(f"  {key}: {value:.2f}")

    def get(self, key: str) -> list[float]:
        return self.values.get(key, [])

    def sample(self, key: str, measure: Callable[..., float], *args: Any) -> None:
        """Run one reference; a tool that fails leaves a note, not a crash."""
        try:
            self.add(key, measure(*args))
        except (RuntimeError, OSError, subprocess.TimeoutExpired, ValueError, KeyError) as exc:
            log(f"note: {key} failed: {exc}")


def _ours(threads: int) -> dict[str, Any]:
    result = measure_ram_in_child(threads=threads)
    if isinstance(result, Unavailable):
        raise RuntimeError(str(result))
    return dict(result)


def ram_round(
    samples: Samples, tools: dict[str, str], threads: int, stream: str | None, realtime: bool
) -> None:
    ref1, refN = reference_bytes_per_thread(1), reference_bytes_per_thread(threads)
    reference = partial(stream_copy_gb_per_s, realtime=realtime)
    # Each of ours right before its reference: a shared VM's memory can switch speed within a minute.
    for count, key, ref_key, ref_bytes in (
        (1, "ours1", "stream_memcpy1", ref1),
        (threads, "oursN", "stream_memcpy", refN),
    ):
        started = time.perf_counter()
        result = _ours(count)
        if count == threads:
            samples.add("ram_seconds", time.perf_counter() - started)
        if isinstance(result["bandwidth_gb_per_s"], float):
            samples.add(key, result["bandwidth_gb_per_s"])
        samples.add(f"{key}_cache_multiple", from_json(RamBandwidth, result).cache_multiple)
        if stream is not None:
            samples.sample(ref_key, reference, stream, "memcpy", count, ref_bytes)
    # Before the routine was forced: the same copy in this process, glibc choosing its stores by size.
    before = measure_ram_bandwidth(LIVE, threads=threads, cpuid_cache_bytes=cpuid_l3_bytes())
    if isinstance(before.bandwidth_gb_per_s, float):
        samples.add("oursN_libc", before.bandwidth_gb_per_s)
    if "mbw" in tools:
        samples.sample("mbw", mbw_copy_gb_per_s, tools["mbw"], ref1 // MIB)
    if stream is not None:
        if realtime:
            samples.sample("stream_memcpy1_shared", stream_copy_gb_per_s, stream, "memcpy", 1, ref1)
            samples.sample("stream_memcpy_shared", stream_copy_gb_per_s, stream, "memcpy", threads, refN)
        glibc = partial(stream_copy_gb_per_s, routine="glibc")
        samples.sample("stream_memcpy1_glibc", glibc, stream, "memcpy", 1, ref1)
        samples.sample("stream_memcpy_glibc", glibc, stream, "memcpy", threads, refN)
        samples.sample("stream_loop", stream_copy_gb_per_s, stream, "loop", threads, refN)
        samples.sample(
            "stream_small_pages",
            partial(stream_copy_gb_per_s, pages="small"),
            stream,
            "memcpy",
            threads,
            refN,
        )
    if "likwid-bench" in tools:
        samples.sample("likwid1", likwid_copy_gb_per_s, tools["likwid-bench"], 1, 2 * ref1 // MIB)
        samples.sample(
            "likwid", likwid_copy_gb_per_s, tools["likwid-bench"], threads, 2 * refN * threads // MIB
        )
    if "sysbench" in tools:
        for oper in ("read", "write"):
            samples.sample(
                f"sysbench_{oper}", sysbench_gb_per_s, tools["sysbench"], threads, refN // MIB, oper
            )


def disk_round(samples: Samples, tools: dict[str, str], directory: str) -> int:
    """One disk measurement and the fio runs of the same size; returns the file size in MiB."""
    started = time.perf_counter()
    disk = measure_disk_read(LIVE, directory)
    samples.add("disk_seconds", time.perf_counter() - started)
    if isinstance(disk.read_mb_per_s, Unavailable):
        log(f"note: our disk read has no number: {disk.read_mb_per_s}")
        return 0
    samples.add("disk", disk.read_mb_per_s)
    size = disk.file_bytes // MIB
    if "fio" in tools:
        samples.sample("fio", fio_read_mb_per_s, tools["fio"], directory, size)
        samples.sample("fio_deep", partial(fio_read_mb_per_s, deep=True), tools["fio"], directory, size)
    return size


def _realtime_allowed() -> bool:
    try:
        return (
            subprocess.run(["chrt", "--fifo", "1", "true"], check=False, capture_output=True).returncode == 0
        )
    except OSError:
        return False


def _exit_on_signal(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="a directory on the disk to measure")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; medians are reported")
    parser.add_argument("--no-install", action="store_true", help="never install missing reference tools")
    parser.add_argument("--load", type=int, default=0, help="busy loops kept running through every round")
    parser.add_argument("--no-disk", action="store_true", help="RAM only")
    args = parser.parse_args()
    tools = ensure_tools(list(PACKAGES), install=not args.no_install)
    threads = len(os.sched_getaffinity(0))
    llc = total_llc_bytes(RealHost("/"))
    cache = DEFAULT_LLC_BYTES if isinstance(llc, Unavailable) else llc
    samples = Samples()
    size = 0
    with tempfile.TemporaryDirectory(prefix="gpu-doctor-bench-") as build:
        stream = None
        if "gcc" in tools:
            try:
                stream = build_stream(tools["gcc"], build)
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
                log(f"note: the STREAM-style reference did not build: {exc}")
        realtime = args.load > 0 and _realtime_allowed()
        if args.load and not realtime:
            log(
                "note: chrt --fifo is not allowed here; the loaded reference is time-shared with the busy loops"
            )
        # SIGTERM and SIGHUP unwind through the finally below like Ctrl-C does, so no busy loop outlives us.
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, _exit_on_signal)
        loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
        try:
            for round_no in range(args.rounds):
                log(f"round {round_no + 1}/{args.rounds}")
                ram_round(samples, tools, threads, stream, realtime)
                if not args.no_disk:
                    size = disk_round(samples, tools, args.dir) or size
        finally:
            for loop in loops:
                loop.kill()
                loop.wait()
    med = {key: _median(samples.get(key)) for key in samples.values}
    print(
        f"machine: {threads} CPU(s), last-level cache {cache // MIB} MiB (sysfs), {args.load} busy loop(s), "
        f"disk directory {args.dir}"
    )
    print(
        f"reference arrays: {reference_bytes_per_thread(1) // MIB} MiB (1 thread), "
        f"{reference_bytes_per_thread(threads) // MIB} MiB a thread ({threads} threads), sized on their own"
    )
    print(f"rounds: {args.rounds}, interleaved; medians. GB/s = 10^9 B/s counted as STREAM Copy (2 x copied)")
    if realtime:
        print("reference at real-time priority (chrt --fifo 1): the busy loops cannot preempt it")
    _row(
        "RAM copy, 1 thread   vs STREAM Copy (memcpy)",
        samples.get("ours1"),
        samples.get("stream_memcpy1"),
        "GB/s",
    )
    _row(
        f"RAM copy, {threads} threads vs STREAM Copy (memcpy)",
        samples.get("oursN"),
        samples.get("stream_memcpy"),
        "GB/s",
    )
    print("  context, other copy loops (ours / theirs):")
    if realtime:
        _row(
            "    1 thread   vs STREAM memcpy, time-shared with the loops",
            samples.get("ours1"),
            samples.get("stream_memcpy1_shared"),
            "GB/s",
        )
        _row(
            f"    {threads} threads vs STREAM memcpy, time-shared with the loops",
            samples.get("oursN"),
            samples.get("stream_memcpy_shared"),
            "GB/s",
        )
    _row(
        f"    {threads} threads vs STREAM memcpy, glibc's choice",
        samples.get("oursN"),
        samples.get("stream_memcpy_glibc"),
        "GB/s",
    )
    _row(
        "    1 thread   vs STREAM memcpy, glibc's choice",
        samples.get("ours1"),
        samples.get("stream_memcpy1_glibc"),
        "GB/s",
    )
    _row(
        f"    in-process, glibc's choice, {threads} threads vs STREAM memcpy",
        samples.get("oursN_libc"),
        samples.get("stream_memcpy"),
        "GB/s",
    )
    _row("    1 thread   vs mbw -t0 (memcpy x2)", samples.get("ours1"), samples.get("mbw"), "GB/s")
    _row(
        f"    {threads} threads vs STREAM c[j]=a[j]", samples.get("oursN"), samples.get("stream_loop"), "GB/s"
    )
    _row(
        f"    {threads} threads vs STREAM memcpy, 4K pages",
        samples.get("oursN"),
        samples.get("stream_small_pages"),
        "GB/s",
    )
    _row("    1 thread   vs likwid-bench AVX NT", samples.get("ours1"), samples.get("likwid1"), "GB/s")
    _row(f"    {threads} threads vs likwid-bench AVX NT", samples.get("oursN"), samples.get("likwid"), "GB/s")
    print(
        f"  our {threads}-thread RAM measurement: {med.get('ram_seconds', float('nan')):.2f} s wall (budget 3 s); "
        f"sources {med.get('oursN_cache_multiple', float('nan')):.1f}x the cache "
        f"(1 thread: {med.get('ours1_cache_multiple', float('nan')):.1f}x; STREAM asks 4x)"
    )
    print(
        f"  context, not a copy: sysbench memory {threads} threads seq read "
        f"{med.get('sysbench_read', float('nan')):.2f} GB/s, write {med.get('sysbench_write', float('nan')):.2f} GB/s"
    )
    _row(
        f"disk read O_DIRECT 8M QD1 vs fio, same shape, {size} MiB",
        samples.get("disk"),
        samples.get("fio"),
        "MB/s",
    )
    print(
        f"  context: fio libaio QD32 1M {med.get('fio_deep', float('nan')):.1f} MB/s; our disk measurement "
        f"{med.get('disk_seconds', float('nan')):.2f} s wall (budget 3 s)"
    )
    for key in (
        "ours1",
        "stream_memcpy1",
        "mbw",
        "oursN",
        "stream_memcpy",
        "oursN_libc",
        "stream_memcpy_glibc",
        "stream_memcpy1_shared",
        "stream_memcpy_shared",
        "stream_loop",
        "likwid1",
        "likwid",
        "disk",
        "fio",
    ):
        values = samples.get(key)
        if values:  # a shared VM swings a lot: show how much, next to the medians
            print(
                f"  spread {key:<13} min {min(values):9.2f}  max {max(values):9.2f}  ({len(values)} rounds)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
