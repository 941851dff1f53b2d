"""Writing the `.tar.gz`: a new file of mode 0600, never through a symlink, never over an existing file."""

from __future__ import annotations

import contextlib
import io
import os
import tarfile
from pathlib import Path

from torch_gpu_doctor.bundle.model import BundleError, Member


def _info(member: Member, mtime: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(member.path)
    info.mtime = mtime
    info.uid = info.gid = 0
    info.uname = info.gname = ""  # the account that made it is an identifier too
    if member.data is None:
        info.type = tarfile.DIRTYPE
        info.mode = 0o700
    else:
        info.size = len(member.data)
        info.mode = 0o600
    return info


def write_archive(output: Path, members: list[Member], mtime: int) -> int:
    """Write `members` (manifest first) to `output`; returns the size written. Refuses what exists there."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(output, flags, 0o600)
    except FileExistsError as exc:
        kind = "a symbolic link" if output.is_symlink() else "a file"
        raise BundleError(f"{output}: {kind} is already there; choose another name with -o") from exc
    except OSError as exc:
        raise BundleError(f"{output}: cannot create it ({exc.strerror})") from exc
    try:
        os.fchmod(fd, 0o600)  # whatever the umask said
        with (
            os.fdopen(fd, "wb") as handle,
            tarfile.open(fileobj=handle, mode="w:gz", format=tarfile.PAX_FORMAT) as tar,
        ):
            for member in members:
                data = None if member.data is None else io.BytesIO(member.data)
                tar.addfile(_info(member, mtime), data)
        return output.stat().st_size
    except BaseException as exc:
        with contextlib.suppress(OSError):
            output.unlink()  # ours: created above with O_EXCL
        if (
            isinstance(exc, OSError) and exc.filename is None
        ):  # a full disk: name the bundle, not "the output"
            raise OSError(exc.errno, exc.strerror, str(output)) from exc
        raise
