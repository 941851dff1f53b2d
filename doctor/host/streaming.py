"""Run a child that reports its steps as JSON lines, under a watchdog that gives each step its own budget.

The child prints `{"event": "start", "step": ...}` before each step and `{"event": "end", ...}` after it. A step
that does not end within its budget is a hang: the whole process group is killed (the child and any workers it
started), and the run says which step it was. A child that dies of a signal is reported the same way, with the
step it was in. Lines are handed to `on_line` as they arrive, so a caller can draw progress.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any

from torch_gpu_doctor.host.base import CommandStatus, StepBudgets, StreamedRun
from torch_gpu_doctor.host.process import NotStarted, kill_group, spawn, wait

MAX_LINES = 20_000  # a run records a few hundred (progress lines are not kept): this bounds a child's garbage
MAX_LINE_CHARS = 1 << 16
STDERR_KEEP_BYTES = 1 << 16  # the tail: where a fatal error message ends up


UNKILLABLE_WAIT_S = 10.0  # after SIGKILL: how long to wait for a child before reporting it as stuck


def step_label(item: Mapping[str, Any]) -> str:
    """'matmul fp16 on GPU 0' from a start line."""
    label = str(item.get("step", "?"))
    if item.get("variant"):
        label += f" {item['variant']}"
    if isinstance(item.get("device"), int):
        label += f" on GPU {item['device']}"
    return label


def _pump(stream: IO[bytes], out: queue.Queue[str | None]) -> None:
    for raw in stream:
        out.put(raw[:MAX_LINE_CHARS].decode("utf-8", errors="replace").rstrip("\r\n"))
    out.put(None)


def _drain_tail(stream: IO[bytes], keep: bytearray) -> None:
    for raw in stream:
        keep.extend(raw)
        del keep[:-STDERR_KEEP_BYTES]


def _parse(line: str) -> Mapping[str, Any]:
    try:
        item = json.loads(line)
    except ValueError:
        return {}
    return item if isinstance(item, dict) else {}


def run_streaming(
    argv: Sequence[str],
    budgets: StepBudgets,
    on_line: Callable[[str], None] | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> StreamedRun:
    """Run argv (never a shell string) in its own session; stop it when a step or the whole run overruns."""
    argv = tuple(argv)
    started = time.monotonic()
    proc = spawn(argv, os.environ if env is None else env, cwd=cwd)  # the watchdog kills its whole group
    if isinstance(proc, NotStarted):
        return StreamedRun(argv, proc.status, None, (), proc.message, None, 0.0)
    assert proc.stdout is not None and proc.stderr is not None
    lines_in: queue.Queue[str | None] = queue.Queue()
    err_tail = bytearray()
    readers = [
        threading.Thread(target=_pump, args=(proc.stdout, lines_in), daemon=True),
        threading.Thread(target=_drain_tail, args=(proc.stderr, err_tail), daemon=True),
    ]
    for reader in readers:
        reader.start()
    lines: list[str] = []
    total_deadline = started + budgets.total_s
    deadline, waiting_for = started + budgets.startup_s, "the interpreter to start"
    budget = budgets.startup_s
    watchdog: str | None = None
    while True:
        now = time.monotonic()
        limit = min(deadline, total_deadline)
        try:
            line = lines_in.get(timeout=max(0.0, limit - now))
        except queue.Empty:
            if total_deadline <= deadline:
                watchdog = f"the whole run took longer than {budgets.total_s:g} s (during {waiting_for})"
            else:
                watchdog = f"{waiting_for} did not finish within {budget:g} s"
            kill_group(proc)
            break
        if line is None:
            break
        item = _parse(line)
        event = item.get("event")
        if event != "progress" and len(lines) < MAX_LINES:  # progress is for the eyes, not the record
            lines.append(line)
        # Only the protocol's milestones restart the clock: a step that keeps saying how far it is, or a
        # library printing to stdout, must still end within the step's budget.
        if event == "start":
            waiting_for = step_label(item)
            budget = budgets.for_step(str(item.get("step")))
            deadline = time.monotonic() + budget
        elif event == "device":  # cuda_init goes on to the next GPU's context: its budget, that GPU named
            index = item.get("index")
            following = index + 1 if isinstance(index, int) else None
            waiting_for = step_label({"step": "cuda_init", "device": following})
            budget = budgets.for_step("cuda_init")
            deadline = time.monotonic() + budget
        elif event in ("end", "hello"):
            waiting_for, budget = "the next step", budgets.default_step_s
            deadline = time.monotonic() + budget
        if on_line is not None:
            # a progress display must never take the watchdog down with it
            with contextlib.suppress(Exception):
                on_line(line)
    returncode = wait(proc, 10)
    if returncode is None:  # closed its stdout but lives on
        kill_group(proc)
        # bounded: a child stuck in the driver (uninterruptible sleep, as after a hung GPU or Xid 79) ignores
        # SIGKILL, and waiting for it without a limit would hang the doctor instead of reporting the hang
        returncode = wait(proc, UNKILLABLE_WAIT_S)
        if returncode is None:
            watchdog = (watchdog + "; then it" if watchdog else "it") + (
                f" did not end within {UNKILLABLE_WAIT_S:g} s of SIGKILL (stuck in the kernel, as a process in "
                "a hung GPU driver is), so gpu-doctor stopped waiting for it"
            )
    kill_group(proc)  # workers it started and left behind go too
    for reader in readers:
        reader.join(timeout=2)
    if watchdog is not None:
        status = CommandStatus.TIMED_OUT
    else:
        status = CommandStatus.OK if returncode == 0 else CommandStatus.NONZERO
    stderr = bytes(err_tail).decode("utf-8", errors="replace")
    elapsed = round((time.monotonic() - started) * 1000, 1)
    return StreamedRun(argv, status, returncode, tuple(lines), stderr, watchdog, elapsed)


def streamed_run_json(run: StreamedRun) -> dict[str, Any]:
    """How a capture stores a streamed run (layout.SMOKE_FILE)."""
    return {
        "argv": list(run.argv),
        "status": run.status.value,
        "returncode": run.returncode,
        "lines": list(run.lines),
        "stderr": run.stderr,
        "watchdog": run.watchdog,
        "duration_ms": run.duration_ms,
    }


def streamed_run_from_json(raw: Any) -> StreamedRun | None:
    """The stored run, or None when the data has another shape."""
    if not isinstance(raw, dict):
        return None
    argv, lines, code = raw.get("argv"), raw.get("lines"), raw.get("returncode")
    try:
        status = CommandStatus(raw.get("status"))
    except ValueError:
        return None
    if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
        return None
    if not (isinstance(lines, list) and all(isinstance(line, str) for line in lines)):
        return None
    if code is not None and (not isinstance(code, int) or isinstance(code, bool)):
        return None
    watchdog, stderr, duration = raw.get("watchdog"), raw.get("stderr", ""), raw.get("duration_ms", 0.0)
    if not (watchdog is None or isinstance(watchdog, str)) or not isinstance(stderr, str):
        return None
    return StreamedRun(
        tuple(argv),
        status,
        code,
        tuple(lines),
        stderr,
        watchdog,
        float(duration) if isinstance(duration, (int, float)) else 0.0,
    )
