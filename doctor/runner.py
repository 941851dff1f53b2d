"""A diagnosis: gather the facts of a host (and the smoke test when asked), then judge them (judge.py)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable
from datetime import datetime, timezone

from torch_gpu_doctor.catalog import load_checks
from torch_gpu_doctor.checks.support.causes import link_causes
from torch_gpu_doctor.events import ChecksListed, EventSink, ProbeDone
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.gather import DEFAULT_DEADLINE_S, default_probes, gather
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.judge import judge, safe_sink
from torch_gpu_doctor.model import Status, printable
from torch_gpu_doctor.registry import RegisteredCheck
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.smoke.plan import GpuAddress
from torch_gpu_doctor.smoke.run import SmokeRequest, gather_smoke
from torch_gpu_doctor.unavailable import Unavailable

SMOKE_LOAD_CHECKS = ("pcie.link_under_load",)  # outside the smoke area, but judged from its figures


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
    emit = safe_sink(on_event)
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
    again = judge(facts, [c for c in chosen if c.spec.id in smoke_ids], (), report.fail_on, safe_sink(None))
    order = {s.id: i for i, s in enumerate(report.specs)}
    findings = sorted((*kept, *again.findings), key=lambda f: order.get(f.check_id, -1))
    return dataclasses.replace(
        again,
        generated_at=report.generated_at,
        duration_ms=round(report.duration_ms + (time.monotonic() - started) * 1000, 1),
        findings=link_causes(tuple(printable(f) for f in findings)),
        specs=report.specs,
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
