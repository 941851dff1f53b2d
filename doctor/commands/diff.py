"""`gpu-doctor diff A.json B.json [--json]`: what differs between two reports that can matter.

Exit 0 when nothing that matters differs, 1 when something does (as diff(1)); a file that is not a report is
a usage error (2).
"""

from __future__ import annotations

import argparse
import sys
from itertools import groupby
from pathlib import Path

from torch_gpu_doctor import TOOL_NAME, __version__
from torch_gpu_doctor.exit_codes import ExitCode, UsageError
from torch_gpu_doctor.fleet.diff import Difference, diff_reports
from torch_gpu_doctor.fleet.report_files import ReportFileError, load_report
from torch_gpu_doctor.serialize import json_document


def run(args: argparse.Namespace) -> int:
    try:
        before, after = load_report(Path(args.before)), load_report(Path(args.after))
    except ReportFileError as exc:
        raise UsageError(str(exc)) from exc
    differences = diff_reports(before, after)
    code = ExitCode.FINDINGS if differences else ExitCode.OK
    if args.json:
        document = {
            "schema_version": 1,
            "tool": {"name": TOOL_NAME, "version": __version__},
            "command": "diff",
            "a": {"path": args.before, "generated_at": before.get("generated_at")},
            "b": {"path": args.after, "generated_at": after.get("generated_at")},
            "differences": [{"area": d.area, "key": d.key, "a": d.before, "b": d.after} for d in differences],
            "exit_code": int(code),
        }
        sys.stdout.write(json_document(document))
    else:
        sys.stdout.write(diff_text(differences, args.before, args.after))
    return code


def diff_text(differences: tuple[Difference, ...], a: str, b: str) -> str:
    if not differences:
        return f"No difference that matters between {a} and {b}.\n"
    lines = [f"A = {a}", f"B = {b}", ""]
    for area, items in groupby(differences, key=lambda d: d.area):
        lines.append(area)
        lines.extend(f"  {d.key}: {d.before} → {d.after}" for d in items)
    lines.append(f"\n{len(differences)} difference(s).")
    return "\n".join(lines) + "\n"
