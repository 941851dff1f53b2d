"""GPU health from NVML: the A100 capture's answers, per-field NotSupported, garbage, and the real binding
(sessions shared between probes, the clock-reason call of older drivers)."""

from __future__ import annotations

import json
import sys
import threading
import types
from pathlib import Path
from typing import Any, cast

import pytest

from torch_gpu_doctor.facts.gpu_health import GpuHealth, gather_gpu_health
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.host.nvml import Nvml, NvmlError, RealNvml, RecordedNvml
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.host.recording import RecordingNvml
from torch_gpu_doctor.serialize import from_json, to_json
from torch_gpu_doctor.unavailable import Reason, Unavailable

SAMPLE = (
    Path(__file__).resolve().parents[1] / "fixtures" / "driver-state-trees" / "a100x4-remap-pending-xid-log"
)
NOT_SUPPORTED = Unavailable(Reason.NOT_SUPPORTED, "NVMLError_NotSupported")


class NvmlOnly:
    def __init__(self, data: dict[str, Any] | None) -> None:
        self.data = data

    def nvml(self) -> Nvml:
        return RecordedNvml(self.data)


def health(data: dict[str, Any] | None) -> tuple[GpuHealth, ...] | Unavailable:
    return gather_gpu_health(cast(Host, NvmlOnly(data)))


def reason(value: object) -> Reason:
    assert isinstance(value, Unavailable), value
    return value.reason


def test_a100_capture_reads_every_field() -> None:
    gpus = gather_gpu_health(RecordedHost(SAMPLE))
    assert not isinstance(gpus, Unavailable) and len(gpus) == 4
    remap = gpus[1]
    assert remap == GpuHealth(
        index=1,
        bdf="0000:9e:00.0",
        clocks_event_reasons=1,
        display_active=False,
        ecc_enabled=True,
        ecc_pending=True,
        ecc_corrected_volatile=353,
        ecc_uncorrected_volatile=0,
        ecc_corrected_aggregate=353,
        ecc_uncorrected_aggregate=0,
        retired_pages_single_bit=NOT_SUPPORTED,
        retired_pages_double_bit=NOT_SUPPORTED,
        retired_pages_pending=NOT_SUPPORTED,
        remapped_rows_correctable=1,
        remapped_rows_uncorrectable=0,
        remapped_rows_pending=True,
        remapping_failed=False,
    )
    assert from_json(GpuHealth, json.loads(json.dumps(to_json(remap)))) == remap


def test_a_device_without_health_answers_is_not_supported_field_by_field() -> None:
    gpus = health({"devices": [{"pci_bus_id": "00000000:01:00.0"}]})
    assert not isinstance(gpus, Unavailable)
    (gpu,) = gpus
    assert gpu.bdf == "0000:01:00.0"
    for name, value in vars(gpu).items():
        if name not in ("index", "bdf"):
            assert value == NOT_SUPPORTED, name


@pytest.mark.parametrize(
    ("answers", "field"),
    [
        ({"clocks_event_reasons": -1}, "clocks_event_reasons"),
        ({"clocks_event_reasons": 1 << 64}, "clocks_event_reasons"),
        ({"clocks_event_reasons": "0x1"}, "clocks_event_reasons"),
        ({"display_active": True}, "display_active"),  # JSON true is not NVML's 0/1
        ({"display_active": 2}, "display_active"),
        ({"ecc_mode": [1]}, "ecc_enabled"),
        ({"ecc_mode": [1, 7]}, "ecc_pending"),
        ({"ecc_errors_uncorrected_volatile": 3.5}, "ecc_uncorrected_volatile"),
        ({"retired_pages_pending": None}, "retired_pages_pending"),
        ({"remapped_rows": [0, 0, 0]}, "remapped_rows_pending"),
        ({"remapped_rows": [0, -4, 0, 0]}, "remapped_rows_uncorrectable"),
        ({"pci_bus_id": "bus zero"}, "bdf"),
        ({"pci_bus_id": 5}, "bdf"),
    ],
)
def test_garbled_answers_are_unparseable(answers: dict[str, Any], field: str) -> None:
    gpus = health({"devices": [answers]})
    assert not isinstance(gpus, Unavailable)
    assert reason(getattr(gpus[0], field)) is Reason.UNPARSEABLE


def test_per_field_errors_keep_their_reason() -> None:
    denied = {"error": "NoPermission", "code": 4}
    gpus = health({"devices": [{"ecc_mode": denied, "remapped_rows": {"error": "GpuIsLost", "code": 15}}]})
    assert not isinstance(gpus, Unavailable)
    assert reason(gpus[0].ecc_enabled) is Reason.PERMISSION_DENIED
    assert gpus[0].remapping_failed == Unavailable(Reason.FAILED, "NVMLError_GpuIsLost")


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (None, Reason.NOT_FOUND),  # no libnvidia-ml
        ({"init": {"error": "LibRmVersionMismatch", "code": 18}}, Reason.FAILED),
        ({"device_count": {"error": "Unknown", "code": 999}}, Reason.FAILED),
        ({"device_count": "two"}, Reason.UNPARSEABLE),
        ({"device_count": 5000}, Reason.UNPARSEABLE),
        ({"devices": "garbage"}, Reason.UNPARSEABLE),
    ],
)
def test_no_usable_nvml_session_is_unavailable(data: dict[str, Any] | None, why: Reason) -> None:
    assert reason(health(data)) is why


# --- the real binding ----------------------------------------------------------------------------------------


class FakeNVMLError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__(f"NVML error {value}")
        self.value = value


def fake_pynvml(monkeypatch: pytest.MonkeyPatch, **functions: Any) -> dict[str, int]:
    calls = {"init": 0, "shutdown": 0}

    def init() -> None:
        calls["init"] += 1

    def shutdown() -> None:
        calls["shutdown"] += 1

    module = types.ModuleType("pynvml")
    module.nvmlInit = init  # type: ignore[attr-defined]
    module.nvmlShutdown = shutdown  # type: ignore[attr-defined]
    module.nvmlDeviceGetHandleByIndex = lambda index: object()  # type: ignore[attr-defined]
    for name, fn in functions.items():
        setattr(module, name, fn)
    monkeypatch.setitem(sys.modules, "pynvml", module)
    return calls


def test_overlapping_sessions_share_one_init(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = fake_pynvml(monkeypatch)
    nvml = RealNvml()
    nvml.init()
    nvml.init()  # a second probe while the first still runs
    nvml.shutdown()
    assert calls == {"init": 1, "shutdown": 0}
    nvml.shutdown()
    assert calls == {"init": 1, "shutdown": 1}
    nvml.shutdown()  # one too many: ignored, not an NVML call
    nvml.init()
    assert calls == {"init": 2, "shutdown": 1}


def test_a_failed_init_opens_no_session(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> None:
        raise FakeNVMLError(9)

    calls = fake_pynvml(monkeypatch, nvmlInit=refuse)
    nvml = RealNvml()
    with pytest.raises(NvmlError):
        nvml.init()
    nvml.shutdown()
    assert calls["shutdown"] == 0


def test_clock_reasons_fall_back_to_the_throttle_call_of_older_drivers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing(handle: object) -> int:
        raise FakeNVMLError(13)  # NVML_ERROR_FUNCTION_NOT_FOUND: the driver predates the new name

    fake_pynvml(
        monkeypatch,
        nvmlDeviceGetCurrentClocksEventReasons=missing,
        nvmlDeviceGetCurrentClocksThrottleReasons=lambda h: 0x41,
    )
    nvml = RealNvml()
    nvml.init()
    assert nvml.device(0, "clocks_event_reasons") == 0x41


def test_clock_reasons_through_an_old_binding_without_the_new_name(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_pynvml(monkeypatch, nvmlDeviceGetCurrentClocksThrottleReasons=lambda h: 1)
    nvml = RealNvml()
    nvml.init()
    assert nvml.device(0, "clocks_event_reasons") == 1


def test_other_clock_reason_errors_are_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def unsupported(handle: object) -> int:
        raise FakeNVMLError(3)

    fake_pynvml(monkeypatch, nvmlDeviceGetCurrentClocksEventReasons=unsupported)
    nvml = RealNvml()
    nvml.init()
    with pytest.raises(NvmlError) as caught:
        nvml.device(0, "clocks_event_reasons")
    assert caught.value.name == "NotSupported"


def test_health_queries_through_the_binding(monkeypatch: pytest.MonkeyPatch) -> None:
    pci = types.SimpleNamespace(busId=b"00000000:9E:00.0")
    fake_pynvml(
        monkeypatch,
        nvmlDeviceGetCount=lambda: 1,
        nvmlDeviceGetPciInfo=lambda h: pci,
        nvmlDeviceGetCurrentClocksEventReasons=lambda h: 0x1,
        nvmlDeviceGetDisplayActive=lambda h: 0,
        nvmlDeviceGetEccMode=lambda h: [1, 1],
        nvmlDeviceGetTotalEccErrors=lambda h, kind, counter: 353 if kind == 0 else 0,
        nvmlDeviceGetRetiredPages=lambda h, cause: [0x1000] * cause,
        nvmlDeviceGetRetiredPagesPendingStatus=lambda h: 0,
        nvmlDeviceGetRemappedRows=lambda h: (1, 0, 1, 0),
    )
    host = types.SimpleNamespace(nvml=RealNvml)
    gpus = gather_gpu_health(cast(Host, host))
    assert not isinstance(gpus, Unavailable)
    (gpu,) = gpus
    assert (gpu.bdf, gpu.ecc_corrected_volatile, gpu.ecc_uncorrected_aggregate) == ("0000:9e:00.0", 353, 0)
    assert (gpu.retired_pages_single_bit, gpu.retired_pages_double_bit) == (0, 1)
    assert (gpu.remapped_rows_correctable, gpu.remapped_rows_pending) == (1, True)


def test_two_probes_recording_at_once_replay_the_same_answers() -> None:
    """facts.nvml and facts.gpu_health query NVML concurrently during `gpu-doctor capture`."""
    data = json.loads((SAMPLE / "nvml.json").read_text())
    recording = RecordingNvml(RecordedNvml(data))
    host = cast(Host, types.SimpleNamespace(nvml=lambda: recording))
    threads = [threading.Thread(target=gather_gpu_health, args=(host,)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(recording.data["devices"]) == 4
    assert health(json.loads(json.dumps(recording.data))) == health(data)
