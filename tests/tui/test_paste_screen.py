"""Triage in the TUI as a person uses it: `t` opens a text area, a paste shows its verdict, nothing runs."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Static, TextArea

from tests.tui.conftest import replay_session
from tests.tui.pilot import settle, text_of
from torch_gpu_doctor.triage.pipeline import NOTHING_KNOWN
from torch_gpu_doctor.tui.app import DoctorApp
from torch_gpu_doctor.tui.screens import paste as paste_screen
from torch_gpu_doctor.tui.screens.main import MainScreen
from torch_gpu_doctor.tui.screens.paste import EMPTY, PasteScreen, verdict_text

PASTES = Path(__file__).parents[1] / "triage" / "pastes"
TOO_OLD = (PASTES / "chatglm3-100-driver-too-old-11060.txt").read_text(encoding="utf-8")


async def _shown(pilot: Pilot[Any], text: str, timeout_s: float = 10.0) -> str:
    """Wait for the verdict of `text`, then return what the pane shows."""
    screen = pilot.app.screen
    assert isinstance(screen, PasteScreen)
    for _ in range(int(timeout_s / 0.05)):
        if screen.shown_for == text:
            return text_of(screen.query_one("#paste-verdict", Static))
        await pilot.pause(0.05)
    raise AssertionError(f"no verdict for the paste within {timeout_s} s")


def test_a_paste_shows_its_cause_and_fix_and_runs_nothing(monkeypatch: Any) -> None:
    session = replay_session("rtx4090-workstation-healthy")
    started: list[object] = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a))

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            await pilot.press("t")
            assert isinstance(app.screen, PasteScreen)
            assert EMPTY in text_of(app.screen.query_one("#paste-verdict", Static))
            area = app.screen.query_one(TextArea)
            assert area.has_focus
            area.insert(TOO_OLD)  # what a terminal's paste does: one insertion
            shown = await _shown(pilot, area.text)
            first = shown.index("Most likely cause")
            assert "driver" in shown[first:].splitlines()[0]
            assert "supports CUDA ≤ 11.6" in shown  # found version 11060, read from the paste
            # Letters typed go into the paste, not to the doctor's keys (`f` would fix, `q` quit).
            await pilot.press("f", "q")
            assert isinstance(app.screen, PasteScreen)
            assert area.text.endswith("fq")
            await pilot.press("ctrl+l")
            assert await _shown(pilot, "") == EMPTY
            await pilot.press("escape")
            assert isinstance(app.screen, MainScreen)

    asyncio.run(scenario())
    assert started == []  # the paste's fixes belong to another machine: nothing ran here


def test_typing_reads_the_paste_once_it_pauses(monkeypatch: Any) -> None:
    read: list[str] = []
    real = paste_screen.verdict_text

    def counted(text: str) -> Any:
        read.append(text)
        return real(text)

    monkeypatch.setattr(paste_screen, "verdict_text", counted)
    monkeypatch.setattr(
        paste_screen, "SETTLE_S", 3.0
    )  # ten key presses land well within it, even on a busy machine

    async def scenario() -> None:
        app = DoctorApp(replay_session("rtx4090-workstation-healthy"))
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            await pilot.press("t")
            await pilot.press(*"nvidia-smi")
            typed = app.screen.query_one(TextArea).text
            await _shown(pilot, typed)
            assert read == [typed]  # ten keys, one read

    asyncio.run(scenario())


def test_unreadable_and_binary_pastes_give_a_message_not_a_crash() -> None:
    colored = verdict_text(
        "\x1b[31mRuntimeError: CUDA error: no kernel image is available for execution\x1b[0m"
    )
    assert "Most likely cause (the paste says so): torch has no kernels for this GPU" in colored.plain
    assert "\x1b" not in colored.plain
    assert verdict_text("   \n").plain == EMPTY
    assert verdict_text("hello there").plain == NOTHING_KNOWN
    assert "binary" in verdict_text("\x00\x01\x02 data" * 10).plain
