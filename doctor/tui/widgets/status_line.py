"""One line under the header: what the diagnosis is doing now, then the tally and what to press."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from gpu_doctor.model import Counts
from gpu_doctor.tui.tokens import tally


class StatusLine(Static):
    def reading(self, done: int, total: int, waiting: list[str]) -> None:
        tail = f" (waiting for {', '.join(waiting[:3])}{'…' if len(waiting) > 3 else ''})" if waiting else ""
        self.update(Text(f"Reading this machine: {done} of {total} fact sections{tail}", "italic"))

    def judging(self) -> None:
        self.update(Text("Running the checks…", "italic"))

    def done(self, counts: Counts, hint: str) -> None:
        parts = tally(counts)
        if hint:
            parts.append(f"   {hint}", "dim")
        self.update(parts)

    def message(self, text: str, style: str = "italic") -> None:
        self.update(Text(text, style))
