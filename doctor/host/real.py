"""The machine gpu-doctor runs on."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from torch_gpu_doctor.host.base import (
    DEFAULT_TIMEOUT_S,
    CommandResult,
    CommandStatus,
    DiskSpace,
    Measurement,
    StepBudgets,
    StreamedRun,
)
from torch_gpu_doctor.host.fs import RootedFs, oserror_unavailable
from torch_gpu_doctor.host.nvml import Nvml, RealNvml
from torch_gpu_doctor.host.process import BoundedReader, NotStarted, kill_group, spawn, wait
from torch_gpu_doctor.host.streaming import run_streaming
from torch_gpu_doctor.package_data import package_text
from torch_gpu_doctor.serialize import to_json
from torch_gpu_doctor.unavailable import Reason, Unavailable

MAX_OUTPUT_BYTES = 8 << 20


# The smoke test's files (doctor/probes/smoke*.py), each written as gpu_doctor_<name>.py; "smoke" is run.
SMOKE_PROBES = ("smoke", "smoke_common", "smoke_memory", "smoke_compute", "smoke_multi", "smoke_worker")


def probe_source(probe: str) -> str:
    """The text of a probe script shipped in torch_gpu_doctor.probes (run by the *target* interpreter)."""
    return package_text("torch_gpu_doctor.probes", f"{probe}.py")


def run_command(
    argv: Sequence[str], timeout: float, env: Mapping[str, str] | None = None, cwd: str | None = None
) -> CommandResult:
    """Run argv (never a shell string) with a hard timeout; the whole process group dies on timeout."""
    argv = tuple(argv)
    child_env = dict(os.environ if env is None else env)
    child_env["LC_ALL"] = "C"  # stable, parseable output
    started = time.monotonic()
    proc = spawn(argv, child_env, cwd=cwd)  # its own session: a timeout kills grandchildren holding the pipes
    if isinstance(proc, NotStarted):
        return CommandResult(argv, proc.status, stderr=proc.message)
    reader = BoundedReader(proc, MAX_OUTPUT_BYTES)  # streamed, never read whole: a flood costs 8 MiB
    returncode = wait(proc, timeout)
    if returncode is None:
        kill_group(proc)
        wait(proc, 10)  # a child stuck in the kernel may never end: report it anyway
        out, err = reader.result()
        return CommandResult(
            argv,
            CommandStatus.TIMED_OUT,
            proc.returncode,
            _decode(out),
            _decode(err) + _cut_note(reader) or f"{argv[0]}: no answer within {timeout:g} s",
            (time.monotonic() - started) * 1000,
        )
    out, err = reader.result()
    status = CommandStatus.OK if returncode == 0 else CommandStatus.NONZERO
    elapsed = (time.monotonic() - started) * 1000
    return CommandResult(argv, status, returncode, _decode(out), _decode(err) + _cut_note(reader), elapsed)


def _cut_note(reader: BoundedReader) -> str:
    cut = [name for name, lost in reader.cut.items() if lost]
    if not cut:
        return ""
    return f"\n[gpu-doctor kept the first {MAX_OUTPUT_BYTES >> 20} MiB of its {' and '.join(cut)}; the rest was cut]"


def _decode(data: bytes | None) -> str:
    return (data or b"")[:MAX_OUTPUT_BYTES].decode("utf-8", errors="replace")


class RealHost(RootedFs):
    def __init__(self, root: str = "/", measure: bool = False) -> None:
        super().__init__(root)
        self._nvml: Nvml | None = None
        self.measure_enabled = measure  # timed measurements write a temporary file and take seconds: opt-in

    @property
    def description(self) -> str:
        return "this machine"

    def env(self) -> Mapping[str, str]:
        return os.environ

    def which(self, name: str) -> str | None:
        for directory in self.env().get("PATH", os.defpath).split(os.pathsep):
            if directory and self.is_executable_file(f"{directory}/{name}"):
                return f"{directory}/{name}"
        return None

    def run(self, argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT_S) -> CommandResult:
        return run_command(argv, timeout)

    def run_probe(self, python: str, probe: str, timeout: float) -> CommandResult:
        # `python -c` puts the working directory first on sys.path: run from an empty directory so that no
        # json.py or torch/ of the user's project is imported (or executed) by the probe.
        with tempfile.TemporaryDirectory(prefix="gpu-doctor-probe-") as empty:
            result = run_command([python, "-c", probe_source(probe)], timeout, cwd=empty)
        # Show "python -c <probe:NAME>" in evidence instead of the whole script.
        return CommandResult(
            (python, "-c", f"<probe:{probe}>"),
            result.status,
            result.returncode,
            result.stdout,
            result.stderr,
            result.duration_ms,
        )

    def run_smoke(
        self, python: str, config: str, budgets: StepBudgets, on_line: Callable[[str], None] | None
    ) -> StreamedRun:
        # Run from files, not `-c`: the child imports its steps from the files beside it and starts the
        # all-reduce workers from one. The folder is otherwise empty, so that no json.py or torch/ of the
        # user's project is imported.
        with tempfile.TemporaryDirectory(prefix="gpu-doctor-smoke-") as folder:
            for probe in SMOKE_PROBES:
                (Path(folder) / f"gpu_doctor_{probe}.py").write_text(probe_source(probe), encoding="utf-8")
            script = Path(folder) / "gpu_doctor_smoke.py"
            run = run_streaming([python, str(script), config], budgets, on_line, cwd=folder)
        return StreamedRun(
            (python, "<probe:smoke>", config),
            run.status,
            run.returncode,
            run.lines,
            run.stderr,
            run.watchdog,
            run.duration_ms,
        )

    def nvml(self) -> Nvml:
        if self._nvml is None:
            self._nvml = RealNvml()
        return self._nvml

    def disk_space(self, path: str) -> DiskSpace | Unavailable:
        try:
            st = os.statvfs(self._local(path))
        except OSError as exc:
            return oserror_unavailable(exc, path)
        return DiskSpace(free_bytes=st.f_bavail * st.f_frsize, total_bytes=st.f_blocks * st.f_frsize)

    def measure(self, what: Measurement, target: str) -> Mapping[str, Any] | Unavailable:
        if not self.measure_enabled:
            return Unavailable(Reason.NOT_APPLICABLE, "run with --measure")
        if what is Measurement.RAM_BANDWIDTH:
            return measure_ram_in_child()  # a child: glibc reads the copy-routine tunable only at start
        from torch_gpu_doctor.measure.disk_read import measure_disk_read  # only with --measure

        data = to_json(measure_disk_read(self, str(self._local(target))))
        assert isinstance(data, dict)
        return data


RAM_CHILD_GRACE_S = 10.0  # the RAM child's start-up and allocation, beyond its own time budget


def measure_ram_in_child(
    threads: int | None = None, time_budget_s: float = 2.5
) -> Mapping[str, Any] | Unavailable:
    """RAM bandwidth measured in a child of this interpreter (measure/ram_child.py) started with glibc's
    non-temporal threshold set below every array (measure/ram_bandwidth.py says why), as JSON.

    The child runs from an empty folder (no json.py of the user's project on its path), in its own process
    group, killed when it outlives its budget by RAM_CHILD_GRACE_S; its output is read bounded."""
    # only with --measure: the measurement's module is not loaded otherwise
    from torch_gpu_doctor.measure.ram_bandwidth import child_argv, non_temporal_env

    env = non_temporal_env(os.environ) or dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="gpu-doctor-ram-") as empty:
        argv = child_argv(sys.executable, threads, time_budget_s)
        result = run_command(argv, time_budget_s + RAM_CHILD_GRACE_S, env=env, cwd=empty)
    if result.status is CommandStatus.TIMED_OUT:
        return Unavailable(
            Reason.TIMED_OUT,
            f"the RAM measurement's child gave no answer within {time_budget_s + RAM_CHILD_GRACE_S:g} s",
        )
    if result.returncode != 0:
        if result.returncode is not None and result.returncode < 0:
            return Unavailable(
                Reason.FAILED, f"the RAM measurement's child was killed by signal {-result.returncode}"
            )
        said = (result.stderr or result.stdout).strip().splitlines()[-1:] or [
            f"exit code {result.returncode}"
        ]
        return Unavailable(Reason.FAILED, f"the RAM measurement's child: {said[0][:300]}")
    try:
        data = json.loads(result.stdout)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return Unavailable(Reason.UNPARSEABLE, f"the RAM measurement's child printed {result.stdout[:120]!r}")
    return data
