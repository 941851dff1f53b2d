"""What worker threads tell the screens: small messages, posted thread-safely, handled on the UI thread."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

from torch_gpu_doctor.records import dataclass

if TYPE_CHECKING:  # annotations only: the first paint must not wait for the engine's imports
    from torch_gpu_doctor.bundle.build import Bundle
    from torch_gpu_doctor.events import DiagnosisEvent
    from torch_gpu_doctor.report import Report
    from torch_gpu_doctor.smoke.run import SmokeProgress


@dataclass
class DiagnosisProgress(Message):
    event: DiagnosisEvent


@dataclass
class DiagnosisFinished(Message):
    report: Report


@dataclass
class DiagnosisFailed(Message):
    error: str


@dataclass
class FixOutput(Message):
    line: str


@dataclass
class SmokeStepProgress(Message):
    progress: SmokeProgress


@dataclass
class SmokeFinished(Message):
    report: Report


@dataclass
class SmokeFailed(Message):
    """The smoke run itself raised (a bug in gpu-doctor, not a GPU problem): the screen must not stay 'running'."""

    error: str


@dataclass
class BundleRecorded(Message):
    bundle: Bundle


@dataclass
class BundleFailed(Message):
    error: str
