"""Wall time of `gpu-doctor --json` against `python -m torch.utils.collect_env` in the same environment.

Budget (DESIGN §7): gpu-doctor --json without the smoke test under 0.6x collect_env's time.
Runs are interleaved (A B A B ...) so drift in machine load hits both equally; medians are reported.

    python benchmarks/report_time.py --python /path/to/env/bin/python --runs 9
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _time(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, timeout=600)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", default=sys.executable, help="the environment with torch installed")
    parser.add_argument("--doctor", default=shutil.which("gpu-doctor") or "gpu-doctor")
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    doctor = [args.doctor, "--json", "--python", args.python]
    collect = [args.python, "-m", "torch.utils.collect_env"]
    startup = [args.doctor, "--list-checks"]
    for argv in (doctor, collect, startup):  # warm the page cache once, unmeasured
        _time(argv)
    times: dict[str, list[float]] = {"doctor": [], "collect_env": [], "startup": []}
    for _ in range(args.runs):
        times["doctor"].append(_time(doctor))
        times["collect_env"].append(_time(collect))
        times["startup"].append(_time(startup))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"environment: {args.python} ({Path(args.python).resolve()})")
    print(f"runs: {args.runs}, interleaved")
    print(f"gpu-doctor --json         median {med['doctor'] * 1000:7.0f} ms  (min {min(times['doctor']) * 1000:.0f})")
    print(f"torch.utils.collect_env   median {med['collect_env'] * 1000:7.0f} ms  (min {min(times['collect_env']) * 1000:.0f})")
    print(f"gpu-doctor --list-checks  median {med['startup'] * 1000:7.0f} ms  (start-up, no probes)")
    print(f"ratio doctor / collect_env: {med['doctor'] / med['collect_env']:.2f}  (budget < 0.60)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
