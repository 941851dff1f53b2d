"""Where the command keeps what it saves between runs to start faster, and when it may trust such a file.

Two caches use it: compiled regular expressions (pattern_cache) and parsed package data (data_cache). Both hold
only what the package itself made from its own code and data, never anything a user pasted or a machine
reported, and both are a speed-up only: any failure here costs the speed, never the answer.

- The folder: `$GPU_DOCTOR_CACHE_DIR`, else `$XDG_CACHE_HOME/gpu-doctor`, else `~/.cache/gpu-doctor`;
  `GPU_DOCTOR_NO_CACHE=1` turns every cache off.
- A file is read only when it and its folder belong to this user and no one else may write them (the rule
  `ssh` applies to its keys): `sudo -E` never loads a file another user wrote.
- Writing is atomic (a temporary file renamed over the old one) and private (0600, whatever the umask).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path


def cache_folder(env: Mapping[str, str] = os.environ) -> Path | None:
    """The caches' folder, or None when they are turned off."""
    if env.get("GPU_DOCTOR_NO_CACHE", "") not in ("", "0"):
        return None
    folder = env.get("GPU_DOCTOR_CACHE_DIR")
    if folder:
        return Path(folder)
    home = env.get("HOME")
    if not home and not env.get("XDG_CACHE_HOME"):
        try:
            home = str(Path.home())
        except RuntimeError:  # no HOME and no passwd entry for this user (a bare container's UID): no cache
            return None
    return Path(env.get("XDG_CACHE_HOME") or Path(home or "") / ".cache") / "gpu-doctor"


def trusted(info: os.stat_result) -> bool:
    """Owned by whoever runs this, and writable by no one else."""
    geteuid = getattr(os, "geteuid", None)
    owner_ok = geteuid is None or info.st_uid == geteuid()
    return owner_ok and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def read_trusted(path: Path, max_bytes: int) -> bytes | None:
    """The file's bytes when it and its folder are trusted and it is at most `max_bytes`; else None."""
    try:
        with path.open("rb") as handle:
            info = os.fstat(handle.fileno())
            if not (trusted(info) and trusted(path.parent.stat())) or info.st_size > max_bytes:
                return None
            return handle.read()
    except OSError:
        return None


def write_private(path: Path, data: bytes) -> None:
    """Replace the file with `data` at once, readable and writable by this user alone. Raises OSError."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        # 0600 whatever the umask: a group-writable file (umask 002) would never be trusted again
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as out:
            out.write(data)
        temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)
