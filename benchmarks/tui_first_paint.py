"""Time from starting `gpu-doctor` in a terminal to its first paint, and to the last check on screen.

Budget (DESIGN §7): first paint under 500 ms, with the checks streaming in after it. The doctor runs on a
pseudo-terminal of 100x32, exactly as a person starts it; "first paint" is the first frame that shows the
header, "done" the first frame with the status line's tally. Medians over --runs; the first run warms the
page cache and byte-compiles, and is not counted.

    python benchmarks/tui_first_paint.py [--root tests/fixtures/hosts/wsl2] [--runs 7]
"""

from __future__ import annotations

import argparse
import fcntl
import math
import os
import pty
import select
import statistics
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

FIRST = b"reading this machine"
DONE = b" pass"


def one_run(argv: list[str], timeout_s: float = 60.0, first_only: bool = False) -> tuple[float, float]:
    main_fd, child_fd = pty.openpty()
    fcntl.ioctl(child_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 32, 100, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color"}
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=child_fd, stdout=child_fd, stderr=child_fd, env=env, close_fds=True)
    os.close(child_fd)
    seen = b""
    first = done = float("nan")
    try:
        while time.perf_counter() - started < timeout_s:
            ready, _, _ = select.select([main_fd], [], [], 0.05)
            if not ready:
                continue
            try:
                seen += os.read(main_fd, 1 << 16)
            except OSError:
                break
            now = time.perf_counter() - started
            if math.isnan(first) and FIRST in seen:
                first = now
                if first_only:
                    break
            if DONE in seen:
                done = now
                break
    finally:
        os.write(main_fd, b"q")
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        os.close(main_fd)
    return first, done


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--doctor", default=str(Path(sys.executable).with_name("gpu-doctor")))
    parser.add_argument("--root", help="a capture to replay (default: this machine)")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--first-only",
        action="store_true",
        help="stop at the first paint (for comparing with a bare Textual app that shows the same words)",
    )
    args = parser.parse_args()
    argv = [args.doctor, *(["--root", args.root] if args.root else [])]
    one_run(argv, first_only=args.first_only)  # warm-up
    firsts, dones = [], []
    for _ in range(args.runs):
        first, done = one_run(argv, first_only=args.first_only)
        firsts.append(first)
        dones.append(done)
    print(
        f"first paint: median {statistics.median(firsts) * 1000:.0f} ms (min {min(firsts) * 1000:.0f}, "
        f"max {max(firsts) * 1000:.0f}) · budget 500 ms"
    )
    print(f"all checks on screen: median {statistics.median(dones) * 1000:.0f} ms over {args.runs} runs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
