"""The breadcrumb that outlives a hard lock: written before the GPU is touched, gone after a finished run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from torch_gpu_doctor.smoke import breadcrumb
from torch_gpu_doctor.smoke.breadcrumb import Breadcrumb, state_dir


@pytest.fixture
def boot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "boot_id"
    path.write_text("5e1d3c8c-6a0b-4c1e-9d6f-2f0c0c4f2a11\n")
    monkeypatch.setattr(breadcrumb, "BOOT_ID", path)
    return path


def dead_pid() -> int:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    return int(proc.stdout)


def test_a_finished_run_leaves_nothing(tmp_path: Path, boot: Path) -> None:
    crumb = Breadcrumb(tmp_path / "state")
    crumb.start("standard", "/venv/bin/python")
    crumb.step("matmul fp16 on GPU 0")
    data = json.loads(crumb.path.read_text())
    assert data["step"] == "matmul fp16 on GPU 0" and data["boot_id"].startswith("5e1d3c8c")
    crumb.clear()
    assert Breadcrumb(tmp_path / "state").unfinished() is None
    assert list((tmp_path / "state").iterdir()) == []  # no temporary files left behind either


def test_a_run_that_never_ended_is_reported_with_its_step_and_the_reboot(tmp_path: Path, boot: Path) -> None:
    crumb = Breadcrumb(tmp_path)
    crumb.start("deep", "/venv/bin/python")
    crumb.step("memory on GPU 1")
    data = json.loads(crumb.path.read_text())
    data["pid"] = dead_pid()
    crumb.path.write_text(json.dumps(data))
    same_boot = Breadcrumb(tmp_path).unfinished()
    assert same_boot is not None and same_boot.step == "memory on GPU 1" and same_boot.rebooted is False
    assert same_boot.mode == "deep" and same_boot.python == "/venv/bin/python"
    boot.write_text("a-different-boot\n")
    after_reboot = Breadcrumb(tmp_path).unfinished()
    assert after_reboot is not None and after_reboot.rebooted is True


def test_a_smoke_test_still_running_in_another_process_is_not_a_leftover(tmp_path: Path, boot: Path) -> None:
    crumb = Breadcrumb(tmp_path)
    crumb.start("standard", "/venv/bin/python")
    data = json.loads(crumb.path.read_text())
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) as other:
        data["pid"] = other.pid
        crumb.path.write_text(json.dumps(data))
        assert Breadcrumb(tmp_path).unfinished() is None
        other.kill()


def test_a_torn_breadcrumb_still_counts(tmp_path: Path, boot: Path) -> None:
    (tmp_path / breadcrumb.FILE_NAME).write_text('{"mode": "stan')
    found = Breadcrumb(tmp_path).unfinished()
    assert found is not None and found.mode == "unknown" and found.step is None and found.rebooted is None


def test_where_the_state_lives() -> None:
    assert state_dir({"GPU_DOCTOR_STATE_DIR": "/x"}) == Path("/x")
    assert state_dir({"XDG_STATE_HOME": "/s", "HOME": "/h"}) == Path("/s/gpu-doctor")
    assert state_dir({"HOME": "/h"}) == Path("/h/.local/state/gpu-doctor")
