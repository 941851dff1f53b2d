"""Reports for fix tests: diagnosed fixture hosts, a fixture retargeted at another interpreter, in-memory facts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from torch_gpu_doctor.catalog import load_checks
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.torch_wheel import recommend
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.judge import run_check
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.runner import diagnose

HOSTS = Path(__file__).resolve().parent.parent / "fixtures" / "hosts"
FAKE_PIP = Path(__file__).resolve().parent.parent / "fixtures" / "fake_pip" / "python"


def diagnose_fixture(name: str) -> Report:
    host = RecordedHost(HOSTS / name)
    return diagnose(host, host.python or "python3", plugins=False)


def retargeted_capture(name: str, into: Path, python: str, torch_version: str | None = None) -> Path:
    """A copy of fixture `name` whose diagnosed interpreter is `python` (and, if given, whose torch is the
    CUDA build `torch_version`, e.g. "2.13.0+cu126"): what the machine looks like after a fix ran."""
    copy = into / name
    shutil.copytree(HOSTS / name, copy, symlinks=True)
    probes_file = copy / "probes.json"
    probes = json.loads(probes_file.read_text(encoding="utf-8"))
    env = json.loads(probes["python_env"]["stdout"])
    env["executable"] = python
    probes["python_env"]["stdout"] = json.dumps(env)
    probes["python_env"]["argv"][0] = python
    if torch_version is not None:
        packages = json.loads(probes["torch_packages"]["stdout"])
        local = torch_version.partition("+")[2]
        packages["torch_version_py"]["__version__"] = torch_version
        packages["torch_version_py"]["cuda"] = (
            f"{local[2:-1]}.{local[-1]}" if local.startswith("cu") else None
        )
        for dist in packages["distributions"]:
            if dist["name"] == "torch":
                dist["version"] = torch_version
        probes["torch_packages"]["stdout"] = json.dumps(packages)
    probes_file.write_text(json.dumps(probes, indent=1), encoding="utf-8")
    meta_file = copy / "host.json"
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    meta["python"] = python
    meta_file.write_text(json.dumps(meta, indent=1), encoding="utf-8")
    return copy


def diagnose_capture(directory: Path) -> Report:
    host = RecordedHost(directory)
    return diagnose(host, host.python or "python3", plugins=False)


def report_from_facts(facts: Facts) -> Report:
    """Every built-in check on in-memory facts, as `diagnose` would judge them."""
    loaded = load_checks(plugins=False)
    findings = tuple(f for check in loaded.checks for f in run_check(check, facts))
    return Report(
        tool_version="test",
        generated_at="2026-01-01T00:00:00Z",
        duration_ms=0.0,
        facts=facts,
        findings=findings,
        specs=tuple(c.spec for c in loaded.checks),
        recommended_install=recommend(facts),
    )
