"""The command line's argument parser: every option and subcommand of `gpu-doctor` (argparse only, so that
`--version` and usage errors import nothing else). `torch_gpu_doctor.cli.build_parser` re-exports it."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Collection
from typing import Any, NoReturn

from torch_gpu_doctor import TOOL_NAME, __version__
from torch_gpu_doctor.exit_codes import UsageError
from torch_gpu_doctor.package_data import package_text

__all__ = ["SMOKE_MODES", "UsageError", "build_parser"]  # UsageError: what the parser raises

SMOKE_MODES = ("quick", "standard", "deep")


@functools.cache
def _help_width(columns_set: str | None) -> int:
    """The width argparse's help formatter takes when given none: shutil.get_terminal_size's columns (COLUMNS,
    else the terminal, else 80) less 2. Asked once a process (for each COLUMNS), not once a formatter: the parser
    makes a formatter for each option it adds (about 90 at start), each asking the terminal, and importing
    shutil for that."""
    try:
        columns = int(columns_set or "")
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return (columns if columns > 0 else 80) - 2


class _Formatter(argparse.HelpFormatter):
    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ):
        super().__init__(
            prog,
            indent_increment,
            max_help_position,
            _help_width(os.environ.get("COLUMNS")) if width is None else width,
        )


class _Parser(argparse.ArgumentParser):
    """Errors raise UsageError; no option is matched by an abbreviation (`verify --min-d 550` is refused),
    so what the docs and scripts spell is what the parser requires."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


# Options every command takes, before or after its name (`gpu-doctor --json smoke` = `gpu-doctor smoke --json`):
# (flags, keyword arguments of add_argument). --json, --plain and --format exclude each other.
OUTPUT_OPTIONS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (("--json",), {"action": "store_true", "help": "print one JSON document on stdout (logs go to stderr)"}),
    (("--plain",), {"action": "store_true", "help": "plain text report, no interactive interface"}),
    (
        ("--format",),
        {
            "choices": ("text", "json", "prometheus"),
            "help": "the report as text (--plain), JSON (--json) or Prometheus text for node_exporter's "
            "textfile collector; never the interactive interface",
        },
    ),
)
GLOBAL_OPTIONS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (
        ("--python",),
        {
            "metavar": "PATH",
            "help": "the Python interpreter to diagnose: a path (relative to here) or a name on PATH (default: "
            "the active venv or conda env, the project's .venv, else this one unless it is a tool environment)",
        },
    ),
    (("--root",), {"metavar": "DIR", "help": "diagnose a captured machine instead of this one"}),
    (
        ("--replay",),
        {
            "metavar": "BUNDLE_OR_DIR",
            "help": "diagnose the machine in a support bundle (`gpu-doctor bundle`) or a capture directory",
        },
    ),
    (
        ("--data-dir",),
        {
            "metavar": "DIR",
            "help": "the folder your datasets are read from: its disk is diagnosed (default: the current folder)",
        },
    ),
    (
        ("--measure",),
        {
            "action": "store_true",
            "help": "also measure RAM bandwidth and the data folder's read speed (about 6 s; writes and "
            "removes one temporary file of at most 1 GiB in the data folder)",
        },
    ),
    (
        ("--smoke",),
        {
            "nargs": "?",
            "const": "standard",
            "choices": SMOKE_MODES,
            "metavar": "MODE",
            "help": "after the checks, run the GPU smoke test: quick, standard (the default, about 15 s per "
            "GPU) or deep",
        },
    ),
    (
        ("--output",),
        {
            "metavar": "FILE",
            "help": "write the report (text, --json or --format prometheus) to FILE instead of stdout, "
            "atomically: a temporary file beside it, then a rename (node_exporter's textfile collector)",
        },
    ),
    (("--yes",), {"action": "store_true", "help": "answer yes to questions (never asks without a TTY)"}),
    (("--list-checks",), {"action": "store_true", "help": "list the checks and exit"}),
    (
        ("--check",),
        {"action": "append", "default": [], "metavar": "ID", "help": "run only this check (repeatable)"},
    ),
    (
        ("--skip",),
        {"action": "append", "default": [], "metavar": "ID", "help": "skip this check (repeatable)"},
    ),
    (
        ("--fail-on",),
        {"choices": ("warn", "fail"), "default": "fail", "help": "exit 1 at this status or worse"},
    ),
    (("--strict",), {"action": "store_true", "help": "same as --fail-on warn"}),
    (("--no-plugins",), {"action": "store_true", "help": "do not load third-party checks"}),
    (("-v", "--verbose"), {"action": "store_true", "help": "show evidence and tracebacks"}),
)


def _add_options(
    parser: argparse.ArgumentParser, options: tuple[tuple[tuple[str, ...], dict[str, Any]], ...], after: bool
) -> None:
    """`after`: on a subcommand, where a value given before the subcommand's name must survive: its default
    is SUPPRESS (argparse then leaves the namespace alone). An option the subcommand defines itself wins."""
    for flags, kwargs in options:
        if any(flag in parser._option_string_actions for flag in flags):  # argparse has no public API for it
            continue
        action = parser.add_argument(
            *flags, **({**kwargs, "default": argparse.SUPPRESS} if after else kwargs)
        )
        if flags[0] in ("--check", "--skip"):
            action.completer = check_ids  # type: ignore[attr-defined]  # argcomplete reads this attribute


def check_ids(**_: Any) -> list[str]:
    """The built-in check ids from the shipped index (checks/specs.json), for shell completion."""
    import json

    text = package_text("torch_gpu_doctor.checks", "specs.json")
    return [c["id"] for c in json.loads(text)["checks"]]


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line. `commands`: the commands the arguments may name; only those get the shared
    options (each of the 15 commands takes about 20, and adding them all is 20 ms of every start); None: all,
    for help and shell completion."""
    parser = _Parser(
        prog=TOOL_NAME,
        description="Diagnose PyTorch on NVIDIA GPUs: driver, GPUs, and what to type to fix them.",
    )
    parser.add_argument("--version", action="version", version=f"{TOOL_NAME} {__version__}")
    out = parser.add_mutually_exclusive_group()
    for flags, kwargs in OUTPUT_OPTIONS:
        out.add_argument(*flags, **kwargs)
    _add_options(parser, GLOBAL_OPTIONS, after=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    explain = sub.add_parser("explain", help="explain a check: what it checks, why it matters, how to fix")
    explain.add_argument("check_id", metavar="ID").completer = check_ids  # type: ignore[attr-defined]
    sub.add_parser("schema", help="print the JSON Schema of --json output")
    completion = sub.add_parser(
        "completion",
        help="print the shell code that completes gpu-doctor's commands and options: "
        '`eval "$(gpu-doctor completion bash)"` in ~/.bashrc',
    )
    completion.add_argument("shell", choices=("bash", "zsh", "fish"))
    capture = sub.add_parser("capture", help="record this machine as a replayable capture directory")
    capture.add_argument("directory", metavar="DIR")
    sub.add_parser(
        "setup",
        help="the setup wizard: driver, then torch of the right build, then a smoke test (interactive; "
        "without a terminal it prints the plan)",
    )
    bundle = sub.add_parser(
        "bundle",
        help="write a redacted support bundle (.tar.gz): the capture, facts and report, to replay anywhere",
    )
    bundle.add_argument(
        "-o", "--output", metavar="FILE", help="where to write it (default: a dated name here)"
    )
    bundle.add_argument(
        "--include-identifiers",
        action="store_true",
        help="keep host names, users, addresses, UUIDs and serials (secrets are removed regardless)",
    )
    bundle.add_argument("--yes", action="store_true", default=argparse.SUPPRESS, help="write without asking")
    from torch_gpu_doctor.fleet.arguments import add_fleet_commands  # argparse only

    add_fleet_commands(sub)  # verify, diff, summarize (doctor/fleet/arguments.py)
    triage = sub.add_parser(
        "triage",
        help="diagnose a pasted `python -m torch.utils.collect_env` report (FILE, or - for stdin)",
    )
    triage.add_argument("file", metavar="FILE", help="the report as text; - reads stdin")
    _add_fit(sub)
    smoke = sub.add_parser(
        "smoke", help="run only the GPU smoke test: proof that the GPU works, with figures and expectations"
    )
    smoke.add_argument("--mode", choices=SMOKE_MODES, default="standard", help="quick, standard or deep")
    fix = sub.add_parser(
        "fix",
        help="the fix plan: show it (--dry-run), or apply its pip steps in the target Python after "
        "confirmation (--yes: without asking); system commands are only shown",
    )
    fix.add_argument(
        "--dry-run", action="store_true", help="only show the plan: each step, its commands, who runs them"
    )
    fix.add_argument(
        "--yes",
        action="store_true",
        default=argparse.SUPPRESS,
        help="apply the Python-environment steps without asking",
    )
    fix.add_argument(
        "--root",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="the plan of a captured machine (--dry-run only)",
    )
    for name, command in sub.choices.items():  # every option, after every command too, and in its --help
        if commands is None or name in commands:
            _add_options(command, OUTPUT_OPTIONS + GLOBAL_OPTIONS, after=True)
    return parser


def _add_fit(sub: Any) -> None:
    fit = sub.add_parser(
        "fit",
        help="will a model run or train on this machine's GPUs (memory per part, with sources), and what "
        "makes it fit",
    )
    # argparse only, like fleet.arguments; loaded when the parser is built
    from torch_gpu_doctor.fit.arguments import add_fit_arguments

    add_fit_arguments(fit)  # the TUI's fit view reads the same words (doctor/fit/arguments.py)
