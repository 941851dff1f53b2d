"""Sessions built from captured machines, for driving the real screens with Pilot."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from torch_gpu_doctor.catalog import load_checks
from torch_gpu_doctor.events import EventSink
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.judge import judge
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.runner import diagnose
from torch_gpu_doctor.tui.session import Session
from torch_gpu_doctor.unavailable import Unavailable

HOSTS = Path(__file__).parents[1] / "fixtures" / "hosts"
FAKE_PIP = Path(__file__).parents[1] / "fixtures" / "fake_pip" / "python"


def replay_session(name: str) -> Session:
    """The fixture machine as `gpu-doctor --root` shows it: nothing may be run."""
    host = RecordedHost(HOSTS / name)
    return Session(host, host.python or "python3", can_apply=False)


def report_of(name: str) -> Report:
    host = RecordedHost(HOSTS / name)
    return diagnose(host, host.python or "python3", plugins=False)


def with_python(facts: Facts, python: str) -> Facts:
    assert not isinstance(facts.python, Unavailable)
    return dataclasses.replace(facts, python=dataclasses.replace(facts.python, executable=python))


def live_session(*names: str, python: str = str(FAKE_PIP)) -> tuple[Session, list[int]]:
    """A session whose machine is fixture `names[0]`, then `names[1]` after the next diagnosis, and so on
    (the last one repeats), with `python` as the diagnosed interpreter, so its fixes run `python -m pip`
    for real. Returns the session and a list that counts the diagnoses."""
    reports = [report_of(n) for n in names]
    calls: list[int] = []
    checks = load_checks(plugins=False).checks

    def fake_diagnose(on_event: EventSink) -> Report:
        base = reports[min(len(calls), len(reports) - 1)]
        calls.append(1)
        return judge(with_python(base.facts, python), checks, on_event=on_event)

    host = RecordedHost(HOSTS / names[0])
    return Session(host, python, can_apply=True, diagnose_override=fake_diagnose), calls


Scenario = Callable[[], None]


@pytest.fixture(autouse=True)
def _own_state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A live session's smoke test leaves its breadcrumb here, never in the person's ~/.local/state."""
    monkeypatch.setenv("GPU_DOCTOR_STATE_DIR", str(tmp_path / "state"))


@pytest.fixture
def pip_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the fake pip writes the argv of every run (one JSON list a line)."""
    log = tmp_path / "pip.log"
    monkeypatch.setenv("FAKE_PIP_LOG", str(log))
    return log


def pip_calls(log: Path) -> list[list[str]]:
    """The argv of every fake pip run so far; none when it never ran."""
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
