"""Runs only where NVML answers (a real NVIDIA machine): the real sources must agree with each other."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from torch_gpu_doctor.facts.driver import DriverFacts
from torch_gpu_doctor.facts.platform import OsFacts
from torch_gpu_doctor.facts.smoke import SmokeMode, SmokeOutcome, SmokeRun, StepStatus
from torch_gpu_doctor.host.real import RealHost
from torch_gpu_doctor.runner import diagnose
from torch_gpu_doctor.smoke.run import SmokeRequest


@pytest.mark.gpu
def test_real_machine_sources_agree() -> None:
    report = diagnose(RealHost(), sys.executable, plugins=False)
    facts = report.facts
    statuses = {f.check_id: f.status.value for f in report.findings}
    assert statuses["driver.nvml"] == "pass"
    assert statuses["gpu.present"] == "pass"
    assert isinstance(facts.driver, DriverFacts)
    versions = {r.source: r.version for r in facts.driver.readings if isinstance(r.version, str)}
    assert len(set(versions.values())) == 1, versions  # NVML, sysfs and procfs name the same driver
    wsl = isinstance(facts.os, OsFacts) and facts.os.is_wsl
    for gpu in facts.nvidia_gpus:
        assert gpu.nvml_index is not None
        assert isinstance(gpu.compute_capability, str)
        assert gpu.on_pci_bus or wsl


@pytest.mark.gpu
def test_real_smoke_test_passes_on_a_working_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The standard smoke test on the real GPU: $GPU_DOCTOR_TORCH_PYTHON names an interpreter with CUDA torch."""
    python = os.environ.get("GPU_DOCTOR_TORCH_PYTHON", sys.executable)
    probe = subprocess.run(
        [python, "-c", "import torch; print(torch.cuda.is_available())"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if probe.stdout.strip() != "True":
        pytest.skip(f"{python} has no CUDA torch (set GPU_DOCTOR_TORCH_PYTHON)")
    monkeypatch.setenv("GPU_DOCTOR_STATE_DIR", str(tmp_path))
    report = diagnose(
        RealHost(),
        python,
        only=("smoke.run", "smoke.matmul", "smoke.gpu_memory", "smoke.transfer"),
        plugins=False,
        smoke=SmokeRequest(SmokeMode.STANDARD),
    )
    run = report.facts.smoke
    assert isinstance(run, SmokeRun) and run.outcome is SmokeOutcome.COMPLETED, run
    bad = [(s.label, s.message) for s in run.steps if s.status not in (StepStatus.OK, StepStatus.SKIPPED)]
    assert not bad
    statuses = {f.check_id: f.status.value for f in report.findings}
    # smoke.transfer too: on the first real GPU (an H200, 2026-11-26) copies timed right after the memory step
    # read half the link and warned on a healthy machine
    assert statuses == {
        "smoke.run": "pass",
        "smoke.matmul": "pass",
        "smoke.gpu_memory": "pass",
        "smoke.transfer": "pass",
    }, [(f.check_id, f.summary) for f in report.findings]
    keys = {f.key for f in report.smoke_figures}
    assert {"h2d_pinned", "d2h_pinned", "device_copy", "matmul_fp32"} <= keys
