"""The watchdog, against small real child processes that behave like the smoke test at its worst."""

from __future__ import annotations

import json
import sys
import textwrap
import time
from pathlib import Path

import pytest

from torch_gpu_doctor.host.base import CommandStatus, StepBudgets
from torch_gpu_doctor.host.streaming import run_streaming, streamed_run_from_json, streamed_run_json

FAST = StepBudgets(startup_s=20.0, steps={"slow": 1.0}, default_step_s=20.0, total_s=60.0)


def child(body: str) -> list[str]:
    prelude = "import json, os, signal, sys, time\ndef emit(**kw):\n    print(json.dumps(kw), flush=True)\n"
    return [sys.executable, "-c", prelude + textwrap.dedent(body)]


def test_a_step_that_never_ends_is_killed_and_named() -> None:
    run = run_streaming(
        child("""
            emit(event="hello")
            emit(event="start", step="slow", device=1, variant="fp16")
            time.sleep(600)
        """),
        FAST,
    )
    assert run.status is CommandStatus.TIMED_OUT
    assert run.watchdog == "slow fp16 on GPU 1 did not finish within 1 s"
    assert json.loads(run.lines[-1])["step"] == "slow"


def test_progress_lines_and_stray_output_do_not_extend_a_steps_budget() -> None:
    run = run_streaming(
        child("""
            emit(event="hello")
            emit(event="start", step="slow", device=0, variant=None)
            for i in range(200):  # 20 s of a step that keeps saying how far it is, and chatters
                emit(event="progress", step="slow", device=0, variant=None, done=i / 200)
                print("a library talking on stdout", flush=True)
                time.sleep(0.1)
        """),
        FAST,
    )
    assert run.status is CommandStatus.TIMED_OUT
    assert run.watchdog == "slow on GPU 0 did not finish within 1 s"
    # progress is shown as it comes, not kept: the record holds the protocol (and what else was printed)
    assert not any('"progress"' in line for line in run.lines)
    assert json.loads(run.lines[1])["event"] == "start"


def test_each_step_gets_its_own_budget() -> None:
    # three "slow" steps of 0.6 s each: 1.8 s in all, more than one step's budget, and still fine
    body = "emit(event='hello')\nfor i in range(3):\n    emit(event='start', step='slow', device=None)\n"
    body += "    time.sleep(0.6)\n    emit(event='end', step='slow', status='ok')\nemit(event='done')\n"
    run = run_streaming(child(body), FAST)
    assert run.status is CommandStatus.OK and run.watchdog is None
    assert len(run.lines) == 8


def test_the_total_budget_stops_a_run_that_crawls() -> None:
    budgets = StepBudgets(startup_s=20.0, steps={}, default_step_s=20.0, total_s=1.5)
    body = "emit(event='hello')\nwhile True:\n    emit(event='start', step='x')\n    time.sleep(0.2)\n"
    body += "    emit(event='end', step='x', status='ok')\n"
    run = run_streaming(child(body), budgets)
    assert run.status is CommandStatus.TIMED_OUT
    assert run.watchdog is not None and run.watchdog.startswith("the whole run took longer than 1.5 s")


def test_a_segfault_keeps_the_lines_before_it_and_the_signal() -> None:
    run = run_streaming(
        child("""
            emit(event="hello")
            emit(event="start", step="matmul", device=0)
            os.kill(os.getpid(), signal.SIGSEGV)
        """),
        FAST,
    )
    assert run.status is CommandStatus.NONZERO
    assert run.returncode == -11
    assert run.watchdog is None
    assert len(run.lines) == 2


def test_workers_left_behind_are_killed_with_the_group() -> None:
    # the child starts a grandchild that holds stdout open and sleeps: the hang is caught and the group dies
    run = run_streaming(
        child("""
            import subprocess
            p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
            emit(event="hello", worker=p.pid)
            emit(event="start", step="slow")
            time.sleep(600)
        """),
        FAST,
    )
    worker = json.loads(run.lines[0])["worker"]
    time.sleep(0.2)
    stat = Path(f"/proc/{worker}/stat")
    alive = stat.exists() and stat.read_text().split()[2] != "Z"  # a zombie is dead, only not yet reaped
    assert run.status is CommandStatus.TIMED_OUT
    assert not alive


def test_progress_sees_every_line_and_its_errors_do_not_stop_the_watchdog() -> None:
    seen: list[str] = []

    def on_line(line: str) -> None:
        seen.append(line)
        raise RuntimeError("a broken progress bar")

    run = run_streaming(child("emit(event='hello')\nprint('not json')\nemit(event='done')\n"), FAST, on_line)
    assert run.status is CommandStatus.OK
    assert seen == list(run.lines) and seen[1] == "not json"


def test_an_interpreter_that_does_not_exist() -> None:
    run = run_streaming(["/nonexistent/python", "x.py"], FAST)
    assert run.status is CommandStatus.NOT_FOUND and run.lines == ()


def test_a_stored_run_reads_back_equal_and_garbage_does_not() -> None:
    run = run_streaming(child("emit(event='hello')\nsys.stderr.write('warn\\n')\nsys.exit(2)\n"), FAST)
    assert run.status is CommandStatus.NONZERO and run.returncode == 2 and run.stderr == "warn\n"
    assert streamed_run_from_json(json.loads(json.dumps(streamed_run_json(run)))) == run
    bad: object
    for bad in (
        [],
        {"argv": "x"},
        {**streamed_run_json(run), "status": "exploded"},
        {**streamed_run_json(run), "lines": [1]},
    ):
        assert streamed_run_from_json(bad) is None


def test_a_child_that_never_ends_after_sigkill_does_not_hang_the_doctor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process stuck in the driver (D state) ignores SIGKILL: simulated by a child whose exit is never
    observed. Every wait is bounded, and the run says why it stopped waiting."""
    from torch_gpu_doctor.host import streaming

    waited: list[float | None] = []

    def never_observed(proc: object, timeout: float | None) -> None:
        waited.append(timeout)

    monkeypatch.setattr(streaming, "wait", never_observed)
    run = run_streaming(child('emit(event="hello")'), FAST)
    assert None not in waited and waited  # no wait without a limit
    assert run.status is CommandStatus.TIMED_OUT and run.returncode is None
    assert run.watchdog is not None and "did not end within 10 s of SIGKILL" in run.watchdog


def test_a_hang_creating_the_second_gpus_context_names_it_within_cuda_inits_budget() -> None:
    """Issue 22, defect 3: each `device` event used to reset the clock to the default step budget and forget
    the step, so a hang on GPU 1's context read "the next step did not finish" with no GPU named."""
    budgets = StepBudgets(startup_s=20.0, steps={"cuda_init": 1.0}, default_step_s=20.0, total_s=60.0)
    run = run_streaming(
        child("""
            emit(event="hello")
            emit(event="start", step="cuda_init", device=None, variant=None)
            emit(event="device", index=0, name="NVIDIA H100 80GB HBM3")
            time.sleep(600)
        """),
        budgets,
    )
    assert run.status is CommandStatus.TIMED_OUT
    assert run.watchdog == "cuda_init on GPU 1 did not finish within 1 s"
