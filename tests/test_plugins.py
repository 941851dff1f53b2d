"""Third-party checks arrive through the `torch_gpu_doctor.checks` entry-point group of an installed distribution."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

GOOD_MODULE = '''
from torch_gpu_doctor.model import Finding, Status
from torch_gpu_doctor.registry import check


@check("lab.gpu_count", "The lab expects at least one GPU", "lab")
def gpu_count(facts):
    """
    ## What it checks
    Counts the GPUs the doctor found.

    ## Why it matters
    The lab's jobs need a GPU.

    ## How to fix
    Ask the lab admins.
    """
    n = len(facts.gpus)
    return Finding("lab.gpu_count", Status.PASS if n else Status.WARN, f"{n} GPUs")
'''


def _distribution(site: Path, name: str, module: str, source: str) -> None:
    (site / f"{module}.py").write_text(source)
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[torch_gpu_doctor.checks]\n{name} = {module}\n")


NO_GPU = Path(__file__).parent / "fixtures" / "hosts" / "ci-no-gpu-cuda-toolkit"


def _run(site: Path, *extra: str) -> tuple[int, dict[str, str]]:
    env = dict(os.environ, PYTHONPATH=str(site))
    proc = subprocess.run(
        [sys.executable, "-m", "torch_gpu_doctor", "--json", "--root", str(NO_GPU), *extra],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    report = json.loads(proc.stdout)
    return proc.returncode, {f["check_id"]: f["status"] for f in report["findings"]}


@pytest.fixture
def site(tmp_path: Path) -> Path:
    _distribution(tmp_path, "lab-checks", "lab_checks", GOOD_MODULE)
    _distribution(tmp_path, "broken-checks", "broken_checks", "raise ImportError('needs libfoo')\n")
    return tmp_path


def test_plugin_check_runs_and_broken_plugin_is_a_crash_finding(site: Path) -> None:
    _, findings = _run(site)
    assert findings["lab.gpu_count"] == "warn"  # the captured CI machine has no GPU
    assert findings["plugin.broken_checks"] == "crash"
    assert findings["gpu.present"] in ("pass", "fail")  # the built-ins still ran


def test_no_plugins_flag(site: Path) -> None:
    _, findings = _run(site, "--no-plugins")
    assert "lab.gpu_count" not in findings
    assert not any(cid.startswith("plugin.") for cid in findings)


def test_plugin_ids_are_valid_for_check_and_explain(site: Path) -> None:
    _, findings = _run(site, "--check", "lab.gpu_count")
    assert set(findings) == {"lab.gpu_count", "plugin.broken_checks"}
