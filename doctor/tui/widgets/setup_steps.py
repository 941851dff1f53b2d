"""The setup wizard's step list: each step of the plan with its state as a word, the current one marked."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.containers import HorizontalGroup, VerticalScroll
from textual.widgets import Static

from torch_gpu_doctor.render.styles import no_color
from torch_gpu_doctor.tui.widgets.setup_walk import StepState

_STYLES = {
    StepState.TODO: "bold",
    StepState.OK: "green",
    StepState.RUNNING: "italic cyan",
    StepState.DONE: "bold green",
    StepState.SKIPPED: "dim",
    StepState.FAILED: "bold red",
    StepState.LATER: "italic",
    StepState.NOT_HERE: "dim",
}
_NO_COLOR_STYLES = {  # greys of these colours would not read (doctor/render/styles.py)
    **_STYLES,
    StepState.OK: "",
    StepState.RUNNING: "italic",
    StepState.DONE: "bold",
    StepState.FAILED: "bold reverse",
}
WIDTH = 7  # "SKIPPED", "RUNNING"


def state_token(state: StepState) -> Text:
    """The padded word for a step's state: never colour alone (and no colour under NO_COLOR)."""
    return Text(f"{state.value.upper():<{WIDTH}}", (_NO_COLOR_STYLES if no_color() else _STYLES)[state])


class SetupSteps(VerticalScroll):
    """Rows of `TOKEN  n title`; rebuilt when the plan changes, updated in place otherwise."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._titles: tuple[str, ...] = ()
        self._tokens: list[Static] = []
        self._rows: list[HorizontalGroup] = []
        self.states: tuple[StepState, ...] = ()
        self.current = -1

    def show(self, titles: Sequence[str], states: Sequence[StepState], current: int) -> None:
        if tuple(titles) != self._titles:
            self._titles = tuple(titles)
            self._tokens = [Static(classes="step-token") for _ in titles]
            self._rows = [
                HorizontalGroup(
                    token, Static(Text(f"{i}. {title}"), classes="step-title"), classes="step-row"
                )
                for i, (token, title) in enumerate(zip(self._tokens, titles, strict=True), start=1)
            ]
            self.remove_children()
            self.mount_all(self._rows)
        self.states, self.current = tuple(states), current
        for i, (token, row, state) in enumerate(zip(self._tokens, self._rows, states, strict=True)):
            marker = Text("▶ " if i == current else "  ", "bold")
            token.update(Text.assemble(marker, state_token(state)))
            row.set_class(i == current, "-current")
        if 0 <= current < len(self._rows):
            self.call_after_refresh(self.scroll_to_widget, self._rows[current], animate=False)
