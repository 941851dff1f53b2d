"""One option grammar: every global option is accepted before or after any subcommand and is in its --help;
and every gpu-doctor command line the README shows is one the parser accepts, read from the README itself."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from torch_gpu_doctor.cli_parser import GLOBAL_OPTIONS, OUTPUT_OPTIONS, build_parser
from torch_gpu_doctor.exit_codes import UsageError

README = Path(__file__).resolve().parent.parent / "README.md"


def _subcommands() -> list[str]:
    parser = build_parser()
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sorted(found[0].choices)


SUBCOMMANDS = _subcommands()
# what each subcommand needs besides options, to parse
POSITIONAL = {
    "explain": ["driver.nouveau"],
    "capture": ["DIR"],
    "triage": ["FILE"],
    "diff": ["A", "B"],
    "summarize": ["r.json"],
    "completion": ["bash"],
}


def _argv(command: str, *options: str) -> list[str]:
    return [command, *POSITIONAL.get(command, []), *options]


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_global_options_work_after_every_subcommand(command: str) -> None:
    parser = build_parser()
    before = parser.parse_args(["--plain", "--python", "/x/python", "--check", "a.b", "-v", *_argv(command)])
    after = parser.parse_args([*_argv(command), "--plain", "--python", "/x/python", "--check", "a.b", "-v"])
    for name in ("plain", "python", "check", "verbose"):
        assert getattr(before, name) == getattr(after, name), (command, name)


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_every_subcommand_help_lists_the_global_options(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args([command, "--help"])
    shown = capsys.readouterr().out
    for flags, _ in OUTPUT_OPTIONS + GLOBAL_OPTIONS:
        assert flags[-1] in shown, (command, flags)


def test_a_value_given_before_the_subcommand_survives_it() -> None:
    parsed = build_parser().parse_args(["--python", "/x/python", "smoke"])
    assert parsed.python == "/x/python" and parsed.mode == "standard"


def _readme_commands() -> list[str]:
    """Every `gpu-doctor ...` line of the README's console and sh blocks, without prompt and comment."""
    text = README.read_text(encoding="utf-8")
    found = []
    for kind, block in re.findall(r"```(console|sh|bash)\n(.*?)```", text, re.DOTALL):
        for raw in block.splitlines():
            if kind == "console" and not raw.startswith("$ "):
                continue  # a console block's other lines are output
            line = raw.removeprefix("$ ").strip()
            if line.startswith("gpu-doctor ") or line == "gpu-doctor":
                found.append(line.split("  #")[0].split(" # ")[0].split(" > ")[0].split(" | ")[0].strip())
    return found


def test_the_readme_shows_commands() -> None:
    assert len(_readme_commands()) >= 10


@pytest.mark.parametrize("line", _readme_commands())
def test_every_readme_command_line_parses(line: str) -> None:
    from torch_gpu_doctor.cli import _smoke_mode_spelled

    argv = [a.replace("*", "node-01") for a in shlex.split(line)[1:]]  # a glob the shell would expand
    try:
        build_parser().parse_args(_smoke_mode_spelled(argv))
    except UsageError as exc:
        pytest.fail(f"the README shows `{line}`, which gpu-doctor refuses: {exc}")
    except SystemExit as exc:  # --help, --version
        assert exc.code == 0
