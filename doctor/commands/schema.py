"""`gpu-doctor schema`: the JSON Schema of `--json` output."""

from __future__ import annotations

import argparse
import sys

from torch_gpu_doctor.exit_codes import ExitCode
from torch_gpu_doctor.schemas import report_schema_text


def run(args: argparse.Namespace) -> int:  # noqa: ARG001 - every command takes its arguments
    sys.stdout.write(report_schema_text())
    return ExitCode.OK
