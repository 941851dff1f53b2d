"""`m` opens the fit view as a person uses it: the estimate for this report's GPUs, words typed like the
command's, a clear sentence for words it cannot read, escape back to the checks."""

from __future__ import annotations

import asyncio
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input, Static

from tests.tui.conftest import replay_session
from tests.tui.pilot import settle, text_of
from torch_gpu_doctor.tui.app import DoctorApp
from torch_gpu_doctor.tui.screens.fit import FitScreen
from torch_gpu_doctor.tui.screens.main import MainScreen


async def _shown(pilot: Pilot[Any], words: str) -> str:
    screen = pilot.app.screen
    assert isinstance(screen, FitScreen)
    for _ in range(200):
        if screen.shown_for == words:
            return text_of(screen.query_one("#fit-result", Static))
        await pilot.pause(0.05)
    raise AssertionError(f"no estimate for {words!r}")


def test_the_fit_view_estimates_for_the_gpus_of_the_report() -> None:
    async def scenario() -> None:
        app = DoctorApp(replay_session("rtx4090-workstation-healthy"))  # 8x RTX 4090, 24 GiB
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            await pilot.press("m")
            assert isinstance(app.screen, FitScreen)
            first = await _shown(pilot, "7B --train")
            assert "Does not fit" in first and "QLoRA: a 4-bit base with LoRA adapters" in first
            field = app.screen.query_one(Input)
            assert field.has_focus
            field.value = ""
            await pilot.press(*"7B", "enter")
            assert "\nFits: needs " in await _shown(pilot, "7B")
            field.value = ""
            await pilot.press(*"7B --train --precision int4", "enter")
            said = await _shown(pilot, "7B --train --precision int4")
            assert "--qlora" in said and "Traceback" not in said  # a sentence, not a crash
            await pilot.press("escape")
            assert isinstance(app.screen, MainScreen)

    asyncio.run(scenario())
