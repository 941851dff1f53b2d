"""The main screen with the first diagnosis in the early child (issue 21: the full screen at Textual's pace).

Its worker starts at mount, not after the list joins; a report that comes before the list makes the list
join with it, never drawing every check as running first; the list's timer waits once for a report already
read from the pipe; events before the list are kept for it; a failure is not retried unasked. The child
here is a stand-in with the same two members the session uses (`take`, `close`) and the flag it reads
(`delivered`), held by events so that nothing depends on timing."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from tests.tui.conftest import replay_session, report_of
from tests.tui.pilot import settle, text_of
from torch_gpu_doctor.events import ChecksListed, EventSink, ProbeDone
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.tui.app import DoctorApp
from torch_gpu_doctor.tui.screens import main as main_screen
from torch_gpu_doctor.tui.screens.main import MainScreen
from torch_gpu_doctor.tui.session import Session
from torch_gpu_doctor.tui.widgets.check_list import CheckList
from torch_gpu_doctor.tui.widgets.status_line import StatusLine

MACHINE = "wsl2"
WAIT_S = 60.0  # a bound on each held step, for a loaded machine; no test asserts how long anything took


class HeldChild:
    """The early child as the worker sees it: `events` come first, then, once `read` is set, the report is
    "read from the pipe" (delivered) and, once `unpickled` is set, returned (None: the child sent garbage)."""

    def __init__(self, report: Report | None, events: tuple[Any, ...] = ()) -> None:
        self.report, self.events = report, events
        self.delivered = False
        self.read, self.unpickled = threading.Event(), threading.Event()
        self.sent_events = threading.Event()

    def take(self, on_event: EventSink) -> Report | None:
        for event in self.events:
            on_event(event)
        self.sent_events.set()
        self.read.wait(WAIT_S)
        self.delivered = True
        self.unpickled.wait(WAIT_S)
        return self.report

    def close(self, gently: bool = False, wait_s: float = 0.0) -> None:
        self.read.set()
        self.unpickled.set()


def _session(child: HeldChild, diagnose_here: list[int] | None = None) -> Session:
    session = replay_session(MACHINE)
    session.early = child  # type: ignore[assignment]  # the stand-in has what the session uses of it

    def here(on_event: EventSink) -> Report:
        if diagnose_here is not None:
            diagnose_here.append(1)
        raise RuntimeError("a bug in the engine")

    session.diagnose_override = here
    return session


@pytest.fixture
def plans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the list drew every check as running; the list's timer is far off (the tests start
    what it would)."""
    monkeypatch.setattr(main_screen, "FIRST_FRAME_S", 600.0)
    drawn: list[int] = []
    real = CheckList.plan

    def counted(self: CheckList, specs: Any) -> None:
        drawn.append(1)
        real(self, specs)

    monkeypatch.setattr(CheckList, "plan", counted)
    return drawn


async def _until(pilot: Any, condition: Any) -> None:
    for _ in range(int(WAIT_S / 0.02)):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError("the screen never got there")


def test_a_report_before_the_list_fills_it_at_once_without_a_plan(plans: list[int]) -> None:
    report = report_of(MACHINE)
    child = HeldChild(report)
    child.read.set()
    child.unpickled.set()

    async def scenario() -> None:
        app = DoctorApp(_session(child))
        async with app.run_test(size=(100, 32)) as pilot:
            screen = app.screen
            assert isinstance(screen, MainScreen)
            await settle(pilot)  # the list joins although its timer is 600 s off: the report brought it
            assert screen.filled and screen.report is report
            assert plans == []  # never drawn as running: the report went straight in
            assert "pass" in text_of(screen.query_one(StatusLine))
            assert screen.query_one(CheckList).selected_check is not None

    asyncio.run(scenario())


def test_the_lists_timer_waits_once_for_a_report_on_its_way(plans: list[int]) -> None:
    report = report_of(MACHINE)
    child = HeldChild(report)
    child.read.set()  # read from the pipe, still being unpickled

    async def scenario() -> None:
        app = DoctorApp(_session(child))
        async with app.run_test(size=(100, 32)) as pilot:
            screen = app.screen
            assert isinstance(screen, MainScreen)
            await _until(pilot, lambda: child.delivered)
            await screen._list_is_due()  # the timer fires: the report is on its way, so it waits
            assert not screen.filled and plans == []
            await screen._list_is_due()  # once only: a report slow to come gets the plan meanwhile
            assert screen.filled and plans == [1]
            child.unpickled.set()
            await settle(pilot)
            assert screen.report is report

    asyncio.run(scenario())


def test_events_before_the_list_wait_for_it(plans: list[int]) -> None:
    """A live machine: the child is still probing when the list joins; what it said before is shown then."""
    report = report_of(MACHINE)
    child = HeldChild(report, events=(ChecksListed(report.specs, ("nvml", "torch")), ProbeDone("nvml")))

    async def scenario() -> None:
        app = DoctorApp(_session(child))
        async with app.run_test(size=(100, 32)) as pilot:
            screen = app.screen
            assert isinstance(screen, MainScreen)
            await _until(pilot, child.sent_events.is_set)
            await pilot.pause(
                2 * main_screen.PROGRESS_EVERY_S
            )  # the progress timer ticks: nothing to draw on
            assert not screen.filled and len(screen._pending) == 2
            await screen._list_is_due()  # nothing on its way: the list joins, with the events kept for it
            assert screen.filled and not screen._pending
            assert "torch" in text_of(screen.query_one(StatusLine))  # "reading 1 of 2 … torch"
            child.read.set()
            child.unpickled.set()
            await settle(pilot)
            assert screen.report is report

    asyncio.run(scenario())


def test_a_failure_before_the_list_is_said_and_not_retried(plans: list[int]) -> None:
    """The child sent garbage and the diagnosis here raised, all before the list joined: the list's later
    start must not run it again on its own."""
    child = HeldChild(None)
    child.read.set()
    child.unpickled.set()
    here: list[int] = []

    async def scenario() -> None:
        app = DoctorApp(_session(child, here))
        async with app.run_test(size=(100, 32)) as pilot:
            screen = app.screen
            assert isinstance(screen, MainScreen)
            await _until(pilot, lambda: app.diagnosis_failed)
            await screen._list_is_due()
            await settle(pilot)
            assert here == [1] and screen.report is None
            assert "The diagnosis itself failed" in text_of(screen.query_one(StatusLine))
            assert plans == []  # nothing is running: the list does not draw every check as running

    asyncio.run(scenario())
