"""Yes or no before anything changes: the exact command and where it runs, and nothing is pre-chosen."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmScreen(ModalScreen[bool]):
    """Dismisses with True only on the confirm button (or `y`); escape, `n` and Cancel give False."""

    CSS_PATH = "dialogs.tcss"  # loaded when this screen first opens: the first paint does not parse it

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,n", "cancel", "Cancel"),
        Binding("y", "confirm", "Yes"),
    ]

    def __init__(self, title: str, body: Text, confirm_label: str) -> None:
        super().__init__()
        self.title_text = title
        self.body = body
        self.confirm_label = confirm_label

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(self.title_text, "bold"), id="dialog-title")
            with VerticalScroll(id="dialog-scroll"):  # a long command scrolls; the buttons stay in view
                yield Static(self.body, id="dialog-body")
            with Horizontal(id="dialog-buttons"):
                yield Button("Cancel (n)", id="cancel")
                yield Button(f"{self.confirm_label} (y)", id="confirm", variant="warning")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()  # Enter on an unread dialog must not change anything

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm")

    def action_cancel(self) -> None:
        self.dismiss(False)

    def action_confirm(self) -> None:
        self.dismiss(True)
