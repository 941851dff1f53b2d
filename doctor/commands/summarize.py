"""`gpu-doctor summarize REPORTS... [--json]`: hosts x failing checks, the worst hosts first.

A host is named by its report (a `host.name`) or else by its file (`reports/node-07.json` is `node-07`). A
file that is not a report becomes a row that says why, never a crash. Exit 0 when every host's report
exited 0, 1 otherwise (a host with findings, an incomplete run, or an unreadable file).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from torch_gpu_doctor import TOOL_NAME, __version__
from torch_gpu_doctor.exit_codes import ExitCode
from torch_gpu_doctor.fleet.report_files import ReportFileError, host_name, load_report
from torch_gpu_doctor.fleet.summary import FleetSummary, HostRow, host_row, summarize_fleet, unreadable_row
from torch_gpu_doctor.serialize import json_document

CELL = {"fail": "FAIL", "crash": "CRASH"}


def run(args: argparse.Namespace) -> int:
    rows: list[HostRow] = []
    for name in args.reports:
        path = Path(name)
        try:
            report = load_report(path)
        except ReportFileError as exc:
            rows.append(unreadable_row(path.name.removesuffix(".json"), name, str(exc)))
            continue
        rows.append(host_row(host_name(report, path), name, report))
    fleet = summarize_fleet(_unique_names(rows))
    code = ExitCode.OK if fleet.ok else ExitCode.FINDINGS
    if args.json:
        document = {
            "schema_version": 1,
            "tool": {"name": TOOL_NAME, "version": __version__},
            "command": "summarize",
            "hosts": [
                {
                    "host": r.host,
                    "source": r.source,
                    "status": r.status,
                    "exit_code": r.exit_code,
                    "failing": r.failing,
                    "warnings": list(r.warnings),
                    "error": r.error,
                }
                for r in fleet.rows
            ],
            "checks": {
                c: {
                    "failing_hosts": fleet.failing_hosts.get(c, 0),
                    "warning_hosts": fleet.warning_hosts.get(c, 0),
                }
                for c in sorted(set(fleet.failing_hosts) | set(fleet.warning_hosts))
            },
            "exit_code": int(code),
        }
        sys.stdout.write(json_document(document))
    else:
        sys.stdout.write(summary_text(fleet))
    return code


def _unique_names(rows: list[HostRow]) -> list[HostRow]:
    """Two files naming the same host (two runs) stay two rows: the later ones are named by their path."""
    seen: set[str] = set()
    unique = []
    for row in rows:
        named = replace(row, host=f"{row.host} ({row.source})") if row.host in seen else row
        seen.add(named.host)
        unique.append(named)
    return unique


def summary_text(fleet: FleetSummary) -> str:
    header = ["host", "fail", "warn", *fleet.checks]
    table = [header]
    for r in fleet.rows:
        if r.error is not None:
            table.append([r.host, "?", "?", *("?" for _ in fleet.checks)])
            continue
        cells = [CELL.get(r.failing.get(c, ""), ".") for c in fleet.checks]
        table.append([r.host, str(len(r.failing)), str(len(r.warnings)), *cells])
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in table]
    hosts = len(fleet.rows)
    failing = sum(1 for r in fleet.rows if r.failing)
    lines.append("")
    lines.append(f"{hosts} host(s), {failing} with failing checks.")
    if fleet.failing_hosts:
        lines.append("Failing checks: " + ", ".join(f"{c} on {n}" for c, n in fleet.failing_hosts.items()))
    if fleet.warning_hosts:
        lines.append("Warnings: " + ", ".join(f"{c} on {n}" for c, n in fleet.warning_hosts.items()))
    lines.extend(f"Unreadable: {r.error}" for r in fleet.rows if r.error is not None)
    return "\n".join(lines) + "\n"
