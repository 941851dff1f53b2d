"""`gpu-doctor capture DIR [--smoke] [--measure]`: record this machine as a replayable capture directory."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from torch_gpu_doctor import TOOL_NAME
from torch_gpu_doctor.commands.common import open_machine, smoke_request, validate_ids
from torch_gpu_doctor.exit_codes import ExitCode, UsageError
from torch_gpu_doctor.host.real import RealHost
from torch_gpu_doctor.host.recording import RecordingHost
from torch_gpu_doctor.runner import diagnose


def run(args: argparse.Namespace) -> int:
    if args.root or args.replay:
        # A capture's host.json names an interpreter; never run a path that came from capture data.
        raise UsageError("capture records this machine; it cannot be combined with --root")
    machine = open_machine(args)
    validate_ids(args.check + args.skip, plugins=not args.no_plugins)
    smoke = smoke_request(args, machine.host)
    directory = Path(args.directory)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise UsageError(f"{directory} exists and is not an empty directory")
    recorder = RecordingHost(RealHost(measure=args.measure))
    recorder.data_dir = machine.data_dir
    report = diagnose(recorder, machine.python, data_dir=machine.data_dir, smoke=smoke)
    recorder.write(directory, machine.python)
    print(json.dumps({"captured": str(directory), "findings": len(report.findings)}), file=sys.stderr)
    print(f"Captured this machine in {directory}; replay it with: {TOOL_NAME} --root {directory}")
    return ExitCode.OK
