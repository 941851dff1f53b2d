"""Starting and stopping child processes: the one place that calls Popen for a command gpu-doctor runs.

Every child (a command, a probe, the smoke test, a confirmed fix) runs from an argv list, never a shell
string, in its own session, so that a timeout or a cancel can stop it and everything it started
(`kill_group`). The callers differ only in what they do with the output: read it with a cap
(`host.real.run_command`), line by line under a watchdog (`host.streaming`), or streamed to a display
(`fixing.apply`). `run_in_terminal` is the exception: a command the person chose runs attached to
the terminal, as in a shell.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from typing import IO

from torch_gpu_doctor.host.base import CommandStatus
from torch_gpu_doctor.records import dataclass

Child = subprocess.Popen[bytes]
MERGED = subprocess.STDOUT  # as spawn's stderr: one stream, in the order a terminal would show it


@dataclass(frozen=True)
class NotStarted:
    """Why a child could not be started: its status in the Host's vocabulary, and one line for a person."""

    status: CommandStatus  # NOT_FOUND, PERMISSION_DENIED or FAILED
    message: str


def spawn(
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    cwd: str | None = None,
    stdout: int | IO[bytes] | None = subprocess.PIPE,
    stderr: int | IO[bytes] | None = subprocess.PIPE,
) -> Child | NotStarted:
    """Start argv with no stdin in a new session (its own process group), or say why it did not start."""
    with _SETTLED:
        if _STATE["stopping"]:
            return _not_now(argv)
        _STATE["starting"] += 1
    try:
        proc = subprocess.Popen(
            tuple(argv),
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,  # a timeout or a cancel stops the children it starts too
        )
    except FileNotFoundError:
        return _settle(None, NotStarted(CommandStatus.NOT_FOUND, f"{argv[0]}: command not found"))
    except PermissionError as exc:
        return _settle(None, NotStarted(CommandStatus.PERMISSION_DENIED, f"{argv[0]}: {exc.strerror or exc}"))
    except OSError as exc:
        return _settle(None, NotStarted(CommandStatus.FAILED, f"{argv[0]}: {exc.strerror or exc}"))
    except BaseException:
        _settle(None, _not_now(argv))
        raise
    return _settle(proc, _not_now(argv))


def _settle(proc: Child | None, otherwise: NotStarted) -> Child | NotStarted:
    """A spawn has ended, started or not: a started child is one to stop on the way out, unless gpu-doctor is
    already stopping (a probe thread started it after the interrupt): then it must not outlive us."""
    with _SETTLED:
        _STATE["starting"] -= 1
        _SETTLED.notify_all()  # once the lock is let go: the child is registered or already killed
        if proc is None:
            return otherwise
        if not _STATE["stopping"]:
            _LIVE.add(proc)
            return proc
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        return otherwise


def _not_now(argv: Sequence[str]) -> NotStarted:
    return NotStarted(CommandStatus.FAILED, f"{argv[0]}: not started, gpu-doctor is stopping")


def wait(proc: Child, timeout: float | None) -> int | None:
    """The child's exit code, or None when it has not ended within `timeout` seconds."""
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    with _LIVE_LOCK:
        _LIVE.discard(proc)
    return code


# Every child spawn() started that has not been seen to end: each is the leader of its own process group, out
# of reach of the terminal's Ctrl-C, so gpu-doctor stops them itself when it is interrupted or quits.
_LIVE: set[Child] = set()
_LIVE_LOCK = threading.Lock()
# "stopping": set by stop_all_children(final=True): nothing new starts while gpu-doctor ends.
# "starting": spawns between their check of "stopping" and their child's registration (inside Popen): the
# last stop waits for them, or a child forked just before gpu-doctor exits would be left running, unseen.
_STATE = {"stopping": False, "starting": 0}
_SETTLED = threading.Condition(_LIVE_LOCK)
STOP_GRACE_S = 2.0  # between SIGTERM and SIGKILL
# the longest a final stop waits for spawns in flight (a fork and exec take milliseconds)
STARTING_WAIT_S = 2.0


def allow_children() -> None:
    """A new run may start children again (main() calls it first: tests run several in one process)."""
    with _LIVE_LOCK:
        _STATE["stopping"] = False


def stop_all_children(grace_s: float = STOP_GRACE_S, final: bool = True) -> int:
    """SIGTERM every live child's process group, then SIGKILL those still there after `grace_s`: on Ctrl-C,
    SIGTERM or SIGHUP, and when the interactive doctor quits. `final`: nothing starts after it (a probe
    thread still running would otherwise start the next probe). How many groups were signalled."""
    with _SETTLED:
        _STATE["stopping"] = _STATE["stopping"] or final
        if final:  # those in flight settle now: each kills its own child (see _settle)
            _SETTLED.wait_for(lambda: _STATE["starting"] == 0, timeout=STARTING_WAIT_S)
        children = list(_LIVE)
        _LIVE.clear()
    for proc in children:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for proc in children:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    for proc in children:  # whatever ignored SIGTERM, and the group's other members
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    return len(children)


class BoundedReader:
    """Reads a child's stdout and stderr as they come, keeping at most `limit` bytes of each and dropping the
    rest: a child that floods its output (a `--python` that prints forever) costs the doctor `limit` bytes, not
    all its memory, and never blocks on a full pipe. `cut` says which streams lost bytes."""

    def __init__(self, proc: Child, limit: int) -> None:
        self.limit = limit
        self.data = {"stdout": bytearray(), "stderr": bytearray()}
        self.cut = {"stdout": False, "stderr": False}
        self.threads = [
            threading.Thread(target=self._pump, args=(stream, name), daemon=True)
            for name, stream in (("stdout", proc.stdout), ("stderr", proc.stderr))
            if stream is not None
        ]
        for thread in self.threads:
            thread.start()

    def _pump(self, stream: IO[bytes], name: str) -> None:
        kept = self.data[name]
        with contextlib.suppress(OSError, ValueError):
            while chunk := stream.read1(1 << 16) if hasattr(stream, "read1") else stream.read(1 << 16):
                room = self.limit - len(kept)
                if room > 0:
                    kept += chunk[:room]
                if len(chunk) > max(room, 0):
                    self.cut[name] = True

    def result(self, join_timeout: float = 5.0) -> tuple[bytes, bytes]:
        """What was kept, once the pipes closed (or `join_timeout` passed: a grandchild holding them)."""
        for thread in self.threads:
            thread.join(join_timeout)
        return bytes(self.data["stdout"]), bytes(self.data["stderr"])


def kill_group(proc: Child) -> None:
    """SIGKILL the child's whole process group (it was started in its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def interrupt_group(proc: Child) -> None:
    """SIGINT the child's whole process group, as Ctrl-C in a terminal would."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGINT)


def run_in_terminal(argv: Sequence[str], timeout_s: float = 3600.0) -> int | None:
    """Run a command the user chose on the terminal we were given (stdin/stdout/stderr inherited).

    Returns its exit code, or None when it could not start or did not finish in time. Ctrl-C goes to the
    command (it shares our process group, as in a shell); we ignore it meanwhile, where we can.
    """
    try:
        proc = subprocess.Popen(tuple(argv))
    except OSError:
        return None
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):  # a sudo running as root may refuse our signal
            proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        return None
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
