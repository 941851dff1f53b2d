"""A capture with garbled metadata is refused with one clear line (exit 2), never an internal error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torch_gpu_doctor.cli import main
from torch_gpu_doctor.host.recorded import CaptureError, RecordedHost


def _capture(tmp_path: Path, **files: object) -> Path:
    (tmp_path / "root").mkdir()
    for name, content in files.items():
        (tmp_path / name.replace("_json", ".json")).write_text(json.dumps(content))
    return tmp_path


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"host_json": {"env": ["PATH"]}}, "host.json env: expected an object"),
        ({"host_json": {"file_errors": {"/proc/x": "on_fire"}}}, "'on_fire' is not one of"),
        ({"host_json": ["not", "an", "object"]}, "host.json: expected an object"),
        ({"commands_json": [{"argv": "nvidia-smi"}]}, "commands.json[0].argv: expected a list"),
        ({"commands_json": [{"argv": ["x"], "status": "weird"}]}, "commands.json[0].status"),
        ({"probes_json": {"python_env": {"status": 3}}}, "probes.json['python_env'].status"),
    ],
)
def test_garbled_capture_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], files: dict[str, object], message: str
) -> None:
    directory = _capture(tmp_path, **files)
    with pytest.raises(CaptureError, match=message.replace("[", r"\[").replace("(", r"\(")):
        RecordedHost(directory)
    assert main(["--root", str(directory), "--json"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["error"]["kind"] == "usage"  # --json: still exactly one JSON document
    assert len(err.strip().splitlines()) == 1 and message in err


def test_file_errors_are_injected(tmp_path: Path) -> None:
    directory = _capture(tmp_path, host_json={"file_errors": {"/proc/modules": "permission_denied"}})
    (directory / "root" / "proc").mkdir()
    (directory / "root" / "proc" / "modules").write_text("nvidia 1 0 - Live 0x0\n")
    host = RecordedHost(directory)
    assert str(host.read_text("/proc/modules")) == "permission denied: /proc/modules"


def test_a_path_entry_no_file_system_can_hold_is_not_there(tmp_path: Path) -> None:
    """The fuzzer (seed 43) set a capture's PATH to 300 'A's: looking for nvidia-smi under it raised
    ENAMETOOLONG out of the driver facts (a check bug); such an entry holds nothing."""
    host = RecordedHost(_capture(tmp_path, host_json={"env": {"PATH": "A" * 300 + ":/usr/bin"}}))
    assert host.which("nvidia-smi") is None
