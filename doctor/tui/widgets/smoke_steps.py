"""The smoke test's steps as they run: a row each with a status token, a progress bar and the step's time.

A long step (memory, matmuls, training) says how far it is, and its bar fills; a short one pulses until it
ends. An ended bar is full, coloured by how the step ended, and the child's message follows a failed step.
"""

from __future__ import annotations

from collections import Counter

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from torch_gpu_doctor.facts.smoke import SmokeOutcome, SmokeRun, StepStatus
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.render.styles import style_of
from torch_gpu_doctor.tui.widgets.smoke_step_row import StepRow, StepState, step_token, step_word

OUTCOME_WORDS = {
    SmokeOutcome.COMPLETED: "Finished",
    SmokeOutcome.HUNG: "Stopped by the watchdog",
    SmokeOutcome.CRASHED: "Crashed",
    SmokeOutcome.FAILED_TO_START: "Did not start",
}


def run_tally(run: SmokeRun) -> Text:
    """How the run ended, and its steps counted by word: "Finished after 8.1 s: 13 OK · 1 FAIL"."""
    counts: Counter[tuple[str, Status]] = Counter(step_word(s.status, s.oom) for s in run.steps)
    text = Text(f"{OUTCOME_WORDS[run.outcome]} after {run.duration_ms / 1000:.1f} s", "bold")
    for i, ((word, colour), n) in enumerate(counts.items()):
        text.append(": " if i == 0 else " · ")
        text.append(f"{n} {word}", style_of(colour))
    return text


class SmokeSteps(VerticalScroll):
    """A live list keyed by step label ("matmul fp16 on GPU 0"), in the order the steps started."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.states: dict[str, StepState] = {}
        self.rows: dict[str, StepRow] = {}

    def reset(self) -> None:
        self.states.clear()
        self.rows.clear()
        self.remove_children()

    def show_step(self, label: str, state: StepState) -> None:
        self.states[label] = state
        row = self.rows.get(label)
        if row is None:
            row = self.rows[label] = StepRow()
            self.mount(row)
            self.scroll_end(animate=False)
        row.show(step_token(state.status, state.oom), self.label_text(label), state)

    def note(self, text: str) -> None:
        self.mount(Static(Text(text, "dim")))

    def settle(self, run: SmokeRun) -> None:
        """Every step as the finished run recorded it: OOM marked, and the step a hang or crash stopped in."""
        for step in run.steps:
            message = run.message if step.status is StepStatus.UNFINISHED and run.message else step.message
            self.show_step(
                step.label, StepState(step.status, message, step.oom, duration_ms=step.duration_ms)
            )

    def line(self, label: str) -> Text:
        """The row's words as one line: its token, then its label and message."""
        state = self.states[label]
        return Text.assemble(step_token(state.status, state.oom), " ", self.label_text(label))

    def label_text(self, label: str) -> Text:
        state = self.states[label]
        if state.status is None:
            return Text(f"{label}…", "italic")
        text = Text(label)
        if state.message and state.status is not StepStatus.OK:
            text.append(f": {state.message}", "dim" if state.status is StepStatus.SKIPPED else "")
        return text
