"""`gpu-doctor explain ID`: what a check checks, why it matters and how to fix it (from the shipped index)."""

from __future__ import annotations

import argparse

from torch_gpu_doctor.catalog import known_specs  # the index: no check module is imported (DESIGN §7)
from torch_gpu_doctor.exit_codes import ExitCode, UsageError


def run(args: argparse.Namespace) -> int:
    checks = {spec.id: spec for spec in known_specs(not args.no_plugins).specs}
    spec = checks.get(args.check_id)
    if spec is None:
        raise UsageError(f"unknown check id {args.check_id!r} (see --list-checks)")
    text = spec.explanation
    print(f"{spec.id} — {spec.title}\n")
    for heading, body in (
        ("What it checks", text.what),
        ("Why it matters", text.why),
        ("How to fix", text.fix),
    ):
        print(f"{heading}\n{body}\n")
    return ExitCode.OK
