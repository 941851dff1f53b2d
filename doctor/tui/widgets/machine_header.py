"""The header: the tool, and the machine in one line that says less as the terminal gets narrower."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import events
from textual.widgets import Static

if TYPE_CHECKING:
    from torch_gpu_doctor.facts.model import Facts


class MachineHeader(Static):
    """`heads`: the bold part from its longest form to its shortest ("gpu-doctor 0.1.0 · replay of a
    capture", "gpu-doctor · replay", "replay"; "" leaves the machine alone); the machine joins when its
    facts are in, and is fitted again on every resize."""

    def __init__(
        self,
        heads: tuple[str, ...],
        facts: Facts | None = None,
        *,
        reading: str = "this machine",
        id: str | None = None,
    ) -> None:
        self.reading = reading  # what is being read until the facts are in: "this machine", "the capture"
        super().__init__(self._text(heads, facts, 80), id=id)
        self.heads = heads
        self.facts = facts

    def show(self, facts: Facts) -> None:
        self.facts = facts
        self._fit()

    def on_resize(self, event: events.Resize) -> None:  # noqa: ARG002
        self._fit()

    def _fit(self) -> None:
        if self.content_size.width > 0:
            self.update(self._text(self.heads, self.facts, self.content_size.width))

    def _text(self, heads: tuple[str, ...], facts: Facts | None, width: int) -> Text:
        if facts is None:  # the first frame: machine_line's imports (the Facts model) come after it
            return Text.assemble((heads[0], "bold"), f" · reading {self.reading}…")
        from torch_gpu_doctor.tui.machine_line import header_line  # the Facts model: after the first frame

        head, rest = header_line(heads, facts, width)
        return Text.assemble((head, "bold"), rest)
