"""Host-to-device copies timed at once against timed after warm-up rounds, right after a big GPU allocation.

The first real-GPU run (an H200 in a Firecracker VM, 2026-11-26) gave 26.5 GB/s for `h2d_pinned` in the
standard smoke test against 55.4 GB/s from a plain reference loop, while device-to-host agreed (55.3 / 55.3).
In one process on that machine (torch 2.11.0+cu130), 256 MiB pinned copies with per-copy CUDA events read
55.5 GB/s with or without a thread reading the link speed from sysfs, and with a written or an untouched
source; right after half the GPU memory had been written and freed (what the smoke test's memory step does),
copies into freshly allocated buffers read 26.5 GB/s for a few rounds, then 55.4, with the link at Gen5
throughout. The smoke test now copies untimed until two rounds agree (doctor/probes/smoke_memory.py warm_up).

    python benchmarks/transfer_timing.py            # with the interpreter that holds a CUDA torch

It prints both ways of timing, three times each, each on fresh buffers after a fresh half-memory fill.
"""

from __future__ import annotations

import statistics
from typing import Any

NBYTES = 256 << 20
COPIES = 10


def main() -> int:
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device")
        return 2
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, {NBYTES >> 20} MiB pinned copies")
    for _ in range(3):
        for warm in (False, True):
            fill_half(torch)
            rate = host_to_device(torch, warm)
            print(f"{'after warm-up rounds' if warm else 'timed at once':<22} {rate:6.1f} GB/s")
    return 0


def fill_half(torch: Any) -> None:
    free, _ = torch.cuda.mem_get_info()
    block = torch.empty(free // 2 // 4, dtype=torch.int32, device="cuda")
    block.fill_(7)
    torch.cuda.synchronize()
    del block
    torch.cuda.empty_cache()


def host_to_device(torch: Any, warm: bool) -> float:
    """Median GB/s of COPIES event-timed copies into fresh buffers (one untimed copy first, as before)."""
    host = torch.empty(NBYTES, dtype=torch.uint8).fill_(0x5A).pin_memory()
    gpu = torch.empty(NBYTES, dtype=torch.uint8, device="cuda")
    for _ in range(COPIES * 4 if warm else 1):  # the smoke test's single warm-up copy, or four rounds
        gpu.copy_(host, non_blocking=True)
    torch.cuda.synchronize()
    pairs = []
    for _ in range(COPIES):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        gpu.copy_(host, non_blocking=True)
        end.record()
        pairs.append((start, end))
    torch.cuda.synchronize()
    return float(NBYTES / statistics.median(s.elapsed_time(e) for s, e in pairs) / 1e6)


if __name__ == "__main__":
    raise SystemExit(main())
