"""Which Python gpu-doctor diagnoses without --python, with real virtual environments: the active venv, the
active conda environment, the project's .venv, the interpreter running gpu-doctor unless it is a tool
environment (pipx, uv tool), then python3 on PATH. And --python as a relative path or a bare name."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

from torch_gpu_doctor.commands.interpreter import discover, given, is_tool_environment


def _venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    return path / "bin" / "python"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("interpreters")
    (root / "project" / "src").mkdir(parents=True)
    return {
        "root": root,
        "project": root / "project",
        "project_python": _venv(root / "project" / ".venv"),
        "active": _venv(root / "active"),
        "tool": _venv(root / "home" / ".local" / "share" / "pipx" / "venvs" / "torch-gpu-doctor"),
        "plain": _venv(root / "plain"),
    }


def test_the_active_virtual_environment_comes_first(world: dict[str, Path]) -> None:
    choice = discover(
        {"VIRTUAL_ENV": str(world["active"].parent.parent)}, world["project"], str(world["tool"])
    )
    assert choice.python == str(world["active"]) and "$VIRTUAL_ENV" in choice.why


def test_an_active_conda_environment_is_next(world: dict[str, Path], tmp_path: Path) -> None:
    prefix = tmp_path / "envs" / "ml"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "python").write_text("")  # a conda env's interpreter, as far as discovery looks
    choice = discover({"CONDA_PREFIX": str(prefix)}, world["project"], str(world["tool"]))
    assert choice.python == str(prefix / "bin" / "python") and "$CONDA_PREFIX" in choice.why


def test_the_projects_venv_is_found_from_a_subfolder(world: dict[str, Path]) -> None:
    choice = discover({}, world["project"] / "src", str(world["tool"]))
    assert choice.python == str(world["project_python"]) and choice.why == "the project's .venv"


def test_a_tool_environment_is_never_the_answer(world: dict[str, Path], tmp_path: Path) -> None:
    assert is_tool_environment(str(world["tool"])) and not is_tool_environment(str(world["plain"]))
    path = tmp_path / "bin"
    path.mkdir()
    (path / "python3").symlink_to(world["plain"])
    choice = discover({"PATH": str(path)}, world["root"], str(world["tool"]))
    assert choice.python == str(path / "python3") and "python3 on PATH" in choice.why


def test_the_running_interpreter_when_it_is_not_a_tool(world: dict[str, Path]) -> None:
    choice = discover({}, world["root"], str(world["plain"]))
    assert choice.python == str(world["plain"]) and choice.why == "the interpreter running gpu-doctor"


def test_python_may_be_relative_or_a_bare_name(world: dict[str, Path]) -> None:
    assert given("project/.venv/bin/python", world["root"]) == str(world["project_python"])
    assert given("./nothing/python", world["root"]) is None
    found = given(Path(sys.executable).name, Path("/"))
    assert found is not None and Path(found).is_absolute()


def test_a_doctor_installed_as_a_tool_diagnoses_the_projects_venv(world: dict[str, Path]) -> None:
    """gpu-doctor run by a pipx-style tool venv, in a project folder: the project's .venv is diagnosed."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH")}
    # gpu-doctor's code and dependencies, as the tool venv would hold them (an installed .pth, as pip writes)
    tool_site = next(world["tool"].parent.parent.glob("lib/python3*/site-packages"))
    lines = "".join(f"import site; site.addsitedir({p!r})\n" for p in site.getsitepackages())
    (tool_site / "gpu_doctor_test.pth").write_text(lines, encoding="utf-8")
    proc = subprocess.run(
        [str(world["tool"]), "-m", "torch_gpu_doctor", "--json", "--check", "python.env_kind"],
        cwd=world["project"] / "src",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    document = json.loads(proc.stdout)
    assert document["interpreter"] == {"path": str(world["project_python"]), "chosen": "the project's .venv"}
    assert document["facts"]["python"]["executable"] == str(world["project_python"])


def test_a_relative_python_is_diagnosed_from_the_current_folder(world: dict[str, Path]) -> None:
    env = dict(os.environ)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch_gpu_doctor",
            "--json",
            "--check",
            "python.env_kind",
            "--python",
            "./.venv/bin/python",
        ],
        cwd=world["project"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    document = json.loads(proc.stdout)
    assert document["interpreter"] == {"path": str(world["project_python"]), "chosen": "--python"}
    finding = next(f for f in document["findings"] if f["check_id"] == "python.env_kind")
    assert finding["status"] == "pass" and "virtual environment" in finding["summary"]
