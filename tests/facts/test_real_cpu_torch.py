"""The probes against a real torch: the CPU build 2.13.0 in its own virtual environment (made once per run)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from torch_gpu_doctor.cli import main
from torch_gpu_doctor.facts.torch import parse_runtime
from torch_gpu_doctor.host.real import RealHost


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
