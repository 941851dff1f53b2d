"""A capture whose recordings hold a value of the wrong type (issue 21): a crash finding that names the file and
the field, never a bare "TypeError" nor an internal error. Found by mutating every field of a fixture host's
probes.json and commands.json (the fuzzing run in the closing note)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.runner import diagnose

HOSTS = Path(__file__).parent / "fixtures" / "hosts"


def _mutated(tmp_path: Path, host: str, file: str, change: Any) -> RecordedHost:
    copy = tmp_path / host
    shutil.copytree(HOSTS / host, copy, symlinks=True)  # sysfs trees hold symlink loops
    path = copy / file
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    return RecordedHost(copy)


def _set(probe: str, field: str, value: Any) -> Any:
    def change(data: dict[str, Any]) -> None:
        data[probe][field] = value

    return change


def _inner(probe: str, key: str, value: Any) -> Any:
    def change(data: dict[str, Any]) -> None:
        output = json.loads(data[probe]["stdout"])
        output[key] = value
        data[probe]["stdout"] = json.dumps(output)

    return change


@pytest.mark.parametrize(
    ("change", "check", "says"),
    [
        (
            _set("torch_runtime", "returncode", "x"),
            "probe.torch",
            "probes.json['torch_runtime'].returncode is 'x'",
        ),
        (
            _set("python_env", "stdout", 12),
            "probe.python",
            "probes.json['python_env'].stdout is 12, not a string",
        ),
        (
            _inner("torch_packages", "distributions", 7),
            "probe.torch_packages",
            "probes.json['torch_packages'].stdout: 'distributions' is int '7', not a list",
        ),
        (
            _inner("torch_packages", "companions", ["torchvision"]),
            "probe.torch_packages",
            "'companions' is list",
        ),
    ],
)
def test_a_wrong_type_in_probes_json_is_a_crash_naming_file_and_field(
    tmp_path: Path, change: Any, check: str, says: str
) -> None:
    host = _mutated(tmp_path, "rtx4090-workstation-healthy", "probes.json", change)
    report = diagnose(host, host.python or "python3", plugins=False)
    crash = next(f for f in report.findings if f.check_id == check)
    assert crash.status is Status.CRASH
    assert says in crash.summary
    assert "bug in gpu-doctor" not in crash.details  # a damaged capture, said as such


def test_a_wrong_type_in_commands_json_names_its_entry(tmp_path: Path) -> None:
    def change(data: list[dict[str, Any]]) -> None:
        data[0]["stdout"] = {"not": "text"}

    host = _mutated(tmp_path, "driver-upgraded-no-reboot", "commands.json", change)
    report = diagnose(host, host.python or "python3", plugins=False)
    crashes = [f for f in report.findings if f.status is Status.CRASH]
    assert crashes and all(
        "commands.json[0].stdout is {'not': 'text'}, not a string" in f.summary for f in crashes
    )
