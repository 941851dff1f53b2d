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
from collections import Counter
from pathlib import Path
from typing import IO, Any

from torch_gpu_doctor import TOOL_NAME, __version__
from torch_gpu_doctor.bundle.build import Bundle, default_name, record_and_bundle
from torch_gpu_doctor.bundle.model import BundleError, human_size
from torch_gpu_doctor.bundle.write import write_archive
from torch_gpu_doctor.cli import UsageError, _smoke_request
from torch_gpu_doctor.exit_codes import ExitCode
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.host.recorded import RecordedHost


def run_bundle(args: argparse.Namespace, host: Host, python: str, data_dir: str) -> int:
    if isinstance(host, RecordedHost):
        raise UsageError("bundle records this machine; it cannot be combined with --root or --replay")
    smoke = _smoke_request(args, host)
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
        sys.stdout.write(
            json.dumps(bundle_document(bundle, output, size), indent=2, ensure_ascii=False) + "\n"
        )
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


def redaction_line(bundle: Bundle) -> str:
    if bundle.identifiers_included:
        head = "identifiers kept (--include-identifiers)"
    else:
        kinds = Counter(bundle.redactor.legend().values())
        named = ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in sorted(kinds.items()))
        head = f"replaced with pseudonyms: {named}" if named else "no identifiers of this machine found"
    secrets = bundle.redactor.replaced.get("secret", 0)
    return f"{head}; secrets removed: {secrets}"


def show_contents(bundle: Bundle, output: Path, out: IO[str]) -> None:
    """What will be written: the top-level members one by one, the captured tree per top folder."""
    print(f"{TOOL_NAME} bundle → {output}\n", file=out)
    groups: dict[str, list[int]] = {}
    for member in bundle.members:
        if member.data is None:
            continue
        parts = member.path.split("/")
        if len(parts) <= 2:
            mark = f"  ({', '.join(sorted(member.redaction))} redacted)" if member.redaction else ""
            print(f"  {member.path:<28} {human_size(member.size):>10}{mark}", file=out)
        else:
            groups.setdefault("/".join(parts[:2]) + "/", []).append(member.size)
    for folder, sizes in sorted(groups.items()):
        print(f"  {folder:<28} {human_size(sum(sizes)):>10}  ({len(sizes)} captured files)", file=out)
    print(f"\n{redaction_line(bundle)[0].upper()}{redaction_line(bundle)[1:]}.", file=out)
    print(
        "Environment variables: only the GPU/Python ones (CUDA_*, NCCL_*, PATH, ...), never secrets.\n",
        file=out,
    )


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
