"""What a smoke-test run reported, as facts: JSON round-trip exact, like every other fact section."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class SmokeMode(str, Enum):
    QUICK = "quick"  # a few seconds: init, a small memory test, pinned copies, two matmuls
    STANDARD = "standard"  # within 15 s on one GPU: every step
    DEEP = "deep"  # most of free memory, longer timings, every GPU pair


class StepStatus(str, Enum):
    OK = "ok"
    WRONG = "wrong"  # ran, but a result was wrong (bad memory, a wrong matmul, a loss that did not fall)
    ERROR = "error"  # raised: a CUDA error, out of memory, ...
    SKIPPED = "skipped"  # not supported here (bf16 before Ampere), or its GPU failed earlier
    UNFINISHED = "unfinished"  # started and never ended: the step that hung or crashed


class SmokeOutcome(str, Enum):
    COMPLETED = "completed"  # every step reported (some may have failed)
    HUNG = "hung"  # the watchdog stopped a step that overran its budget
    CRASHED = "crashed"  # the child died (a signal, or an exit) before it finished
    FAILED_TO_START = "failed_to_start"  # the interpreter did not run the smoke test at all


@dataclass(frozen=True)
class SmokeStep:
    name: str  # import, cuda_init, memory, transfer, device_copy, matmul, conv, train, peer_access, ...
    device: int | None
    variant: str | None  # h2d_pinned, fp16, "to 1", ...
    status: StepStatus
    message: str | None
    oom: bool
    duration_ms: float | None
    numbers: dict[str, float] = field(default_factory=dict)  # gbytes_per_s, tflops, mismatches, ...
    texts: dict[str, str] = field(default_factory=dict)  # link_speed_under_load, dtype, backend, ...
    flags: dict[str, bool] = field(default_factory=dict)  # correct, cuda_available, "0->1" peer access, ...

    @property
    def label(self) -> str:
        text = self.name + (f" {self.variant}" if self.variant else "")
        return text + (f" on GPU {self.device}" if self.device is not None else "")


@dataclass(frozen=True)
class SmokeDevice:
    index: int  # torch's device index (CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER apply)
    name: str
    capability: str
    total_memory_bytes: int
    free_memory_bytes: int | None
    pci_bus_id: str | None  # "0000:01:00.0", to find its PCIe link; None on torch builds that do not say
    uuid: str | None


@dataclass(frozen=True)
class UnfinishedRun:
    """A breadcrumb left by an earlier smoke test that never finished (a hang, a hard lock, a reboot)."""

    mode: str
    started_at: str  # ISO 8601 UTC
    step: str | None  # the last step it started: where it stopped
    rebooted: bool | None  # the boot id changed since: the machine went down (a hard lock or a reset)
    python: str


@dataclass(frozen=True)
class SmokeRun:
    mode: SmokeMode
    outcome: SmokeOutcome
    steps: tuple[SmokeStep, ...]
    devices: tuple[SmokeDevice, ...]
    torch_version: str | None
    torch_cuda: str | None  # torch.version.cuda (or .hip on ROCm builds)
    stopped_in: str | None  # the step that hung or crashed, as a label ("matmul fp16 on GPU 0")
    message: str  # what stopped it: the watchdog's reason, the signal, the fatal error; "" when completed
    stderr_tail: str
    duration_ms: float
    previous: UnfinishedRun | None = None

    def find(self, name: str, device: int | None = None, variant: str | None = None) -> SmokeStep | None:
        for step in self.steps:
            if step.name == name and step.device == device and (variant is None or step.variant == variant):
                return step
        return None

    def named(self, name: str) -> tuple[SmokeStep, ...]:
        return tuple(s for s in self.steps if s.name == name)
