"""One option grammar: every global option is accepted before or after any subcommand and is in its --help.
(That every documented line runs as written is tests/test_documented_commands.py.)"""

from __future__ import annotations

import argparse

import pytest

from torch_gpu_doctor.cli_parser import GLOBAL_OPTIONS, OUTPUT_OPTIONS, build_parser


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
    "fit": ["7B"],
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


def test_verify_keeps_its_own_smoke_flag() -> None:
    """`verify --smoke` is the gate "the smoke test must pass" (the Kubernetes Job runs it), not the global
    --smoke MODE: spelling it --smoke=standard made the Job's command a usage error."""
    from torch_gpu_doctor.cli import _smoke_mode_spelled

    parsed = build_parser().parse_args(_smoke_mode_spelled(["verify", "--gpus", "8", "--smoke", "--nccl"]))
    assert parsed.verify_smoke is True and parsed.nccl is True
    parsed = build_parser().parse_args(_smoke_mode_spelled(["--smoke", "capture", "DIR"]))
    assert parsed.smoke == "standard" and parsed.command == "capture"
