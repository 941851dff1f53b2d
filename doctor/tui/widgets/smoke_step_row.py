"""One smoke-test step on screen: its status token, its label and message, its own bar, its time."""

from __future__ import annotations

from rich.text import Text
from textual.containers import Horizontal
from textual.widgets import ProgressBar, Static

from torch_gpu_doctor.facts.smoke import StepStatus
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.render.styles import style_of
from torch_gpu_doctor.tui.tokens import WIDTH, token

# A step's word and the check status whose colour it borrows. Out of memory warns (DESIGN: slow is not broken,
# and a full GPU is not a faulty one); a step that never ended is where a hang or a crash stopped the run.
STEP_WORDS: dict[StepStatus, tuple[str, Status]] = {
    StepStatus.OK: ("OK", Status.PASS),
    StepStatus.WRONG: ("FAIL", Status.FAIL),
    StepStatus.ERROR: ("FAIL", Status.FAIL),
    StepStatus.SKIPPED: ("SKIP", Status.SKIP),
    StepStatus.UNFINISHED: ("STOPPED", Status.FAIL),
}


def step_word(status: StepStatus, oom: bool = False) -> tuple[str, Status]:
    return ("OOM", Status.WARN) if oom and status is StepStatus.ERROR else STEP_WORDS[status]


def step_token(status: StepStatus | None, oom: bool = False) -> Text:
    """The padded token for a step; None is a step still running."""
    if status is None:
        return token(None)
    word, colour = step_word(status, oom)
    return Text(f"{word:<{WIDTH}}", style_of(colour))


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
