"""`gpu-doctor triage FILE|-`: diagnose what someone pasted: a collect_env report, an error or traceback,
nvidia-smi output, a package list, kernel-log lines, or any mix of them."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from torch_gpu_doctor import TOOL_NAME
from torch_gpu_doctor.exit_codes import ExitCode, error_document
from torch_gpu_doctor.triage.decode import MAX_BYTES, UnreadablePaste
from torch_gpu_doctor.triage.pipeline import NOTHING_KNOWN, diagnose_paste
from torch_gpu_doctor.triage.render import render_json, render_text


def read_input(name: str) -> bytes:
    """At most MAX_BYTES + 1 bytes (decode_paste says when there were more)."""
    if name == "-":
        return sys.stdin.buffer.read(MAX_BYTES + 1)
    try:
        with Path(name).open("rb") as handle:
            return handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise UnreadablePaste(f"cannot read {name}: {exc.strerror or exc}") from exc


def run(args: argparse.Namespace) -> int:
    source = "stdin" if args.file == "-" else args.file
    try:
        diagnosis = diagnose_paste(read_input(args.file), source)
        if diagnosis.pasted.empty:
            raise UnreadablePaste(f"{source}: {NOTHING_KNOWN}")
    except UnreadablePaste as exc:
        print(f"{TOOL_NAME}: {exc}", file=sys.stderr)
        if args.json:
            sys.stdout.write(json.dumps(error_document("unreadable_input", str(exc), ExitCode.USAGE)) + "\n")
        return ExitCode.USAGE
    code = ExitCode.FINDINGS if diagnosis.result.exit_problem() else ExitCode.OK
    if args.json:
        sys.stdout.write(render_json(diagnosis, source, int(code)))
    else:
        render_text(diagnosis, source, sys.stdout)
    return code
