"""Command line: parse (cli_parser.py), then hand the arguments to the command's module (commands/).

Whatever happens, the process ends with an exit code of the one enum, one line on stderr for an error, and in
`--json` mode one JSON document on stdout.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from torch_gpu_doctor import TOOL_NAME
from torch_gpu_doctor.cli_parser import build_parser
from torch_gpu_doctor.commands import command_name, run_command
from torch_gpu_doctor.exit_codes import ExitCode, UsageError, error_document

__all__ = ["UsageError", "build_parser", "main"]  # the parser lives in cli_parser; tests and tools use these


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    # known even when parsing fails, so stdout still gets one JSON document
    json_mode = "--json" in args or "--format=json" in args or "--format json" in " ".join(args)
    try:
        parsed = build_parser().parse_args(args)
        if parsed.format == "json":  # --format json is --json, --format text is --plain
            parsed.json = True
        elif parsed.format == "text":
            parsed.plain = True
        return run_command(command_name(parsed), parsed)
    except UsageError as exc:
        return _fail(ExitCode.USAGE, "usage", f"error: {exc}", json_mode)
    except KeyboardInterrupt:
        return _fail(ExitCode.INTERRUPTED, "interrupted", "interrupted", json_mode)
    except Exception as exc:  # last resort: one line, not a traceback
        message = f"internal error: {type(exc).__name__}: {exc} (please report it as a bug)"
        return _fail(ExitCode.INTERNAL, "internal", message, json_mode)


def _fail(code: ExitCode, kind: str, message: str, json_mode: bool) -> int:
    print(f"{TOOL_NAME}: {message}", file=sys.stderr)
    if json_mode:
        sys.stdout.write(json.dumps(error_document(kind, message, code)) + "\n")
    return code
