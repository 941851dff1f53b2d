"""A capture of a machine whose NVML hangs replays as a hang, not as a healthy machine with 0 GPUs."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from torch_gpu_doctor.facts.nvml import gather_nvml
from torch_gpu_doctor.gather import Probe, gather
from torch_gpu_doctor.host.nvml import Nvml
from torch_gpu_doctor.host.real import RealHost
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.host.recording import RecordingHost
from torch_gpu_doctor.model import Status


class HangingNvml:
    def init(self) -> None:
        time.sleep(30)

    def shutdown(self) -> None:
        return None

    def system(self, query: str) -> Any:
        raise AssertionError(query)

    def device_count(self) -> int:
        raise AssertionError

    def device(self, index: int, query: str) -> Any:
        raise AssertionError(query)


class HangingHost(RealHost):
    def nvml(self) -> Nvml:
        return HangingNvml()


def test_hung_nvml_is_captured_as_a_timeout(tmp_path: Path) -> None:
    recorder = RecordingHost(HangingHost())
    result = gather(recorder, (Probe("nvml", lambda h, _: gather_nvml(h), 0.5),), deadline_s=5)
    assert [p.status for p in result.problems] == [Status.CRASH]
    recorder.write(tmp_path / "cap", "/usr/bin/python3")
    recorded = json.loads((tmp_path / "cap" / "nvml.json").read_text())
    assert recorded["init"]["error"] == "Timeout"
    replayed = gather_nvml(RecordedHost(tmp_path / "cap"))
    assert replayed.init_error is not None and replayed.init_error.name == "Timeout"
