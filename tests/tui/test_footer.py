"""SteadyFooter: rebuilt when the keys it shows change (a key enabled, a screen's keys), never for a bindings
signal that changes nothing it shows (Textual sends two for each focus change)."""

from __future__ import annotations

import asyncio
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Button
from textual.widgets._footer import FooterKey

from tests.tui.pilot import settle
from torch_gpu_doctor.tui.widgets.footer import SteadyFooter


class CountingFooter(SteadyFooter):
    def __init__(self) -> None:
        super().__init__(compact=True)
        self.built = 0

    def compose(self) -> ComposeResult:
        self.built += 1
        yield from super().compose()


class Keys(App[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("x", "go", "Go"),
        Binding("y", "other", "Other", show=False),
    ]
    ready = False

    def compose(self) -> ComposeResult:
        yield Button("one", id="one")
        yield Button("two", id="two")
        yield CountingFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return True if action != "go" or self.ready else None

    def action_go(self) -> None:
        pass


def _go_key(app: Keys) -> FooterKey:
    return next(k for k in app.query(FooterKey) if k.action == "go")


def test_focus_changes_leave_it_alone_and_a_key_coming_alive_rebuilds_it() -> None:
    async def scenario() -> None:
        app = Keys()
        async with app.run_test(size=(60, 8)) as pilot:
            await settle(pilot)
            footer = app.query_one(CountingFooter)
            assert _go_key(app).has_class("-disabled")  # shown, dimmed: not ready yet
            built = footer.built
            for target in ("#two", "#one", "#two"):
                app.query_one(target, Button).focus()
                await settle(pilot)
            assert footer.built == built  # the same keys: not rebuilt
            app.ready = True
            app.refresh_bindings()
            await settle(pilot)
            assert footer.built == built + 1
            assert not _go_key(app).has_class("-disabled")

    asyncio.run(scenario())
