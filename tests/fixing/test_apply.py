"""doctor/fixing/apply.py with real subprocesses: the fake pip, and small scripts for the edge cases."""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.fixes.hosts import FAKE_PIP
from torch_gpu_doctor.fixing.apply import ApplyResult, _Lines, apply_command
from torch_gpu_doctor.host.process import run_in_terminal

INDEX = "https://download.pytorch.org/whl/cu126"
ARGV = (
    str(FAKE_PIP), "-m", "pip", "install", "--force-reinstall", "torch==2.13.0", "torchvision==0.28.0",
    "--index-url", INDEX,
)  # fmt: skip


@pytest.fixture
def pip_env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "FAKE_PIP_LOG": str(tmp_path / "pip.log")}


def script(code: str) -> tuple[str, ...]:
    return (sys.executable, "-c", code)


def test_a_successful_install_streams_every_line_in_order(pip_env: dict[str, str], tmp_path: Path) -> None:
    lines: list[str] = []
    result = apply_command(ARGV, lines.append, timeout_s=60, env=pip_env)
    assert result.ok
    assert (result.returncode, result.timed_out, result.cancelled, result.error) == (0, False, False, None)
    assert lines == [
        f"Looking in indexes: {INDEX}",
        "Collecting torch==2.13.0",
        f"  Downloading {INDEX}/torch-2.13.0%2Bcu126-cp311-cp311-manylinux_2_28_x86_64.whl (865.2 MB)",
        "Collecting torchvision==0.28.0",
        f"  Downloading {INDEX}/torchvision-0.28.0%2Bcu126-cp311-cp311-manylinux_2_28_x86_64.whl (7.5 MB)",
        "Installing collected packages: torch, torchvision",
        "  Attempting uninstall: torch",
        "    Found existing installation: torch 2.5.1",
        "    Uninstalling torch-2.5.1:",
        "      Successfully uninstalled torch-2.5.1",
        "Successfully installed torch-2.13.0+cu126 torchvision-0.28.0+cu126",
    ]
    assert result.output_tail == "\n".join(lines)
    logged = (tmp_path / "pip.log").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in logged] == [list(ARGV)]


def test_lines_arrive_while_the_command_still_runs(pip_env: dict[str, str]) -> None:
    seen: list[float] = []
    started = time.monotonic()
    result = apply_command(
        ARGV, lambda _: seen.append(time.monotonic() - started), env={**pip_env, "FAKE_PIP_DELAY_S": "0.2"}
    )
    assert result.ok
    assert seen[0] < result.duration_ms / 1000 - 1.0  # the first line came long before the end


def test_a_failed_install_gives_pips_error_lines(pip_env: dict[str, str]) -> None:
    result = apply_command(ARGV, lambda _: None, timeout_s=60, env={**pip_env, "FAKE_PIP_RESULT": "fail"})
    assert not result.ok
    assert result.returncode == 1
    assert result.failure_message() == (
        "ERROR: Could not find a version that satisfies the requirement torch==2.13.0 (from versions: none)\n"
        "ERROR: No matching distribution found for torch==2.13.0"
    )


def test_a_hang_is_killed_by_the_timeout(pip_env: dict[str, str]) -> None:
    lines: list[str] = []
    result = apply_command(ARGV, lines.append, timeout_s=1.5, env={**pip_env, "FAKE_PIP_RESULT": "hang"})
    assert result.timed_out and not result.ok
    assert result.returncode == -9
    assert result.duration_ms >= 1400  # killed at the timeout, not before it (an upper bound would be flaky)
    assert lines == [f"Looking in indexes: {INDEX}", "Collecting torch==2.13.0"]
    head, rest = result.failure_message().split("\n", 1)
    assert re.fullmatch(r"Stopped after \d+ s: it did not finish in time\.", head)
    assert rest == f"Looking in indexes: {INDEX}\nCollecting torch==2.13.0"


def _gone(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status  # killed, waiting for init to reap it


def test_cancel_kills_the_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    code = (
        "import signal, subprocess, sys, time\n"
        # Python keeps an inherited SIG_IGN (a test run started in the background has one): Ctrl-C as usual
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "child = subprocess.Popen(['sleep', '300'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(300)\n"
    )
    cancel = threading.Event()
    lines: list[str] = []

    def on_line(line: str) -> None:
        lines.append(line)
        cancel.set()  # cancel as soon as it has started its child

    result = apply_command(script(code), on_line, timeout_s=60, cancel=cancel)
    assert result.cancelled and not result.timed_out and not result.ok
    assert lines[0] == "started"
    assert "KeyboardInterrupt" in lines[-1]  # a Ctrl-C first: pip rolls an unfinished install back on it
    assert result.failure_message().startswith("Cancelled.\n")
    grandchild = int(pid_file.read_text(encoding="utf-8"))
    deadline = time.monotonic() + 5
    while not _gone(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(grandchild)


def test_a_command_that_ignores_the_interrupt_is_killed_after_the_grace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("torch_gpu_doctor.fixing.apply.INTERRUPT_GRACE_S", 0.5)
    code = (
        "import signal, time\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "print('started', flush=True)\n"
        "time.sleep(300)\n"
    )
    cancel = threading.Event()
    result = apply_command(script(code), lambda _: cancel.set(), timeout_s=60, cancel=cancel)
    assert result.cancelled and result.returncode == -9


def test_a_missing_program_is_an_error_not_an_exception() -> None:
    result = apply_command(("/nonexistent/bin/python", "-m", "pip", "install", "torch"), lambda _: None)
    assert result.error == "/nonexistent/bin/python: not found"
    assert result.returncode is None and not result.ok
    assert result.failure_message() == "/nonexistent/bin/python: not found"


def test_a_program_without_execute_permission_is_an_error(tmp_path: Path) -> None:
    plain = tmp_path / "python"
    plain.write_text("#!/bin/sh\n", encoding="utf-8")
    plain.chmod(0o644)
    result = apply_command((str(plain), "-m", "pip"), lambda _: None)
    assert result.error == f"{plain}: permission denied"
    assert not result.ok


def test_pip_never_waits_for_input() -> None:
    lines: list[str] = []
    code = "import os, sys; print(os.environ.get('PIP_NO_INPUT')); print(repr(sys.stdin.read()))"
    result = apply_command(script(code), lines.append, env={"PATH": os.environ["PATH"]})
    assert result.ok
    assert lines == ["1", "''"]


def test_progress_redraws_collapse_to_what_a_terminal_shows() -> None:
    code = (
        "import sys, time\n"
        "for p in (10, 50, 100):\n"
        "    sys.stdout.write(f'\\rDownloading {p}%'); sys.stdout.flush(); time.sleep(0.3)\n"
        "print(); print('Installed', flush=True)\n"
    )
    lines: list[str] = []
    result = apply_command(script(code), lines.append)
    assert result.ok
    assert result.output_tail == "Downloading 100%\nInstalled"
    assert lines[-2:] == ["Downloading 100%", "Installed"]
    assert "Downloading 10%" in lines  # a redraw reached the display while the command ran
    assert not any("\r" in line for line in lines)


def test_the_line_splitter_joins_chunks_at_any_byte() -> None:
    data = "Größe 5%\r\nÄ 50%\rÄ 100%\nend".encode()
    splitter = _Lines()
    out = [item for i in range(len(data)) for item in splitter.feed(data[i : i + 1])]
    out += list(splitter.feed(b"", final=True))
    assert [text for text, finished in out if finished] == ["Größe 5%", "Ä 100%", "end"]
    assert all("\r" not in text and "\ufffd" not in text for text, _ in out)


def test_a_broken_display_does_not_stop_the_command(pip_env: dict[str, str]) -> None:
    def broken(_: str) -> None:
        raise RuntimeError("display gone")

    result = apply_command(ARGV, broken, env=pip_env)
    assert result.ok
    assert result.output_tail.endswith("Successfully installed torch-2.13.0+cu126 torchvision-0.28.0+cu126")


def test_a_child_left_holding_the_pipe_does_not_hold_the_result() -> None:
    """The grandchild holds the pipe far longer than the call may wait: had apply_command waited for the pipe to
    close, it would have timed out (no wall-clock assertion: that would fail on a busy machine)."""
    code = "import subprocess; subprocess.Popen(['sleep', '90']); print('done', flush=True)"
    result = apply_command(script(code), lambda _: None, timeout_s=60)
    assert result.ok and result.output_tail == "done"
    assert not result.timed_out


def test_failure_message_without_error_lines_is_the_exit_code_and_the_last_lines() -> None:
    result = ApplyResult(("x",), 3, False, None, "one\n\ntwo", 5.0)
    assert result.failure_message() == "Exited with code 3.\none\ntwo"
    assert ApplyResult(("x",), -11, False, None, "", 5.0).failure_message() == "Killed by signal 11."


def test_externally_managed_pip_error_is_kept_whole() -> None:
    tail = (
        "error: externally-managed-environment\n\n× This environment is externally managed\nnote: see PEP 668"
    )
    result = ApplyResult(("python3", "-m", "pip"), 1, False, None, tail, 5.0)
    assert result.failure_message() == (
        "error: externally-managed-environment\n× This environment is externally managed"
    )


def test_run_in_terminal_returns_the_exit_code() -> None:
    assert run_in_terminal(script("import sys; sys.exit(3)")) == 3
    assert run_in_terminal(("/nonexistent/bin/tool",)) is None


def test_run_in_terminal_stops_at_its_timeout() -> None:
    """A child that ended on its own would give its exit code (0): None is the timeout, no clock needed."""
    assert run_in_terminal(script("import time; time.sleep(60)"), timeout_s=0.5) is None
