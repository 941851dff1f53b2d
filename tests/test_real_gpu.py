"""Runs only where NVML answers (a real NVIDIA machine): the real sources must agree with each other."""

from __future__ import annotations

import sys

import pytest

from gpu_doctor.facts.model import DriverFacts, OsFacts
from gpu_doctor.host.real import RealHost
from gpu_doctor.runner import diagnose


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
