"""What every key does, and how to read a status."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

KEY_NAMES = {"question_mark": "?"}
MOVING = "- `↑` `↓` or the mouse: move between checks; the right pane explains the one under the cursor"
BETWEEN = "- `tab`: move between the list and the pane"
READING = """\
**Statuses**

- `PASS` fine · `WARN` works, but costs speed or will break later
- `FAIL` stops torch from using the GPU, or gives wrong results
- `SKIP` does not apply here (never counts as a pass) · `…` still running
- `UNKNOWN` could not tell: a fact was unavailable (the pane says why)
- `CRASH` a check or probe broke: a bug in gpu-doctor, please report it

gpu-doctor changes only the Python environment it diagnoses (pip), and only after you confirm. System
commands (driver, boltctl, reboot) are shown and copied; they run only when you choose "Run in terminal"
and confirm.
"""


def _described(bindings: Sequence[BindingType]) -> list[Binding]:
    return [b for b in bindings if isinstance(b, Binding) and b.tooltip]


def help_text(screen_keys: Sequence[BindingType], app_keys: Sequence[BindingType]) -> str:
    """The keys as the bindings declare them (their tooltips), then how to read a status."""
    lines = ["**Keys**", "", MOVING]
    lines += [f"- `{KEY_NAMES.get(b.key, b.key)}`: {b.tooltip}" for b in _described(screen_keys)]
    lines.append(
        " · ".join([BETWEEN, *(f"`{KEY_NAMES.get(b.key, b.key)}` {b.tooltip}" for b in _described(app_keys))])
    )
    return "\n".join(lines) + "\n\n" + READING


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "dialogs.tcss"  # loaded when this screen first opens: the first paint does not parse it
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "close", "Close")]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Markdown(self.text)

    def action_close(self) -> None:
        self.dismiss(None)
