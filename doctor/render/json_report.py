"""The versioned JSON envelope (DESIGN §4). stdout carries exactly this one document."""

from __future__ import annotations

import shlex
from typing import Any

from torch_gpu_doctor import TOOL_NAME
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.serialize import json_document, to_json
from torch_gpu_doctor.tokens import token_places
from torch_gpu_doctor.unavailable import Unavailable

ENVELOPE_SCHEMA_VERSION = 1


def envelope(report: Report) -> dict[str, Any]:
    specs = {s.id: s for s in report.specs}
    findings = []
    for finding in report.findings:
        item = to_json(finding)
        spec = specs.get(finding.check_id)
        item["title"] = spec.title if spec else finding.check_id
        item["area"] = spec.area if spec else finding.check_id.split(".", 1)[0]
        findings.append(item)
    facts = to_json(report.facts)
    interpreter = {"path": _executable(report), "chosen": report.python_choice}
    return {
        "schema_version": ENVELOPE_SCHEMA_VERSION,
        "tool": {"name": TOOL_NAME, "version": report.tool_version},
        "generated_at": report.generated_at,
        "duration_ms": report.duration_ms,
        "summary": to_json(report.summary()),
        # --json keeps identifiers (its reader is the user's own script; `gpu-doctor bundle` redacts them) and
        # lists the places whose environment values or paths hold token-shaped text (docs/usage.md)
        "host": {
            "description": report.facts.host,
            "identifiers_included": True,
            "token_shaped": list(token_places({"facts": facts, "interpreter": interpreter})),
        },
        "facts": facts,
        # which Python was diagnosed and why (commands/interpreter.py): "" when the caller did not say
        "interpreter": interpreter,
        "findings": findings,
        "root_causes": [f.check_id for f in report.roots()],
        "recommended_install": _recommended(report),
        "smoke": _smoke(report),
    }


def _executable(report: Report) -> str:
    python = report.facts.python
    return "" if isinstance(python, Unavailable) else python.executable


def _smoke(report: Report) -> dict[str, Any] | None:
    """The run (also under facts.smoke) with its figures, each with its expectation and verdict."""
    run = report.facts.smoke
    if isinstance(run, Unavailable):
        return None
    item: dict[str, Any] = {
        "mode": run.mode.value,
        "outcome": run.outcome.value,
        "stopped_in": run.stopped_in,
        "message": run.message,
        "duration_ms": run.duration_ms,
        "figures": [to_json(f) for f in report.smoke_figures],
    }
    return item


def _recommended(report: Report) -> dict[str, Any] | None:
    rec = report.recommended_install
    if rec is None:
        return None
    python = report.facts.python
    executable = "python3" if isinstance(python, Unavailable) else python.executable
    item: dict[str, Any] = to_json(rec)
    item["needed"] = report.install_needed()
    item["argv"] = list(rec.pip_argv(executable))
    item["command"] = shlex.join(rec.pip_argv(executable))
    item["uv_command"] = shlex.join(rec.uv_argv(executable))
    return item


def render_json(report: Report) -> str:
    return json_document(envelope(report))
