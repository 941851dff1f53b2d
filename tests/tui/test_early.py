"""The first diagnosis in a forked child (tui/early.py): the same report as in the worker, its events, and
a fallback for every way the child can fail. Nothing it starts outlives the doctor, nothing reaches the
terminal from it."""

from __future__ import annotations

import dataclasses
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.tui.conftest import HOSTS, report_of
from torch_gpu_doctor.events import CheckDone, ChecksListed, DiagnosisEvent, EventSink, ProbeDone
from torch_gpu_doctor.host import process
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.tui import early
from torch_gpu_doctor.tui.early import REAP_S, STOP_GRACE_S, EarlyDiagnosis
from torch_gpu_doctor.tui.session import Session

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="the early child is forked on Linux only"),
    # pytest-xdist's worker has threads: Python 3.12+ warns of any fork there. The doctor forks before any.
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

MACHINE = "rtx4090-workstation-healthy"


def _session() -> Session:
    host = RecordedHost(HOSTS / MACHINE)
    return Session(host, host.python or "python3", plugins=False, can_apply=False)


def _started(diagnose: Callable[[EventSink], Report]) -> tuple[Session, int]:
    """A session whose early child runs `diagnose`, and the child's pid."""
    session = _session()
    session.diagnose_override = diagnose
    session.start_early()
    assert session.early is not None
    return session, session.early.pid


def _eventually(condition: Callable[[], bool], limit_s: float = 120.0) -> bool:
    """Whether `condition` holds, polled for at most `limit_s`: a bound on the wait, generous for a loaded
    machine. The tests assert the outcome (a process gone), never how long it took."""
    deadline = time.monotonic() + limit_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
    return condition()


def _gone(pid: int) -> bool:
    """Ended: no such process, or a zombie its new parent (init) has not reaped yet."""
    return not _alive(pid) or _zombie(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_childs_report_is_the_workers() -> None:
    session = _session()
    session.start_early()
    early = session.early
    assert early is not None
    child = early.pid
    events: list[DiagnosisEvent] = []
    got = session.diagnose(events.append)
    assert session.early is None  # taken once: a re-run diagnoses in the worker
    expected = report_of(MACHINE)
    assert got.findings == expected.findings
    assert got.specs == expected.specs
    assert got.facts == expected.facts
    # the findings come once, in the report: not as a burst of events the screen would draw twice
    assert not any(isinstance(e, CheckDone) for e in events)
    assert not events or isinstance(events[0], ChecksListed)  # what came before the report, in order
    # the child is reaped by a daemon thread after its report (take() never blocks on it): wait for that thread,
    # as the app does on quitting, before asking whether a zombie is left (a loaded machine's thread is late)
    early.close(wait_s=STOP_GRACE_S + REAP_S + 1)
    assert not _alive(child)  # reaped, not a zombie


def _listed() -> ChecksListed:
    return ChecksListed(specs=report_of(MACHINE).specs[:2], probes=("nvml", "torch"))


def test_progress_streams_while_the_child_still_works(tmp_path: Path) -> None:
    """The worker takes the events as they come while the child is still diagnosing; the report follows.
    Each step waits for the parent to have seen the one before: a report already in the pipe would drop the
    events before it, by design (the next test), and a loaded machine's parent can be that slow."""
    expected, go_on, done = report_of(MACHINE), tmp_path / "go-on", tmp_path / "done"

    def slow(on_event: EventSink) -> Report:
        on_event(_listed())
        on_event(ProbeDone("nvml"))
        while not go_on.exists():  # until the parent has seen both events
            time.sleep(0.01)
        on_event(ProbeDone("torch"))
        while not done.exists():  # and this one, before the report can overtake it
            time.sleep(0.01)
        return expected

    session, _ = _started(slow)
    events: list[DiagnosisEvent] = []

    def seen(event: DiagnosisEvent) -> None:
        events.append(event)
        if len(events) == 2:
            go_on.write_text("")
        if len(events) == 3:
            done.write_text("")

    assert session.diagnose(seen) == expected
    assert events == [_listed(), ProbeDone("nvml"), ProbeDone("torch")]


def test_progress_already_overtaken_by_the_report_is_dropped() -> None:
    """The child finished before the worker came (the app was still starting): the events before its report
    are not unpickled nor drawn; the report says all they would."""
    expected = report_of(MACHINE)

    def quick(on_event: EventSink) -> Report:
        on_event(_listed())
        on_event(ProbeDone("nvml"))
        return expected

    session, child = _started(quick)
    # ended: everything it wrote is in the pipe, which holds a whole diagnosis (it never waited for a reader)
    assert _eventually(lambda: _gone(child)), "the child did not finish"
    events: list[DiagnosisEvent] = []
    assert session.diagnose(events.append) == expected
    assert events == []


@pytest.mark.parametrize(
    "how",
    [
        "exits",  # a bug, or the child killed: the pipe ends without a report
        "segfaults",
        "raises",
        "unpicklable",
    ],
)
def test_a_child_that_fails_costs_only_time(how: str) -> None:
    expected = report_of(MACHINE)
    calls: list[str] = []

    def broken(on_event: EventSink) -> Report:
        calls.append("here")
        if len(calls) == 1 and os.getpid() != parent:  # in the child only; the fallback runs in the parent
            if how == "exits":
                os._exit(3)
            if how == "segfaults":
                os.kill(os.getpid(), signal.SIGSEGV)
            if how == "raises":
                raise RuntimeError("a bug in the child")
            return dataclasses.replace(expected, python_choice=threading.Lock())  # type: ignore[arg-type]
        return expected

    parent = os.getpid()
    session = _session()
    session.diagnose_override = broken
    session.start_early()
    assert session.diagnose(lambda _: None) == expected
    assert calls == ["here"]  # the parent's own diagnosis (the child's call is in its own memory)


def test_quitting_stops_the_child_and_what_it_started(tmp_path: Path) -> None:
    """The person quits while the first diagnosis still runs: the child and the probe it started end."""
    started = tmp_path / "grandchild"

    def hangs(on_event: EventSink) -> Report:
        child = process.spawn(["sleep", "600"], os.environ)
        assert not isinstance(child, process.NotStarted)
        started.write_text(str(child.pid))
        time.sleep(600)
        raise AssertionError("not reached")

    session, child = _started(hangs)
    assert _eventually(lambda: started.exists() and bool(started.read_text())), "the child started no probe"
    grandchild = int(started.read_text())
    session.close(wait_s=30)
    assert not _alive(child)
    assert _eventually(lambda: _gone(grandchild)), "the probe outlived the doctor"


def _zombie(pid: int) -> bool:
    """An ended process whose parent (init, once the child died) has not reaped it yet."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return False


def test_the_child_writes_nothing_to_the_terminal(capfd: pytest.CaptureFixture[str]) -> None:
    """The screen is the app's: a warning printed by the diagnosis must not land in the middle of it."""
    expected = report_of(MACHINE)

    def chatty(on_event: EventSink) -> Report:
        print("printed by the diagnosis", flush=True)
        os.write(2, b"written to stderr by the diagnosis\n")
        return expected

    session = _session()
    session.diagnose_override = chatty
    session.start_early()
    assert session.diagnose(lambda _: None) == expected
    out, err = capfd.readouterr()
    assert "by the diagnosis" not in out + err


@pytest.mark.parametrize(
    "sent",
    [
        early._HEADER.pack(len(pickle.dumps(["a", "list"])), early.REPORT) + pickle.dumps(["a", "list"]),
        early._HEADER.pack(5, early.REPORT) + b"\x80\x05garbage",  # not a pickle
        early._HEADER.pack(4, b"x") + b"abcd",  # no such kind
        early._HEADER.pack(early.MAX_MESSAGE + 1, early.EVENT),  # longer than any message of ours
        early._HEADER.pack(100, early.REPORT) + b"cut",  # cut off
        b"\x00\x01",  # not even a header
    ],
    ids=["not-a-report", "not-a-pickle", "unknown-kind", "too-long", "cut-off", "no-header"],
)
def test_garbage_on_the_pipe_is_no_report(sent: bytes) -> None:
    read_fd, write_fd = os.pipe()
    os.write(write_fd, sent)
    os.close(write_fd)
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    assert EarlyDiagnosis(pid, read_fd).take(lambda _: None) is None


def test_quitting_while_the_worker_waits_for_the_child_makes_no_report(tmp_path: Path) -> None:
    """The person quits while the worker is blocked taking the child's events (the app quits from its own
    thread): the child is stopped, the worker gets no report, and it does not diagnose again in its place."""
    from torch_gpu_doctor.tui.early import SessionClosed

    calls: list[int] = []

    def hangs(on_event: EventSink) -> Report:
        calls.append(os.getpid())
        time.sleep(600)
        raise AssertionError("not reached")

    session, child = _started(hangs)
    outcome: list[object] = []

    def worker() -> None:
        try:
            outcome.append(session.diagnose(lambda _: None))
        except SessionClosed as exc:
            outcome.append(exc)

    thread = threading.Thread(target=worker)
    thread.start()
    time.sleep(0.5)  # the worker is blocked reading the pipe
    session.close(wait_s=30)
    thread.join(30)
    assert not thread.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], SessionClosed)
    assert calls == []  # the parent never diagnosed itself (the child's call is in the child's memory)
    assert not _alive(child)


def test_a_probe_that_ignores_sigterm_dies_with_the_child_after_its_report(tmp_path: Path) -> None:
    """The child sends its report while a probe it started still runs and ignores SIGTERM: the child's own
    stop (SIGTERM, then SIGKILL after host.process's grace) ends it; the parent gives the child longer than
    that grace before it kills the child itself."""
    started = tmp_path / "probe"
    expected = report_of(MACHINE)

    def leaves_a_probe(on_event: EventSink) -> Report:
        probe = process.spawn(["sh", "-c", "trap '' TERM; sleep 60"], os.environ)
        assert not isinstance(probe, process.NotStarted)
        started.write_text(str(probe.pid))
        return expected

    assert early.STOP_GRACE_S > process.STOP_GRACE_S
    session, _ = _started(leaves_a_probe)
    assert session.diagnose(lambda _: None) == expected
    probe = int(started.read_text())
    assert _eventually(lambda: _gone(probe)), "the probe outlived the early child"
