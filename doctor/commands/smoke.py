"""`gpu-doctor smoke [--mode quick|standard|deep]`: only the GPU smoke test and the checks judging it."""

from __future__ import annotations

import argparse

from torch_gpu_doctor.commands.common import open_machine
from torch_gpu_doctor.commands.diagnose import report
from torch_gpu_doctor.runner import known_check_ids

SMOKE_CHECKS = ("pcie.link_under_load",)  # beside the smoke.* checks, what `gpu-doctor smoke` reports


def run(args: argparse.Namespace) -> int:
    machine = open_machine(args)
    return report(args, machine, only=args.check or smoke_check_ids(plugins=not args.no_plugins))


def smoke_check_ids(plugins: bool) -> list[str]:
    return sorted(i for i in known_check_ids(plugins) if i.startswith("smoke.") or i in SMOKE_CHECKS)
