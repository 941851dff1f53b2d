"""A fleet at a glance: which hosts fail which checks, the worst hosts first (`gpu-doctor summarize`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import field
from typing import Any

from torch_gpu_doctor.records import dataclass

FAILING = ("fail", "crash")  # a host "fails" a check at these statuses; warnings are counted beside


@dataclass(frozen=True)
class HostRow:
    host: str
    source: str  # the file it came from
    status: str | None  # the report's worst status; None: unreadable
    exit_code: int | None
    failing: dict[str, str] = field(default_factory=dict)  # check id -> fail / crash
    warnings: tuple[str, ...] = ()
    error: str | None = None  # why the file could not be read as a report

    @property
    def ok(self) -> bool:
        return self.error is None and self.exit_code == 0


@dataclass(frozen=True)
class FleetSummary:
    rows: tuple[HostRow, ...]  # worst first
    checks: tuple[str, ...]  # the columns: checks failing somewhere, most hosts first
    failing_hosts: dict[str, int]  # check id -> hosts failing it
    warning_hosts: dict[str, int]  # check id -> hosts warning on it

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.rows)


def host_row(host: str, source: str, report: dict[str, Any]) -> HostRow:
    raw = report.get("summary")
    summary: dict[str, Any] = raw if isinstance(raw, dict) else {}
    failing: dict[str, str] = {}
    warnings: list[str] = []
    for item in report.get("findings") or []:
        if not isinstance(item, dict):
            continue
        check_id, status = str(item.get("check_id")), item.get("status")
        if status in FAILING:
            failing[check_id] = str(status)
        elif status == "warn":
            warnings.append(check_id)
    code = summary.get("exit_code")
    return HostRow(
        host,
        source,
        str(summary.get("status")),
        code if isinstance(code, int) else None,
        failing,
        tuple(warnings),
    )


def unreadable_row(host: str, source: str, error: str) -> HostRow:
    return HostRow(host, source, None, None, error=error)


def summarize_fleet(rows: list[HostRow]) -> FleetSummary:
    failing = Counter(c for r in rows for c in r.failing)
    warning = Counter(c for r in rows for c in r.warnings)
    # unreadable first (nothing is known about them), then most failing checks, most warnings, by name
    ordered = sorted(rows, key=lambda r: (r.error is None, -len(r.failing), -len(r.warnings), r.host))
    columns = sorted(failing, key=lambda c: (-failing[c], c))
    return FleetSummary(
        tuple(ordered),
        tuple(columns),
        dict(sorted(failing.items(), key=lambda kv: (-kv[1], kv[0]))),
        dict(sorted(warning.items(), key=lambda kv: (-kv[1], kv[0]))),
    )
