"""`--replay BUNDLE_OR_DIR`: a support bundle (unpacked safely) or a capture directory becomes the `--root` that
every command then diagnoses (commands.common.open_machine)."""

from __future__ import annotations

import argparse

from torch_gpu_doctor.bundle.model import BundleError
from torch_gpu_doctor.bundle.replay import replay_directory
from torch_gpu_doctor.exit_codes import UsageError


def replay_root(args: argparse.Namespace) -> str:
    if args.root:
        raise UsageError("--replay and --root both name a machine to diagnose; pass one of them")
    try:
        return str(replay_directory(args.replay))
    except BundleError as exc:
        raise UsageError(f"--replay {args.replay}: {exc}") from exc
