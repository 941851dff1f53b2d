"""Making a bundle: record this machine like `capture`, add the report, redact every file, write the archive."""

from __future__ import annotations

import io
import json
import shutil
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from torch_gpu_doctor.bundle.identifiers import (
    IdentitySources,
    capture_identifiers,
    common_words,
    machine_identifiers,
    unique,
    without_common_words,
)
from torch_gpu_doctor.bundle.members import check_limits, collect, manifest
from torch_gpu_doctor.bundle.model import DEFAULT_LIMITS, FACTS, REPORT_JSON, REPORT_TEXT, Limits, Member
from torch_gpu_doctor.bundle.redact import Redactor
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.host.recording import RecordingHost
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.render.json_report import envelope
from torch_gpu_doctor.render.text import render_text
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.runner import diagnose
from torch_gpu_doctor.serialize import to_json

if TYPE_CHECKING:
    from torch_gpu_doctor.smoke.run import SmokeRequest

_ANSI = lazy(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass(frozen=True)
class Bundle:
    """The members to write (manifest first), ready for the archive, and what redaction did."""

    members: list[Member]
    report: Report
    redactor: Redactor
    identifiers_included: bool
    created_at: datetime

    @property
    def manifest(self) -> Member:
        return self.members[0]


def default_name(when: datetime) -> str:
    return f"gpu-doctor-bundle-{when.strftime('%Y%m%dT%H%M%SZ')}.tar.gz"


def stage_report(staging: Path, report: Report, identifiers_included: bool) -> None:
    """facts.json, report.json and report.txt (no colour) beside the capture."""
    (staging / FACTS).write_text(
        json.dumps(to_json(report.facts), indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    document = envelope(report)
    document["host"]["identifiers_included"] = identifiers_included
    (staging / REPORT_JSON).write_text(
        json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    text = io.StringIO()
    render_text(report, text, verbose=True)
    (staging / REPORT_TEXT).write_text(_ANSI.sub("", text.getvalue()), encoding="utf-8")


def bundle_capture(
    staging: Path,
    report: Report,
    identity: Host | None,
    include_identifiers: bool,
    sources: IdentitySources | None = None,
    limits: Limits = DEFAULT_LIMITS,
    now: datetime | None = None,
) -> Bundle:
    """Redact a staged capture (with its report added here) into bundle members.

    `identity`: the live machine whose identifiers are enumerated (None: a capture's device ids only).
    """
    stage_report(staging, report, include_identifiers)
    found = (
        ()
        if include_identifiers
        else without_common_words(
            unique(
                [
                    *(machine_identifiers(identity, sources) if identity is not None else ()),
                    *capture_identifiers(staging, to_json(report.facts)),
                ]
            ),
            common_words(staging),
        )
    )
    redactor = Redactor(found, shapes=not include_identifiers)
    members, _ = collect(staging, redactor, limits)
    when = now or datetime.now(timezone.utc)
    stamp = when.isoformat(timespec="seconds").replace("+00:00", "Z")
    head = manifest(members, redactor, stamp, include_identifiers)
    check_limits([head, *members], limits)
    return Bundle([head, *members], report, redactor, include_identifiers, when)


def record_and_bundle(
    host: Host,
    python: str,
    data_dir: str,
    include_identifiers: bool,
    smoke: SmokeRequest | None = None,
    plugins: bool = True,
    sources: IdentitySources | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> Bundle:
    """Diagnose through a RecordingHost around `host` (as `capture` does) and bundle that capture."""
    recorder = RecordingHost(host)
    recorder.data_dir = data_dir
    report = diagnose(recorder, python, plugins=plugins, data_dir=data_dir, smoke=smoke)
    staging = Path(tempfile.mkdtemp(prefix="gpu-doctor-bundle-"))  # mode 0700: nothing unredacted is shared
    try:
        recorder.write(staging, python)
        return bundle_capture(staging, report, host, include_identifiers, sources, limits)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
