"""What a smoke-test run reported, as facts: JSON round-trip exact, like every other fact section."""

from __future__ import annotations

import json
import re
import signal
from dataclasses import field
from enum import Enum
from typing import Any

from torch_gpu_doctor.host.base import CommandStatus, StreamedRun
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Reason, Unavailable


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
    error: str | None = None  # why this GPU could not be used (its context or memory query failed)


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


# --- the smoke child's JSON lines -> SmokeRun: pure, the same lines give the same run, live or replayed

PROTOCOL = 1
STDERR_TAIL_LINES = 15


def _items(lines: tuple[str, ...]) -> list[dict[str, Any]]:
    items = []
    for line in lines:
        try:
            item = json.loads(line)
        except ValueError:
            continue  # a library printed to stdout: not ours
        if isinstance(item, dict) and isinstance(item.get("event"), str):
            items.append(item)
    return items


def _opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _step(start: dict[str, Any], end: dict[str, Any] | None) -> SmokeStep:
    numbers: dict[str, float] = {}
    texts: dict[str, str] = {}
    flags: dict[str, bool] = {}
    values = end.get("values") if end else None
    for key, value in (values if isinstance(values, dict) else {}).items():
        if isinstance(value, bool):
            flags[str(key)] = value
        elif isinstance(value, int | float):
            numbers[str(key)] = float(value)
        elif isinstance(value, str):
            texts[str(key)] = value
    try:
        status = StepStatus(end.get("status")) if end else StepStatus.UNFINISHED
    except ValueError:
        status = StepStatus.ERROR
    duration = end.get("duration_ms") if end else None
    return SmokeStep(
        name=str(start.get("step")),
        device=_opt_int(start.get("device")),
        variant=_opt_str(start.get("variant")),
        status=status,
        message=_opt_str(end.get("message")) if end else None,
        oom=bool(end.get("oom")) or bool(flags.get("oom")) if end else False,
        duration_ms=float(duration) if isinstance(duration, int | float) else None,
        numbers=numbers,
        texts=texts,
        flags=flags,
    )


def _device(item: dict[str, Any]) -> SmokeDevice | None:
    index, total = _opt_int(item.get("index")), _opt_int(item.get("total_memory_bytes"))
    name, capability = _opt_str(item.get("name")), _opt_str(item.get("capability"))
    error = _opt_str(item.get("error"))
    if index is None or (error is None and (total is None or name is None or capability is None)):
        return None
    return SmokeDevice(
        index=index,
        name=name or f"GPU {index}",  # a GPU whose properties could not be read is named by its index
        capability=capability or "unknown",
        total_memory_bytes=total or 0,
        free_memory_bytes=_opt_int(item.get("free_memory_bytes")),
        pci_bus_id=_opt_str(item.get("pci_bus_id")),
        uuid=_nvml_uuid(_opt_str(item.get("uuid"))),
        error=error,
    )


def _nvml_uuid(text: str | None) -> str | None:
    """As NVML writes it: torch's str(props.uuid) lacks the "GPU-" prefix (recordings before the child added it)."""
    if text is not None and re.fullmatch(r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}", text):
        return "GPU-" + text
    return text


def _signal_name(returncode: int) -> str:
    try:
        return f"{signal.Signals(-returncode).name} (signal {-returncode})"
    except ValueError:
        return f"signal {-returncode}"


def _tail(text: str) -> str:
    return "\n".join(text.strip().splitlines()[-STDERR_TAIL_LINES:])


def parse_smoke(
    run: StreamedRun, mode: SmokeMode, previous: UnfinishedRun | None = None
) -> SmokeRun | Unavailable:
    if run.status is CommandStatus.NOT_RECORDED:
        return Unavailable(Reason.NOT_RECORDED, run.stderr)
    items = _items(run.lines)
    steps: list[SmokeStep] = []
    devices: list[SmokeDevice] = []
    open_start: dict[str, Any] | None = None
    hello = done = False
    fatal = ""
    torch_version = torch_cuda = None
    for item in items:
        event = item["event"]
        if event == "hello":
            hello = item.get("protocol") == PROTOCOL
        elif event == "start":
            if open_start is not None:  # a start without an end: keep it as unfinished
                steps.append(_step(open_start, None))
            open_start = item
        elif event == "end" and open_start is not None:
            step = _step(open_start, item)
            steps.append(step)
            open_start = None
            if step.name == "import":
                torch_version = step.texts.get("version")
                torch_cuda = step.texts.get("cuda") or step.texts.get("hip")
        elif event == "device":
            device = _device(item)
            if device is not None:
                devices.append(device)
        elif event == "done":
            done = True
        elif event == "fatal":
            fatal = str(item.get("message", ""))
    stopped_in = None
    if open_start is not None:
        unfinished = _step(open_start, None)
        steps.append(unfinished)
        stopped_in = unfinished.label
    if run.watchdog is not None:
        outcome, message = SmokeOutcome.HUNG, run.watchdog
    elif not hello:
        outcome = SmokeOutcome.FAILED_TO_START
        last = _tail(run.stderr).splitlines()
        message = last[-1] if last else f"{run.argv[0]}: {run.status.value} (exit {run.returncode})"
        if run.lines and not last:
            message = f"it printed {run.lines[0][:120]!r} instead of the smoke-test protocol"
    elif done and run.returncode == 0:
        outcome, message = SmokeOutcome.COMPLETED, ""
    elif run.returncode is not None and run.returncode < 0:
        outcome, message = SmokeOutcome.CRASHED, f"killed by {_signal_name(run.returncode)}"
    else:
        outcome = SmokeOutcome.CRASHED
        message = fatal or f"exited with code {run.returncode} before it finished"
    return SmokeRun(
        mode=mode,
        outcome=outcome,
        steps=tuple(steps),
        devices=tuple(devices),
        torch_version=torch_version,
        torch_cuda=torch_cuda,
        stopped_in=stopped_in,
        message=message,
        stderr_tail=_tail(run.stderr),
        duration_ms=run.duration_ms,
        previous=previous,
    )
