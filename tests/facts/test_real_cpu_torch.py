"""The probes against a real torch: the CPU build 2.13.0 in its own virtual environment (made once per run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_doctor.cli import main
from gpu_doctor.facts.torch import parse_runtime
from gpu_doctor.host.real import RealHost

TORCH = "torch==2.13.0"  # a CPU build is available locally on the development and CI machines


@pytest.fixture(scope="session")
def torch_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    env_dir = tmp_path_factory.mktemp("torch-env")
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True, timeout=120)
    python = str(env_dir / "bin" / "python")
    proc = subprocess.run(
        [python, "-m", "pip", "install", "-q", TORCH],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if proc.returncode != 0:
        if os.environ.get("CI"):
            pytest.fail(f"could not install {TORCH} in CI: {proc.stderr[-2000:]}")
        pytest.skip(f"{TORCH} is not installable here")
    return python


@pytest.mark.slow
def test_runtime_probe_imports_the_real_cpu_torch(torch_python: str) -> None:
    runtime = parse_runtime(RealHost().run_probe(torch_python, "torch_runtime", 120))
    assert runtime.outcome == "ok", runtime.message
    assert runtime.version == "2.13.0+cpu"
    assert runtime.cuda is None and runtime.cuda_available is False
    assert runtime.arch_list == ()
    assert runtime.mapped_libraries == ()  # no CUDA library is loaded by a CPU build


@pytest.mark.slow
def test_doctor_diagnoses_another_venv(torch_python: str, capsys: pytest.CaptureFixture[str]) -> None:
    main(["--json", "--python", torch_python])
    facts = json.loads(capsys.readouterr().out)["facts"]
    assert facts["python"]["executable"] == torch_python
    assert facts["python"]["in_virtualenv"] is True
    packages = facts["torch_packages"]
    assert packages["version"] == "2.13.0+cpu"
    assert packages["cuda"] is None
    assert packages["torch_paths"] == [
        str(
            Path(torch_python).parent.parent
            / "lib"
            / f"python{sys.version_info.major}.{sys.version_info.minor}"
            / "site-packages"
            / "torch"
        )
    ]
    assert any(d["name"] == "torch" and d["version"] == "2.13.0+cpu" for d in packages["distributions"])
    assert facts["torch"] is None
    assert facts["unavailable"]["torch"]["detail"] == "CPU build 2.13.0+cpu: not imported"
