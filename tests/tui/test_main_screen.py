"""The doctor as a person uses it: checks stream in, a problem opens, a fix is confirmed or cancelled."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shlex
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from textual.message import Message
from textual.widgets import RichLog, Static

from tests.tui.conftest import FAKE_PIP, live_session, pip_calls, replay_session, report_of
from tests.tui.pilot import filled, notes, pane_text, settle, text_of
from torch_gpu_doctor.events import CheckDone, ChecksListed, EventSink
from torch_gpu_doctor.model import Command, Status
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.tui.app import DoctorApp
from torch_gpu_doctor.tui.fix_runner import RunOutcome
from torch_gpu_doctor.tui.screens import main as main_screen
from torch_gpu_doctor.tui.screens.confirm import ConfirmScreen
from torch_gpu_doctor.tui.screens.fix_run import FixRunScreen
from torch_gpu_doctor.tui.screens.help import HelpScreen
from torch_gpu_doctor.tui.screens.main import MainScreen
from torch_gpu_doctor.tui.widgets.check_list import CheckList
from torch_gpu_doctor.tui.widgets.detail_pane import DetailPane
from torch_gpu_doctor.tui.widgets.status_line import StatusLine

CPU_TORCH = "wsl2"  # a GPU machine whose torch is a CPU build: torch.cpu_build fails, pip fixes it


def test_checks_appear_running_then_finish_and_the_ui_never_waits() -> None:
    report = report_of("egpu-not-authorized")
    release = threading.Event()

    def slow(on_event: EventSink) -> Report:
        on_event(ChecksListed(report.specs, ("os", "torch")))
        release.wait(20)
        return report

    session = replay_session("egpu-not-authorized")
    session.diagnose_override = slow

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(100, 32)) as pilot:
            await filled(pilot)
            await pilot.pause(0.2)
            checks = app.screen.query_one(CheckList)
            # The list is painted with every check running while the diagnosis is still blocked.
            assert checks.status_of("egpu.authorized") is None
            assert "Reading this machine: 0 of 2" in text_of(app.screen.query_one(StatusLine))
            await pilot.press("question_mark")  # the UI answers keys while the worker waits
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("escape")
            release.set()
            await settle(pilot)
            assert checks.status_of("egpu.authorized") is Status.FAIL
            assert checks.status_of("torch.installed") is Status.PASS
            assert text_of(app.screen.query_one(StatusLine)).startswith(
                "2 fail · 6 unknown · 7 pass · 41 skip"
            )

    asyncio.run(scenario())


def test_a_burst_of_progress_is_applied_in_one_update_not_one_message_per_check() -> None:
    """A replay or a fast machine finishes its 56 checks in a few milliseconds: a message and a repaint per check
    kept the UI thread busy while the diagnosis waited for the GIL (issue 21). Progress is queued and taken
    at most every PROGRESS_EVERY_S, and it still shows while the diagnosis runs."""
    report = report_of("egpu-not-authorized")
    go, release = threading.Event(), threading.Event()

    def bursty(on_event: EventSink) -> Report:
        go.wait(20)  # once the screen's messages are counted
        on_event(ChecksListed(report.specs, ()))
        for finding in report.findings:
            on_event(CheckDone(finding.check_id, (finding,)))
        release.wait(20)
        return report

    session = replay_session("egpu-not-authorized")
    session.diagnose_override = bursty
    posted: list[str] = []

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(100, 32)) as pilot:
            await filled(pilot)
            screen = app.screen
            assert isinstance(screen, MainScreen)
            original = screen.post_message

            def counting(message: Message) -> bool:
                posted.append(type(message).__name__)
                return original(message)

            screen.post_message = counting  # type: ignore[method-assign]
            go.set()
            checks = screen.query_one(CheckList)
            for _ in range(100):  # the worker thread's burst, then the next take (a loaded machine is slow)
                await pilot.pause(main_screen.PROGRESS_EVERY_S)
                if checks.status_of("egpu.authorized") is Status.FAIL:
                    break
            assert checks.status_of("egpu.authorized") is Status.FAIL  # shown before the diagnosis ends
            assert "DiagnosisProgress" not in posted
            release.set()
            for _ in range(100):
                await pilot.pause(main_screen.PROGRESS_EVERY_S)
                if not screen.running:
                    break
            assert not screen.running and screen.report is report

    asyncio.run(scenario())


def test_the_list_shows_every_check_before_the_engine_answers() -> None:
    release = threading.Event()
    report = report_of("wsl2")

    def silent(on_event: EventSink) -> Report:
        release.wait(20)  # not even the list of checks yet
        return report

    session = replay_session("wsl2")
    session.diagnose_override = silent

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(100, 32)) as pilot:
            await filled(pilot)
            await pilot.pause(0.2)
            checks = app.screen.query_one(CheckList)
            planned = [s.id for s in report.specs]
            # every row is there, running
            assert all(checks.select_check(i) and checks.status_of(i) is None for i in planned)
            assert checks.select_check("torch.cpu_build")
            release.set()
            await settle(pilot)
            assert checks.status_of("torch.cpu_build") is Status.FAIL

    asyncio.run(scenario())


def test_next_problem_opens_the_egpu_finding_and_its_exact_fix() -> None:
    async def scenario() -> None:
        app = DoctorApp(replay_session("egpu-not-authorized"))
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            checks = app.screen.query_one(CheckList)
            # the root cause is open from the start, not the first symptom in the list
            assert checks.selected_check == "egpu.authorized"
            pane = pane_text(app)
            assert "Not authorized: Apple, Inc. Thunderbolt to FireWire Adapter" in pane
            assert "$ boltctl enroll --policy auto" in pane
            assert "changes the system" in pane
            await pilot.press("n")  # wraps around to the other problem: the symptom, which names its cause
            assert checks.selected_check == "gpu.present"
            assert "Caused by egpu.authorized: fix that first." in pane_text(app)
            await pilot.press("n", "c")
            assert checks.selected_check == "egpu.authorized"
            assert app.copied[-1].startswith("boltctl enroll --policy auto ")

    asyncio.run(scenario())


def test_a_replay_never_runs_a_fix() -> None:
    async def scenario() -> None:
        app = DoctorApp(replay_session(CPU_TORCH))
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            assert app.screen.query_one(CheckList).select_check("torch.cpu_build")
            await pilot.press("f")
            assert not isinstance(app.screen, ConfirmScreen)
            assert any("This is a capture" in n for n in notes(app))
            assert not app.screen.query("#detail Button#run-c0")

    asyncio.run(scenario())


def test_cancelling_the_fix_dialog_runs_nothing(pip_log: Path) -> None:
    session, calls = live_session(CPU_TORCH)

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            assert app.screen.query_one(CheckList).select_check("torch.cpu_build")
            await pilot.press("f")
            assert isinstance(app.screen, ConfirmScreen)
            body = app.screen.body.plain
            assert f"{FAKE_PIP} -m pip install torch==2.13.0+cu126" in body
            assert f"Into the Python environment of {FAKE_PIP}" in body
            assert "[needs network]" in body
            await pilot.press("enter")  # the focused button is Cancel: Enter on an unread dialog is safe
            await settle(pilot)
            assert not isinstance(app.screen, ConfirmScreen | FixRunScreen)

    asyncio.run(scenario())
    assert pip_calls(pip_log) == []
    assert len(calls) == 1


def test_a_confirmed_fix_streams_pip_and_re_runs_the_checks(pip_log: Path) -> None:
    session, calls = live_session(CPU_TORCH, "rtx4090-workstation-healthy")

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            checks = app.screen.query_one(CheckList)
            assert checks.select_check("torch.cpu_build")
            assert checks.status_of("torch.cpu_build") is Status.FAIL
            await pilot.press("f")
            assert isinstance(app.screen, ConfirmScreen)
            argv_line = app.screen.body.plain.split("quoted as you would type it):\n")[1].splitlines()[0]
            await pilot.press("y")
            await settle(pilot)
            assert isinstance(app.screen, FixRunScreen)
            log_lines = [str(line.text) for line in app.screen.query_one("#run-log", RichLog).lines]
            assert any("Successfully installed torch-" in line for line in log_lines)
            assert "Done." in text_of(app.screen.query_one("#run-status", Static))
            assert pip_calls(pip_log) == [[str(FAKE_PIP), *shlex.split(argv_line)[1:]]]
            await pilot.press("escape")
            await settle(pilot)
            assert len(calls) == 2  # the checks ran again
            assert checks.status_of("torch.cpu_build") is Status.PASS
            assert any("torch.cpu_build: FAIL → PASS" in n for n in notes(app))

    asyncio.run(scenario())


def test_a_failed_fix_shows_pips_message_and_changes_nothing_else(
    pip_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PIP_RESULT", "fail")
    session, calls = live_session(CPU_TORCH)

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            app.screen.query_one(CheckList).select_check("torch.cpu_build")
            await pilot.press("f", "y")
            await settle(pilot)
            status = text_of(app.screen.query_one("#run-status", Static))
            assert "FAILED" in status
            assert "ERROR: No matching distribution found for torch==" in status
            assert "Nothing else was changed." in status
            await pilot.press("escape")
            await settle(pilot)
            assert len(calls) == 1  # a failed fix is not followed by anything

    asyncio.run(scenario())
    assert len(pip_calls(pip_log)) == 1


def test_a_system_command_runs_only_after_its_own_confirmation(monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[tuple[str, ...]] = []

    def fake_run(app: object, argv: tuple[str, ...]) -> RunOutcome:
        ran.append(argv)
        return RunOutcome(argv, 0, "exit code 0")

    monkeypatch.setattr("torch_gpu_doctor.tui.fix_runner.run_system_command", fake_run)
    session, calls = live_session("egpu-not-authorized")

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            app.screen.query_one(CheckList).select_check("egpu.authorized")
            await pilot.pause()
            await pilot.click("#term-c0")  # one command per enclosure: the person picks one
            assert isinstance(app.screen, ConfirmScreen)
            assert "in this terminal" in app.screen.body.plain
            await pilot.press("n")
            assert ran == []
            await pilot.click("#term-c0")
            await pilot.press("y")
            await settle(pilot)
            assert ran and ran[0][:3] == ("boltctl", "enroll", "--policy")
            assert len(calls) == 2  # and the checks ran again

    asyncio.run(scenario())


def test_rerun_export_and_resize(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    session, calls = live_session("rtx4090-workstation-healthy")

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            await pilot.press("r")
            await settle(pilot)
            assert len(calls) == 2
            await pilot.press("e")
            saved = list(tmp_path.glob("gpu-doctor-report-*.json"))
            assert len(saved) == 1
            assert json.loads(saved[0].read_text())["summary"]["exit_code"] == 0
            checks, detail = app.screen.query_one(CheckList), app.screen.query_one(DetailPane)
            assert checks.outer_size.width == 39  # 42% of 80 is below the list's minimum: ids stay whole
            assert detail.outer_size.width == 80 - 39
            await pilot.resize_terminal(120, 40)
            await pilot.pause()
            assert checks.outer_size.width == 50  # 42% of 120
            assert detail.outer_size.width == 120 - 50
            await pilot.resize_terminal(200, 50)
            await pilot.pause()
            assert checks.outer_size.width == 56  # the list stops growing: the explanation gets the room
            await pilot.resize_terminal(80, 24)
            await pilot.press("q")

    asyncio.run(scenario())


def test_a_live_session_opens_on_its_first_problem_and_keeps_the_cursor_on_rerun(pip_log: Path) -> None:
    session, calls = live_session(CPU_TORCH)

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            checks = app.screen.query_one(CheckList)
            assert checks.selected_check == "torch.cpu_build"  # no select_check: what a person gets
            await pilot.press("f")
            assert isinstance(app.screen, ConfirmScreen)
            await pilot.press("n")
            await pilot.press("down", "down")
            chosen = checks.selected_check
            assert chosen not in (None, "torch.cpu_build")
            await pilot.press("r")
            await settle(pilot)
            assert len(calls) == 2
            assert checks.selected_check == chosen
            assert not any("After the fix" in n for n in notes(app))  # a cancelled fix changed nothing

    asyncio.run(scenario())
    assert pip_calls(pip_log) == []


def test_quitting_under_a_running_fix_is_refused_and_stopping_it_asks_first(
    pip_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PIP_RESULT", "hang")
    session, calls = live_session(CPU_TORCH)

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            await pilot.press("f", "y")
            await pilot.pause(0.5)
            running = app.screen
            assert isinstance(running, FixRunScreen) and running.running
            await pilot.press("ctrl+q")  # Textual's own quit key works under a modal screen too
            assert app.is_running and app.screen is running
            assert any("A fix is running" in n for n in notes(app))
            await pilot.press("escape")
            assert isinstance(app.screen, ConfirmScreen)
            await pilot.press("n")  # keep it running
            assert app.screen is running and running.running
            await pilot.press("escape", "y")
            await settle(pilot)
            assert running.result is not None and running.result.cancelled
            assert "stopped part way" in text_of(running.query_one("#run-status", Static))
            await pilot.press("escape")
            await settle(pilot)
            assert len(calls) == 2  # a stopped install may be half done: the checks look again

    asyncio.run(scenario())
    assert len(pip_calls(pip_log)) == 1


def test_smoke_and_setup_wait_for_a_running_diagnosis() -> None:
    report = report_of("wsl2")
    release = threading.Event()

    def slow(on_event: EventSink) -> Report:
        release.wait(20)
        return report

    session = replay_session("wsl2")
    session.diagnose_override = slow

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(100, 32)) as pilot:
            await filled(pilot)
            await pilot.pause(0.2)
            await pilot.press("s", "w")
            assert app.screen.__class__.__name__ == "MainScreen"
            assert sum("Wait for the checks to finish" in n for n in notes(app)) == 2
            release.set()
            await settle(pilot)

    asyncio.run(scenario())


def test_commands_for_another_machine_are_never_offered_to_run() -> None:
    session, _ = live_session("docker-container-no-gpus", python="/usr/bin/python3")

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            assert app.screen.query_one(CheckList).select_check("platform.container_gpus")
            await pilot.pause()
            assert "docker run --gpus all" in pane_text(app)
            assert not app.screen.query("#detail Button.-warning")  # no "Run in terminal…"
            await pilot.press("f")
            assert not isinstance(app.screen, ConfirmScreen)
            assert any("not run from here" in n for n in notes(app))

    asyncio.run(scenario())


def test_a_fix_of_several_commands_lets_the_person_pick_one() -> None:
    session, _ = live_session("nvidia-gpu-no-driver", python="/usr/bin/python3")

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            assert app.screen.query_one(CheckList).select_check("driver.installed")
            await pilot.pause()
            await pilot.press("f")
            assert not isinstance(app.screen, ConfirmScreen)
            assert any("several commands" in n for n in notes(app))
            assert app.focused is not None and app.focused.id == "term-c0"

    asyncio.run(scenario())


def test_a_diagnosis_that_raises_is_said_on_screen_and_ends_in_exit_code_4() -> None:
    def broken(on_event: EventSink) -> Report:
        raise RuntimeError("a bug in the engine")

    session = replay_session("wsl2")
    session.diagnose_override = broken

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            status = text_of(app.screen.query_one(StatusLine))
            assert "The diagnosis itself failed (RuntimeError: a bug in the engine)" in status
            assert app.diagnosis_failed is True
            await pilot.press("s", "w")  # nothing to run them on: refused, no crash
            assert app.screen.__class__.__name__ == "MainScreen"

    asyncio.run(scenario())


def test_keys_pressed_before_the_list_is_in_do_nothing_and_one_diagnosis_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    report = report_of("wsl2")
    runs: list[int] = []

    def counted(on_event: EventSink) -> Report:
        runs.append(1)
        return report

    session = replay_session("wsl2")
    session.diagnose_override = counted
    # A slow machine: the keys come before the list. The timer is far off so that a loaded test machine
    # cannot let it fire between the keys; the list then joins as the timer would have it.
    monkeypatch.setattr(main_screen, "FIRST_FRAME_S", 600.0)

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(100, 32)) as pilot:
            screen = app.screen
            assert isinstance(screen, MainScreen) and not screen.filled
            await pilot.press("n", "f", "c", "r")
            assert not screen.filled and runs == []  # nothing ran, nothing broke, no dialog opened
            assert id(app.screen) == id(screen)
            await screen.after_first_frame()
            await settle(pilot)
            assert runs == [1] and screen.report is report
            await pilot.press("r")  # now it re-runs
            await settle(pilot)
            assert runs == [1, 1]

    asyncio.run(scenario())


def test_an_r_before_the_first_diagnosis_has_started_starts_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first diagnosis starts in the frame after the list's; an `r` pressed in between starts it, and the
    scheduled start then leaves it alone (two at once would race). Every key of the list comes alive with it,
    in one change of the footer."""
    report = report_of("wsl2")
    runs: list[int] = []
    release = threading.Event()

    def held(on_event: EventSink) -> Report:
        runs.append(1)
        release.wait(60)  # still running while the scheduled start comes
        return report

    session = replay_session("wsl2")
    session.diagnose_override = held
    monkeypatch.setattr(main_screen, "FIRST_FRAME_S", 600.0)  # the test fills the list itself

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(100, 32)) as pilot:
            screen = app.screen
            assert isinstance(screen, MainScreen)
            assert screen.check_action("rerun", ()) is None  # nothing in yet
            monkeypatch.setattr(screen, "call_after_refresh", lambda *a, **k: None)  # hold the first start
            await screen.after_first_frame()
            assert all(screen.check_action(a, ()) is True for a in main_screen.NEEDS_THE_LIST)
            assert not screen.running
            await pilot.press("r")
            assert screen.running
            screen._start_first_diagnosis()  # what the held call would have done
            release.set()
            await settle(pilot)
            assert runs == [1] and screen.report is report
            assert not any("still running" in n for n in notes(app))

    asyncio.run(scenario())


def test_f_on_a_capture_says_it_is_a_capture_not_which_button_to_press() -> None:
    """A replay draws no Run buttons, so "choose one with its Run in terminal… button" would point at
    nothing: the driver fix there has several commands."""

    async def scenario() -> None:
        app = DoctorApp(replay_session("secure-boot-blocks-module"))
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            assert app.screen.query_one(CheckList).select_check("driver.installed")
            await pilot.pause()
            await pilot.press("f")
            said = notes(app)
            assert any("This is a capture (--root)" in n for n in said), said
            assert not any("Run in terminal" in n for n in said)
            assert not isinstance(app.screen, ConfirmScreen)

    asyncio.run(scenario())


def test_unknowns_keep_the_status_line_from_saying_all_clear() -> None:
    async def scenario() -> None:
        app = DoctorApp(replay_session("rtx4090-workstation-healthy"))
        async with app.run_test(size=(120, 32)) as pilot:
            await settle(pilot)
            status = text_of(app.screen.query_one(StatusLine))
            assert "unknown" in status and "All clear" not in status, status
            assert "the unknown checks say what they could not read" in status

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("width", "offer"),
    [
        (140, "torch cannot use the GPU yet: w opens the setup wizard · n: next problem"),
        (80, "torch not ready: w for setup"),
    ],
)
def test_the_setup_wizard_is_offered_in_the_status_line_not_over_the_pane(width: int, offer: str) -> None:
    async def scenario() -> None:
        app = DoctorApp(replay_session("wsl2"))  # torch.cpu_build fails: a CPU build beside an RTX 3080
        async with app.run_test(size=(width, 30)) as pilot:
            await settle(pilot)
            status = text_of(app.screen.query_one(StatusLine))
            assert offer in status, status
            assert len(status) <= width - 2  # whole, not cut
            assert not any("setup wizard" in n for n in notes(app))

    asyncio.run(scenario())


def test_a_symptom_names_its_root_cause_and_shows_its_fix() -> None:
    async def scenario() -> None:
        app = DoctorApp(replay_session("secure-boot-blocks-module"))
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            checks = app.screen.query_one(CheckList)
            assert checks.selected_check == "driver.secure_boot"  # the root, open from the start
            assert checks.select_check("driver.nvml")
            await settle(pilot)
            pane = pane_text(app)
            # the root, not every link of the chain (driver.installed is a symptom too)
            assert "Caused by driver.secure_boot: fix that first." in pane
            assert (
                "$ sudo mokutil --import" in pane and "$ sudo modprobe" not in pane
            )  # the root's fix, not the symptom's

    asyncio.run(scenario())


def test_a_command_with_control_characters_is_shown_escaped_and_copied_exact() -> None:
    """A command built from a capture's data (a path, a device name) may hold any byte: the pane shows
    `\\x1b`, never sends it to the terminal; Copy gives the command as it is (issue 21)."""
    report = report_of("egpu-not-authorized")
    hostile = Command(("boltctl", "enroll", "dev\x1b]0;retitled\x07"), note="note \x1b[2J")
    findings = tuple(
        dataclasses.replace(f, remediation=dataclasses.replace(f.remediation, commands=(hostile,)))
        if f.check_id == "egpu.authorized" and f.remediation is not None
        else f
        for f in report.findings
    )
    doctored = dataclasses.replace(report, findings=findings)
    session = replay_session("egpu-not-authorized")
    session.diagnose_override = lambda on_event: doctored

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, MainScreen)
            screen.query_one(CheckList).select_check("egpu.authorized")
            await settle(pilot)
            shown = pane_text(app)
            assert "\\x1b]0;retitled\\x07" in shown and "\\x1b[2J" in shown
            assert "\x1b" not in shown and "\x07" not in shown
            await pilot.press("c")
            assert app.copied[-1] == hostile.display()

    asyncio.run(scenario())


SHOW_IMPORTS_NOTHING = """
import asyncio, sys
from tests.tui.conftest import replay_session
from torch_gpu_doctor.tui.app import DoctorApp
from torch_gpu_doctor.tui.screens.main import MainScreen

loaded = []
shown = MainScreen.show_report

def recording(self, report):
    before = {m for m in sys.modules if m.startswith("torch_gpu_doctor")}
    shown(self, report)
    loaded.extend(sorted({m for m in sys.modules if m.startswith("torch_gpu_doctor")} - before))

MainScreen.show_report = recording

async def scenario():
    app = DoctorApp(replay_session("wsl2"))
    async with app.run_test(size=(100, 32)) as pilot:
        for _ in range(600):
            await pilot.pause(0.05)
            if app.last_report is not None:
                break
    print("loaded:", ",".join(loaded))

asyncio.run(scenario())
"""


def test_showing_the_report_imports_nothing_on_the_main_thread() -> None:
    """The worker loads what showing a report needs before it posts the report: an import on the main thread
    would hold the GIL between the report and the full screen (issue 21). A fresh interpreter, so that
    nothing is loaded already."""
    proc = subprocess.run(
        [sys.executable, "-c", SHOW_IMPORTS_NOTHING],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "loaded: \n" in proc.stdout, proc.stdout
