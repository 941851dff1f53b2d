"""Status tokens: a word and a colour, never colour alone (NO_COLOR leaves the word)."""

from __future__ import annotations

from rich.text import Text

from torch_gpu_doctor.model import Counts, Status
from torch_gpu_doctor.render.styles import style_of

WIDTH = 7  # "UNKNOWN"


def token(status: Status | None) -> Text:
    """The padded token for a status; None is a check still running."""
    if status is None:
        return Text(f"{'…':<{WIDTH}}", "italic")
    return Text(f"{status.value.upper():<{WIDTH}}", style_of(status))


def worst(statuses: list[Status]) -> Status | None:
    return max(statuses, key=lambda s: s.severity) if statuses else None


def tally(counts: Counts) -> Text:
    """`2 fail · 1 warn · 40 pass`, worst first, each in its status colour; zero counts left out."""
    parts = Text()
    for words, status in counts.labelled():
        parts.append(" · " if parts else "")
        parts.append(words, style_of(status))
    return parts
