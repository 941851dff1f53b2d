"""Process exit codes: one enum, identical in text and JSON mode (DESIGN §4), the usage error behind 2, and
the JSON document of a run that ends without a report."""

from __future__ import annotations

from enum import IntEnum, unique
from typing import Any

from torch_gpu_doctor import TOOL_NAME, __version__


@unique
class ExitCode(IntEnum):
    OK = 0
    FINDINGS = 1  # at least one finding at or above the --fail-on threshold
    USAGE = 2  # bad command line: unknown check id, --python that is not a Python, ...
    INCOMPLETE = 3  # a required check could not run (crash, timeout, unknown) and nothing failed
    INTERNAL = 4  # a bug in gpu-doctor itself
    OUTPUT = 5  # the output could not be written: a full disk, a closed or read-only stdout or file
    INTERRUPTED = 130  # Ctrl-C
    BROKEN_PIPE = 141  # the reader went away (`| head`): what a shell reports for a process ended by SIGPIPE


class UsageError(Exception):
    """A bad command line: one clear line on stderr, exit 2 (ExitCode.USAGE)."""


def error_document(kind: str, message: str, code: ExitCode) -> dict[str, Any]:
    """The schema's error_document: what stdout holds in --json mode when no report could be made."""
    return {
        "schema_version": 1,
        "tool": {"name": TOOL_NAME, "version": __version__},
        "error": {"kind": kind, "message": message},
        "summary": {"exit_code": int(code)},
    }
