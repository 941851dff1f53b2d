"""One check in full: its findings, the fix with its flags and buttons, the evidence, and the explanation."""

from __future__ import annotations

from rich.text import Text
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Static

from torch_gpu_doctor.model import (
    CheckSpec,
    Command,
    Finding,
    Remediation,
    Target,
    escape_controls,
    flag_words,
)
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.tui.explanation import explanation_text
from torch_gpu_doctor.tui.fix_text import runs_in_terminal
from torch_gpu_doctor.tui.tokens import token, worst


@dataclass(frozen=True)
class Shown:
    """What the pane shows: a check, its findings, and what may be run from here."""

    check_id: str
    spec: CheckSpec | None
    findings: tuple[Finding, ...]
    runnable: tuple[str, ...] | None = None  # the one python-env command gpu-doctor may run, if any
    can_run_system: bool = False  # system commands may be handed the terminal (not in a replay)


class DetailPane(VerticalScroll):
    """Rebuilt for each check the cursor lands on; buttons post messages the screen acts on."""

    @dataclass
    class CopyRequested(Message):
        text: str

    @dataclass
    class FixRequested(Message):
        check_id: str
        command: Command | None  # None: the python-env command gpu-doctor runs itself

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.shown: Shown | None = None
        self._commands: dict[str, Command] = {}

    def show(self, shown: Shown | None) -> None:
        self.shown = shown
        self._commands = {}
        self.remove_children()
        self.mount_all(self._widgets(shown) if shown else [_text("Choose a check on the left.", "dim")])
        self.scroll_home(animate=False)

    def _widgets(self, shown: Shown) -> list[Widget]:
        status = worst([f.status for f in shown.findings])
        head = Text.assemble(token(status), " ", (shown.check_id, "bold"))
        out: list[Widget] = [_text(head, classes="title")]
        if shown.spec is not None:
            out.append(_text(shown.spec.title, "italic"))
        if not shown.findings:
            out.append(_text("Running…", "dim"))
        for finding in shown.findings:
            if len(shown.findings) > 1:
                out.append(_text(Text.assemble(token(finding.status), " ", finding.summary)))
            else:
                out.append(_text(finding.summary, "bold", classes="summary"))
            if finding.details:
                out.append(_text(finding.details, classes="details"))
            if finding.caused_by:  # a symptom: its cause's fix comes first (checks/support/causes.json)
                causes = ", ".join(finding.caused_by)
                out.append(_text(f"Caused by {causes}: fix that first.", "bold", classes="cause"))
        fixes = dict.fromkeys(f.remediation for f in shown.findings if f.remediation is not None)
        for fix in fixes:
            out.extend(self._fix(fix, shown))
        evidence = [e for f in shown.findings for e in f.evidence]
        if evidence:
            out.append(_text("Evidence", "bold underline", classes="heading"))
            lines = Text()
            for e in evidence:
                lines.append(f"· {e.label}: ", "bold")
                lines.append(e.value)
                lines.append(f"  ({e.source})\n", "dim")
            lines.rstrip()
            out.append(_text(lines, classes="evidence"))
        crashed = [f.traceback for f in shown.findings if f.traceback]
        if crashed:
            out.append(
                _text("Traceback (please report it with a bundle)", "bold underline", classes="heading")
            )
            out.append(_text(crashed[0], "dim"))
        if shown.spec is not None:
            out.append(_text(explanation_text(shown.spec.explanation), classes="explanation"))
        return out

    def _fix(self, fix: Remediation, shown: Shown) -> list[Widget]:
        where = "the system" if fix.target is Target.SYSTEM else "the Python environment"
        out: list[Widget] = [
            _text("Fix", "bold underline", classes="heading"),
            _text(fix.text, classes="fix-text"),
        ]
        for i, command in enumerate(fix.commands):
            key = f"c{len(self._commands)}"
            self._commands[key] = command
            buttons = [Button("Copy", id=f"copy-{key}", compact=True, classes="copy")]
            if shown.runnable is not None and command.argv == shown.runnable:
                buttons.append(Button("Run…", id=f"run-{key}", compact=True, variant="primary"))
            elif fix.target is Target.SYSTEM and shown.can_run_system and runs_in_terminal(command):
                buttons.append(Button("Run in terminal…", id=f"term-{key}", compact=True, variant="warning"))
            # shown with its control characters escaped (a path from a capture may hold any byte); Copy and Run
            # use the command itself
            line = Text.assemble(("$ ", "dim"), (escape_controls(command.display()), "bold cyan"))
            if command.note:
                line.append(f"\n  {escape_controls(command.note)}", "dim")
            out.append(_text(line, classes="command"))
            out.append(Horizontal(*buttons, classes="command-buttons"))
            if i == 0 and len(fix.commands) > 1 and fix.target is Target.PYTHON_ENV:
                out.append(_text("or:", "dim"))
        tags = " ".join(f"[{name}]" for name in flag_words(fix))
        out.append(_text(f"{tags}{' · ' if tags else ''}changes {where}", "dim", classes="flags"))
        return out

    def focus_first_run(self) -> None:
        buttons = [b for b in self.query(Button) if (b.id or "").startswith(("run-", "term-"))]
        if buttons:
            buttons[0].focus()
            buttons[0].scroll_visible()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        kind, _, key = (event.button.id or "").partition("-")
        command = self._commands.get(key)
        if command is None or self.shown is None:
            return
        event.stop()
        if kind == "copy":
            self.post_message(self.CopyRequested(command.display()))
        elif kind == "run":
            self.post_message(self.FixRequested(self.shown.check_id, None))
        elif kind == "term":
            self.post_message(self.FixRequested(self.shown.check_id, command))


def _text(content: str | Text, style: str = "", classes: str = "") -> Static:
    """Data never goes through markup: a path with [brackets] stays a path."""
    text = content if isinstance(content, Text) else Text(content, style)
    return Static(text, classes=classes)
