"""Where the setup wizard stands: the plan's steps, each one's state, the step shown, and what happened there.

Pure (no widgets): the screen changes it, the step list and the page draw it.
"""

from __future__ import annotations

from dataclasses import field
from enum import Enum

from rich.text import Text

from torch_gpu_doctor.fixing.plan import FixPlan, FixStep
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.report import Report


class StepState(str, Enum):
    TODO = "todo"
    OK = "ok"  # nothing was needed
    RUNNING = "running"
    DONE = "done"  # gpu-doctor ran it, or the person said they did
    SKIPPED = "skipped"
    FAILED = "failed"
    LATER = "later"  # planned once an earlier step is done (the driver for a GPU not visible yet)
    NOT_HERE = "n/a"  # does not apply to this machine (no NVIDIA GPU: no driver): never shown as OK


@dataclass
class Walk:
    python: str  # the interpreter python-env steps install into
    steps: list[FixStep]
    states: list[StepState]
    current: int = 0
    notes: dict[str, Text] = field(default_factory=dict)  # per step key: what happened there

    @classmethod
    def start(cls, plan: FixPlan) -> Walk:
        """At the first step with something to do (the last one, the verification, always has)."""
        walk = cls(plan.python, list(plan.steps), [_fresh(s) for s in plan.steps])
        first = walk.next_todo(-1)
        walk.current = 0 if first is None else first
        return walk

    @property
    def step(self) -> FixStep:
        return self.steps[self.current]

    @property
    def state(self) -> StepState:
        return self.states[self.current]

    def set(self, state: StepState, note: Text | None = None) -> None:
        self.states[self.current] = state
        if note is not None:
            self.notes[self.step.key] = note

    def next_todo(self, after: int | None = None) -> int | None:
        start = self.current if after is None else after
        return next((i for i in range(start + 1, len(self.steps)) if self.states[i] is StepState.TODO), None)

    def advance(self) -> None:
        """To the next step still to do; stays when there is none."""
        following = self.next_todo()
        if following is not None:
            self.current = following

    def back(self) -> bool:
        """To the step before the one shown, whatever its state (to read it again, or run it again);
        False at the first."""
        if self.current == 0:
            return False
        self.current -= 1
        return True

    def rebuild(self, plan: FixPlan) -> None:
        """Keep the steps walked so far; the rest comes from the plan for the machine as it is now."""
        kept = self.steps[: self.current + 1]
        keys = {s.key for s in kept}
        rest = [s for s in plan.steps if s.key not in keys]
        self.python = plan.python or self.python
        self.steps = kept + rest
        self.states = self.states[: self.current + 1] + [_fresh(s) for s in rest]


def _fresh(step: FixStep) -> StepState:
    if step.waits_for is not None:
        return StepState.LATER
    if not step.needed and not step.applies:
        return StepState.NOT_HERE
    return StepState.TODO if step.needed else StepState.OK


def status_changes(before: Report, after: Report, check_ids: tuple[str, ...]) -> str:
    """`torch.cpu_build: FAIL → PASS`, a line for each of the checks whose status changed."""
    old = {f.check_id: f.status for f in before.findings}
    new = {f.check_id: f.status for f in after.findings}
    return "\n".join(
        f"{cid}: {_word(old.get(cid))} → {_word(new.get(cid))}"
        for cid in check_ids
        if old.get(cid) is not new.get(cid)
    )


def _word(status: Status | None) -> str:
    return status.value.upper() if status is not None else "not run"
