"""The fix runner's typed result: success is the exit code, whatever the words say."""

from __future__ import annotations

import asyncio

import pytest

from tests.tui.conftest import live_session
from tests.tui.pilot import settle
from torch_gpu_doctor.fixing.apply import ApplyResult
from torch_gpu_doctor.tui.app import DoctorApp
from torch_gpu_doctor.tui.fix_runner import NOT_HANDED_OVER, RunOutcome, pip_outcome
from torch_gpu_doctor.tui.screens.setup import SetupScreen
from torch_gpu_doctor.tui.widgets.setup_walk import StepState


def test_ok_is_the_exit_code() -> None:
    assert RunOutcome(("x",), 0, "anything at all").ok
    assert not RunOutcome(("x",), 1, "exit code 0").ok  # the words do not decide
    assert not RunOutcome(("x",), None, NOT_HANDED_OVER).ok
    assert not RunOutcome(("x",), 0, "", cancelled=True).ok


def test_stopped_part_way() -> None:
    assert RunOutcome(("x",), None, "", cancelled=True).stopped_part_way
    assert RunOutcome(("x",), None, "", timed_out=True).stopped_part_way
    assert RunOutcome(("x",), -9, "Killed by signal 9.").stopped_part_way
    assert not RunOutcome(("x",), 1, "ERROR: no matching distribution").stopped_part_way


def test_a_pip_result_keeps_pips_message() -> None:
    failed = ApplyResult(("python3", "-m", "pip"), 1, False, None, "ERROR: No matching distribution", 5.0)
    outcome = pip_outcome(failed)
    assert outcome.exit_code == 1 and not outcome.ok and outcome.said == "ERROR: No matching distribution"
    cancelled = ApplyResult(("python3",), -2, False, None, "", 5.0, cancelled=True)
    assert pip_outcome(cancelled).stopped_part_way


@pytest.mark.parametrize(("code", "state"), [(0, StepState.TODO), (100, StepState.FAILED)])
def test_the_wizard_reads_the_exit_code_not_the_words(
    monkeypatch: pytest.MonkeyPatch, code: int, state: StepState
) -> None:
    """A command that exits 0 with other words than the runner's own is still done; one that fails with
    'exit code 0' in its words still stops the wizard."""
    monkeypatch.setattr(
        "torch_gpu_doctor.tui.fix_runner.run_system_command",
        lambda app, argv: RunOutcome(argv, code, "exit code 0 (said by a liar)" if code else "fine"),
    )
    session, _ = live_session("nvidia-gpu-no-driver")  # the driver step: apt update, then apt install

    async def scenario() -> None:
        app = DoctorApp(session, start="setup")
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            await pilot.press("r", "y")
            await settle(pilot)
            wizard = app.screen
            assert isinstance(wizard, SetupScreen)
            # exit 0 after the first of two commands: the step waits for the second; a failure stops it
            assert wizard.walk.states[0] is state
            assert wizard.stopped is (code != 0)

    asyncio.run(scenario())
