"""NVML's Unknown Error in a container the paste shows being started, with no word that it worked before: the
toolkit's setup of new containers (no-cgroups, CDI, SELinux), not the daemon-reload that takes the GPUs from a
container that ran for days. Each on its real paste (tests/triage/pastes, MANIFEST.json)."""

from __future__ import annotations

import pytest

from tests.triage.corpus_helpers import cause_of, diagnosed

FRESH = (
    "nvidia-ctk-115-fresh-container-nvml-unknown-error.txt",
    "nvidia-docker-1171-rhel7-fresh-container-nvml-unknown-error.txt",
    "bluefin-3883-docker-nvml-unknown-error.txt",
)
# containers that worked, then lost the GPUs: a daemon-reload named, or days of running
WORKED_BEFORE = (
    "nvidia-docker-1671-nvml-unknown-error-container.txt",
    "nvidia-docker-1678-nvml-unknown-error-container-loses-gpu.txt",
    "e10_gpuoperator_nvml_unknown.txt",
)


@pytest.mark.parametrize("name", FRESH)
def test_a_container_started_just_now_is_the_toolkits_setup(name: str) -> None:
    check, summary, first = cause_of(diagnosed(name))
    assert check == "driver.nvml" and summary.startswith("A container started just now (line ")
    assert first == "grep -n no-cgroups /etc/nvidia-container-runtime/config.toml"


@pytest.mark.parametrize("name", WORKED_BEFORE)
def test_a_container_that_worked_before_keeps_the_daemon_reload_reading(name: str) -> None:
    d = diagnosed(name)
    _, summary, _ = cause_of(d)
    assert "started just now" not in summary
    assert d.result.cause is not None and d.result.cause.finding.remediation is not None
    assert "daemon-reload" in d.result.cause.finding.remediation.text
