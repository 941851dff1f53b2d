"""Wall time of `gpu-doctor triage` on real pastes of about 5 KB, and of the triage itself in-process.

Budget (issue 17): triage on a 5 KB paste under 0.3 s. The corpus files (tests/triage: real collect_env
reports and error pastes) are 0.1-2 KB each, so each timed paste is real files joined until it reaches 5 KB,
as people paste a report, a traceback and nvidia-smi together. Each is timed through the command (a new
process: start-up, imports, reading, every check, the text) and in-process (decode, read, facts, checks, text).

    python benchmarks/triage_time.py --runs 9
"""

from __future__ import annotations

import argparse
import io
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: find benchmarks/
from benchmarks.bytecode import compile_doctor  # noqa: E402

CORPUS = (ROOT / "tests" / "triage" / "reports", ROOT / "tests" / "triage" / "pastes")
TARGET = 5 * 1024  # bytes: "a 5 KB paste"


def _pastes(folder: Path) -> list[Path]:
    """Real corpus files, joined in order into pastes of TARGET bytes (the last partial one dropped)."""
    files = sorted(p for corpus in CORPUS for p in corpus.glob("*.txt"))
    pastes: list[Path] = []
    current = b""
    for path in files:
        current += path.read_bytes() + b"\n\n"
        if len(current) >= TARGET:
            out = folder / f"paste-{len(pastes):03d}.txt"
            out.write_bytes(current)
            pastes.append(out)
            current = b""
    return pastes


def _command(doctor: str, path: Path) -> float:
    """Seconds from start to exit. Not `subprocess.run(timeout=...)`: with a timeout and no pipe to read,
    `wait` polls with sleeps that double up to 50 ms, so every figure would be rounded up to the next poll
    (each run near 270 ms read as 313 ms). A blocking `wait` returns at the exit; a timer kills a hung run."""
    started = time.perf_counter()
    proc = subprocess.Popen([doctor, "triage", str(path)], stdout=subprocess.DEVNULL)
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    try:
        returncode = proc.wait()
    finally:
        watchdog.cancel()
    elapsed = time.perf_counter() - started
    if returncode not in (0, 1):
        raise SystemExit(f"gpu-doctor triage {path.name} exited {returncode}")
    return elapsed


def _in_process(path: Path) -> float:
    from torch_gpu_doctor.triage.pipeline import diagnose_paste
    from torch_gpu_doctor.triage.render import render_text

    data = path.read_bytes()
    started = time.perf_counter()
    render_text(diagnose_paste(data, path.name), path.name, io.StringIO())
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--doctor", default=shutil.which("gpu-doctor") or "gpu-doctor")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="gpu-doctor-triage-"))
    files = _pastes(folder)
    compile_doctor(args.doctor)
    _command(args.doctor, files[0])  # warm the page cache once, unmeasured
    _in_process(files[0])  # and the imports
    command = [_command(args.doctor, p) for _ in range(args.runs) for p in files]
    inside = [_in_process(p) for _ in range(args.runs) for p in files]
    sizes = sorted(p.stat().st_size for p in files)
    print(
        f"{len(files)} pastes of {sizes[0]}-{sizes[-1]} bytes joined from the real corpus, {args.runs} runs each"
    )
    print(
        f"gpu-doctor triage FILE (new process)  median {statistics.median(command) * 1000:6.0f} ms  "
        f"max {max(command) * 1000:.0f} ms  (budget < 300 ms)"
    )
    print(
        f"triage in-process (read, facts, checks, text)  median {statistics.median(inside) * 1000:6.1f} ms  "
        f"max {max(inside) * 1000:.1f} ms"
    )
    shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
