"""A staged bundle directory → redacted members, `links.json` and `manifest.json`, within the size limits."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path, PurePosixPath
from typing import Any

from torch_gpu_doctor import TOOL_NAME, __version__
from torch_gpu_doctor.bundle.model import (
    BUNDLE_FORMAT,
    BUNDLE_SCHEMA,
    DEFAULT_LIMITS,
    LINKS,
    MANIFEST,
    BundleError,
    Limits,
    Member,
    human_size,
)
from torch_gpu_doctor.bundle.redact import Redactor
from torch_gpu_doctor.host import layout


def _dump(data: Any) -> bytes:
    return (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


# Kernel text: the kernel log's commands (torch_gpu_doctor.facts.kernel_log) and the kernel command line.
KERNEL_LOG_COMMANDS = frozenset({"dmesg", "journalctl"})
KERNEL_TEXT_FILES = frozenset({f"{layout.ROOT_DIR}/proc/cmdline"})


def _kernel_logs(document: Any, redactor: Redactor, kinds: set[str]) -> Any:
    """commands.json with the kernel log's output scrubbed as kernel text (the rest is redacted after)."""
    if not isinstance(document, list):
        return document
    scrubbed = []
    for entry in document:
        argv = entry.get("argv") if isinstance(entry, dict) else None
        if not (isinstance(argv, list) and argv and PurePosixPath(str(argv[0])).name in KERNEL_LOG_COMMANDS):
            scrubbed.append(entry)
            continue
        copy = dict(entry)
        for stream in ("stdout", "stderr"):
            if isinstance(copy.get(stream), str):
                result = redactor.kernel_identifiers(copy[stream])
                copy[stream] = result.text
                kinds |= result.kinds
        scrubbed.append(copy)
    return scrubbed


def _redact_file(relative: str, data: bytes, redactor: Redactor) -> tuple[bytes, frozenset[str]]:
    if "/" not in relative and relative.endswith(".json"):
        try:
            document = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError):
            pass  # not JSON after all: redacted as bytes below
        else:
            kinds: set[str] = set()
            if relative == layout.COMMANDS_FILE:
                document = _kernel_logs(document, redactor, kinds)
            return _dump(redactor.json(document, kinds)), frozenset(kinds)
    if relative in KERNEL_TEXT_FILES:
        result = redactor.kernel_text(data.decode("utf-8", errors="surrogateescape"))
        return result.text.encode("utf-8", errors="surrogateescape"), result.kinds
    return redactor.data(data)


def collect(
    staging: Path, redactor: Redactor, limits: Limits = DEFAULT_LIMITS
) -> tuple[list[Member], dict[str, str]]:
    """Every file and directory under `staging`, redacted; symlinks come back as {path: target}."""
    members: list[Member] = []
    links: dict[str, str] = {}
    for folder, dirs, files in os.walk(staging, followlinks=False):
        for name in sorted(dirs) + sorted(files):
            local = Path(folder) / name
            relative = local.relative_to(staging).as_posix()
            info = local.lstat()
            path = redactor.path(relative)
            if stat.S_ISLNK(info.st_mode):
                links[path] = redactor.path(os.readlink(local))
            elif stat.S_ISDIR(info.st_mode):
                members.append(Member(path, None))
            elif stat.S_ISREG(info.st_mode):
                if info.st_size > limits.max_member_bytes:
                    raise BundleError(_too_big(relative, info.st_size, limits.max_member_bytes))
                data, kinds = _redact_file(relative, local.read_bytes(), redactor)
                members.append(Member(path, data, kinds))
    folders = sorted((m for m in members if m.data is None), key=lambda m: m.path)
    stored = sorted((m for m in members if m.data is not None), key=lambda m: m.path)
    if links:
        stored.append(Member(LINKS, _dump({"links": dict(sorted(links.items()))})))
    check_limits([*folders, *stored], limits)
    return [*folders, *stored], links


def _too_big(path: str, size: int, limit: int) -> str:
    return f"{path} is {human_size(size)}, over the {human_size(limit)} limit for one bundle member"


def check_limits(members: list[Member], limits: Limits) -> None:
    if len(members) + 1 > limits.max_members:
        raise BundleError(
            f"the bundle would have {len(members) + 1} members, over the limit of {limits.max_members}"
        )
    for member in members:
        if member.size > limits.max_member_bytes:
            raise BundleError(_too_big(member.path, member.size, limits.max_member_bytes))
    total = sum(m.size for m in members)
    if total > limits.max_total_bytes:
        largest = sorted(members, key=lambda m: -m.size)[:3]
        named = ", ".join(f"{m.path} ({human_size(m.size)})" for m in largest)
        raise BundleError(
            f"the bundle would hold {human_size(total)}, over the {human_size(limits.max_total_bytes)} limit; "
            f"largest members: {named}"
        )


def manifest(
    members: list[Member], redactor: Redactor, created_at: str, identifiers_included: bool
) -> Member:
    rows: list[dict[str, Any]] = []
    for member in members:
        if member.data is None:
            rows.append({"path": member.path, "type": "directory"})
            continue
        rows.append(
            {
                "path": member.path,
                "type": "file",
                "size": member.size,
                "sha256": hashlib.sha256(member.data).hexdigest(),
                "redaction": {"redacted": sorted(member.redaction)} if member.redaction else "unchanged",
            }
        )
    document = {
        "format": BUNDLE_FORMAT,
        "bundle_schema": BUNDLE_SCHEMA,
        "capture_schema": layout.CAPTURE_SCHEMA,
        "created_by": f"{TOOL_NAME} {__version__}",
        "created_at": created_at,
        "identifiers_included": identifiers_included,
        "pseudonyms": redactor.legend(),
        "members": rows,
    }
    return Member(MANIFEST, _dump(document))
