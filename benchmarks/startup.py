"""Start-up time of the commands that do no torch work, against the budget (DESIGN §7: < 300 ms).

Each command's wall time is that of a whole subprocess (interpreter start included), after one unmeasured
warm-up run of each; the commands are interleaved (A B C A B C ...) so drift in machine load hits all of
them, and medians are reported.

    python benchmarks/startup.py --runs 21
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: find benchmarks/
from benchmarks.bytecode import compile_doctor

BUDGET_MS = 300.0
COMMANDS = (("--version",), ("--list-checks",), ("explain", "torch.arch_compat"))


def _time(argv: list[str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, timeout=120)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:  # a command that failed fast would be a meaningless time
        raise SystemExit(f"{argv} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-500:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--doctor", default=shutil.which("gpu-doctor") or "gpu-doctor")
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    commands = [[args.doctor, *command] for command in COMMANDS]
    compile_doctor(args.doctor)
    for argv in commands:  # warm the page cache once, unmeasured
        _time(argv)
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(args.runs):
        for argv, samples in zip(commands, times, strict=True):
            samples.append(_time(argv))
    print(f"gpu-doctor: {args.doctor} ({Path(args.doctor).resolve()})")
    print(f"runs: {args.runs} each, interleaved, after one warm-up; budget < {BUDGET_MS:.0f} ms")
    for command, samples in zip(COMMANDS, times, strict=True):
        median_ms = statistics.median(samples) * 1000
        verdict = "ok" if median_ms < BUDGET_MS else "OVER BUDGET"
        label = "gpu-doctor " + " ".join(command)
        print(
            f"{label:<38} median {median_ms:6.0f} ms  (min {min(samples) * 1000:4.0f}, "
            f"max {max(samples) * 1000:4.0f})  {verdict}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
