"""`gpu-doctor [options]`: diagnose this machine (or a capture), in the interactive doctor on a terminal, else as
a text, JSON or Prometheus report."""

from __future__ import annotations

import argparse
import dataclasses
import io
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from torch_gpu_doctor.commands.common import (
    Machine,
    fail_on,
    open_machine,
    require_python,
    smoke_request,
    validate_ids,
)
from torch_gpu_doctor.render.files import write_atomically


def run(args: argparse.Namespace) -> int:
    return report(args, open_machine(args), only=args.check)


def report(args: argparse.Namespace, machine: Machine, only: Sequence[str]) -> int:
    """The diagnosis of `machine` as the options ask for it; the exit code of its findings."""
    validate_ids(args.check + args.skip, plugins=not args.no_plugins)
    smoke = smoke_request(args, machine.host)
    threshold = fail_on(args)
    if wants_tui(args):  # before the engine's imports: the first paint must not wait for them
        from torch_gpu_doctor.tui.launch import run_tui  # the TUI, not the engine: it paints first

        return run_tui(
            machine.host,
            machine.python,
            replay=machine.replay,
            data_dir=machine.data_dir,
            plugins=not args.no_plugins,
            fail_on=threshold,
            only=tuple(args.check),
            skip=tuple(args.skip),
            start="setup" if args.command == "setup" else "doctor",
            smoke=smoke.mode if smoke is not None else None,
        )
    from torch_gpu_doctor.runner import diagnose  # after the TUI branch, which loads it after its first paint

    found = diagnose(
        machine.host,
        machine.python,
        list(only),
        args.skip,
        threshold,
        plugins=not args.no_plugins,
        data_dir=machine.data_dir,
        smoke=smoke,
    )
    require_python(found.facts.python, machine.python, args)
    found = dataclasses.replace(found, python_choice=machine.python_why)
    out = io.StringIO() if args.output else sys.stdout
    if args.json:
        from torch_gpu_doctor.render.json_report import render_json  # only the renderer asked for

        out.write(render_json(found))
    elif args.format == "prometheus":
        from torch_gpu_doctor.render.prometheus import render_prometheus  # only the renderer asked for

        out.write(render_prometheus(found))
    else:
        from torch_gpu_doctor.render.text import render_text  # only the renderer asked for (Rich)

        render_text(found, out, verbose=args.verbose, elapsed_s=since_start())
    if args.output:  # not `isinstance(out, StringIO)`: stdout itself may be one (a caller capturing it)
        assert isinstance(out, io.StringIO)
        write_atomically(Path(args.output), out.getvalue())
    return found.summary().exit_code


def wants_tui(args: argparse.Namespace) -> bool:
    """DESIGN §4: the TUI only on a terminal (stdin and stdout), never with --json or --plain."""
    if args.command not in (None, "setup") or args.json or args.plain or args.format:
        return False
    if os.environ.get("TERM") == "dumb":
        return False
    return sys.stdin.isatty() and sys.stdout.isatty()


def since_start() -> float | None:
    """Seconds since this process started (its start-up and imports included), as a person waited for it."""
    try:
        import psutil

        return max(0.0, time.time() - psutil.Process().create_time())
    except Exception:  # no psutil answer (a restricted /proc): the report's own duration stands
        return None
