"""Run the checks on gathered facts. A check that raises or hangs becomes a `crash` finding."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
import traceback
from collections.abc import Iterable
from datetime import datetime, timezone

from torch_gpu_doctor import __version__
from torch_gpu_doctor.catalog import load_checks
from torch_gpu_doctor.checks.support.causes import link_causes
from torch_gpu_doctor.events import CheckDone, ChecksListed, DiagnosisEvent, EventSink, ProbeDone
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.gather import DEFAULT_DEADLINE_S, default_probes, gather
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.model import Evidence, Finding, Remediation, Status, printable
from torch_gpu_doctor.registry import RegisteredCheck
from torch_gpu_doctor.report import Report, derive
from torch_gpu_doctor.smoke.plan import GpuAddress
from torch_gpu_doctor.smoke.run import SmokeRequest, gather_smoke
from torch_gpu_doctor.unavailable import Unavailable

SMOKE_LOAD_CHECKS = ("pcie.link_under_load",)  # outside the smoke area, but judged from its figures
CHECK_TIMEOUT_S = 5.0  # checks are pure and fast; this only catches a runaway loop


def run_check(check: RegisteredCheck, facts: Facts, timeout_s: float = CHECK_TIMEOUT_S) -> list[Finding]:
    box: dict[str, object] = {}

    def target() -> None:
        try:
            result = check.fn(facts)
            box["findings"] = [result] if isinstance(result, Finding) else list(result)
        except Exception as exc:
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


def select(
    checks: Iterable[RegisteredCheck], only: Iterable[str] = (), skip: Iterable[str] = ()
) -> list[RegisteredCheck]:
    only_set, skip_set = set(only), set(skip)
    return [c for c in checks if (not only_set or c.spec.id in only_set) and c.spec.id not in skip_set]


def known_check_ids(plugins: bool = True) -> set[str]:
    return {c.spec.id for c in load_checks(plugins).checks}


def diagnose(
    host: Host,
    python: str,
    only: Iterable[str] = (),
    skip: Iterable[str] = (),
    fail_on: Status = Status.FAIL,
    plugins: bool = True,
    deadline_s: float = DEFAULT_DEADLINE_S,
    data_dir: str | None = None,
    smoke: SmokeRequest | None = None,
    on_event: EventSink | None = None,
) -> Report:
    """`data_dir`: the absolute host path whose storage is diagnosed; None: the capture's, else /.

    `on_event` hears the plan, each fact section and each check as it ends (from this and the gathering
    threads); a front end draws progress from it. The Report is the same with or without it.
    """
    started = time.monotonic()
    generated_at = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    emit = _safe(on_event)
    loaded = load_checks(plugins)
    chosen = select(loaded.checks, only, skip)
    folder = data_dir or getattr(host, "data_dir", None) or "/"
    probes = default_probes(python, folder)
    emit(ChecksListed(tuple(c.spec for c in chosen), tuple(p.name for p in probes)))
    gathered = gather(host, probes, deadline_s, on_done=lambda name: emit(ProbeDone(name)))
    facts = gathered.facts
    if smoke is not None:  # after every other fact: nothing else competes with it for the GPU or the bus
        facts = _with_smoke_facts(host, python, smoke, facts)
    report = judge(facts, chosen, (*loaded.problems, *gathered.problems), fail_on, emit)
    return dataclasses.replace(
        report, generated_at=generated_at, duration_ms=round((time.monotonic() - started) * 1000, 1)
    )


def rerun_with_smoke(
    report: Report, host: Host, python: str, smoke: SmokeRequest, plugins: bool = True
) -> Report:
    """The same report after a smoke test on the same facts: nothing else is gathered again."""
    started = time.monotonic()
    facts = _with_smoke_facts(host, python, smoke, report.facts)
    ran = {s.id for s in report.specs}
    smoke_ids = {s.id for s in report.specs if s.area == "smoke" or s.id in SMOKE_LOAD_CHECKS}
    chosen = [c for c in load_checks(plugins).checks if c.spec.id in ran]
    kept = tuple(f for f in report.findings if f.check_id not in smoke_ids)
    again = judge(facts, [c for c in chosen if c.spec.id in smoke_ids], (), report.fail_on, _safe(None))
    order = {s.id: i for i, s in enumerate(report.specs)}
    findings = sorted((*kept, *again.findings), key=lambda f: order.get(f.check_id, -1))
    return dataclasses.replace(
        again,
        generated_at=report.generated_at,
        duration_ms=round(report.duration_ms + (time.monotonic() - started) * 1000, 1),
        findings=link_causes(tuple(printable(f) for f in findings)),
        specs=report.specs,
    )


def judge(
    facts: Facts,
    checks: Iterable[RegisteredCheck],
    problems: Iterable[Finding] = (),
    fail_on: Status = Status.FAIL,
    on_event: EventSink | None = None,
) -> Report:
    """Run the checks on gathered facts: the pure half of a diagnosis."""
    emit = _safe(on_event)
    chosen = list(checks)
    findings = list(problems)
    for check in chosen:
        result = run_check(check, facts)
        findings.extend(result)
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


def _with_smoke_facts(host: Host, python: str, smoke: SmokeRequest, facts: Facts) -> Facts:
    gpus = sum(1 for g in facts.gpus if g.vendor in ("nvidia", "amd"))
    nvml = () if isinstance(facts.nvml, Unavailable) else facts.nvml.devices
    addresses = [
        GpuAddress(d.uuid if isinstance(d.uuid, str) else None, d.bdf if isinstance(d.bdf, str) else None)
        for d in nvml
    ]
    result = gather_smoke(host, python, smoke, facts.torch_packages, gpus, addresses)
    return dataclasses.replace(facts, smoke=result)


def _safe(sink: EventSink | None) -> EventSink:
    """A listener's bug must never change the diagnosis."""

    def emit(event: DiagnosisEvent) -> None:
        if sink is not None:
            with contextlib.suppress(Exception):
                sink(event)

    return emit
