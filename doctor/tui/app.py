"""The Textual app: a thin shell that opens the doctor (or the setup wizard) on one Session."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

from torch_gpu_doctor import TOOL_NAME
from torch_gpu_doctor.tui.session import Session

if TYPE_CHECKING:
    from torch_gpu_doctor.report import Report


class DoctorApp(App[None]):
    CSS_PATH = "app.tcss"  # the doctor's screen; other screens bring their own .tcss when they open
    TITLE = TOOL_NAME
    ENABLE_COMMAND_PALETTE = False  # every action has a key in the footer; the palette only took its room
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", tooltip="this help (`escape` closes it)"),
        Binding("q", "quit", "Quit", tooltip="quit"),
    ]

    def __init__(self, session: Session, start: str = "doctor") -> None:
        super().__init__()
        self.session = session
        self.start = start  # "doctor", or what opens once the checks are in: "setup" or "smoke"
        self.copied: list[str] = []  # printed after the app exits, so they stay in the scrollback
        self.last_report: Report | None = None  # the exit code comes from the last diagnosis
        self.diagnosis_failed = False  # the last diagnosis raised (a bug): exit code 4

    def on_mount(self) -> None:
        from torch_gpu_doctor.tui.screens.main import MainScreen  # once the app runs: a cheap `import app`

        self.push_screen(MainScreen(self.session, then=self.start))

    async def action_quit(self) -> None:
        """Never quit under a running fix: pip would be left unattended (or killed mid-install)."""
        from torch_gpu_doctor.tui.screens.fix_run import FixRunScreen  # a screen loads when it is needed

        if any(isinstance(s, FixRunScreen) and s.running for s in self.screen_stack):
            self.notify("A fix is running: wait for it to end, or press escape to stop it first.")
            return
        self.session.close()  # the first diagnosis's child, if it still runs: the worker waiting for it ends
        self.exit()

    def action_help(self) -> None:
        from torch_gpu_doctor.tui.screens.help import HelpScreen, help_text  # a screen loads when it opens
        from torch_gpu_doctor.tui.screens.main import MainScreen  # its keys are what the help lists

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(help_text(MainScreen.BINDINGS, self.BINDINGS)))
