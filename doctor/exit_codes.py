"""Process exit codes: one enum, identical in text and JSON mode (DESIGN §4), and the usage error behind 2."""

from __future__ import annotations

from enum import IntEnum, unique


@unique
class ExitCode(IntEnum):
    OK = 0
    FINDINGS = 1  # at least one finding at or above the --fail-on threshold
    USAGE = 2  # bad command line: unknown check id, --python that is not a Python, ...
    INCOMPLETE = 3  # a required check could not run (crash, timeout, unknown) and nothing failed
    INTERNAL = 4  # a bug in gpu-doctor itself
    INTERRUPTED = 130  # Ctrl-C


class UsageError(Exception):
    """A bad command line: one clear line on stderr, exit 2 (ExitCode.USAGE)."""
