"""The setup wizard as a person walks it: the plan's steps in order, each confirmed, run, or handed over."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Button, Static

from tests.tui.conftest import FAKE_PIP, live_session, pip_calls, replay_session, report_of
from tests.tui.pilot import notes, settle, text_of
from torch_gpu_doctor.facts.smoke import SmokeMode
from torch_gpu_doctor.fixing.plan import plan_fixes
from torch_gpu_doctor.model import Figure, Finding, Status
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.smoke.run import SmokeProgress
from torch_gpu_doctor.tui.app import DoctorApp
from torch_gpu_doctor.tui.fix_runner import RunOutcome
from torch_gpu_doctor.tui.screens.confirm import ConfirmScreen
from torch_gpu_doctor.tui.screens.fix_run import FixRunScreen
from torch_gpu_doctor.tui.screens.main import MainScreen
from torch_gpu_doctor.tui.screens.setup import STOPPED, SetupScreen
from torch_gpu_doctor.tui.widgets.setup_page import REPLAY_LINE
from torch_gpu_doctor.tui.widgets.setup_steps import SetupSteps
from torch_gpu_doctor.tui.widgets.setup_walk import StepState, Walk

NO_DRIVER = "nvidia-gpu-no-driver"  # a Tesla T4 with no driver and no torch: driver first, then torch
CPU_TORCH = "wsl2"  # the driver is fine, torch is a CPU build: the torch step is runnable
HEALTHY = "rtx4090-workstation-healthy"
CU126 = [
    "-m",
    "pip",
    "install",
    "torch==2.13.0+cu126",
    "--index-url",
    "https://download.pytorch.org/whl/cu126",
]
TODO, OK, DONE, SKIPPED, FAILED = (
    StepState.TODO,
    StepState.OK,
    StepState.DONE,
    StepState.SKIPPED,
    StepState.FAILED,
)


def _wizard(app: DoctorApp) -> SetupScreen:
    assert isinstance(app.screen, SetupScreen), type(app.screen).__name__
    return app.screen


def _page(app: DoctorApp) -> str:
    return "\n".join(text_of(w) for w in app.screen.query("#setup-page Static").results(Static))


def _buttons(app: DoctorApp, kind: str) -> list[Button]:
    return list(app.screen.query(f"#setup-page Button.{kind}").results(Button))


def _states(app: DoctorApp) -> list[StepState]:
    return list(app.screen.query_one(SetupSteps).states)


def test_replay_shows_the_steps_in_order_and_runs_nothing() -> None:
    async def scenario() -> None:
        app = DoctorApp(replay_session(NO_DRIVER), start="setup")
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            wizard = _wizard(app)
            assert [s.key for s in wizard.walk.steps] == ["driver", "torch", "reboot", "verify"]
            assert wizard.walk.steps[0].title == "Install the NVIDIA driver"
            # neither companion is installed there: torch alone
            assert wizard.walk.steps[1].title == "Install torch 2.14.1 (cu130)"
            assert _states(app) == [TODO, TODO, TODO, TODO]
            page = _page(app)
            assert "Step 1 of 4: Install the NVIDIA driver" in page
            assert "$ sudo apt install nvidia-driver-580-open" in page
            assert "[needs root] [needs reboot] [needs network] · changes the system" in page
            assert REPLAY_LINE in page
            assert not _buttons(app, "terminal") and not _buttons(app, "pip")
            assert len(_buttons(app, "copy")) == 2
            assert not app.screen.query_one("#setup-skip").display
            next_button = app.screen.query_one("#setup-next", Button)
            assert next_button.region.bottom <= 24 and str(next_button.label) == "Next (n)"  # fits in 80x24
            await pilot.press("n")  # a replay only turns the page: nothing is marked done
            assert "Step 2 of 4: Install torch 2.14.1" in _page(app)
            assert _states(app) == [TODO, TODO, TODO, TODO]
            assert not _buttons(app, "pip")
            await pilot.press("r", "d")  # neither runs nor marks anything in a replay: not even in the footer
            assert not isinstance(app.screen, ConfirmScreen)
            assert (
                app.screen.check_action("run", ()) is False and app.screen.check_action("done", ()) is False
            )
            assert _states(app) == [TODO, TODO, TODO, TODO]
            await pilot.press("c")
            assert app.copied == ["/usr/bin/python3 -m pip install torch==2.14.1"]
            await pilot.press("n", "n")
            assert "Step 4 of 4: Re-run gpu-doctor and the quick smoke test" in _page(app)
            assert not _buttons(app, "verify")
            assert str(app.screen.query_one("#setup-next", Button).label) == "Close (n)"
            before = app.last_report
            await pilot.press("n")
            assert isinstance(app.screen, MainScreen)
            assert app.last_report is before  # nothing was diagnosed again

    asyncio.run(scenario())


def test_p_goes_back_a_step_to_read_it_again() -> None:
    async def scenario() -> None:
        app = DoctorApp(replay_session(NO_DRIVER), start="setup")
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            await pilot.press("n", "n")
            assert "Step 3 of 4" in _page(app)
            await pilot.press("p")
            assert "Step 2 of 4: Install torch 2.14.1" in _page(app)
            await pilot.press("p")
            assert "Step 1 of 4: Install the NVIDIA driver" in _page(app)
            assert _wizard(app).walk.current == 0
            await pilot.press("p")  # nothing before the first
            assert "Step 1 of 4" in _page(app) and "This is the first step." in notes(app)
            assert _states(app) == [TODO, TODO, TODO, TODO]  # reading is not doing
            await pilot.press("n")
            assert "Step 2 of 4" in _page(app)

    asyncio.run(scenario())


def test_a_step_with_nothing_to_do_says_ok_and_the_wizard_opens_at_the_first_to_do() -> None:
    async def scenario() -> None:
        app = DoctorApp(replay_session(CPU_TORCH), start="setup")
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            wizard = _wizard(app)
            assert [s.key for s in wizard.walk.steps] == ["driver", "torch", "verify"]
            assert _states(app) == [OK, TODO, TODO]
            assert wizard.walk.current == 1
            assert "torch 2.13.0+cpu is a CPU-only build" in _page(app)
            assert not _buttons(app, "pip")  # the replay's python is another machine's

    asyncio.run(scenario())


def test_cancel_in_the_confirm_dialog_runs_nothing(pip_log: Path) -> None:
    session, calls = live_session(CPU_TORCH)

    async def scenario() -> None:
        app = DoctorApp(session, start="setup")
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            assert [str(b.label) for b in _buttons(app, "pip")] == ["Run…"]
            await pilot.click(_buttons(app, "pip")[0])
            assert isinstance(app.screen, ConfirmScreen)
            body = app.screen.body.plain
            assert " ".join([str(FAKE_PIP), *CU126]) in body
            assert f"Into the Python environment of {FAKE_PIP}" in body
            assert "[needs network]" in body
            await pilot.press("n")
            await settle(pilot)
            assert _states(app) == [OK, TODO, TODO]

    asyncio.run(scenario())
    assert pip_calls(pip_log) == []
    assert len(calls) == 1


def test_a_confirmed_install_is_done_and_the_plan_comes_from_a_new_diagnosis(pip_log: Path) -> None:
    session, calls = live_session(CPU_TORCH, HEALTHY)

    async def scenario() -> None:
        app = DoctorApp(session, start="setup")
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            await pilot.press("r", "y")
            await settle(pilot)
            assert isinstance(app.screen, FixRunScreen)
            assert "Done." in text_of(app.screen.query_one("#run-status", Static))
            await pilot.press("escape")
            await settle(pilot)
            wizard = _wizard(app)
            assert len(calls) == 2  # diagnosed again after the install
            assert [s.key for s in wizard.walk.steps] == ["driver", "torch", "verify"]
            assert _states(app) == [OK, DONE, TODO]
            assert wizard.walk.current == 2
            assert wizard.walk.notes["torch"].plain == "torch.cpu_build: FAIL → PASS"
            assert app.last_report is wizard.newest is not None
            await pilot.press("escape")
            assert isinstance(app.screen, MainScreen)
            await settle(pilot)
            assert app.screen.report is wizard.newest  # the doctor shows what the wizard saw last

    asyncio.run(scenario())
    assert pip_calls(pip_log) == [[str(FAKE_PIP), *CU126]]


def test_a_failed_install_stops_the_wizard_and_shows_pips_error(
    pip_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PIP_RESULT", "fail")
    session, calls = live_session(CPU_TORCH)

    async def scenario() -> None:
        app = DoctorApp(session, start="setup")
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            await pilot.press("r", "y")
            await settle(pilot)
            await pilot.press("escape")
            await settle(pilot)
            assert _states(app) == [OK, FAILED, TODO]
            page = _page(app)
            assert "ERROR: No matching distribution found for torch==2.13.0" in page
            assert STOPPED in page
            assert app.screen.query_one("#setup-next", Button).disabled
            assert app.screen.query_one("#setup-skip", Button).disabled
            await pilot.press("n", "s")  # neither moves on
            assert _wizard(app).walk.current == 1
            assert _states(app) == [OK, FAILED, TODO]
            assert [str(b.label) for b in _buttons(app, "pip")] == ["Run again…"]

    asyncio.run(scenario())
    assert len(calls) == 1  # nothing after the failure: no diagnosis, no smoke test
    assert pip_calls(pip_log) == [[str(FAKE_PIP), *CU126]]


def test_system_commands_go_to_the_terminal_only_when_confirmed(monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[tuple[str, ...]] = []

    def fake_run(app: object, argv: tuple[str, ...]) -> RunOutcome:
        ran.append(argv)
        return RunOutcome(argv, 0, "exit code 0")

    monkeypatch.setattr("torch_gpu_doctor.tui.fix_runner.run_system_command", fake_run)
    session, calls = live_session(NO_DRIVER)

    async def scenario() -> None:
        app = DoctorApp(session, start="setup")
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            assert [str(b.label) for b in _buttons(app, "terminal")] == ["Run in terminal…"] * 2
            assert str(app.screen.query_one("#setup-next", Button).label) == "Next (n)"  # turns the page only
            assert not app.screen.query_one("#setup-done", Button).disabled  # "I did it (d)" marks it done
            await pilot.press("r")
            assert isinstance(app.screen, ConfirmScreen)
            assert "sudo apt update" in app.screen.body.plain and "in this terminal" in app.screen.body.plain
            await pilot.press("n")
            assert ran == []
            await pilot.press("r", "y")
            assert ran == [("sudo", "apt", "update")]
            assert _states(app)[0] is TODO  # one of two commands: the step is not done yet
            _buttons(app, "terminal")[1].press()
            await pilot.pause()
            await pilot.press("y")
            await settle(pilot)
            assert ran[-1] == ("sudo", "apt", "install", "nvidia-driver-580-open")
            assert _states(app) == [DONE, TODO, TODO, TODO]
            assert _wizard(app).walk.current == 1
            await pilot.press("c")
            assert app.copied[-1].startswith(f"{FAKE_PIP} -m pip install torch==2.14.1")

    asyncio.run(scenario())
    assert len(calls) == 1  # a system step is not followed by a diagnosis


def test_a_failed_system_command_stops_the_wizard(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        "torch_gpu_doctor.tui.fix_runner.run_system_command",
        lambda app, argv: RunOutcome(argv, 100, "exit code 100"),
    )
    session, _ = live_session(NO_DRIVER)

    async def scenario() -> None:
        app = DoctorApp(session, start="setup")
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            await pilot.press("r", "y")
            await settle(pilot)
            assert _states(app) == [FAILED, TODO, TODO, TODO]
            assert "FAILED sudo apt update ended: exit code 100." in _page(app)
            await pilot.press("s")
            assert _wizard(app).walk.current == 0

    asyncio.run(scenario())


def test_skip_then_verify_checks_again_and_runs_the_quick_smoke_test() -> None:
    session, calls = live_session(CPU_TORCH, HEALTHY)

    async def scenario() -> None:
        app = DoctorApp(session, start="setup")
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            await pilot.press("s")
            assert _states(app) == [OK, SKIPPED, TODO]
            assert "changes nothing: it only reads and tests" in _page(app)
            assert [str(b.label) for b in _buttons(app, "verify")] == ["Check again"]
            await pilot.press("r")
            await settle(pilot, rounds=4)
            wizard = _wizard(app)
            assert len(calls) == 2
            page = _page(app)
            assert "Checked again: " in page
            assert "torch.cpu_build (was FAIL): " in page  # the new status beside the old one
            assert "driver.installed: " in page
            assert "Quick smoke test:" in page
            newest = wizard.newest
            assert newest is not None and app.last_report is newest
            smoke = [f for f in newest.findings if f.check_id.startswith("smoke.")]
            assert smoke  # the smoke checks were judged on the new report
            broken = any(f.status.value in ("fail", "crash") for f in newest.findings)
            assert _states(app)[2] is (FAILED if broken else DONE)
            assert str(app.screen.query_one("#setup-next", Button).label) == "Close (n)"

    asyncio.run(scenario())


def test_a_failing_smoke_test_fails_the_last_step_and_shows_its_figures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session, calls = live_session(HEALTHY)
    modes: list[SmokeMode] = []
    progress = SmokeProgress("matmul fp16 on GPU 0", 3, 6, None, None)
    figure = Figure(
        "matmul_fp16",
        0,
        "matmul fp16",
        41.0,
        "TFLOPS",
        66.1,
        "40% of the datasheet's 165.2",
        Status.WARN,
        "GPU 0 matmul fp16: 41.0 TFLOPS, below the 66.1 expected",
    )
    wrong = Finding("smoke.matmul", Status.FAIL, "GPU 0 computed a wrong fp16 matmul.")

    def smoke(report: Report, mode: SmokeMode, on_progress: Callable[[SmokeProgress], None]) -> Report:
        modes.append(mode)
        on_progress(progress)
        return dataclasses.replace(report, findings=(*report.findings, wrong), smoke_figures=(figure,))

    monkeypatch.setattr(session, "smoke", smoke)

    async def scenario() -> None:
        app = DoctorApp(session, start="setup")
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            assert _states(app) == [OK, OK, TODO]  # nothing to change: the wizard opens at the last step
            await pilot.press("r")
            await settle(pilot, rounds=4)
            assert _states(app) == [OK, OK, FAILED]
            page = _page(app)
            assert "FAIL    smoke.matmul: GPU 0 computed a wrong fp16 matmul." in page
            assert "GPU 0 matmul fp16: 41.0 TFLOPS, below the 66.1 expected" in page
            assert "1 fail" in text_of(app.screen.query_one("#setup-status", Static))

    asyncio.run(scenario())
    assert modes == [SmokeMode.QUICK]
    assert len(calls) == 2


def test_the_rest_of_the_plan_comes_from_the_newest_diagnosis() -> None:
    walk = Walk.start(plan_fixes(report_of(NO_DRIVER)))
    assert [s.key for s in walk.steps] == ["driver", "torch", "reboot", "verify"]
    walk.set(DONE)
    walk.advance()
    walk.set(DONE)
    walk.rebuild(plan_fixes(report_of(HEALTHY)))  # driver and torch in place: no reboot is needed any more
    assert [s.key for s in walk.steps] == ["driver", "torch", "verify"]
    assert walk.states == [DONE, DONE, TODO]
    assert walk.steps[0].title == "Install the NVIDIA driver"  # the steps walked keep what they were
    walk.advance()
    assert walk.step.key == "verify"
    walk.set(SKIPPED)
    walk.advance()  # nothing left to do: it stays
    assert walk.current == 2 and walk.next_todo() is None


def test_next_only_turns_the_page_and_i_did_it_marks_a_step_done(pip_log: Path) -> None:
    session, calls = live_session(NO_DRIVER, CPU_TORCH)

    async def scenario() -> None:
        app = DoctorApp(session, start="setup")
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            assert _states(app)[0] is TODO
            await pilot.press("n")  # a first-time reader paging through marks nothing
            assert "Step 2 of" in _page(app)
            assert _states(app)[0] is TODO
            await pilot.press("d")  # the torch step, installed by hand: the checks decide the rest
            await settle(pilot)
            assert _states(app)[1] is DONE
            assert len(calls) == 2

    asyncio.run(scenario())
    assert pip_calls(pip_log) == []


def test_the_enclosure_comes_first_and_the_driver_is_planned_once_its_gpu_appears() -> None:
    # the machine before (enclosure not authorized) and after (an authorized Razer Core with its GPU)
    session, calls = live_session(
        "egpu-not-authorized", "egpu-razer-core-authorized", python="/usr/bin/python3"
    )

    async def scenario() -> None:
        app = DoctorApp(session, start="setup")
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            wizard = _wizard(app)
            assert [s.key for s in wizard.walk.steps] == ["egpu.authorized", "driver", "torch", "verify"]
            assert _states(app) == [TODO, StepState.LATER, OK, TODO]
            assert "Step 1 of 4: Authorize the Thunderbolt/USB4 enclosure" in _page(app)
            await pilot.press("p")  # nothing before it
            await pilot.press("d")  # authorized by hand (boltctl, or the desktop's settings)
            await settle(pilot)
            assert len(calls) == 2  # the machine was diagnosed again
            walk = _wizard(app).walk
            assert walk.states[0] is DONE
            assert StepState.LATER not in walk.states  # the driver is planned now, for the GPU that appeared
            driver = next(s for s in walk.steps if s.key == "driver")
            assert driver.waits_for is None and not driver.why.startswith("Not yet")

    asyncio.run(scenario())


def test_a_machine_without_an_nvidia_gpu_never_shows_the_driver_as_ok() -> None:
    async def scenario() -> None:
        app = DoctorApp(replay_session("amd-gpu-on-card-switch"), start="setup")
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            keys = [s.key for s in _wizard(app).walk.steps]
            assert (
                _states(app)[keys.index("driver")] is StepState.NOT_HERE
            )  # an AMD machine needs no NVIDIA driver

    asyncio.run(scenario())


def test_a_step_that_does_not_apply_is_not_here_rather_than_ok() -> None:
    plan = plan_fixes(report_of("amd-gpu-on-card-switch"))
    driver = plan.step("driver")
    assert driver is not None and not driver.needed and not driver.applies
    walk = Walk.start(plan)
    assert walk.states[[s.key for s in walk.steps].index("driver")] is StepState.NOT_HERE
