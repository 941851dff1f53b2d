"""Which Python to diagnose when `--python` is not given: the one the person works in, not gpu-doctor's own.

Installed as a tool (`pipx install`, `uv tool install`, `uvx`), gpu-doctor runs in an environment of its own
that has no torch; diagnosing it would tell the person to install torch where they never run it. So, in order:
the active virtual environment ($VIRTUAL_ENV), the active conda environment ($CONDA_PREFIX), a `.venv` in the
current folder or a parent, the interpreter running gpu-doctor when it is not a tool environment, `python3` on
PATH. Each choice says why it was made; the header and `--json` show it.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

from torch_gpu_doctor.records import dataclass

# Where pipx and uv keep tool environments (and uvx its cached ones): gpu-doctor's own, never the user's
TOOL_ENVIRONMENT_MARKERS = ("/pipx/venvs/", "/uv/tools/", "/.cache/uv/", "/pipx/.cache/", "/uv/archive-v0/")


@dataclass(frozen=True)
class Choice:
    python: str  # absolute, symlinks kept (a venv's bin/python is a link to the base interpreter)
    why: str  # "--python", "the active virtual environment ($VIRTUAL_ENV)", ...


def given(python: str, cwd: Path) -> str | None:
    """`--python` as given: a path (relative to the current folder) or a bare name looked up on PATH."""
    if "/" in python or os.sep in python:
        path = Path(python)
        path = path if path.is_absolute() else cwd / path
        return str(path) if path.is_file() else None
    found = shutil.which(python)
    return str(Path(found).absolute()) if found else None


def discover(environ: Mapping[str, str], cwd: Path, running: str = sys.executable) -> Choice:
    """The interpreter to diagnose, and why, when `--python` was not given."""
    venv = environ.get("VIRTUAL_ENV")
    if venv and (found := _python_in(Path(venv))) is not None:
        return Choice(found, "the active virtual environment ($VIRTUAL_ENV)")
    conda = environ.get("CONDA_PREFIX")
    if conda and (found := _python_in(Path(conda))) is not None:
        return Choice(found, "the active conda environment ($CONDA_PREFIX)")
    for folder in (cwd, *cwd.parents):
        if (found := _python_in(folder / ".venv")) is not None:
            return Choice(found, "the project's .venv")
    if running and not is_tool_environment(running):
        return Choice(running, "the interpreter running gpu-doctor")
    on_path = shutil.which("python3", path=environ.get("PATH"))
    if on_path:
        return Choice(
            str(Path(on_path).absolute()), "python3 on PATH (gpu-doctor runs in a tool environment)"
        )
    return Choice(running, "the interpreter running gpu-doctor (no other Python was found)")


def is_tool_environment(python: str) -> bool:
    """gpu-doctor's own environment as pipx or uv made it: it has no torch of the person's."""
    text = str(Path(python).absolute()).replace(os.sep, "/")
    return any(marker in text for marker in TOOL_ENVIRONMENT_MARKERS)


def _python_in(prefix: Path) -> str | None:
    for name in ("bin/python", "bin/python3", "python.exe", "Scripts/python.exe"):
        candidate = prefix / name
        if candidate.is_file():
            return str(candidate)
    return None
