"""`gpu-doctor capture DIR`: wrap the real host, remember every answer, write them in the fixture layout."""

from __future__ import annotations

import json
import os
import posixpath
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from torch_gpu_doctor import __version__
from torch_gpu_doctor.facts.environment import relevant_env
from torch_gpu_doctor.host import layout
from torch_gpu_doctor.host.base import (
    DEFAULT_TIMEOUT_S,
    CommandResult,
    CommandStatus,
    DiskSpace,
    Host,
    Measurement,
    StepBudgets,
    StreamedRun,
)
from torch_gpu_doctor.host.fs import RootedFs
from torch_gpu_doctor.host.nvml import Nvml, NvmlError
from torch_gpu_doctor.host.streaming import streamed_run_json
from torch_gpu_doctor.unavailable import Reason, Unavailable

_V = TypeVar("_V")


def _result_json(result: CommandResult) -> dict[str, Any]:
    return {
        "argv": list(result.argv),
        "status": result.status.value,
        "returncode": result.returncode,
        "stdout": result.stdout,
        "stderr": result.stderr,
    }


NO_ANSWER = {"error": "Timeout", "code": 10, "message": "NVML did not answer while the capture was made"}


class RecordingNvml:
    def __init__(self, inner: Nvml) -> None:
        self.inner = inner
        self.data: dict[str, Any] = {"init": None, "system": {}, "devices": []}
        self._devices_lock = threading.Lock()  # two probes query NVML at once (facts.nvml, facts.gpu_health)

    def _record(self, target: dict[str, Any], key: str, fn: Any) -> Any:
        target[key] = dict(NO_ANSWER)  # stays if the call never returns: the replay then times out too
        try:
            value = fn()
        except NvmlError as error:
            target[key] = {"error": error.name, "code": error.code, "message": error.message}
            raise
        target[key] = value
        return value

    def init(self) -> None:
        self.data["init"] = dict(NO_ANSWER)
        try:
            self.inner.init()
        except NvmlError as error:
            self.data["init"] = {"error": error.name, "code": error.code, "message": error.message}
            raise
        self.data["init"] = None

    def shutdown(self) -> None:
        self.inner.shutdown()

    def system(self, query: str) -> Any:
        return self._record(self.data["system"], query, lambda: self.inner.system(query))

    def device_count(self) -> int:
        return int(self._record(self.data, "device_count", self.inner.device_count))

    def device(self, index: int, query: str) -> Any:
        devices = self.data["devices"]
        with self._devices_lock:
            while len(devices) <= index:
                devices.append({})
        return self._record(devices[index], query, lambda: self.inner.device(index, query))


class RecordingHost:
    """A Host that forwards to another and remembers what it read; `write()` makes a capture directory."""

    def __init__(self, inner: Host, local_root: Path = Path("/")) -> None:
        self.inner = inner
        self.local_root = local_root
        self.files: dict[str, bytes] = {}
        self.errors: dict[str, str] = {}
        self.paths: set[str] = set()  # every path looked at: its symlinks and directories are replicated
        self.listed: dict[str, tuple[str, ...]] = {}
        self.commands: list[CommandResult] = []
        self.probes: dict[str, CommandResult] = {}
        self.env_keys: set[str] = set()
        self._nvml: RecordingNvml | None = None
        self.measurements: dict[str, Any] = {}
        self.smoke: StreamedRun | None = None  # only when the smoke test ran (capture --smoke)
        self.data_dir: str | None = None
        self._lock = threading.Lock()  # abandoned probe threads may still record while write() runs

    @property
    def description(self) -> str:
        return self.inner.description

    def _note(self, path: str, value: _V) -> _V:
        with self._lock:
            self.paths.add(path)
            if isinstance(value, Unavailable) and value.reason is not Reason.NOT_FOUND:
                self.errors[path] = value.reason.value
        return value

    def read_bytes(self, path: str) -> bytes | Unavailable:
        value = self._note(path, self.inner.read_bytes(path))
        if isinstance(value, bytes):
            with self._lock:
                self.files[path] = value
        return value

    def read_text(self, path: str) -> str | Unavailable:
        value = self.read_bytes(path)
        return value if isinstance(value, Unavailable) else value.decode("utf-8", errors="replace")

    def listdir(self, path: str) -> tuple[str, ...] | Unavailable:
        value = self._note(path, self.inner.listdir(path))
        if isinstance(value, tuple):
            with self._lock:
                self.listed[path] = value
        return value

    def readlink(self, path: str) -> str | Unavailable:
        return self._note(path, self.inner.readlink(path))

    def realpath(self, path: str) -> str | Unavailable:
        return self._note(path, self.inner.realpath(path))

    def exists(self, path: str) -> bool:
        return self._note(path, self.inner.exists(path))

    def is_dir(self, path: str) -> bool:
        return self._note(path, self.inner.is_dir(path))

    def env(self) -> Mapping[str, str]:
        return self.inner.env()

    def which(self, name: str) -> str | None:
        found = self.inner.which(name)
        if found:
            self._note(found, found)
        return found

    def run(self, argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT_S) -> CommandResult:
        # Recorded as timed out first: a command the probe budget abandons replays as the hang it was.
        with self._lock:
            slot = len(self.commands)
            self.commands.append(CommandResult(tuple(argv), CommandStatus.TIMED_OUT, stderr="no answer"))
        result = self.inner.run(argv, timeout)
        with self._lock:
            self.commands[slot] = result
        return result

    def run_probe(self, python: str, probe: str, timeout: float) -> CommandResult:
        with self._lock:
            self.probes[probe] = CommandResult(
                (python, "-c", probe), CommandStatus.TIMED_OUT, stderr="no answer"
            )
        result = self.inner.run_probe(python, probe, timeout)
        with self._lock:
            self.probes[probe] = result
        return result

    def run_smoke(
        self, python: str, config: str, budgets: StepBudgets, on_line: Callable[[str], None] | None
    ) -> StreamedRun:
        run = self.inner.run_smoke(python, config, budgets, on_line)
        with self._lock:
            self.smoke = run
        return run

    def nvml(self) -> Nvml:
        if self._nvml is None:
            self._nvml = RecordingNvml(self.inner.nvml())
        return self._nvml

    def disk_space(self, path: str) -> DiskSpace | Unavailable:
        value = self.inner.disk_space(path)
        entry = (
            _unavailable_json(value)
            if isinstance(value, Unavailable)
            else {"free_bytes": value.free_bytes, "total_bytes": value.total_bytes}
        )
        with self._lock:
            self.measurements.setdefault("disk_space", {})[path] = entry
        return value

    def measure(self, what: Measurement, target: str) -> Mapping[str, Any] | Unavailable:
        value = self.inner.measure(what, target)
        # "Not measured" is recorded too, so that a replay says what the live run said.
        entry = _unavailable_json(value) if isinstance(value, Unavailable) else dict(value)
        with self._lock:
            if what is Measurement.RAM_BANDWIDTH:
                self.measurements[what.value] = entry
            else:
                self.measurements.setdefault(what.value, {})[target] = entry
        return value

    # -- writing --------------------------------------------------------------------------------------------

    def write(self, directory: Path, python: str) -> None:
        root = directory / layout.ROOT_DIR
        root.mkdir(parents=True)
        with self._lock:  # a snapshot: abandoned probe threads may still be recording
            paths = sorted(self.paths | set(self.files) | set(self.listed))
            listed = dict(self.listed)
            files = dict(self.files)
            errors = dict(self.errors)
            commands = list(self.commands)
            probes = dict(self.probes)
            nvml = json.loads(json.dumps(self._nvml.data)) if self._nvml is not None else None
        for path in paths:
            self._replicate(root, path)
        for path, entries in listed.items():
            for name in entries:
                self._replicate(root, posixpath.join(path, name), leaf_only=True)
        inside = RootedFs(root)
        for path, data in files.items():
            # Through symlinks (/etc/os-release -> ../usr/lib/os-release), resolved inside the capture.
            resolved = inside.resolve(path)
            target = None if isinstance(resolved, Unavailable) else self._target(root, resolved)
            if target is not None:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        kept = relevant_env(self.inner.env())
        meta = {
            "capture_schema": layout.CAPTURE_SCHEMA,
            "description": "captured machine",
            "captured_by": f"gpu-doctor {__version__}",
            "python": python,
            "env": kept,
            "file_errors": errors,
        }
        if self.data_dir is not None:
            meta["data_dir"] = self.data_dir
        _dump(directory / layout.HOST_FILE, meta)
        _dump(directory / layout.COMMANDS_FILE, [_result_json(r) for r in commands])
        _dump(directory / layout.PROBES_FILE, {k: _result_json(v) for k, v in probes.items()})
        if nvml is not None:
            _dump(directory / layout.NVML_FILE, nvml)
        with self._lock:
            measurements = json.loads(json.dumps(self.measurements))
        if measurements:
            _dump(directory / layout.MEASUREMENTS_FILE, measurements)
        if self.smoke is not None:
            _dump(directory / layout.SMOKE_FILE, streamed_run_json(self.smoke))

    def _target(self, root: Path, path: str) -> Path | None:
        clean = posixpath.normpath("/" + path.lstrip("/")).lstrip("/")
        return root / clean if clean else None

    def _replicate(self, root: Path, path: str, leaf_only: bool = False) -> None:
        """Copy the shape of `path` (its directories and symlinks) from the real machine into root."""
        parts = [p for p in posixpath.normpath("/" + path.lstrip("/")).split("/") if p]
        start = len(parts) - 1 if leaf_only else 0
        for i in range(start, len(parts)):
            host_path = "/" + "/".join(parts[: i + 1])
            real = self.local_root / host_path.lstrip("/")
            target = root / host_path.lstrip("/")
            if target.exists() or target.is_symlink():
                continue
            try:
                if real.is_symlink():
                    link = os.readlink(real)
                    # Relative to the folder the link is in, which a link above it may have moved
                    # (/sys/bus/pci/devices/X is a link to /sys/devices/pci0000:00/X).
                    parent = self._physical(posixpath.dirname(host_path))
                    resolved = posixpath.normpath(
                        link if link.startswith("/") else posixpath.join(parent, link)
                    )
                    if _of_the_capturing_process(resolved):
                        return  # /dev/stdin -> /proc/self/fd/0 names the capture's own files
                    target.parent.mkdir(parents=True, exist_ok=True)
                    # Re-written relative to the capture so it can never point outside it.
                    target.symlink_to(posixpath.relpath(resolved, parent))
                    if not leaf_only or real.is_dir():
                        # A listed entry is followed only to a directory (a GPU's `driver` link to
                        # /sys/bus/pci/drivers/nvidia), so that no link in the capture dangles.
                        self._replicate(root, resolved)
                        if parts[i] == "driver":
                            # The driver's folder lists its devices (nvidia/0000:00:06.0 -> the GPU):
                            # that link is kept too, or the folder is empty and git drops it.
                            back = posixpath.join(resolved, posixpath.basename(parent))
                            if (self.local_root / back.lstrip("/")).is_symlink():
                                self._replicate(root, back, leaf_only=True)
                elif real.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                elif real.exists() and i == len(parts) - 1:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.touch()  # a marker (device node, listed file); read files get their content later
            except OSError:
                continue

    def _physical(self, host_path: str) -> str:
        """`host_path` with every link in it followed, as a path on the captured machine."""
        base = os.path.realpath(self.local_root)
        physical = os.path.realpath(self.local_root / host_path.lstrip("/"))
        if physical != base and not physical.startswith(base.rstrip("/") + "/"):
            return host_path  # a link out of the captured tree: keep the path as written
        return "/" + os.path.relpath(physical, base) if physical != base else "/"


def _of_the_capturing_process(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in ("/proc/self", "/proc/thread-self"))


def _unavailable_json(value: Unavailable) -> dict[str, Any]:
    return {"unavailable": {"reason": value.reason.value, "detail": value.detail}}


def _dump(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False, sort_keys=False) + "\n", encoding="utf-8")
