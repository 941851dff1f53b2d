"""The Host seam: every byte gpu-doctor reads from a machine goes through one of these methods."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Reason, Unavailable

if TYPE_CHECKING:
    from torch_gpu_doctor.host.nvml import Nvml

DEFAULT_TIMEOUT_S = 10.0
MAX_READ_BYTES = 4 << 20  # sysfs/procfs files are tiny; this only bounds garbage


class CommandStatus(str, Enum):
    OK = "ok"
    NONZERO = "nonzero"  # ran and exited non-zero (or was killed by a signal: returncode < 0)
    NOT_FOUND = "not_found"
    PERMISSION_DENIED = "permission_denied"
    TIMED_OUT = "timed_out"
    FAILED = "failed"  # could not be started for another reason
    NOT_RECORDED = "not_recorded"  # replaying a capture that did not record this command or probe


class MalformedAnswer(ValueError):
    """A recorded answer, or a probe's output, with a value of the wrong type. Its text names the file and the
    field (`probes.json['torch_runtime'].returncode is 'x', not an integer`): the crash finding says where."""


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    status: CommandStatus
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    duration_ms: float = 0.0
    source: str = ""  # where a replayed answer came from ("probes.json['torch_runtime']"); "" when live

    @property
    def ok(self) -> bool:
        return self.status is CommandStatus.OK

    def unavailable(self) -> Unavailable:
        """Why this command gave no usable output, in the facts' vocabulary."""
        reason = {
            CommandStatus.NOT_FOUND: Reason.NOT_FOUND,
            CommandStatus.PERMISSION_DENIED: Reason.PERMISSION_DENIED,
            CommandStatus.TIMED_OUT: Reason.TIMED_OUT,
            CommandStatus.NOT_RECORDED: Reason.NOT_RECORDED,
        }.get(self.status, Reason.FAILED)
        last = (self.stderr or self.stdout).strip().splitlines()
        detail = f"{self.argv[0]}: {last[-1]}" if last else f"{self.argv[0]}: {self.status.value}"
        if self.status is CommandStatus.NONZERO:
            detail += f" (exit {self.returncode})"
        return Unavailable(reason, detail)


@dataclass(frozen=True)
class DiskSpace:
    """statvfs of the filesystem holding a path: what an unprivileged user may still write (f_bavail)."""

    free_bytes: int
    total_bytes: int


class Measurement(str, Enum):
    """Timed measurements a live machine can run (opt-in: `--measure`); a capture replays their results."""

    RAM_BANDWIDTH = "ram_bandwidth"  # target: unused ("")
    DISK_READ = "disk_read"  # target: the directory to write the temporary file in


@dataclass(frozen=True)
class StepBudgets:
    """Seconds the watchdog allows: until the first line, per step name, between steps, and in all."""

    startup_s: float
    steps: Mapping[str, float]
    default_step_s: float
    total_s: float

    def for_step(self, name: str) -> float:
        return self.steps.get(name, self.default_step_s)


@dataclass(frozen=True)
class StreamedRun:
    argv: tuple[str, ...]
    status: (
        CommandStatus  # OK, NONZERO (an exit code, or a signal: returncode < 0), TIMED_OUT, NOT_FOUND, ...
    )
    returncode: int | None
    lines: tuple[str, ...]
    stderr: str
    watchdog: str | None  # why the watchdog killed the child; None when it did not
    duration_ms: float


class Host(Protocol):
    """A machine to diagnose: the real one, or a captured one."""

    @property
    def description(self) -> str: ...

    def read_text(self, path: str) -> str | Unavailable: ...

    def read_bytes(self, path: str) -> bytes | Unavailable: ...

    def listdir(self, path: str) -> tuple[str, ...] | Unavailable: ...

    def readlink(self, path: str) -> str | Unavailable: ...

    def realpath(self, path: str) -> str | Unavailable: ...

    def exists(self, path: str) -> bool: ...

    def is_dir(self, path: str) -> bool: ...

    def env(self) -> Mapping[str, str]: ...

    def which(self, name: str) -> str | None: ...

    def run(self, argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT_S) -> CommandResult: ...

    def run_probe(self, python: str, probe: str, timeout: float) -> CommandResult: ...

    def run_smoke(
        self, python: str, config: str, budgets: StepBudgets, on_line: Callable[[str], None] | None
    ) -> StreamedRun:
        """The smoke-test probe, run by `python` under a per-step watchdog; lines reach `on_line` live."""
        ...

    def nvml(self) -> Nvml: ...

    def disk_space(self, path: str) -> DiskSpace | Unavailable: ...

    def measure(self, what: Measurement, target: str) -> Mapping[str, Any] | Unavailable:
        """The measurement's result as JSON (see torch_gpu_doctor.facts.measurements); it may take seconds."""
        ...
