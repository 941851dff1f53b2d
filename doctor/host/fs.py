"""Filesystem access relative to a root directory, shared by the real and the recorded host.

Paths are always host-absolute (`/sys/...`). Symlinks are resolved inside the root, so a captured tree with
real relative sysfs links behaves like the machine, and an absolute or escaping link cannot leave the root.
"""

from __future__ import annotations

import errno
import os
import posixpath
from pathlib import Path

from torch_gpu_doctor.host.base import MAX_READ_BYTES
from torch_gpu_doctor.unavailable import Reason, Unavailable

READ_CHUNK = 64 << 10
_MAX_LINKS = 40  # the kernel's own limit on nested symlinks


def oserror_unavailable(exc: OSError, path: str) -> Unavailable:
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return Unavailable(Reason.NOT_FOUND, path)
    if exc.errno in (errno.EACCES, errno.EPERM):
        return Unavailable(Reason.PERMISSION_DENIED, path)
    if exc.errno in (errno.ENODEV, errno.ENXIO, errno.EOPNOTSUPP, errno.EINVAL):
        return Unavailable(Reason.NOT_SUPPORTED, f"{path}: {exc.strerror}")
    return Unavailable(Reason.FAILED, f"{path}: {exc.strerror or exc}")


class RootedFs:
    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def _local(self, path: str) -> Path:
        """Where a host path lives on this machine (no symlink resolution)."""
        clean = posixpath.normpath("/" + path.lstrip("/"))
        return self.root / clean.lstrip("/") if clean != "/" else self.root

    def resolve(self, path: str) -> str | Unavailable:
        """Resolve symlinks component by component without leaving the root; returns a host path."""
        parts = [p for p in posixpath.normpath("/" + path.lstrip("/")).split("/") if p]
        resolved: list[str] = []
        hops = 0
        while parts:
            name = parts.pop(0)
            if name == "..":
                if resolved:
                    resolved.pop()
                continue
            if name == ".":
                continue
            candidate = "/" + "/".join([*resolved, name])
            local = self._local(candidate)
            try:
                target = os.readlink(local) if local.is_symlink() else None
            except OSError as exc:  # EACCES on a parent directory, as a non-root user
                return oserror_unavailable(exc, path)
            if target is not None:
                hops += 1
                if hops > _MAX_LINKS:
                    return Unavailable(Reason.FAILED, f"{path}: too many levels of symbolic links")
                if target.startswith("/"):
                    resolved = []
                parts = [p for p in target.split("/") if p] + parts
                continue
            resolved.append(name)
        return "/" + "/".join(resolved)

    def read_bytes(self, path: str) -> bytes | Unavailable:
        real = self.resolve(path)
        if isinstance(real, Unavailable):
            return real
        try:
            with self._local(real).open("rb", buffering=0) as handle:
                # Small reads: procfs sysctl files refuse one huge read() with ENOMEM (seen on Linux 6.18).
                chunks: list[bytes] = []
                size = 0
                while size < MAX_READ_BYTES:
                    chunk = handle.read(READ_CHUNK)
                    if not chunk:
                        break
                    chunks.append(chunk)
                    size += len(chunk)
                return b"".join(chunks)[:MAX_READ_BYTES]
        except IsADirectoryError:
            return Unavailable(Reason.FAILED, f"{path}: is a directory")
        except OSError as exc:
            return oserror_unavailable(exc, path)

    def read_text(self, path: str) -> str | Unavailable:
        data = self.read_bytes(path)
        if isinstance(data, Unavailable):
            return data
        return data.decode("utf-8", errors="replace")

    def listdir(self, path: str) -> tuple[str, ...] | Unavailable:
        real = self.resolve(path)
        if isinstance(real, Unavailable):
            return real
        try:
            return tuple(sorted(os.listdir(self._local(real))))
        except OSError as exc:
            return oserror_unavailable(exc, path)

    def readlink(self, path: str) -> str | Unavailable:
        parent = self.resolve(posixpath.dirname(path) or "/")
        if isinstance(parent, Unavailable):
            return parent
        try:
            return os.readlink(self._local(posixpath.join(parent, posixpath.basename(path))))
        except OSError as exc:
            return oserror_unavailable(exc, path)

    def exists(self, path: str) -> bool:
        real = self.resolve(path)
        try:
            return not isinstance(real, Unavailable) and self._local(real).exists()
        except OSError:
            return False

    def is_dir(self, path: str) -> bool:
        real = self.resolve(path)
        try:
            return not isinstance(real, Unavailable) and self._local(real).is_dir()
        except OSError:
            return False

    def realpath(self, path: str) -> str | Unavailable:
        return self.resolve(path)

    def is_executable_file(self, path: str) -> bool:
        real = self.resolve(path)
        if isinstance(real, Unavailable):
            return False
        local = self._local(real)
        try:
            return local.is_file() and os.access(local, os.X_OK)
        except OSError:
            return False
