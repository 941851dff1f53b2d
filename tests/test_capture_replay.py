"""`gpu-doctor capture DIR` writes this machine in the fixture layout; `--root DIR` replays the same report."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from torch_gpu_doctor.cli import main
from torch_gpu_doctor.host.real import RealHost
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.runner import diagnose
from torch_gpu_doctor.serialize import to_json

# what moves between two reads of a live machine (the facts test below pops the same): available RAM, free space
_MOVING = re.compile(r"[\d.]+ (?:[KMGT]i?B|bytes) (?:available|free)")


def _findings(report_json: str) -> list[tuple[str, str, str]]:
    return [
        (f["check_id"], f["status"], _MOVING.sub("N available/free", f["summary"]))
        for f in json.loads(report_json)["findings"]
    ]


def test_capture_then_replay_gives_the_same_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capture = tmp_path / "cap"
    assert main(["capture", str(capture)]) == 0
    capsys.readouterr()
    assert (capture / "root" / "proc" / "meminfo").is_file()
    assert main(["--json", "--no-plugins"]) in (0, 1)
    live = capsys.readouterr().out
    assert main(["--json", "--no-plugins", "--root", str(capture)]) in (0, 1)
    replayed = capsys.readouterr().out
    assert _findings(replayed) == _findings(live)


def test_replayed_facts_equal_live_facts_except_the_host_name(tmp_path: Path) -> None:
    capture = tmp_path / "cap"
    assert main(["capture", str(capture)]) == 0
    live = to_json(diagnose(RealHost(), sys.executable, plugins=False, data_dir=str(Path.cwd())).facts)
    recorded = RecordedHost(capture)
    replayed = to_json(diagnose(recorded, sys.executable, plugins=False).facts)
    live.pop("host")
    replayed.pop("host")
    # available memory and free space move between two reads of a live machine; the rest must match exactly
    for section in (live, replayed):
        if section["memory"]:
            section["memory"].pop("available_bytes")
        section["memory_limits"]["shm"].pop("free_bytes")
        section["storage"].pop("space")
    assert replayed == live
    assert recorded.unexpected_commands == []


def test_a_capture_has_no_dangling_links_and_none_into_the_capturing_process(tmp_path: Path) -> None:
    """What the first real GPU capture needed mending by hand: a listed GPU's `driver` link is followed to its
    directory (so it resolves in the capture), and /dev/stdin -> /proc/self/fd/0 is left out (it names the
    capturing process's own files and dangles everywhere else)."""
    from tests.facts.platform_tree import build
    from torch_gpu_doctor.host.recording import RecordingHost

    device = "/sys/bus/pci/devices/0000:00:06.0"
    live = build(
        tmp_path / "live",
        files={"/sys/devices/pci0000:00/0000:00:06.0/vendor": "0x10de\n", "/dev/nvidia0": ""},
        links={
            device: "../../../devices/pci0000:00/0000:00:06.0",
            "/sys/devices/pci0000:00/0000:00:06.0/driver": "../../../bus/pci/drivers/nvidia",
            "/sys/bus/pci/drivers/nvidia/0000:00:06.0": "../../../../devices/pci0000:00/0000:00:06.0",
            "/dev/stdin": "/proc/self/fd/0",
            "/dev/fd": "/proc/self/fd",
        },
        dirs=("/proc/self/fd",),
    )
    recorder = RecordingHost(live, local_root=tmp_path / "live" / "root")
    listed = recorder.listdir(device)
    assert isinstance(listed, tuple) and "driver" in listed
    assert recorder.readlink(device + "/driver") == "../../../bus/pci/drivers/nvidia"
    dev = recorder.listdir("/dev")
    assert isinstance(dev, tuple) and "stdin" in dev
    recorder.write(tmp_path / "capture", "/usr/bin/python3")

    root = tmp_path / "capture" / "root"
    assert (root / "sys/devices/pci0000:00/0000:00:06.0/driver").resolve().is_dir()
    # The driver's folder keeps its link back to the GPU (the real capture's folder was empty: git drops it).
    back = root / "sys/bus/pci/drivers/nvidia/0000:00:06.0"
    assert back.is_symlink() and back.resolve() == (root / "sys/devices/pci0000:00/0000:00:06.0").resolve()
    assert not (root / "dev/stdin").is_symlink() and not (root / "dev/fd").is_symlink()
    assert (root / "dev/nvidia0").exists()
    replayed = RecordedHost(tmp_path / "capture")
    assert replayed.readlink(device + "/driver") == "../../../bus/pci/drivers/nvidia"
