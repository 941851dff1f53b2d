"""The README opens with the two set-up commands, and CI runs exactly the second one."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    head = text.split("\n## ", 1)[0]
    return re.findall(r"```(?:sh|bash|console)?\n(.+?)\n```", head, flags=re.S)


def test_readme_opens_with_two_setup_commands() -> None:
    run, test = _commands()[:2]
    assert "gpu-doctor" in run and "pip install" in run
    assert "pytest" in test and ".[test]" in test


def test_ci_runs_the_readme_test_command() -> None:
    test = _commands()[1].strip()
    ci = (ROOT / ".ci" / "run").read_text()
    assert test in ci.splitlines()
