"""`gpu-doctor --list-checks [--json]`: every check's id, area and title (from the shipped index)."""

from __future__ import annotations

import argparse
import json
import sys

from torch_gpu_doctor.catalog import known_specs  # the index: no check module is imported (DESIGN §7)
from torch_gpu_doctor.exit_codes import ExitCode


def run(args: argparse.Namespace) -> int:
    loaded = known_specs(not args.no_plugins)
    specs = sorted(loaded.specs, key=lambda spec: spec.id)
    if args.json:
        rows = [{"id": s.id, "area": s.area, "title": s.title, "required": s.required} for s in specs]
        sys.stdout.write(json.dumps({"checks": rows}, indent=2) + "\n")
        return ExitCode.OK
    width = max(len(spec.id) for spec in specs)
    for spec in specs:
        print(f"{spec.id:<{width}}  {spec.area:<8}  {spec.title}")
    for problem in loaded.problems:
        print(f"{problem.check_id}: {problem.summary}", file=sys.stderr)
    return ExitCode.OK
