"""Reports of fixture hosts for the fleet tests: diagnosed once, as Report and as the --json envelope."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.render.json_report import render_json
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.runner import diagnose

HOSTS = Path(__file__).resolve().parent.parent / "fixtures" / "hosts"
HEALTHY = "rtx4090-workstation-healthy"
H100 = "h100-sxm-x8-server"
EGPU = "egpu-not-authorized"
X4 = "rtx4060ti-x4"


@cache
def report_of(name: str) -> Report:
    host = RecordedHost(HOSTS / name)
    return diagnose(host, host.python or "python3", plugins=False)


def envelope_of(name: str) -> dict[str, Any]:
    """A fresh copy each time: tests change them."""
    document: dict[str, Any] = json.loads(render_json(report_of(name)))
    return document


def write_report(directory: Path, name: str, document: dict[str, Any]) -> Path:
    path = directory / f"{name}.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path
