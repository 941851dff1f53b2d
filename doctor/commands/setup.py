"""`gpu-doctor setup`: the setup wizard on a terminal; without one, its plan as `fix --dry-run` prints it."""

from __future__ import annotations

import argparse

from torch_gpu_doctor.commands import fix
from torch_gpu_doctor.commands.common import open_machine, smoke_request, validate_ids
from torch_gpu_doctor.commands.diagnose import report, wants_tui


def run(args: argparse.Namespace) -> int:
    machine = open_machine(args)
    if wants_tui(args):
        return report(args, machine, only=args.check)
    validate_ids(args.check + args.skip, plugins=not args.no_plugins)
    smoke_request(args, machine.host)  # says so when a smoke test never finished, as the doctor does
    args.dry_run, args.yes = True, False
    return fix.run_on(args, machine)
