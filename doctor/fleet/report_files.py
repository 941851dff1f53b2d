"""Reading reports other machines wrote (`gpu-doctor --json`, or `verify --json`, which carries one)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MAX_REPORT_BYTES = 64 * 1024 * 1024
ENVELOPE_KEYS = ("schema_version", "summary", "facts", "findings")


class ReportFileError(Exception):
    """A file that is not a readable gpu-doctor report: one line that says why."""


def load_report(path: Path) -> dict[str, Any]:
    """The report envelope in `path`: a `--json` report as it is, a `verify --json` document's `report`."""
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_REPORT_BYTES + 1)
    except OSError as exc:
        raise ReportFileError(f"{path}: {exc.strerror or exc}") from exc
    if len(data) > MAX_REPORT_BYTES:
        raise ReportFileError(f"{path}: larger than {MAX_REPORT_BYTES // 2**20} MiB")
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ReportFileError(f"{path}: not JSON ({exc})") from exc
    return report_envelope(document, str(path))


def report_envelope(parsed: object, origin: str) -> dict[str, Any]:
    if not isinstance(parsed, dict):
        raise ReportFileError(f"{origin}: not a gpu-doctor report (a JSON {type(parsed).__name__})")
    document: dict[str, Any] = parsed
    if document.get("command") == "verify" and isinstance(document.get("report"), dict):
        document = document["report"]
    error = document.get("error")
    if isinstance(error, dict) and "findings" not in document:
        raise ReportFileError(f"{origin}: gpu-doctor did not produce a report there: {error.get('message')}")
    missing = [k for k in ENVELOPE_KEYS if k not in document]
    if missing:
        raise ReportFileError(f"{origin}: not a `gpu-doctor --json` report (no {missing[0]!r})")
    if document["schema_version"] != 1:
        raise ReportFileError(
            f"{origin}: report schema_version {document['schema_version']!r} (this reads 1)"
        )
    if not isinstance(document["facts"], dict) or not isinstance(document["findings"], list):
        raise ReportFileError(f"{origin}: facts or findings of the wrong type")
    return document


def host_name(document: dict[str, Any], path: Path) -> str:
    """The host a report is about: a name the envelope carries, else the file name without `.json`.

    A live report's `host.description` is "this machine", so fleets name the files: `$(hostname).json`."""
    host = document.get("host")
    if isinstance(host, dict):
        for key in ("name", "hostname"):
            value = host.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return path.name.removesuffix(".json") or path.name
