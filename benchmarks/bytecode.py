"""Byte-compile the torch_gpu_doctor that a benchmark starts, as pip does at install time.

An editable install run with PYTHONDONTWRITEBYTECODE=1 (as some sandboxes set it) would otherwise compile
every module on every start, and the benchmark would time the compiler instead of the tool.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

COMPILE = (
    "import compileall, torch_gpu_doctor, pathlib; "
    "compileall.compile_dir(pathlib.Path(torch_gpu_doctor.__file__).parent, quiet=1)"
)


def compile_doctor(doctor: str) -> None:
    """Compile the torch_gpu_doctor package of the interpreter behind the `doctor` console script."""
    python = Path(doctor).resolve().parent / "python"
    if python.exists():
        subprocess.run([str(python), "-c", COMPILE], check=False, timeout=300, stdout=subprocess.DEVNULL)
