"""The only place that executes a fix: a confirmed `python -m pip ...`, or a system command the user chose.

Everything else in fixes/ builds plans. `apply_command` runs an argv list (never a shell string) in its own
session with no stdin, streams its merged output line by line, and kills the whole process group when the
timeout passes or the caller cancels. `run_in_terminal` hands the terminal to a command the user explicitly
chose to run (sudo may ask for a password there).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO

from torch_gpu_doctor.host.base import CommandStatus
from torch_gpu_doctor.host.process import MERGED, NotStarted, interrupt_group, kill_group, spawn
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass

TAIL_CHARS = 1 << 16  # the output kept for "pip's message"
REDRAW_INTERVAL_S = 0.5  # a `\r` progress redraw reaches on_line at most this often
EXIT_GRACE_S = 2.0  # after the command exits, how long a child it left holding the pipe may keep it open
POLL_S = 0.1  # how often cancel is looked at
INTERRUPT_GRACE_S = 10.0  # after a cancel's SIGINT, how long pip may take to roll back before SIGKILL
FAILURE_LINES = 12
# The words of a fix that did not start, as the fix flow shows them
_NOT_STARTED = {
    CommandStatus.NOT_FOUND: "{}: not found",
    CommandStatus.PERMISSION_DENIED: "{}: permission denied",
}
_PIP_ERROR = lazy(r"^(ERROR:|error:|×)")


@dataclass(frozen=True)
class ApplyResult:
    argv: tuple[str, ...]
    returncode: int | None  # None: it never started
    timed_out: bool
    error: str | None  # why it could not start: not found, permission denied
    output_tail: str  # the last ~64 KiB of merged stdout/stderr, progress redraws collapsed
    duration_ms: float
    cancelled: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.cancelled and self.error is None

    def failure_message(self) -> str:
        """pip's ERROR: lines when it printed any, else the last lines of output, or why it did not run."""
        if self.error is not None:
            return self.error
        lines = [line for line in self.output_tail.splitlines() if line.strip()]
        errors = [line for line in lines if _PIP_ERROR.match(line)]
        shown = "\n".join(errors or lines[-FAILURE_LINES:])
        if self.timed_out:
            head = f"Stopped after {self.duration_ms / 1000:.0f} s: it did not finish in time."
        elif self.cancelled:
            head = "Cancelled."
        elif self.returncode is not None and self.returncode < 0:
            head = f"Killed by signal {-self.returncode}."
        elif errors or self.ok:
            return shown
        else:
            head = f"Exited with code {self.returncode}."
        return f"{head}\n{shown}" if shown else head


class _Lines:
    """Bytes in, display lines out: a newline ends a line; a lone carriage return redraws the current one."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""

    def feed(self, data: bytes, final: bool = False) -> Iterator[tuple[str, bool]]:
        """Yields (text, finished): each finished line, and the latest complete redraw of an unfinished one."""
        text = self._pending + self._decoder.decode(data, final=final)
        held = "\r" if text.endswith("\r") and not final else ""  # may be the first half of a \r\n
        text = text[: len(text) - len(held)].replace("\r\n", "\n")
        *complete, rest = text.split("\n")
        for line in complete:
            yield line.rsplit("\r", 1)[-1], True  # what a terminal would show after the redraws
        if "\r" in rest:
            *_, drawn, rest = rest.rsplit("\r", 2)
            if drawn:
                yield drawn, False
        self._pending = rest + held
        if final and self._pending.strip("\r"):
            yield self._pending.strip("\r"), True
            self._pending = ""


class _Tail:
    def __init__(self) -> None:
        self._lines: list[str] = []
        self._size = 0

    def add(self, line: str) -> None:
        self._lines.append(line)
        self._size += len(line) + 1
        while self._size > TAIL_CHARS and len(self._lines) > 1:
            self._size -= len(self._lines.pop(0)) + 1

    def text(self) -> str:
        return "\n".join(self._lines)[-TAIL_CHARS:]


def _pump(stream: IO[bytes], out: queue.Queue[bytes | None]) -> None:
    fd = stream.fileno()
    with contextlib.suppress(OSError):
        while chunk := os.read(fd, 1 << 14):  # what has arrived, not a whole line: progress redraws pass
            out.put(chunk)
    out.put(None)


def _result(
    argv: tuple[str, ...],
    started: float,
    returncode: int | None,
    tail: _Tail,
    error: str | None = None,
    timed_out: bool = False,
    cancelled: bool = False,
) -> ApplyResult:
    elapsed = round((time.monotonic() - started) * 1000, 1)
    return ApplyResult(argv, returncode, timed_out, error, tail.text(), elapsed, cancelled)


def apply_command(
    argv: Sequence[str],
    on_line: Callable[[str], object],  # its return value is ignored (a Textual post_message fits)
    timeout_s: float = 1800.0,
    env: Mapping[str, str] | None = None,
    cancel: threading.Event | None = None,
) -> ApplyResult:
    """Run argv with no stdin, hand each output line to on_line (in this thread) as it comes."""
    argv = tuple(argv)
    started = time.monotonic()
    child_env = dict(os.environ if env is None else env)
    child_env["PIP_NO_INPUT"] = "1"  # nobody can answer a prompt: pip must fail instead of waiting
    tail = _Tail()
    # stderr into stdout: one stream, in the order a terminal would show it
    proc = spawn(argv, child_env, stderr=MERGED)
    if isinstance(proc, NotStarted):
        return _result(argv, started, None, tail, _NOT_STARTED.get(proc.status, proc.message).format(argv[0]))
    assert proc.stdout is not None
    chunks: queue.Queue[bytes | None] = queue.Queue()
    reader = threading.Thread(target=_pump, args=(proc.stdout, chunks), daemon=True)
    reader.start()
    splitter, last_redraw = _Lines(), float("-inf")

    def show(line: str) -> None:
        with contextlib.suppress(Exception):  # a display error must not leave pip running unattended
            on_line(line)

    deadline = started + timeout_s
    exited_at: float | None = None
    interrupted_at: float | None = None
    timed_out = cancelled = False
    try:
        while True:
            now = time.monotonic()
            if cancel is not None and cancel.is_set() and interrupted_at is None:
                # Ctrl-C first, as a person would: pip rolls an unfinished install back on it.
                cancelled, interrupted_at = True, now
                interrupt_group(proc)
            if interrupted_at is not None and now - interrupted_at > INTERRUPT_GRACE_S:
                break  # it did not stop: killed below
            if now >= deadline:
                timed_out = True
                break
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > EXIT_GRACE_S:
                break  # a grandchild holds the pipe open: the command itself has finished
            try:
                chunk = chunks.get(timeout=min(POLL_S, max(0.0, deadline - now)))
            except queue.Empty:
                continue
            for line, finished in splitter.feed(chunk or b"", final=chunk is None):
                if finished:
                    tail.add(line)
                    show(line)
                elif time.monotonic() - last_redraw >= REDRAW_INTERVAL_S:
                    last_redraw = time.monotonic()
                    show(line)
            if chunk is None:
                break
    finally:
        if timed_out or cancelled or proc.poll() is None:
            kill_group(proc)
        returncode = proc.wait()
        kill_group(proc)  # children it left behind go too
        reader.join(timeout=1)
        if not reader.is_alive():  # never close a pipe under a reader still blocked in it
            proc.stdout.close()
    return _result(argv, started, returncode, tail, timed_out=timed_out, cancelled=cancelled)
