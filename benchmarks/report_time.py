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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: find benchmarks/
from benchmarks.bytecode import compile_doctor


def _time(argv: list[str], ok_codes: tuple[int, ...] = (0,)) -> float:
    started = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, timeout=600)
    elapsed = time.perf_counter() - started
    if proc.returncode not in ok_codes:  # a command that failed fast would make a meaningless ratio
        raise SystemExit(f"{argv[0]} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-500:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--python", default=sys.executable, help="the environment with torch installed")
    parser.add_argument("--doctor", default=shutil.which("gpu-doctor") or "gpu-doctor")
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    doctor = [args.doctor, "--json", "--python", args.python]
    collect = [args.python, "-m", "torch.utils.collect_env"]
    startup = [args.doctor, "--list-checks"]
    findings = (0, 1, 3)  # the doctor's exit code reflects the machine, not a failure to run
    # Time what an installed copy does: pip writes bytecode at install time, but an editable install run
    # with PYTHONDONTWRITEBYTECODE=1 (as in some sandboxes) recompiles every module on every start.
    compile_doctor(args.doctor)
    for argv, ok in ((doctor, findings), (collect, (0,)), (startup, (0,))):  # warm caches once, unmeasured
        _time(argv, ok)
    times: dict[str, list[float]] = {"doctor": [], "collect_env": [], "startup": []}
    for _ in range(args.runs):
        times["doctor"].append(_time(doctor, findings))
        times["collect_env"].append(_time(collect))
        times["startup"].append(_time(startup))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"environment: {args.python} ({Path(args.python).resolve()})")
    print(f"runs: {args.runs}, interleaved")
    print(
        f"gpu-doctor --json         median {med['doctor'] * 1000:7.0f} ms  (min {min(times['doctor']) * 1000:.0f})"
    )
    print(
        f"torch.utils.collect_env   median {med['collect_env'] * 1000:7.0f} ms  (min {min(times['collect_env']) * 1000:.0f})"
    )
    print(f"gpu-doctor --list-checks  median {med['startup'] * 1000:7.0f} ms  (start-up, no probes)")
    print(f"ratio doctor / collect_env: {med['doctor'] / med['collect_env']:.2f}  (budget < 0.60)")
    print(f"start-up: {med['startup'] * 1000:.0f} ms  (budget < 300 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
