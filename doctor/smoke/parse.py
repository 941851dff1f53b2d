"""The smoke child's JSON lines → SmokeRun. Pure: the same lines give the same run, live or replayed."""

from __future__ import annotations

import json
import signal
from typing import Any

from torch_gpu_doctor.host.base import CommandStatus
from torch_gpu_doctor.host.streaming import StreamedRun
from torch_gpu_doctor.smoke.model import (
    SmokeDevice,
    SmokeMode,
    SmokeOutcome,
    SmokeRun,
    SmokeStep,
    StepStatus,
    UnfinishedRun,
)
from torch_gpu_doctor.unavailable import Reason, Unavailable

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
    if index is None or total is None or name is None or capability is None:
        return None
    return SmokeDevice(
        index=index,
        name=name,
        capability=capability,
        total_memory_bytes=total,
        free_memory_bytes=_opt_int(item.get("free_memory_bytes")),
        pci_bus_id=_opt_str(item.get("pci_bus_id")),
        uuid=_opt_str(item.get("uuid")),
    )


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
