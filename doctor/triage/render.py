"""Triage as text (what the report shows, the diagnosis with its fix, what is unknown and how to find out) and
as one JSON document."""

from __future__ import annotations

import json
from typing import Any, TextIO

from torch_gpu_doctor import TOOL_NAME, __version__
from torch_gpu_doctor.serialize import to_json
from torch_gpu_doctor.triage.model import CollectEnvReport
from torch_gpu_doctor.triage.verdict import WHOLE_MACHINE, Kind, Triage, Verdict

TRIAGE_SCHEMA = "gpu-doctor triage v1"
_ABSENT = "not in the report"


def header_lines(r: CollectEnvReport) -> list[str]:
    if r.torch_missing:
        torch = "torch: not importable (PyTorch version: N/A)"
    elif r.torch_version is None:
        torch = f"torch: {_ABSENT}"
    else:
        build = (
            f"CUDA {r.cuda_build} build"
            if r.cuda_build
            else f"ROCm {r.rocm_build} build"
            if r.rocm_build
            else "CPU-only build"
            if r.has("cuda_build")
            else "build not in the report"
        )
        torch = f"torch {r.torch_version} ({build})"
    where = " · ".join(x for x in (r.os_name, r.python_platform) if x) or f"OS {_ABSENT}"
    python = f"Python {r.python_version}" if r.python_version else f"Python {_ABSENT}"
    gpus = ", ".join(g.name for g in r.gpus) if r.gpus else _ABSENT
    driver = r.driver_version or _ABSENT
    if r.warnings.driver_cuda:
        driver += f" (torch's warning: the driver supports CUDA {r.warnings.driver_cuda})"
    available = {True: "True", False: "False", None: _ABSENT}[r.cuda_available]
    lines = [
        f"{torch} · {python}",
        where,
        f"GPUs: {gpus}",
        f"NVIDIA driver: {driver}",
        f"Is CUDA available: {available}",
    ]
    if r.cuda_runtime:
        lines.append(f"CUDA toolkit on the machine (nvcc, not used by pip wheels): {r.cuda_runtime}")
    if r.warnings.arch_list:
        lines.append(f"torch's warning lists its architectures: {' '.join(r.warnings.arch_list)}")
    if r.truncated:
        lines.append("The paste ends before the list of libraries: it may be cut off.")
    return lines


def render_text(result: Triage, parsed: CollectEnvReport, source: str, out: TextIO) -> None:
    out.write(f"What the collect_env report shows ({source})\n")
    out.writelines(f"  {line}\n" for line in header_lines(parsed))
    problems = [v for v in result.verdicts if v.kind == Kind.PROBLEM]
    out.write("\nDiagnosis\n")
    if not problems:
        out.write("  No problem found in what this report shows.\n")
    for v in problems:
        _problem(v, out)
    rec = result.report.recommended_install
    if problems and rec is not None and not rec.already_installed and parsed.gpus is not None:
        out.write(f"\n  Recommended torch: {rec.torch} ({rec.variant}) — {rec.reason}.\n")
        out.write(f"    $ {' '.join(rec.pip_argv('python'))}\n")
    unknown = [v for v in result.verdicts if v.kind == Kind.UNKNOWN]
    if unknown:
        out.write("\nUnknown from this report\n")
        for v in unknown:
            why = f"the report lacks {', '.join(v.missing)}" if v.missing else v.finding.summary
            out.write(f"  {v.finding.check_id}: {v.title} — {why}\n")
            if v.find_out:
                out.write(f"    find out on that machine: {v.find_out}\n")
    fine = [v.finding.check_id for v in result.verdicts if v.kind == Kind.FINE]
    if fine:
        out.write(f"\nFine: {', '.join(fine)}\n")
    out.write(
        f"\nNot in a collect_env report ({len(result.not_in_report)} checks: PCIe links, eGPU, memory, storage, "
        f"kernel modules, ...): run `{WHOLE_MACHINE}` on that machine.\n"
    )


def _problem(v: Verdict, out: TextIO) -> None:
    f = v.finding
    out.write(f"  {f.status.value.upper():<5} {f.check_id}: {f.summary}\n")
    if f.details:
        out.write(f"        {f.details}\n")
    if f.remediation is not None:
        out.write(f"        Fix: {f.remediation.text}\n")
        out.writelines(f"          $ {c.display()}\n" for c in f.remediation.commands)


def render_json(result: Triage, parsed: CollectEnvReport, source: str, exit_code: int) -> str:
    rec = result.report.recommended_install
    document: dict[str, Any] = {
        "schema": TRIAGE_SCHEMA,
        "tool": {"name": TOOL_NAME, "version": __version__},
        "source": source,
        "report": to_json(parsed),
        "findings": [_finding(v) for v in result.verdicts],
        "unknown": [_finding(v) for v in result.verdicts if v.kind == Kind.UNKNOWN],
        "not_in_report": {"check_ids": list(result.not_in_report), "find_out": WHOLE_MACHINE},
        "recommended_install": None
        if rec is None or parsed.gpus is None
        else {**to_json_dict(rec), "pip_argv": list(rec.pip_argv("python"))},
        "summary": {
            "exit_code": exit_code,
            "problems": sum(1 for v in result.verdicts if v.kind == Kind.PROBLEM),
            "unknown": sum(1 for v in result.verdicts if v.kind == Kind.UNKNOWN),
        },
    }
    return json.dumps(document, indent=2) + "\n"


def to_json_dict(value: object) -> dict[str, Any]:
    data = to_json(value)
    assert isinstance(data, dict)
    return data


def _finding(v: Verdict) -> dict[str, Any]:
    f = v.finding
    fix = f.remediation
    return {
        "check_id": f.check_id,
        "title": v.title,
        "status": f.status.value,
        "kind": v.kind,
        "summary": f.summary,
        "details": f.details,
        "missing": list(v.missing),
        "find_out": v.find_out,
        "remediation": None
        if fix is None
        else {
            "text": fix.text,
            "commands": [list(c.argv) for c in fix.commands],
            "target": fix.target.value,
            "requires_root": fix.requires_root,
            "requires_reboot": fix.requires_reboot,
        },
    }
