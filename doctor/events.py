"""What a diagnosis reports while it runs, so that a front end can draw each check as it finishes."""

from __future__ import annotations

from collections.abc import Callable

from torch_gpu_doctor.model import CheckSpec, Finding
from torch_gpu_doctor.records import dataclass


@dataclass(frozen=True)
class ChecksListed:
    """Before any fact is read: the checks that will run and the fact sections being gathered."""

    specs: tuple[CheckSpec, ...]
    probes: tuple[str, ...]


@dataclass(frozen=True)
class ProbeDone:
    """One fact section was read (or abandoned: its checks will say why)."""

    name: str


@dataclass(frozen=True)
class CheckDone:
    check_id: str
    findings: tuple[Finding, ...]


DiagnosisEvent = ChecksListed | ProbeDone | CheckDone
EventSink = Callable[[DiagnosisEvent], object]  # what it returns is ignored
