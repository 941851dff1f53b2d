"""Smoke-test runs written as the child prints them (doctor/probes/smoke.py's protocol), for parser and check
tests that need no torch. Figures are from real machines' typical results where a test depends on them."""

from __future__ import annotations

import json
from typing import Any

from torch_gpu_doctor.host.base import CommandStatus, StreamedRun

H100 = {
    "name": "NVIDIA H100 80GB HBM3",
    "capability": "9.0",
    "total_memory_bytes": 85045477376,
    "free_memory_bytes": 84490387456,
    "pci_bus_id": "0000:19:00.0",
    "uuid": "GPU-0b0e",
}


def start(step: str, device: int | None = None, variant: str | None = None) -> dict[str, Any]:
    return {"event": "start", "step": step, "device": device, "variant": variant}


def end(
    step: str,
    device: int | None = None,
    variant: str | None = None,
    status: str = "ok",
    message: str | None = None,
    oom: bool = False,
    **values: Any,
) -> dict[str, Any]:
    return {
        "event": "end",
        "step": step,
        "device": device,
        "variant": variant,
        "status": status,
        "message": message,
        "oom": oom,
        "values": values,
        "duration_ms": 12.5,
    }


def progress(step: str, device: int | None, variant: str | None, done: float) -> dict[str, Any]:
    """A long step saying how far it is (the child sends at most ten a second)."""
    return {"event": "progress", "step": step, "device": device, "variant": variant, "done": done}


def step(name: str, device: int | None = None, variant: str | None = None, **kw: Any) -> list[dict[str, Any]]:
    return [start(name, device, variant), end(name, device, variant, **kw)]


def gpu_steps(
    device: int = 0, h2d: float = 52.1, tflops_fp16: float = 610.0, **over: Any
) -> list[dict[str, Any]]:
    """One GPU's standard-mode steps, all healthy (an H100 SXM5 on a Gen5 x16 host link)."""
    items = step("memory", device, tested_bytes=42245193728, mismatches=0, first_bad_offset=None)
    items += step(
        "transfer",
        device,
        "h2d_pinned",
        gbytes_per_s=h2d,
        bytes=268435456,
        copies=10,
        link_speed_under_load=over.pop("speed", "32.0 GT/s PCIe"),
        link_width_under_load="16",
        link_samples=40,
    )
    items += step("transfer", device, "d2h_pinned", gbytes_per_s=53.0)
    items += step("transfer", device, "h2d_pageable", gbytes_per_s=19.0)
    items += step("transfer", device, "d2h_pageable", gbytes_per_s=21.0)
    items += step("device_copy", device, gbytes_per_s=2650.0)
    for precision, tflops in (("fp32", 51.0), ("tf32", 360.0), ("fp16", tflops_fp16), ("bf16", 640.0)):
        items += step(
            "matmul", device, precision, n=8192, tflops=tflops, worst_error_ratio=0.02, correct=True
        )
    items += step("conv", device, forward_error=2e-4, backward_error=3e-4, cudnn_version=91002)
    items += step("train", device, steps=30, dtype="bfloat16", first_loss=60.1, last_loss=1.2)
    return items


def header(devices: list[dict[str, Any]]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"event": "hello", "protocol": 1, "mode": "standard", "pid": 4242}]
    items += step("import", version="2.9.1+cu128", cuda="12.8", hip=None)
    items.append(start("cuda_init"))
    items += [{"event": "device", "index": i, **d} for i, d in enumerate(devices)]
    items.append(end("cuda_init", cuda_available=True, device_count=len(devices)))
    return items


def streamed(
    items: list[dict[str, Any]],
    returncode: int = 0,
    watchdog: str | None = None,
    stderr: str = "",
    extra: list[str] | None = None,
) -> StreamedRun:
    lines = tuple(json.dumps(i) for i in items) + tuple(extra or ())
    status = (
        CommandStatus.TIMED_OUT
        if watchdog
        else CommandStatus.OK
        if returncode == 0
        else CommandStatus.NONZERO
    )
    return StreamedRun(("python", "<probe:smoke>", "{}"), status, returncode, lines, stderr, watchdog, 8123.0)


def healthy_h100() -> StreamedRun:
    return streamed(header([H100]) + gpu_steps() + [{"event": "done"}])
