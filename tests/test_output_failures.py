"""When the output cannot be written, gpu-doctor says so in one line, or (a reader that went away, `| head`)
nothing at all: never "internal error", never a traceback. Run as a person runs it: a real process, a real
pipe, /dev/full, a closed stdout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from torch_gpu_doctor.exit_codes import ExitCode

HOSTS = Path(__file__).parent / "fixtures" / "hosts"
DOCTOR = [sys.executable, "-m", "torch_gpu_doctor"]
REPLAY = ["--replay", str(HOSTS / "wsl2")]


def _stderr_is_clean(stderr: str) -> None:
    assert (
        "internal error" not in stderr and "Traceback" not in stderr and "Exception ignored" not in stderr
    ), stderr


@pytest.mark.parametrize("argv", [["--list-checks"], [*REPLAY, "--plain"], [*REPLAY, "fix", "--dry-run"]])
def test_a_reader_that_goes_away_ends_it_quietly(argv: list[str]) -> None:
    proc = subprocess.Popen([*DOCTOR, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before gpu-doctor writes its first line (`| head -0`, a pager quit)
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == ExitCode.BROKEN_PIPE
    _stderr_is_clean(stderr)
    assert stderr == ""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("mode", ["--plain", "--json"])
def test_a_full_disk_is_one_line_naming_the_error(mode: str) -> None:
    with Path("/dev/full").open("w") as full:
        proc = subprocess.run(
            [*DOCTOR, *REPLAY, mode], check=False, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120
        )
    assert proc.returncode == ExitCode.OUTPUT
    _stderr_is_clean(proc.stderr)
    assert proc.stderr.strip().splitlines() == [
        "gpu-doctor: cannot write the output: No space left on device"
    ]


def test_a_closed_stdout_is_one_line() -> None:
    # a child started with descriptor 1 closed, as `gpu-doctor ... >&-` does
    code = "import os, runpy, sys; os.close(1); sys.argv = ['gpu-doctor', *sys.argv[1:]]; " + (
        "runpy.run_module('torch_gpu_doctor', run_name='__main__')"
    )
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", code, *REPLAY, "--json"],
        check=False,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == ExitCode.OUTPUT, proc.stderr
    _stderr_is_clean(proc.stderr)
    assert "gpu-doctor: cannot write the output" in proc.stderr


def test_a_bundle_on_a_full_disk_names_the_bundle_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The disk fills while the archive is written (ENOSPC from the write, as on a full filesystem): one line
    naming the bundle's path and the OS error, exit 5, and no half-written archive left behind."""
    import errno
    import tarfile

    from torch_gpu_doctor.cli import main

    def full(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(tarfile.TarFile, "addfile", full)
    target = tmp_path / "b.tar.gz"
    assert main(["bundle", "-o", str(target)]) == ExitCode.OUTPUT
    err = capsys.readouterr().err
    _stderr_is_clean(err)
    assert f"cannot write {target}: No space left on device" in err
    assert not target.exists()
