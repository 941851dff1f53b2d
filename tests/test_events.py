"""A diagnosis tells a front end what it is doing, and the listener can never change the result."""

from __future__ import annotations

import threading
from pathlib import Path

from torch_gpu_doctor.events import CheckDone, ChecksListed, DiagnosisEvent, EventSink, ProbeDone
from torch_gpu_doctor.facts.smoke import SmokeMode
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.render.json_report import render_json
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.runner import diagnose, rerun_with_smoke
from torch_gpu_doctor.smoke.run import SmokeRequest

FIXTURE = Path(__file__).parent / "fixtures" / "hosts" / "egpu-not-authorized"


def _diagnose(on_event: EventSink | None = None) -> tuple[RecordedHost, Report]:
    host = RecordedHost(FIXTURE)
    return host, diagnose(host, host.python or "python3", plugins=False, on_event=on_event)


def test_the_plan_comes_first_then_every_probe_then_every_check_once() -> None:
    events: list[DiagnosisEvent] = []
    lock = threading.Lock()

    def listen(event: DiagnosisEvent) -> None:
        with lock:  # probes end on their own threads
            events.append(event)

    _, report = _diagnose(listen)
    first = events[0]
    assert isinstance(first, ChecksListed)
    probes = [e.name for e in events if isinstance(e, ProbeDone)]
    assert sorted(probes) == sorted(first.probes)
    checks = [e for e in events if isinstance(e, CheckDone)]
    assert [e.check_id for e in checks] == [s.id for s in first.specs]
    last_probe = max(i for i, e in enumerate(events) if isinstance(e, ProbeDone))
    assert all(events.index(c) > last_probe for c in checks)  # checks judge complete facts
    egpu = next(c for c in checks if c.check_id == "egpu.authorized")
    assert egpu.findings == tuple(f for f in report.findings if f.check_id == "egpu.authorized")


def test_a_listener_that_raises_changes_nothing() -> None:
    def broken(event: DiagnosisEvent) -> None:
        raise RuntimeError("a front end bug")

    _, quiet = _diagnose()
    _, noisy = _diagnose(broken)
    assert [(f.check_id, f.status, f.summary) for f in noisy.findings] == [
        (f.check_id, f.status, f.summary) for f in quiet.findings
    ]


def test_a_smoke_run_on_the_same_facts_replaces_only_the_smoke_findings() -> None:
    host, report = _diagnose()
    again = rerun_with_smoke(report, host, "python3", SmokeRequest(SmokeMode.QUICK))
    before = {f.check_id: f for f in report.findings}
    after = {f.check_id: f for f in again.findings}
    assert list(before) == list(after)  # same checks, same order
    assert after["egpu.authorized"] == before["egpu.authorized"]
    # this capture recorded no smoke run: the smoke checks now say so instead of "not run"
    assert after["smoke.run"].summary != before["smoke.run"].summary
    assert again.facts.pcie == report.facts.pcie
    assert render_json(again)  # still one valid report
