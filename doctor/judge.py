"""Judge facts: run the checks on them and derive the report. Pure, no gathering: triage judges a paste's
facts with it, without importing the probes, the smoke test or the host layer. A check that raises or hangs
becomes a `crash` finding."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

from torch_gpu_doctor import __version__
from torch_gpu_doctor.checks.support.causes import link_causes
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.model import Evidence, Finding, Remediation, Status, printable
from torch_gpu_doctor.registry import RegisteredCheck
from torch_gpu_doctor.report import Report, derive

if TYPE_CHECKING:  # a listener's events load with the listener (triage has none)
    from torch_gpu_doctor.events import DiagnosisEvent, EventSink

CHECK_TIMEOUT_S = 5.0  # checks are pure and fast; this only catches a runaway loop


def run_check(check: RegisteredCheck, facts: Facts, timeout_s: float = CHECK_TIMEOUT_S) -> list[Finding]:
    box: dict[str, object] = {}

    def target() -> None:
        try:
            result = check.fn(facts)
            box["findings"] = [result] if isinstance(result, Finding) else list(result)
        except Exception as exc:
            import traceback  # only a crash needs it: not part of every start (issue 17's budget)

            box["error"] = exc
            box["traceback"] = traceback.format_exc()

    worker = threading.Thread(target=target, name=f"check-{check.spec.id}", daemon=True)
    worker.start()
    worker.join(timeout_s)
    cid = check.spec.id
    if worker.is_alive():
        return [_crash(cid, f"The check did not finish within {timeout_s:g} s and was abandoned.")]
    if "error" in box:
        exc = box["error"]
        return [_crash(cid, f"The check raised {type(exc).__name__}: {exc}", str(box["traceback"]))]
    findings = box.get("findings", [])
    assert isinstance(findings, list)
    bad = [f for f in findings if not _well_formed(f, cid)]
    if bad or not findings:
        return [_crash(cid, "The check returned no finding, a malformed one, or one for another check id.")]
    return findings


def _well_formed(finding: object, check_id: str) -> bool:
    """Plugins are untrusted: a finding must really be one, so that renderers never meet a bad value."""
    return (
        isinstance(finding, Finding)
        and finding.check_id == check_id
        and isinstance(finding.status, Status)
        and isinstance(finding.summary, str)
        and bool(finding.summary)
        and isinstance(finding.details, str)
        and all(isinstance(e, Evidence) for e in finding.evidence)
        and (finding.remediation is None or isinstance(finding.remediation, Remediation))
    )


def _crash(check_id: str, summary: str, tb: str = "") -> Finding:
    return Finding(
        check_id=check_id,
        status=Status.CRASH,
        summary=summary,
        details="This is a bug in the check, not a problem with your machine. Please report it with a bundle.",
        traceback=tb,
    )


def judge(
    facts: Facts,
    checks: Iterable[RegisteredCheck],
    problems: Iterable[Finding] = (),
    fail_on: Status = Status.FAIL,
    on_event: EventSink | None = None,
) -> Report:
    """Run the checks on gathered facts: the pure half of a diagnosis."""
    emit = safe_sink(on_event)
    if on_event is not None:
        from torch_gpu_doctor.events import CheckDone  # only for a listener: triage has none

    chosen = list(checks)
    findings = list(problems)
    for check in chosen:
        result = run_check(check, facts)
        findings.extend(result)
        if on_event is not None:
            emit(CheckDone(check.spec.id, tuple(result)))
    derived = derive(facts)
    return Report(
        tool_version=__version__,
        generated_at="",
        duration_ms=0.0,
        facts=facts,
        findings=link_causes(tuple(printable(f) for f in findings)),
        specs=tuple(c.spec for c in chosen),
        fail_on=fail_on,
        recommended_install=derived.recommended_install,
        smoke_figures=derived.smoke_figures,
    )


def safe_sink(sink: EventSink | None) -> EventSink:
    """A listener's bug must never change the diagnosis."""

    def emit(event: DiagnosisEvent) -> None:
        if sink is not None:
            with contextlib.suppress(Exception):
                sink(event)

    return emit
