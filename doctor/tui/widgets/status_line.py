"""One line under the header: what the diagnosis is doing now, then the tally and what to press."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import events
from textual.widgets import Static

from torch_gpu_doctor.model import Counts
from torch_gpu_doctor.tui.tokens import tally


class StatusLine(Static):
    """After a diagnosis: the tally, then the longest of its hints that fits the line (fitted again when
    the terminal is resized); before: what is being read."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tally: tuple[Counts, tuple[str, ...]] | None = None

    def reading(self, done: int, total: int, waiting: list[str]) -> None:
        self._tally = None
        tail = f" (waiting for {', '.join(waiting[:3])}{'…' if len(waiting) > 3 else ''})" if waiting else ""
        self.update(Text(f"Reading this machine: {done} of {total} fact sections{tail}", "italic"))

    def judging(self) -> None:
        self._tally = None
        self.update(Text("Running the checks…", "italic"))

    def done(self, counts: Counts, hints: tuple[str, ...] | str = ()) -> None:
        """`hints`: what to press, from the longest form to the shortest."""
        self._tally = (counts, (hints,) if isinstance(hints, str) else hints)
        self._fit()

    def message(self, text: str, style: str = "italic") -> None:
        self._tally = None
        self.update(Text(text, style))

    def on_resize(self, event: events.Resize) -> None:  # noqa: ARG002
        if self._tally is not None:
            self._fit()

    def _fit(self) -> None:
        assert self._tally is not None
        counts, hints = self._tally
        parts = tally(counts)
        width = self.content_size.width or 10_000  # not laid out yet: the longest, fitted on resize
        hint = next((h for h in hints if h and parts.cell_len + 3 + len(h) <= width), "")
        if hint:
            parts.append(f"   {hint}", "dim")
        self.update(parts)
