"""Shell completion (argcomplete): `gpu-doctor completion SHELL` prints the shell's code, and the completion
protocol a shell runs answers commands, options and check ids from the same parser as the command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from torch_gpu_doctor.cli import main
from torch_gpu_doctor.cli_parser import check_ids
from torch_gpu_doctor.runner import known_check_ids


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_shell_code_names_gpu_doctor(shell: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", shell]) == 0
    code = capsys.readouterr().out
    assert "gpu-doctor" in code and "_ARGCOMPLETE" in code


def _complete(line: str, tmp_path: Path) -> list[str]:
    """What the shell gets back for `line` with the cursor at its end (argcomplete's protocol)."""
    answer = tmp_path / "completions"
    env = {
        **os.environ,
        "_ARGCOMPLETE": "1",
        "COMP_LINE": line,
        "COMP_POINT": str(len(line)),
        "_ARGCOMPLETE_STDOUT_FILENAME": str(answer),
    }
    code = "import sys; sys.argv = ['gpu-doctor']; from torch_gpu_doctor.cli import main; sys.exit(main())"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60, capture_output=True)
    return [c.strip() for c in answer.read_text().split("\v") if c.strip()]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("gpu-doctor --jso", {"--json"}),
        ("gpu-doctor exp", {"explain"}),
        ("gpu-doctor explain driver.n", {"driver.nvml", "driver.nouveau"}),
        ("gpu-doctor smoke --mo", {"--mode"}),
    ],
)
def test_a_shell_completes_commands_options_and_check_ids(
    line: str, expected: set[str], tmp_path: Path
) -> None:
    assert set(_complete(line, tmp_path)) == expected


def test_completed_check_ids_are_the_built_in_checks() -> None:
    assert set(check_ids()) == known_check_ids(plugins=False)
