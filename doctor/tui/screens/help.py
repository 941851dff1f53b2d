"""What every key does, and how to read a status."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
**Keys**

- `↑` `↓` or the mouse: move between checks; the right pane explains the one under the cursor
- `n`: jump to the next check that fails or warns
- `f`: fix it: shows the exact command and where it runs, and asks first
- `c`: copy the fix command (printed again when you quit)
- `r`: run the checks again
- `s`: GPU smoke test: proof that the GPU computes correctly, with measured speeds
- `w`: setup wizard: the driver, then torch of the right build, then a check
- `e`: save the report as JSON in the current folder
- `b`: save a support bundle (.tar.gz) in the current folder: this machine recorded again, host names,
  users, addresses and serials replaced, secrets removed; shown first, written only if you say yes
- `tab`: move between the list and the pane · `?` this help (`escape` closes it) · `q` quit

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


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "dialogs.tcss"  # loaded when this screen first opens: the first paint does not parse it
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "close", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Markdown(HELP)

    def action_close(self) -> None:
        self.dismiss(None)
