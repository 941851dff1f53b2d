"""The python_env probe, run as the doctor runs it (a child interpreter): CONDA_PREFIX marks a conda environment
only when it is the diagnosed interpreter's own prefix, not when a venv inherits it from a shell."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

PROBE = Path(str(resources.files("torch_gpu_doctor.probes").joinpath("python_env.py")))


def _probe(env: dict[str, str]) -> dict[str, object]:
    clean = {k: v for k, v in os.environ.items() if k != "CONDA_PREFIX"}
    out = subprocess.run(
        [sys.executable, str(PROBE)],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    data = json.loads(out.stdout)
    assert isinstance(data, dict)
    return data


def test_an_inherited_conda_prefix_does_not_make_a_venv_a_conda_environment(tmp_path: Path) -> None:
    assert _probe({"CONDA_PREFIX": str(tmp_path)})["conda_prefix"] is None


def test_the_interpreters_own_conda_prefix_is_kept() -> None:
    assert _probe({"CONDA_PREFIX": sys.prefix})["conda_prefix"] == sys.prefix
