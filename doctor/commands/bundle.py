"""`gpu-doctor bundle [-o FILE] [--include-identifiers] [--yes] [--json]`: a redacted support bundle.

Records this machine as `capture` does, adds facts.json, report.json and report.txt, redacts every file
(torch_gpu_doctor.bundle), shows what will be written and asks on a terminal, then writes the `.tar.gz` (0600, never
through a symlink or over a file). `gpu-doctor --replay FILE` reads it back anywhere.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from torch_gpu_doctor import TOOL_NAME, __version__
from torch_gpu_doctor.bundle.build import Bundle, default_name, record_and_bundle
from torch_gpu_doctor.bundle.contents import redaction_line, show_contents
from torch_gpu_doctor.bundle.model import BundleError, human_size
from torch_gpu_doctor.bundle.write import write_archive
from torch_gpu_doctor.commands.common import open_machine, smoke_request
from torch_gpu_doctor.exit_codes import ExitCode, UsageError
from torch_gpu_doctor.serialize import json_document


def run(args: argparse.Namespace) -> int:
    machine = open_machine(args)
    host, python, data_dir = machine.host, machine.python, machine.data_dir
    if machine.replay:
        raise UsageError("bundle records this machine; it cannot be combined with --root or --replay")
    smoke = smoke_request(args, host)
    try:
        bundle = record_and_bundle(
            host, python, data_dir, args.include_identifiers, smoke, plugins=not args.no_plugins
        )
        output = Path(args.output) if args.output else Path(default_name(bundle.created_at))
        if _can_ask(args):
            show_contents(bundle, output, sys.stderr)
            if not _confirm():
                print("Nothing written.", file=sys.stderr)
                return ExitCode.OK
        size = write_archive(output, bundle.members, int(bundle.created_at.timestamp()))
    except BundleError as exc:
        raise UsageError(f"bundle: {exc}") from exc
    if args.json:
        sys.stdout.write(json_document(bundle_document(bundle, output, size)))
    else:
        files = sum(1 for m in bundle.members if m.data is not None)
        print(f"Wrote {output} ({human_size(size)}, {files} files; {redaction_line(bundle)}).")
        print(f"Replay it anywhere with: {TOOL_NAME} --replay {output}")
    return ExitCode.OK


def _can_ask(args: argparse.Namespace) -> bool:
    """Ask only on a terminal, never with --yes or --json (a program reads stdout there)."""
    return not (args.yes or args.json) and sys.stdin.isatty() and sys.stderr.isatty()


def _confirm() -> bool:
    sys.stderr.write("Write this bundle? [Y/n] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    if not answer.endswith("\n"):
        sys.stderr.write("\n")
        return False  # end of input: no answer is not a yes
    return answer.strip().lower() in ("", "y", "yes")


def bundle_document(bundle: Bundle, output: Path, size: int) -> dict[str, Any]:
    manifest = json.loads(bundle.manifest.data or b"{}")
    summary = bundle.report.summary()
    return {
        "schema_version": 1,
        "tool": {"name": TOOL_NAME, "version": __version__},
        "bundle": {
            "path": str(output),
            "size_bytes": size,
            "sha256": hashlib.sha256(output.read_bytes()).hexdigest(),
            "identifiers_included": bundle.identifiers_included,
            "pseudonyms": manifest.get("pseudonyms", {}),
            "secrets_removed": bundle.redactor.replaced.get("secret", 0),
            "members": manifest.get("members", []),
        },
        "report": {"status": summary.status.value, "exit_code": summary.exit_code},
        "summary": {"exit_code": int(ExitCode.OK)},
    }
