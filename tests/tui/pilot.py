"""Small helpers for Pilot tests: settle the app, read notifications and widget text."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Static


async def filled(pilot: Pilot[Any], timeout_s: float = 10.0) -> None:
    """Wait until the doctor's list and detail pane are in: they join a moment after the first frame."""
    from torch_gpu_doctor.tui.screens.main import MainScreen

    for _ in range(int(timeout_s / 0.02)):
        if all(s.filled for s in pilot.app.screen_stack if isinstance(s, MainScreen)):
            return
        await pilot.pause(0.02)
    raise AssertionError(f"the doctor's list did not appear within {timeout_s} s")


async def settle(pilot: Pilot[Any], rounds: int = 3) -> None:
    """Let the list appear, then workers finish and their messages be handled (a message can start another
    worker)."""
    await filled(pilot)
    for _ in range(rounds):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def notes(app: App[Any]) -> list[str]:
    return [str(n.message) for n in app._notifications]


def text_of(widget: Static) -> str:
    content = widget.render()
    return content.plain if isinstance(content, Text) else str(content)


def pane_text(app: App[Any]) -> str:
    """Everything the detail pane shows, as plain text."""
    return "\n".join(text_of(w) for w in app.screen.query("#detail Static").results(Static))
