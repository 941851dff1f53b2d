"""A captured machine replayed from a directory (see torch_gpu_doctor.host.layout)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

from torch_gpu_doctor.host import layout
from torch_gpu_doctor.host.base import (
    DEFAULT_TIMEOUT_S,
    CommandResult,
    CommandStatus,
    DiskSpace,
    MalformedAnswer,
    Measurement,
    StepBudgets,
    StreamedRun,
)
from torch_gpu_doctor.host.fs import RootedFs
from torch_gpu_doctor.host.nvml import Nvml, RecordedNvml
from torch_gpu_doctor.host.streaming import streamed_run_from_json
from torch_gpu_doctor.serialize import MAX_JSON_DEPTH, too_deep
from torch_gpu_doctor.unavailable import Reason, Unavailable


class CaptureError(ValueError):
    """The directory is not a readable capture."""


def _load_json(path: Path, default: Any) -> Any:
    if not path.exists():
        return default
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise CaptureError(f"{path}: nested too deep to be a capture file") from None
    except (OSError, ValueError) as exc:
        raise CaptureError(f"{path}: {exc}") from exc
    if too_deep(data):
        raise CaptureError(f"{path}: nested deeper than {MAX_JSON_DEPTH} levels, which no capture file is")
    return data


E = TypeVar("E", bound=Enum)


def _expect(value: Any, kind: type, where: str) -> Any:
    if not isinstance(value, kind):
        raise CaptureError(f"{where}: expected {'an object' if kind is dict else 'a list'}")
    return value


def _enum(kind: type[E], value: Any, where: str) -> E:
    try:
        return kind(value)
    except ValueError as exc:
        raise CaptureError(f"{where}: {value!r} is not one of {[m.value for m in kind]}") from exc


def _typed(
    raw: Mapping[str, Any], key: str, default: Any, kinds: tuple[type, ...], what: str, where: str
) -> Any:
    value = raw.get(key, default)
    if value is not None and isinstance(value, kinds) and not isinstance(value, bool):
        return value
    if value is None and type(None) in kinds:
        return None
    raise MalformedAnswer(f"{where}.{key} is {value!r}, not {what}"[:240])


def _command_result(argv: Sequence[str], raw: Mapping[str, Any], where: str) -> CommandResult:
    """A recorded answer; a value of the wrong type is a MalformedAnswer naming the file and the field."""
    status = raw.get("status", "ok")
    return CommandResult(
        tuple(argv),
        CommandStatus(status),
        _typed(
            raw, "returncode", 0 if status == "ok" else None, (int, type(None)), "an integer or null", where
        ),
        _typed(raw, "stdout", "", (str,), "a string", where),
        _typed(raw, "stderr", "", (str,), "a string", where),
        float(_typed(raw, "duration_ms", 0.0, (int, float), "a number", where)),
        source=where,
    )


class RecordedHost(RootedFs):
    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        if not (self.directory / layout.ROOT_DIR).is_dir():
            raise CaptureError(f"{self.directory} is not a capture: it has no {layout.ROOT_DIR}/ folder")
        super().__init__(self.directory / layout.ROOT_DIR)
        meta = _load_json(self.directory / layout.HOST_FILE, {})
        self.meta: dict[str, Any] = _expect(meta, dict, layout.HOST_FILE)
        self._env = {
            str(k): str(v) for k, v in _expect(self.meta.get("env", {}), dict, "host.json env").items()
        }
        self._file_errors: dict[str, Reason] = {}
        for path, reason in _expect(self.meta.get("file_errors", {}), dict, "host.json file_errors").items():
            self._file_errors[str(path)] = _enum(Reason, reason, f"file_errors[{path!r}]")
        self._commands = []
        for i, entry in enumerate(
            _expect(_load_json(self.directory / layout.COMMANDS_FILE, []), list, "commands.json")
        ):
            where = f"commands.json[{i}]"
            argv = _expect(_expect(entry, dict, where).get("argv"), list, f"{where}.argv")
            _enum(CommandStatus, entry.get("status", "ok"), f"{where}.status")
            self._commands.append((tuple(str(a) for a in argv), entry))
        self._probes: dict[str, Any] = _expect(
            _load_json(self.directory / layout.PROBES_FILE, {}), dict, "probes.json"
        )
        for name, entry in self._probes.items():
            _enum(
                CommandStatus,
                _expect(entry, dict, f"probes.json[{name!r}]").get("status", "ok"),
                f"probes.json[{name!r}].status",
            )
        smoke = _load_json(self.directory / layout.SMOKE_FILE, None)
        self._smoke = None if smoke is None else streamed_run_from_json(smoke)
        if smoke is not None and self._smoke is None:
            raise CaptureError(f"{layout.SMOKE_FILE}: not a recorded smoke run")
        nvml_data = _load_json(self.directory / layout.NVML_FILE, None)
        if nvml_data is not None and not isinstance(nvml_data, dict):
            raise CaptureError(f"{self.directory / layout.NVML_FILE}: expected a JSON object")
        self._nvml_data: dict[str, Any] | None = nvml_data
        self._measurements: dict[str, Any] = _expect(
            _load_json(self.directory / layout.MEASUREMENTS_FILE, {}), dict, "measurements.json"
        )
        self.unexpected_commands: list[tuple[str, ...]] = []

    @property
    def description(self) -> str:
        return str(self.meta.get("description") or f"capture {self.directory}")

    @property
    def python(self) -> str | None:
        """The interpreter that was diagnosed when the capture was made."""
        value = self.meta.get("python")
        return str(value) if value else None

    @property
    def data_dir(self) -> str | None:
        """The data directory the capture's storage facts were gathered for."""
        value = self.meta.get("data_dir")
        return str(value) if value else None

    def _injected(self, path: str) -> Unavailable | None:
        reason = self._file_errors.get(path)
        return Unavailable(reason, path) if reason else None

    def read_bytes(self, path: str) -> bytes | Unavailable:
        return self._injected(path) or super().read_bytes(path)

    def read_text(self, path: str) -> str | Unavailable:
        return self._injected(path) or super().read_text(path)

    def listdir(self, path: str) -> tuple[str, ...] | Unavailable:
        return self._injected(path) or super().listdir(path)

    def env(self) -> Mapping[str, str]:
        return self._env

    def which(self, name: str) -> str | None:
        for directory in self._env.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(":"):
            candidate = f"{directory}/{name}"
            try:
                if directory and self._local(candidate).is_file():  # marker files need no +x bit
                    return candidate
            except OSError:  # a recorded PATH entry no file system can hold (ENAMETOOLONG): not there
                continue
        return None

    def run(self, argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT_S) -> CommandResult:  # noqa: ARG002
        wanted = tuple(argv)
        for i, (recorded, entry) in enumerate(self._commands):
            if recorded == wanted:
                return _command_result(wanted, entry, f"{layout.COMMANDS_FILE}[{i}]")
        self.unexpected_commands.append(wanted)
        return CommandResult(
            wanted, CommandStatus.NOT_RECORDED, stderr=f"{wanted[0]}: not recorded in this capture"
        )

    def run_probe(self, python: str, probe: str, timeout: float) -> CommandResult:  # noqa: ARG002
        argv = (python, "-c", f"<probe:{probe}>")
        entry = self._probes.get(probe)
        if entry is None:
            return CommandResult(
                argv, CommandStatus.NOT_RECORDED, stderr=f"probe {probe}: not recorded in this capture"
            )
        return _command_result(argv, entry, f"{layout.PROBES_FILE}[{probe!r}]")

    def run_smoke(
        self,
        python: str,
        config: str,
        budgets: StepBudgets,  # noqa: ARG002
        on_line: Callable[[str], None] | None,
    ) -> StreamedRun:
        """The recorded run, its lines replayed through `on_line` (a capture taken with `--smoke`)."""
        run = self._smoke
        if run is None:
            message = "the smoke test was not run when this machine was captured (capture --smoke)"
            argv = (python, "<probe:smoke>", config)
            return StreamedRun(argv, CommandStatus.NOT_RECORDED, None, (), message, None, 0.0)
        for line in run.lines:
            if on_line is not None:
                on_line(line)
        return run

    def nvml(self) -> Nvml:
        return RecordedNvml(self._nvml_data)

    def disk_space(self, path: str) -> DiskSpace | Unavailable:
        entry = _recorded(self._measurements, "disk_space", path)
        answer = entry if isinstance(entry, Unavailable) else _answer(entry, "disk_space")
        if isinstance(answer, Unavailable):
            return answer
        free, total = answer.get("free_bytes"), answer.get("total_bytes")
        if not (isinstance(free, int) and isinstance(total, int)) or isinstance(free, bool):
            return Unavailable(Reason.UNPARSEABLE, f"measurements.json disk_space[{path!r}]")
        return DiskSpace(free, total)

    def measure(self, what: Measurement, target: str) -> Mapping[str, Any] | Unavailable:
        if what is Measurement.RAM_BANDWIDTH:
            value = self._measurements.get(what.value)
            if value is None:
                return Unavailable(Reason.NOT_RECORDED, f"{what.value}: not measured in this capture")
            return _answer(value, what.value) if isinstance(value, dict) else _bad(what.value)
        entry = _recorded(self._measurements, what.value, target)
        return entry if isinstance(entry, Unavailable) else _answer(entry, what.value)


def _answer(entry: dict[str, Any], where: str) -> dict[str, Any] | Unavailable:
    """A recorded result, or the recorded reason it is missing (`{"unavailable": {reason, detail}}`)."""
    missing = entry.get("unavailable")
    if set(entry) != {"unavailable"} or not isinstance(missing, dict):
        return entry
    try:
        return Unavailable(Reason(missing.get("reason")), str(missing.get("detail", "")))
    except ValueError:
        return _bad(where)


def _bad(where: str) -> Unavailable:
    return Unavailable(Reason.UNPARSEABLE, f"measurements.json {where}: expected an object")


def _recorded(data: Mapping[str, Any], kind: str, key: str) -> dict[str, Any] | Unavailable:
    table = data.get(kind)
    if table is None or (isinstance(table, dict) and key not in table):
        return Unavailable(Reason.NOT_RECORDED, f"{kind} of {key}: not recorded in this capture")
    if not isinstance(table, dict) or not isinstance(table[key], dict):
        return _bad(kind)
    return dict(table[key])
