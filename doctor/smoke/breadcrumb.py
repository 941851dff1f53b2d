"""A file that says "a smoke test is running, now in step X", written before the GPU is touched.

The parent removes it when the child has ended, whatever happened to the child: the parent saw that outcome and
reports it. So a breadcrumb that is still there at the next run means the *parent* never got to finish: the
machine hard-locked, rebooted, or the session was killed. The next run says so first and offers the quick mode.
Each update is flushed to disk (fsync), because the case it exists for is the one where the kernel never writes
its caches back. This is gpu-doctor's own state, not the diagnosed machine's, so it is plain file I/O.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path

from torch_gpu_doctor.facts.smoke import UnfinishedRun

FILE_NAME = "smoke-in-progress.json"
STEP_FILE_NAME = "smoke-step.txt"  # the child's own record of its step, written before it touches the GPU
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def state_dir(env: Mapping[str, str]) -> Path:
    """$GPU_DOCTOR_STATE_DIR, else $XDG_STATE_HOME/gpu-doctor, else ~/.local/state/gpu-doctor."""
    if env.get("GPU_DOCTOR_STATE_DIR"):
        return Path(env["GPU_DOCTOR_STATE_DIR"])
    base = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "state")
    return Path(base) / "gpu-doctor"


def _boot_id() -> str | None:
    try:
        return BOOT_ID.read_text(encoding="ascii").strip() or None
    except OSError:
        return None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process with that pid
        return True
    return True


class Breadcrumb:
    def __init__(self, folder: Path) -> None:
        self.path = folder / FILE_NAME
        self._state: dict[str, object] = {}

    def unfinished(self) -> UnfinishedRun | None:
        """The run that left this breadcrumb, unless it is still running (another gpu-doctor, same boot)."""
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):  # torn by the crash it records: still a crash
            raw = {}
        data = raw if isinstance(raw, dict) else {}
        boot, now_boot = data.get("boot_id"), _boot_id()
        rebooted = None if not isinstance(boot, str) or now_boot is None else boot != now_boot
        pid = data.get("pid")
        if rebooted is False and isinstance(pid, int) and pid != os.getpid() and _pid_alive(pid):
            return None
        step = self._child_step() or data.get("step")
        return UnfinishedRun(
            mode=str(data.get("mode", "unknown")),
            started_at=str(data.get("started_at", "unknown")),
            step=step if isinstance(step, str) else None,
            rebooted=rebooted,
            python=str(data.get("python", "unknown")),
        )

    @property
    def step_path(self) -> Path:
        return self.path.parent / STEP_FILE_NAME

    def _child_step(self) -> str | None:
        """The child writes its step before the GPU is touched; the parent's copy comes after its start line."""
        try:
            text = self.step_path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return None
        return text[:200] or None

    def start(self, mode: str, python: str) -> None:
        started = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
        self._state = {
            "mode": mode,
            "started_at": started,
            "boot_id": _boot_id(),
            "pid": os.getpid(),
            "python": python,
            "step": None,
        }
        with contextlib.suppress(FileNotFoundError):
            self.step_path.unlink()
        self._write()

    def step(self, label: str) -> None:
        self._state["step"] = label
        self._write()

    def clear(self) -> None:
        for path in (self.path, self.step_path):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def _write(self) -> None:
        """Atomically (a torn file would lose the step) and durably (fsync: the hard-lock case)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".smoke-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(self._state, handle)
                handle.flush()
                os.fsync(handle.fileno())
            Path(tmp).replace(self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                Path(tmp).unlink()
            raise
        with contextlib.suppress(OSError):  # the rename itself must reach the disk too
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
