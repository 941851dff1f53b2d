"""What a finished smoke test found: its verdicts, and every figure it measured beside what this GPU should reach."""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from torch_gpu_doctor.model import Figure, Finding, Status
from torch_gpu_doctor.tui.tokens import token

COLUMNS = ("What", "GPU", "Measured", "Expected", "Verdict")
NO_REFERENCE = "no reference"
# Shown whatever their status: the run's own verdict says what happened (or why nothing ran).
HEADLINE = "smoke.run"


def figure_number(value: float) -> str:
    """3 significant figures below 100 (24.6 GB/s, 0.52), whole numbers above (1008 GB/s)."""
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def figure_cells(figure: Figure) -> tuple[Text, Text, Text, Text, Text]:
    gpu = "all" if figure.device is None else str(figure.device)
    measured = f"{figure_number(figure.value)} {figure.unit}"
    expected = (
        f"≥ {figure_number(figure.expected_min)} {figure.unit}"
        if figure.expected_min is not None
        else NO_REFERENCE
    )
    return (
        Text(figure.label),
        Text(gpu, justify="right"),
        Text(measured, justify="right"),
        Text(expected, "dim" if figure.expected_min is None else ""),
        token(figure.status),
    )


def figure_note(figure: Figure) -> Text:
    """The highlighted figure in a sentence, and where its expectation comes from (or why there is none)."""
    where = "Expected from" if figure.expected_min is not None else NO_REFERENCE.capitalize()
    return Text.assemble(figure.sentence, "\n", (f"{where}: {figure.expectation}", "dim"))


def findings_text(findings: Iterable[Finding]) -> Text:
    """The run's headline, then every smoke verdict that is not a plain pass or skip, with its fix command.

    Checks that say the same thing (after a hang: "stopped before this step") share one line, named by id."""
    groups: dict[tuple[Status, str, str], list[str]] = {}
    for finding in findings:
        if finding.check_id != HEADLINE and finding.status in (Status.PASS, Status.SKIP):
            continue
        fix = finding.remediation
        command = fix.commands[0].display() if fix is not None and fix.commands else ""
        groups.setdefault((finding.status, finding.summary, command), []).append(finding.check_id)
    text = Text()
    for (status, summary, command), check_ids in groups.items():
        if text:
            text.append("\n")
        text.append_text(token(status))
        text.append(" ")
        if HEADLINE in check_ids:
            text.append(summary, "bold")
        else:
            text.append(f"{', '.join(check_ids)}: ", "dim")
            text.append(summary)
        if command:
            text.append("\n        $ ", "dim")
            text.append(command, "bold cyan")
    return text


class SmokeResults(Vertical):
    """Filled once per finished run by `show()`; the note under the table explains the highlighted figure."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.figures: tuple[Figure, ...] = ()

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="smoke-findings"):
            yield Static(
                Text("The results appear here when the smoke test ends.", "dim"), id="smoke-verdicts"
            )
        table: DataTable[Text] = DataTable(id="smoke-figures", cursor_type="row", zebra_stripes=True)
        table.add_columns(*COLUMNS)
        table.display = False
        yield table
        yield Static(id="smoke-figure-note")

    def show(self, figures: tuple[Figure, ...], findings: Iterable[Finding]) -> None:
        self.figures = figures
        self.query_one("#smoke-verdicts", Static).update(findings_text(findings))
        table: DataTable[Text] = self.query_one("#smoke-figures", DataTable)
        table.clear()
        for i, figure in enumerate(figures):
            table.add_row(*figure_cells(figure), key=str(i))
        table.display = bool(figures)
        note = self.query_one("#smoke-figure-note", Static)
        if figures:
            table.move_cursor(row=0)
            note.update(figure_note(figures[0]))
        else:
            note.update(Text("No figures: the smoke test measured nothing on a GPU.", "dim"))

    def clear_results(self) -> None:
        self.figures = ()
        self.query_one("#smoke-verdicts", Static).update(Text("Running…", "dim"))
        table: DataTable[Text] = self.query_one("#smoke-figures", DataTable)
        table.clear()
        table.display = False
        self.query_one("#smoke-figure-note", Static).update("")

    @on(DataTable.RowHighlighted, "#smoke-figures")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        index = event.cursor_row
        if 0 <= index < len(self.figures):
            self.query_one("#smoke-figure-note", Static).update(figure_note(self.figures[index]))
