"""The smoke test's steps as they run: a row each with a status token, a progress bar and the step's time.

A long step (memory, matmuls, training) says how far it is, and its bar fills; a short one pulses until it
ends. An ended bar is full, coloured by how the step ended, and the child's message follows a failed step.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from rich.text import Text
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import ProgressBar, Static

from gpu_doctor.model import Status
from gpu_doctor.render.styles import STYLES
from gpu_doctor.smoke.model import SmokeOutcome, SmokeRun, StepStatus
from gpu_doctor.tui.tokens import WIDTH, token

# A step's word and the check status whose colour it borrows. Out of memory warns (DESIGN: slow is not broken,
# and a full GPU is not a faulty one); a step that never ended is where a hang or a crash stopped the run.
STEP_WORDS: dict[StepStatus, tuple[str, Status]] = {
    StepStatus.OK: ("OK", Status.PASS),
    StepStatus.WRONG: ("FAIL", Status.FAIL),
    StepStatus.ERROR: ("FAIL", Status.FAIL),
    StepStatus.SKIPPED: ("SKIP", Status.SKIP),
    StepStatus.UNFINISHED: ("STOPPED", Status.FAIL),
}
OUTCOME_WORDS = {
    SmokeOutcome.COMPLETED: "Finished",
    SmokeOutcome.HUNG: "Stopped by the watchdog",
    SmokeOutcome.CRASHED: "Crashed",
    SmokeOutcome.FAILED_TO_START: "Did not start",
}


def step_word(status: StepStatus, oom: bool = False) -> tuple[str, Status]:
    return ("OOM", Status.WARN) if oom and status is StepStatus.ERROR else STEP_WORDS[status]


def step_token(status: StepStatus | None, oom: bool = False) -> Text:
    """The padded token for a step; None is a step still running."""
    if status is None:
        return token(None)
    word, colour = step_word(status, oom)
    return Text(f"{word:<{WIDTH}}", STYLES[colour])


def run_tally(run: SmokeRun) -> Text:
    """How the run ended, and its steps counted by word: "Finished after 8.1 s: 13 OK · 1 FAIL"."""
    counts: Counter[tuple[str, Status]] = Counter(step_word(s.status, s.oom) for s in run.steps)
    text = Text(f"{OUTCOME_WORDS[run.outcome]} after {run.duration_ms / 1000:.1f} s", "bold")
    for i, ((word, colour), n) in enumerate(counts.items()):
        text.append(": " if i == 0 else " · ")
        text.append(f"{n} {word}", STYLES[colour])
    return text


@dataclass(frozen=True)
class StepState:
    status: StepStatus | None  # None: running
    message: str | None = None
    oom: bool = False
    done: float | None = None  # a running step's part done, when it says
    duration_ms: float | None = None  # an ended step's time


BAR_STEPS = 100  # a step's bar counts percent
ENDED_CLASSES = {Status.PASS: "-ok", Status.FAIL: "-failed", Status.WARN: "-warned", Status.SKIP: "-skipped"}


def duration_text(ms: float | None) -> str:
    if ms is None:
        return ""
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


class StepRow(Horizontal):
    """One step: its token; its label and message (wrapping under the label, not the token); its own bar;
    its time once it ended."""

    def __init__(self) -> None:
        self.token = Static("", classes="step-token")
        self.text = Static("", classes="step-text")
        self.bar = ProgressBar(total=None, show_eta=False, show_percentage=False, classes="step-bar")
        self.time = Static("", classes="step-time")
        super().__init__(self.token, self.text, self.bar, self.time, classes="smoke-step")

    def show(self, token_text: Text, text: Text, state: StepState) -> None:
        self.token.update(token_text)
        self.text.update(text)
        self.remove_class(*ENDED_CLASSES.values())
        if state.status is not None:
            self.bar.update(total=BAR_STEPS, progress=BAR_STEPS)
            self.add_class(ENDED_CLASSES[step_word(state.status, state.oom)[1]])
            self.time.update(duration_text(state.duration_ms))
        elif state.done is not None:
            self.bar.update(total=BAR_STEPS, progress=round(state.done * BAR_STEPS))
        else:
            self.bar.update(total=None)  # no word from the step yet: the bar pulses


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
