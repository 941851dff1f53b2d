"""Run the smoke test through the Host: skip it when there is no torch, keep the breadcrumb, report progress."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Callable, Sequence

from torch_gpu_doctor.facts.smoke import SmokeMode, SmokeRun, StepStatus, UnfinishedRun, parse_smoke
from torch_gpu_doctor.facts.torch import TorchPackages
from torch_gpu_doctor.host.base import Host, StepBudgets
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.smoke.breadcrumb import Breadcrumb
from torch_gpu_doctor.smoke.plan import SIZES, GpuAddress, budgets, child_config, steps_per_gpu
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable


@dataclass(frozen=True)
class SmokeProgress:
    """One line of progress: a step started (status None), got further (`done` set), or ended."""

    label: str
    ended: int  # steps ended so far
    expected: int  # steps this run should have; a progress bar's length (a guess until cuda_init is done)
    status: StepStatus | None
    message: str | None
    done: float | None = None  # part of a running step done, 0..1, when the step says (long steps do)
    duration_ms: float | None = None  # an ended step's own time


@dataclass(frozen=True)
class SmokeRequest:
    mode: SmokeMode
    breadcrumb: Breadcrumb | None = None  # None: do not leave one (a replay, or a read-only state folder)
    previous: UnfinishedRun | None = None  # what the breadcrumb said before this run started
    on_progress: Callable[[SmokeProgress], None] | None = None
    budgets: StepBudgets | None = None  # None: the mode's (smoke/plan.py)


def expected_steps(mode: SmokeMode, gpus: int) -> int:
    """import + cuda_init + the steps per GPU + with 2 or more GPUs: peer access, the copies, the all-reduce."""
    count = 2 + steps_per_gpu(mode) * max(gpus, 1)
    if gpus >= 2:
        pairs = gpus * (gpus - 1) if SIZES[mode]["all_pairs"] else gpus
        count += 2 + pairs
    return count


class _Progress:
    def __init__(self, request: SmokeRequest, gpus: int) -> None:
        self.request = request
        self.ended = 0
        self.expected = expected_steps(request.mode, gpus)

    def __call__(self, line: str) -> None:
        try:
            item = json.loads(line)
        except ValueError:
            return
        if not isinstance(item, dict):
            return
        event = item.get("event")
        if event == "end" and item.get("step") == "cuda_init":
            values = item.get("values")
            count = values.get("device_count") if isinstance(values, dict) else None
            if item.get("status") != "ok":
                self.expected = 3  # import, cuda_init, and the CPU matmul instead
            elif isinstance(count, int) and not isinstance(count, bool):
                self.expected = expected_steps(self.request.mode, count)
        if event == "progress":
            self._step_progress(item)
        if event not in ("start", "end"):
            return
        label = _label(item)
        status = None
        if event == "end":
            self.ended += 1
            with contextlib.suppress(ValueError):
                status = StepStatus(item.get("status"))
        elif self.request.breadcrumb is not None:
            with contextlib.suppress(OSError):
                self.request.breadcrumb.step(label)
        if self.request.on_progress is not None:
            message = item.get("message") if isinstance(item.get("message"), str) else None
            took = item.get("duration_ms")
            duration = float(took) if isinstance(took, int | float) and not isinstance(took, bool) else None
            self.request.on_progress(
                SmokeProgress(label, self.ended, self.expected, status, message, duration_ms=duration)
            )

    def _step_progress(self, item: dict[str, object]) -> None:
        done = item.get("done")
        if self.request.on_progress is None or not isinstance(done, int | float) or isinstance(done, bool):
            return
        if 0.0 <= done <= 1.0:  # NaN and nonsense from a confused child are dropped
            fraction = float(done)
            self.request.on_progress(
                SmokeProgress(_label(item), self.ended, self.expected, None, None, done=fraction)
            )


def _label(item: dict[str, object]) -> str:
    text = str(item.get("step"))
    if isinstance(item.get("variant"), str):
        text += f" {item['variant']}"
    if isinstance(item.get("device"), int):
        text += f" on GPU {item['device']}"
    return text


def gather_smoke(
    host: Host,
    python: str,
    request: SmokeRequest,
    packages: Maybe[TorchPackages],
    gpus: int,
    addresses: Sequence[GpuAddress] = (),
) -> Maybe[SmokeRun]:
    """The smoke test's run, or why it could not run. `gpus`: how many GPUs the machine shows (for budgets);
    `addresses`: NVML's NVIDIA GPUs, so a torch without PCI fields in its device properties finds their links."""
    if isinstance(packages, TorchPackages) and packages.version is None:
        return Unavailable(Reason.NOT_FOUND, f"torch is not installed for {python}")
    crumb = request.breadcrumb
    if crumb is not None:
        try:
            crumb.start(request.mode.value, python)
        except OSError:  # a read-only home: run anyway, without hard-lock detection
            crumb = None
    progress = _Progress(dataclasses.replace(request, breadcrumb=crumb), gpus)
    limits = request.budgets or budgets(request.mode, gpus)
    try:
        step_file = str(crumb.step_path) if crumb is not None else None
        run = host.run_smoke(python, child_config(request.mode, addresses, step_file), limits, progress)
    finally:
        if crumb is not None:
            crumb.clear()
    return parse_smoke(run, request.mode, request.previous)
