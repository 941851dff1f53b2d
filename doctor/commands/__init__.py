"""The commands: one module each, imported only when its command runs (as pip's `commands_dict`).

`cli.main` parses the command line and calls `run_command`; each module's `run(args) -> int` returns the exit
code. `--version`, `--help` and usage errors import none of them.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from typing import Protocol, cast

# command name -> the module whose run(args) carries it out; "diagnose" is gpu-doctor without a subcommand
COMMANDS: dict[str, str] = {
    "diagnose": "torch_gpu_doctor.commands.diagnose",
    "list-checks": "torch_gpu_doctor.commands.list_checks",
    "explain": "torch_gpu_doctor.commands.explain",
    "schema": "torch_gpu_doctor.commands.schema",
    "capture": "torch_gpu_doctor.commands.capture",
    "smoke": "torch_gpu_doctor.commands.smoke",
    "setup": "torch_gpu_doctor.commands.setup",
    "fix": "torch_gpu_doctor.commands.fix",
    "bundle": "torch_gpu_doctor.commands.bundle",
    "triage": "torch_gpu_doctor.commands.triage",
    "verify": "torch_gpu_doctor.commands.verify",
    "diff": "torch_gpu_doctor.commands.diff",
    "summarize": "torch_gpu_doctor.commands.summarize",
    "completion": "torch_gpu_doctor.commands.completion",
    "fit": "torch_gpu_doctor.commands.fit",
}
# Read other machines' reports or nothing at all: they win over --list-checks, as they always did.
NO_MACHINE = ("schema", "explain", "triage", "diff", "summarize", "completion", "fit")


class _Command(Protocol):
    def run(self, args: argparse.Namespace) -> int: ...


def command_name(args: argparse.Namespace) -> str:
    """Which command a parsed command line asks for."""
    if args.command in NO_MACHINE:
        return str(args.command)
    if args.list_checks:
        return "list-checks"
    return str(args.command or "diagnose")


def run_command(name: str, args: argparse.Namespace, loaded: Callable[[], None] | None = None) -> int:
    """Import the command's module, call `loaded` (start-up is over), run it."""
    module = cast("_Command", importlib.import_module(COMMANDS[name]))
    if loaded is not None:
        loaded()
    return module.run(args)
