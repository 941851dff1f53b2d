"""One step of the setup wizard: why it is there, its commands with their flags, who runs them, and buttons."""

from __future__ import annotations

from typing import Literal

from rich.text import Text
from textual.containers import HorizontalGroup, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Static
from textual.widgets.button import ButtonVariant

from torch_gpu_doctor import TOOL_NAME
from torch_gpu_doctor.fixing.plan import VERIFY_KEY, FixStep
from torch_gpu_doctor.model import Command, Target, flag_words
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.tui.fix_text import runs_in_terminal
from torch_gpu_doctor.tui.widgets.setup_steps import state_token
from torch_gpu_doctor.tui.widgets.setup_walk import StepState

RunKind = Literal["pip", "terminal", "verify"]  # also the class of the button that asks for it
RUN_KINDS: tuple[RunKind, ...] = ("pip", "terminal", "verify")
REPLAY_LINE = (
    "This is a capture of another machine (--root): nothing runs from here. "
    "Copy the commands and run them on that machine."
)


@dataclass(frozen=True)
class StepView:
    number: int
    total: int
    step: FixStep
    state: StepState
    python: str  # the interpreter a python-env step installs into
    can_apply: bool  # False in a replay: copy only
    note: Text | None = None  # what happened at this step: pip's failure, what the checks say now
    result: Text | None = None  # the verification's summary


def run_kind(view: StepView, command: Command) -> RunKind | None:
    """What may run `command` from this page, or None when it is for copying only."""
    step, fix = view.step, view.step.remediation
    if not view.can_apply or fix is None or not step.needed or not runs_in_terminal(command):
        return None
    if step.key == VERIFY_KEY:
        return "verify"
    if fix.target is Target.PYTHON_ENV:
        return "pip" if command.argv == step.runnable_argv else None
    return "terminal"


class SetupPage(VerticalScroll):
    """Rebuilt for each step shown; its buttons post messages the screen acts on."""

    @dataclass
    class CopyRequested(Message):
        text: str

    @dataclass
    class RunRequested(Message):
        kind: RunKind
        command: Command

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.view: StepView | None = None
        self._commands: dict[str, Command] = {}

    def show(self, view: StepView) -> None:
        self.view = view
        self._commands = {}
        self.remove_children()
        widgets = self._widgets(view)
        self.mount_all(widgets)
        if view.note is not None or view.result is not None:  # what just happened is what to read
            self.call_after_refresh(self.scroll_to_widget, widgets[-1], top=True, animate=False)
        else:
            self.scroll_home(animate=False)

    def _widgets(self, view: StepView) -> list[Widget]:
        step = view.step
        head = Text.assemble(state_token(view.state), " ", (f"Step {view.number} of {view.total}: ", "bold"))
        head.append(step.title, "bold")
        out: list[Widget] = [_text(head), _text(step.why, classes="page-why")]
        fix = step.remediation
        if fix is not None and fix.commands:
            out.append(_text("Commands", "bold underline", classes="page-heading"))
            for i, command in enumerate(fix.commands):
                out.extend(self._command(view, command))
                if i == 0 and len(fix.commands) > 1 and fix.target is Target.PYTHON_ENV:
                    out.append(_text("or, with uv:" if fix.commands[1].argv[:1] == ("uv",) else "or:", "dim"))
            out.append(_text(_flags_line(step), "yellow", classes="page-flags"))
            out.append(_text(_who_runs(view), "italic", classes="page-who"))
        if view.note is not None:
            out.append(_text(view.note, classes="page-note"))
        if view.result is not None:
            out.append(_text(view.result, classes="page-note"))
        return out

    def _command(self, view: StepView, command: Command) -> list[Widget]:
        key = f"c{len(self._commands)}"
        self._commands[key] = command
        line = Text.assemble(("$ ", "dim"), (command.display(), "bold cyan"))
        if command.note:
            line.append(f"\n  {command.note}", "dim")
        buttons = [Button("Copy", name=key, classes="copy", compact=True)]
        kind = run_kind(view, command)
        if kind is not None:
            label = _run_label(kind, view.state)
            variant: ButtonVariant = (
                "primary" if kind == "verify" else "warning"
            )  # warning: it changes things
            buttons.append(Button(label, variant, name=key, classes=kind, compact=True))
        return [_text(line, classes="page-command"), HorizontalGroup(*buttons, classes="page-buttons")]

    def on_button_pressed(self, event: Button.Pressed) -> None:
        command = self._commands.get(event.button.name or "")
        if command is None:
            return
        event.stop()
        kind = next((k for k in RUN_KINDS if event.button.has_class(k)), None)
        if kind is None:
            self.post_message(self.CopyRequested(command.display()))
        else:
            self.post_message(self.RunRequested(kind, command))


def _run_label(kind: RunKind, state: StepState) -> str:
    if kind == "pip":
        return "Run again…" if state is StepState.FAILED else "Run…"
    if kind == "terminal":
        return "Run in terminal…"
    return "Check again" if state is StepState.TODO else "Check once more"


def _flags_line(step: FixStep) -> str:
    fix = step.remediation
    if step.key == VERIFY_KEY or fix is None:
        return "changes nothing: it only reads and tests"
    where = "the Python environment" if fix.target is Target.PYTHON_ENV else "the system"
    tags = " ".join(f"[{name}]" for name in flag_words(fix))
    return f"{tags}{' · ' if tags else ''}changes {where}"


def _who_runs(view: StepView) -> str:
    step, fix = view.step, view.step.remediation
    if not view.can_apply:
        return REPLAY_LINE
    if step.key == VERIFY_KEY:
        return (
            f"{TOOL_NAME} does this here: it checks everything again, then runs the quick smoke test "
            "(a few seconds of GPU work)."
        )
    if fix is not None and fix.target is Target.PYTHON_ENV:
        if step.runnable_argv is None:
            return f"{TOOL_NAME} does not run this one itself: run it yourself, then press Next."
        return (
            f"{TOOL_NAME} runs the first command in {view.python} after you confirm (Run…); its output "
            "streams in. Or copy one and run it yourself, then press Next."
        )
    return (
        "You run this: copy it, or let gpu-doctor hand it the terminal after you confirm (Run in "
        "terminal…; sudo may ask for your password). Press Next when it is done."
    )


def _text(content: str | Text, style: str = "", classes: str = "") -> Static:
    """Data never goes through markup: a path with [brackets] stays a path."""
    return Static(content if isinstance(content, Text) else Text(content, style), classes=classes)
