"""`gpu-doctor verify [gates] [--config FILE.toml] [--json]`: post-install gates with observed values.

Diagnose (with the quick smoke test when a gate needs it), judge every expectation (doctor/fleet/verify.py),
print one line per gate, `name: expected X, observed Y — pass`. Exit 0 when all pass, 1 when one fails.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from torch_gpu_doctor import TOOL_NAME, __version__
from torch_gpu_doctor.commands.common import open_machine, require_python, smoke_request
from torch_gpu_doctor.exit_codes import ExitCode, UsageError
from torch_gpu_doctor.fleet.expectations import ExpectationError, Expectations, load_expectations, with_flags
from torch_gpu_doctor.fleet.verify import Gate, evaluate
from torch_gpu_doctor.render.json_report import envelope
from torch_gpu_doctor.runner import diagnose
from torch_gpu_doctor.serialize import json_document

VERIFY_SCHEMA_VERSION = 1
_AT_LEAST = ("min_driver", "min_pcie_gen", "min_pcie_width")


def expectations_from(args: argparse.Namespace) -> Expectations:
    try:
        base = load_expectations(Path(args.config)) if args.config else Expectations()
        flags = {
            "gpus": args.gpus,
            "gpu_name": args.gpu_name,
            "min_driver": args.min_driver,
            "torch_cuda": args.torch_cuda,
            "min_pcie_gen": args.min_pcie_gen,
            "min_pcie_width": args.min_pcie_width,
            "smoke": args.verify_smoke,
            "nccl": args.nccl,
        }
        expect = with_flags(base, flags)
    except ExpectationError as exc:
        raise UsageError(str(exc)) from exc
    if expect.empty:
        raise UsageError(
            "verify: nothing to verify; give a gate (--gpus N, --min-driver VER, ...) or --config"
        )
    return expect


def run(args: argparse.Namespace) -> int:
    machine = open_machine(args)
    host, python, data_dir = machine.host, machine.python, machine.data_dir
    if getattr(args, "format", None) == "prometheus":
        raise UsageError("verify prints text or JSON; --format prometheus is for the diagnosis")
    expect = expectations_from(args)
    smoke = None
    if expect.needs_smoke or args.smoke:
        args.smoke = args.smoke or "quick"  # a mode given before `verify` (--smoke deep) is kept
        smoke = smoke_request(args, host)
    report = diagnose(host, python, plugins=not args.no_plugins, data_dir=data_dir, smoke=smoke)
    require_python(report.facts.python, python, args)
    gates = evaluate(expect, report)
    code = ExitCode.OK if all(g.passed for g in gates) else ExitCode.FINDINGS
    if args.json:
        document = verify_document(gates, code)
        document["report"] = envelope(report)
        sys.stdout.write(json_document(document))
    else:
        for gate in gates:
            print(gate_line(gate))
        failed = sum(1 for g in gates if not g.passed)
        verdict = "all pass" if not failed else f"{failed} of {len(gates)} failed"
        print(f"\n{TOOL_NAME} verify: {verdict} (exit code {int(code)})")
    return code


def _show(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "pass" if value else "fail"
    return str(value)


def gate_line(gate: Gate) -> str:
    at_least = "≥ " if gate.name in _AT_LEAST else ""
    observed = "could not be observed" if gate.observed is None else f"observed {_show(gate.observed)}"
    line = f"{gate.name}: expected {at_least}{_show(gate.expected)}, {observed} — {gate.status.value}"
    return f"{line} ({gate.detail})" if gate.detail else line


def verify_document(gates: tuple[Gate, ...], code: int) -> dict[str, Any]:
    return {
        "schema_version": VERIFY_SCHEMA_VERSION,
        "tool": {"name": TOOL_NAME, "version": __version__},
        "command": "verify",
        "status": "pass" if code == ExitCode.OK else "fail",
        "exit_code": int(code),
        "expectations": [
            {
                "name": g.name,
                "expected": g.expected,
                "observed": g.observed,
                "status": g.status.value,
                "detail": g.detail,
            }
            for g in gates
        ],
    }
