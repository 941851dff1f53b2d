"""ruff and mypy --strict are part of the test suite, so the README's one test command checks them too."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    found = BIN / name
    if found.exists():
        return str(found)
    which = shutil.which(name)
    if which is None:
        pytest.fail(f"{name} is not installed; install the test extras: pip install -e '.[test]'")
    return which


def test_ruff_check() -> None:
    proc = subprocess.run(
        [_tool("ruff"), "check", "."], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format() -> None:
    proc = subprocess.run(
        [_tool("ruff"), "format", "--check", "doctor", "checks", "fixes", "compat"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_mypy_strict() -> None:
    proc = subprocess.run([_tool("mypy")], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_bare_imports_of_top_level_folders_are_banned(tmp_path: Path) -> None:
    # From the repo root `import checks` would load the same files a second time under another name. The
    # probe lives outside the tree: written into it, a `ruff check .` running beside it (another xdist
    # worker) would see it.
    probe = tmp_path / "banned_import_probe.py"
    probe.write_text("import checks\nfrom compat import load_matrix\n")
    proc = subprocess.run(
        [_tool("ruff"), "check", "--config", str(ROOT / "pyproject.toml"), "--select", "TID251", str(probe)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1
    assert proc.stdout.count("TID251") == 2
