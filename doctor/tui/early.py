"""The interactive doctor's first diagnosis, started in a child process before Textual loads.

Textual's start (~0.4 s of imports and layout) and the engine's (its imports, the probes, the checks) each hold
one core; in one process they take turns on the GIL, so the full screen came at their sum (issue 21). Here the
doctor forks before it imports Textual: the child diagnoses while the parent starts the app, and sends each
progress event and then the report back through a pipe, pickled. The screen takes them in its diagnosis
worker as if the engine ran there.

The pipe is made large enough for a whole diagnosis (Linux lets a process grow its pipes to 1 MiB), so the
child finishes without waiting for the parent, and the parent reads nothing while Textual starts (a thread
woken by each message would take the GIL from the first frame). When the worker comes for the messages and
the report is already in the pipe, the progress events before it are dropped unread: unpickling them and
drawing each probe's progress would only delay the full screen.

Whatever goes wrong on this path (no fork on this platform, a child that dies or is killed, a report that
does not pickle) costs nothing but time: the session then diagnoses in its worker thread as before. A re-run
(r) always runs in the worker. The child stops its own children when it ends, and dies with the doctor.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import signal
import struct
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from torch_gpu_doctor.events import DiagnosisEvent, EventSink
    from torch_gpu_doctor.report import Report

_HEADER = struct.Struct("!Ic")  # each message: its pickle's length and its kind, then the pickle
EVENT, REPORT, FAILED = b"e", b"r", b"f"
MAX_MESSAGE = 64 * 1024 * 1024  # a longer one is not our child's: the pipe is read as garbage
# What the pipe is grown to, largest first: the default pipe-max-size, then less (a report of a few GPUs is
# 70-150 KB). Where none is allowed, the child waits on the full pipe until the worker reads it.
PIPE_SIZES = (1024 * 1024, 256 * 1024)
# Between SIGTERM to the child and SIGKILL: longer than the child's own grace for its probes
# (host.process.STOP_GRACE_S, 2 s), so that it is never killed before it has killed them.
STOP_GRACE_S = 3.0
REAP_S = 1.0  # after SIGKILL: a child stuck in the kernel (a wedged driver) is left to init, not waited for


class SessionClosed(Exception):  # a state, not an error: the app quit while the child ran
    """The app quit while the early child was diagnosing: there is no report, and none must be made."""


class EarlyDiagnosis:
    """A diagnosis running in a forked child: `take` streams its events and returns its report."""

    def __init__(self, pid: int, read_fd: int) -> None:
        self.pid = pid
        self._inbox = _Inbox(read_fd)
        self._reaper: threading.Thread | None = None
        self._lock = threading.Lock()
        self.delivered = (
            False  # its report is read from the pipe (and being unpickled): it will be there soon
        )

    @classmethod
    def start(cls, diagnose: Callable[[EventSink], Report]) -> EarlyDiagnosis | None:
        """Fork a child that runs `diagnose`; None where this platform cannot fork (the worker does it)."""
        if sys.platform != "linux":  # fork is safe here before any thread starts; elsewhere, the worker
            return None
        parent = os.getpid()  # not getppid() == 1 in the child: the doctor may be PID 1 in a container
        try:
            read_fd, write_fd = os.pipe()
        except OSError:  # no descriptors left
            return None
        _grow(write_fd)
        try:
            pid = os.fork()
        except OSError:
            os.close(read_fd)
            os.close(write_fd)
            return None
        if pid == 0:  # the child: never returns
            os.close(read_fd)
            _child(diagnose, write_fd, parent)
        os.close(write_fd)
        return cls(pid, read_fd)

    def take(self, on_event: EventSink) -> Report | None:
        """In the screen's worker: the child's events passed to `on_event` as they come, then its report; None
        when the child ended without one (the caller diagnoses itself). Events that came before a report
        already here are dropped: the report says all they would."""
        try:
            from torch_gpu_doctor.events import CheckDone, ChecksListed, ProbeDone  # the screen has them

            self._inbox.open()
            while True:
                kind, body = self._inbox.next(skip_events=True)
                self.delivered = self.delivered or kind == REPORT
                payload = pickle.loads(body)  # noqa: S301 - our own child's pickles, through a pipe only it writes
                if kind == EVENT and isinstance(payload, (ChecksListed, ProbeDone, CheckDone)):
                    on_event(payload)
                elif kind == REPORT:
                    from torch_gpu_doctor.report import Report  # loaded already: unpickling it did

                    return payload if isinstance(payload, Report) else None
                else:  # FAILED: the child could not finish (a bug there, or a report that would not pickle)
                    return None
        except Exception:  # the child died (killed, a segfault) or sent garbage: diagnose here instead
            return None
        finally:
            self.close(gently=True)

    def close(self, gently: bool = False, wait_s: float = 0.0) -> None:
        """Stop the child and reap it, in a daemon thread: the caller (the app quitting, the worker that took the
        report) never blocks longer than `wait_s`. `gently`: the child is on its way out after its report, so
        it gets a grace to stop its own probes before SIGTERM; else SIGTERM now (it stops its probes), SIGKILL
        after STOP_GRACE_S. Safe to call from any thread, any number of times: a `take` waiting in another
        thread returns None at once."""
        self._inbox.stop()  # a take() waiting now returns None; the pipe is closed by whoever reads it last
        with self._lock:
            if self._reaper is None:
                self._reaper = threading.Thread(
                    target=_stop, args=(self.pid, gently), name="early-child-reaper", daemon=True
                )
                self._reaper.start()
            reaper = self._reaper
        if wait_s > 0:
            reaper.join(wait_s)


class _Inbox:
    """The parent's end of the pipe. Untouched until the worker opens it; then whatever is in the pipe is read
    at once, and a thread of its own reads the rest as it comes. Messages are kept as bytes, in order."""

    def __init__(self, read_fd: int) -> None:
        self._fd: int | None = read_fd  # None once closed (a closed number may be another file's by then)
        self._buffer = bytearray()
        self._messages: list[tuple[bytes, bytes]] = []
        self._ended = False  # nothing more will come: the last message, the end of the pipe, garbage, stop()
        self._reader = False  # a reader thread holds the descriptor: it closes it when it is done
        self._changed = threading.Condition()

    def open(self) -> None:
        """Read every message already in the pipe, then start the thread that reads the rest."""
        fd = self._fd
        more = fd is not None
        try:
            if fd is not None:
                os.set_blocking(fd, False)
                while more and not self._ended:
                    more = self._take_in(os.read(fd, 1 << 16))
                os.set_blocking(fd, True)
        except BlockingIOError:  # all that was there for now
            assert fd is not None
            os.set_blocking(fd, True)
        except OSError:
            more = False
        with self._changed:
            start = more and not self._ended and self._fd is not None
            self._reader = start
        if start:
            threading.Thread(target=self._drain, name="early-child-reader", daemon=True).start()
        else:
            self.stop()

    def _drain(self) -> None:
        fd = self._fd
        try:
            while fd is not None and self._take_in(os.read(fd, 1 << 16)):
                pass
        except OSError:  # a read error: the pipe is over
            pass
        finally:
            with self._changed:
                self._reader = False
            self.stop()

    def _take_in(self, data: bytes) -> bool:
        """Keep the whole messages in `data` (with what came before); False when nothing more will come."""
        if not data:
            return False
        self._buffer += data
        while len(self._buffer) >= _HEADER.size:
            size, kind = _HEADER.unpack_from(self._buffer)
            if kind not in (EVENT, REPORT, FAILED) or size > MAX_MESSAGE:
                return False  # garbage: not our child's
            if len(self._buffer) < _HEADER.size + size:
                break
            body = bytes(self._buffer[_HEADER.size : _HEADER.size + size])
            del self._buffer[: _HEADER.size + size]
            with self._changed:
                self._messages.append((kind, body))
                self._changed.notify_all()
            if kind != EVENT:
                return False  # the last message
        return True

    def stop(self) -> None:
        """Nothing more is taken: a `next` waiting returns; the pipe is closed now, or by the reader when its
        read returns (the child's end closes when the child ends)."""
        with self._changed:
            self._ended = True
            self._changed.notify_all()
            fd = None if self._reader else self._fd
            if fd is not None:
                self._fd = None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def next(self, skip_events: bool) -> tuple[bytes, bytes]:
        """The next message (blocking); with `skip_events`, the last message instead when it is already here
        and ends the diagnosis. Raises EOFError when nothing more will come."""
        with self._changed:
            while not self._messages and not self._ended:
                self._changed.wait()
            if not self._messages:
                raise EOFError("the early diagnosis ended without a report")
            if skip_events and self._messages[-1][0] != EVENT:
                del self._messages[:-1]
            return self._messages.pop(0)


def _grow(fd: int) -> None:
    """Make the pipe hold a whole diagnosis, where Linux allows (F_SETPIPE_SZ); else leave it as it is."""
    setpipe = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setpipe is None:
        return
    for size in PIPE_SIZES:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, setpipe, size)
            return


def _stop(pid: int, gently: bool) -> None:
    if gently and _reaped(pid, STOP_GRACE_S):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    if not _reaped(pid, STOP_GRACE_S):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        _reaped(pid, REAP_S)


def _reaped(pid: int, wait_s: float) -> bool:
    """Whether the child has ended (and is reaped), waiting up to `wait_s`."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return True  # already reaped
        if done:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def _child(diagnose: Callable[[EventSink], Report], write_fd: int, parent: int) -> None:
    """Diagnose, sending each event and then the report; stop every probe on the way out, whatever happens.
    Ends the process: the parent's Python state (atexit, buffered output) is not the child's to run."""
    code = 0
    try:
        _detach_from_the_terminal(parent)

        writing = threading.Lock()  # probe threads send their events too: one message at a time

        def send(kind: bytes, payload: object) -> None:
            body = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
            view = memoryview(_HEADER.pack(len(body), kind) + body)
            with writing:
                while view:
                    view = view[os.write(write_fd, view) :]

        from torch_gpu_doctor.events import CheckDone  # the child's own imports, not the parent's

        def progress(event: DiagnosisEvent) -> None:
            # Checks are judged after every fact is in, in a burst the report follows within milliseconds:
            # the parent would unpickle and draw each finding twice. The plan and the probes are progress.
            if not isinstance(event, CheckDone):
                send(EVENT, event)

        report = diagnose(progress)
        try:
            send(REPORT, report)
        except (pickle.PicklingError, TypeError, AttributeError, RecursionError) as exc:
            send(FAILED, f"{type(exc).__name__}: {exc}")
    except BaseException:  # the parent diagnoses again in its worker, where a bug shows as one
        code = 1
    finally:
        if "torch_gpu_doctor.host.process" in sys.modules:
            from torch_gpu_doctor.host.process import stop_all_children  # loaded already (checked above)

            with contextlib.suppress(BaseException):
                stop_all_children(final=True)
        os._exit(code)


def _detach_from_the_terminal(parent: int) -> None:
    """The terminal is the app's: the child reads nothing from it and writes nothing to it (a warning printed
    there would land in the middle of the screen). SIGTERM and SIGHUP end it as Ctrl-C does, so its probes
    are stopped; where Linux allows, it also gets SIGTERM when the doctor dies without a word (SIGKILL)."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    sys.stdout = sys.stderr = Path(os.devnull).open("w")  # noqa: SIM115 - for the child's life (os._exit ends it)
    if "faulthandler" in sys.modules:  # a crash dump would be written to the terminal's own descriptor
        sys.modules["faulthandler"].disable()
    with contextlib.suppress(OSError):  # where the cores are busy, the app's first frame goes first
        os.nice(5)

    def interrupt(signum: int, frame: object) -> None:  # noqa: ARG001
        raise KeyboardInterrupt(signal.Signals(signum).name)

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, interrupt)
    if sys.platform == "linux":
        with contextlib.suppress(Exception):
            import ctypes  # the child's own start-up, not the parent's

            pr_set_pdeathsig = 1
            ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
        if os.getppid() != parent:  # the doctor died before the request above took effect
            raise KeyboardInterrupt("the doctor is gone")
