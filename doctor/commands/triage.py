"""`gpu-doctor triage FILE|-`: diagnose a pasted `python -m torch.utils.collect_env` report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from torch_gpu_doctor import TOOL_NAME
from torch_gpu_doctor.exit_codes import ExitCode, error_document
from torch_gpu_doctor.triage.facts import report_facts
from torch_gpu_doctor.triage.parse import looks_like_collect_env, parse_report
from torch_gpu_doctor.triage.render import render_json, render_text
from torch_gpu_doctor.triage.verdict import triage

MAX_BYTES = 1 << 20  # a report is a few KB; a megabyte is already something else


class UnreadableReport(Exception):
    """Not a collect_env report: exit 2 with this message."""


def read_input(name: str) -> str:
    if name == "-":
        data = sys.stdin.buffer.read(MAX_BYTES + 1)
    else:
        try:
            with Path(name).open("rb") as handle:
                data = handle.read(MAX_BYTES + 1)
        except OSError as exc:
            raise UnreadableReport(f"cannot read {name}: {exc.strerror or exc}") from exc
    if len(data) > MAX_BYTES:
        raise UnreadableReport(f"{name} is larger than {MAX_BYTES // 1024} KiB: not a collect_env report")
    if b"\0" in data:
        raise UnreadableReport(f"{name} is binary data, not the text of a collect_env report")
    return data.decode("utf-8", errors="replace").lstrip("\ufeff")


def run(args: argparse.Namespace) -> int:
    source = "stdin" if args.file == "-" else args.file
    try:
        parsed = parse_report(read_input(args.file))
        if not looks_like_collect_env(parsed):
            raise UnreadableReport(
                f"{source}: this does not look like collect_env output (no 'PyTorch version', "
                "'Is CUDA available', 'GPU models and configuration' or 'Nvidia driver version' line)"
            )
    except UnreadableReport as exc:
        print(f"{TOOL_NAME}: {exc}", file=sys.stderr)
        if args.json:
            _json_error(exc)
        return ExitCode.USAGE
    result = triage(parsed, report_facts(parsed))
    code = ExitCode.FINDINGS if result.exit_problem() else ExitCode.OK
    if args.json:
        sys.stdout.write(render_json(result, parsed, source, int(code)))
    else:
        render_text(result, parsed, source, sys.stdout)
    return code


def _json_error(exc: Exception) -> None:
    """The error document of `--json` mode (the schema's error_document), so stdout still holds one document."""
    sys.stdout.write(json.dumps(error_document("unreadable_input", str(exc), ExitCode.USAGE)) + "\n")
