"""--measure and --data-dir: opt-in measurements on the live machine, recorded by capture, replayed by --root."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from torch_gpu_doctor.cli import main
from torch_gpu_doctor.facts.measurements import DiskRead, RamBandwidth, gather_measurements
from torch_gpu_doctor.host.base import DiskSpace, Measurement
from torch_gpu_doctor.host.real import RealHost
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.host.recording import RecordingHost
from torch_gpu_doctor.unavailable import Reason, Unavailable

HOSTS = Path(__file__).parent / "fixtures" / "hosts"


def test_the_live_host_measures_nothing_unless_asked(tmp_path: Path) -> None:
    result = gather_measurements(RealHost(), str(tmp_path))
    for part in (result.ram, result.disk):
        assert isinstance(part, Unavailable) and part.reason is Reason.NOT_APPLICABLE
        assert "run with --measure" in part.detail
    assert list(tmp_path.iterdir()) == []  # no test file was written


def test_capture_records_measurements_and_replay_returns_them(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    recorder = RecordingHost(RealHost(measure=True))
    measured = gather_measurements(recorder, str(data))
    space = recorder.disk_space(str(data))
    assert isinstance(measured.ram, RamBandwidth) and isinstance(measured.ram.bandwidth_gb_per_s, float)
    assert isinstance(measured.disk, DiskRead)
    assert isinstance(space, DiskSpace) and 0 < space.free_bytes <= space.total_bytes
    assert list(data.iterdir()) == []  # the read test's file is gone
    recorder.write(tmp_path / "cap", "/usr/bin/python3")
    replayed = RecordedHost(tmp_path / "cap")
    assert gather_measurements(replayed, str(data)) == measured
    assert replayed.disk_space(str(data)) == space
    other = replayed.measure(Measurement.DISK_READ, "/elsewhere")
    assert isinstance(other, Unavailable) and other.reason is Reason.NOT_RECORDED


@pytest.mark.parametrize(
    "content",
    [
        {"ram_bandwidth": [1, 2]},
        {"ram_bandwidth": {"bandwidth_gb_per_s": "fast"}},
        {"disk_space": {"/": {"free_bytes": "lots", "total_bytes": 1}}},
        {"disk_read": "x"},
    ],
)
def test_garbled_recorded_measurements_are_unparseable_not_a_crash(tmp_path: Path, content: Any) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "measurements.json").write_text(json.dumps(content))
    host = RecordedHost(tmp_path)
    result = gather_measurements(host, "/")
    space = host.disk_space("/")
    assert isinstance(result.ram, Unavailable) and isinstance(result.disk, Unavailable)
    assert isinstance(space, Unavailable)
    assert Reason.UNPARSEABLE in (result.ram.reason, result.disk.reason, space.reason)


def test_data_dir_must_exist(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["--plain", "--data-dir", str(tmp_path / "nope")])
    assert code == 2
    assert "--data-dir" in capsys.readouterr().err


def test_measure_refuses_a_capture(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--plain", "--measure", "--root", str(HOSTS / "wsl2")])
    assert code == 2
    assert "replays what it recorded" in capsys.readouterr().err


def test_data_dir_is_reported_in_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    main(["--json", "--data-dir", str(tmp_path), "--check", "storage.data_dir"])
    document = json.loads(capsys.readouterr().out)
    assert document["facts"]["storage"]["path"] == str(tmp_path)
    (finding,) = document["findings"]
    assert finding["check_id"] == "storage.data_dir"
    assert finding["summary"].startswith(f"{tmp_path} is on ")
