"""Reading a bundle safely: a hostile archive is refused with one clear sentence, nothing lands outside.

Never `extractall`: each member is checked (a relative path without `..`, a regular file or a directory,
nothing else), its bytes are counted while they are copied (a header's size is not trusted), every file must
match the manifest's sha256, and the capture's symlinks come from `links.json` only when their target is
relative and stays inside the extracted `root/`.

`tarfile` parses headers before any of that, so it never sees the archive itself: it reads a gzip stream
through `_BoundedReader` (no single read above 1 MiB, no more bytes in all than the limits allow), and
`_guarded_info` refuses a pax or GNU long-name header that is large, malformed or digit-heavy before tarfile's
own parser (quadratic on such input, CVE-2024-6232) sees its body.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import posixpath
import stat
import tarfile
import zlib
from pathlib import Path
from typing import IO, Any

from torch_gpu_doctor.bundle.model import DEFAULT_LIMITS, LINKS, MANIFEST, BundleError, Limits, human_size
from torch_gpu_doctor.host import layout
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.serialize import MAX_JSON_DEPTH, too_deep

_CHUNK = 64 << 10
_MAX_READ = 1 << 20  # tarfile reads a pax or long-name body in one call; our own copy reads _CHUNK at a time
_MAX_EXTENDED = 64 << 10  # a pax or GNU long-name header of a real bundle is a few hundred bytes
_EXTENDED_TYPES = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE)
_LONG_TYPES = (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK)
_PAX_RECORD = lazy(rb"([1-9][0-9]{0,19}) ")
_DIGIT_RUN = lazy(rb"[0-9]{33}")
_KINDS = (
    (tarfile.TarInfo.issym, "a symbolic link (bundles keep links in links.json)"),
    (tarfile.TarInfo.islnk, "a hard link"),
    (tarfile.TarInfo.ischr, "a character device"),
    (tarfile.TarInfo.isblk, "a block device"),
    (tarfile.TarInfo.isfifo, "a FIFO"),
)


def member_parts(name: str) -> list[str]:
    """The path components of a member name, or BundleError for an absolute path or a `..`."""
    if "\x00" in name or "\\" in name:
        raise BundleError(f"member {name!r}: a name with a NUL or a backslash is not a bundle path")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise BundleError(f"member {name!r}: an absolute path (a bundle's paths are relative)")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise BundleError(f"member {name!r}: a path with '..' would leave the bundle's folder")
    return parts


def _mkdirs(into: Path, parts: list[str]) -> Path:
    """Create each directory under `into`; an existing component must be a real directory."""
    current = into
    for part in parts:
        current = current / part
        try:
            info = current.lstat()
        except FileNotFoundError:
            current.mkdir(mode=0o700)
            continue
        if not stat.S_ISDIR(info.st_mode):
            raise BundleError(f"member {'/'.join(parts)}: {current.relative_to(into)} is not a directory")
    return current


def _kind_refused(member: tarfile.TarInfo) -> str | None:
    for test, what in _KINDS:
        if test(member):
            return what
    if member.issparse():
        return "a sparse file"
    if not (member.isreg() or member.isdir()):
        return f"an unsupported member type ({member.type!r})"
    return None


def _copy(source: IO[bytes], target: Path, name: str, budget: int, limits: Limits) -> tuple[int, str]:
    """Copy at most the limits' bytes; returns (size, sha256)."""
    digest = hashlib.sha256()
    size = 0
    fd = os.open(
        target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600
    )
    with os.fdopen(fd, "wb") as out:
        while chunk := source.read(_CHUNK):
            size += len(chunk)
            if size > limits.max_member_bytes:
                raise BundleError(
                    f"member {name}: larger than the {human_size(limits.max_member_bytes)} limit for one member"
                )
            if size > budget:
                raise BundleError(
                    f"the bundle unpacks to more than the {human_size(limits.max_total_bytes)} limit (at {name})"
                )
            digest.update(chunk)
            out.write(chunk)
    return size, digest.hexdigest()


class _BoundedReader:
    """The decompressed stream tarfile reads: bounded per read and in all, and checking extended headers."""

    def __init__(self, stream: gzip.GzipFile, limit: int) -> None:
        self._stream = stream
        self._limit = limit
        self._check_next: tuple[str, bytes] | None = None  # (what, type) of the body the next read returns

    def _refuse_past(self, position: int) -> None:
        if position > self._limit:
            raise BundleError(
                f"the bundle unpacks to more than {human_size(self._limit)} of tar data: refused"
            )

    def read(self, size: int = -1) -> bytes:
        if size < 0 or size > _MAX_READ:
            raise BundleError(
                f"a tar header asks for {human_size(size)} in one piece (over {human_size(_MAX_READ)}): refused"
            )
        self._refuse_past(self._stream.tell() + size)
        data = self._stream.read(size)
        if self._check_next is not None:
            what, kind = self._check_next
            self._check_next = None
            _check_extended(what, kind, data)
        return data

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if whence not in (os.SEEK_SET, os.SEEK_CUR):
            raise BundleError("tar reading asked to seek from the end: refused")
        target = offset if whence == os.SEEK_SET else self._stream.tell() + offset
        self._refuse_past(target)
        return self._stream.seek(target)

    def tell(self) -> int:
        return self._stream.tell()

    def expect_extended(self, what: str, kind: bytes) -> None:
        self._check_next = (what, kind)


def _check_extended(what: str, kind: bytes, data: bytes) -> None:
    """A pax body must be well-formed records without long digit runs; a long name must be short text."""
    if kind in _LONG_TYPES:
        return  # tarfile only cuts a long name at its NUL
    if _DIGIT_RUN.search(data):
        raise BundleError(f"{what}: a run of more than 32 digits (a CVE-2024-6232 pattern): refused")
    body = data.rstrip(b"\x00")
    pos = 0
    while pos < len(body):
        match = _PAX_RECORD.match(body, pos)
        length = int(match.group(1)) if match else 0
        record = body[pos : pos + length]
        if not match or len(record) != length or not record.endswith(b"\n") or b"=" not in record:
            raise BundleError(f"{what}: a malformed pax record at byte {pos}: refused")
        if record[match.end() - pos :].startswith(b"GNU.sparse"):
            raise BundleError(f"{what}: a sparse file (GNU.sparse pax records): refused")
        pos += length


def _guarded_info(reader: _BoundedReader) -> type[tarfile.TarInfo]:
    """A TarInfo class that sizes up every pax and long-name header before tarfile parses its body."""

    class Guarded(tarfile.TarInfo):
        @classmethod
        def frombuf(cls, buf: bytes | bytearray, encoding: str, errors: str) -> Guarded:
            info = super().frombuf(buf, encoding, errors)
            if info.type in _EXTENDED_TYPES or info.type in _LONG_TYPES:
                what = "a pax header" if info.type in _EXTENDED_TYPES else "a GNU long-name header"
                if info.size > _MAX_EXTENDED:
                    raise BundleError(
                        f"{what} of {human_size(info.size)}, over the {human_size(_MAX_EXTENDED)} "
                        "a bundle ever needs: refused"
                    )
                reader.expect_extended(what, info.type)
            return info

    return Guarded


def _forget(tar: tarfile.TarFile) -> None:
    """tarfile keeps every header it has read in `members`: 100k hostile members must not pile up."""
    members: list[tarfile.TarInfo] = getattr(tar, "members")  # noqa: B009  # untyped in typeshed
    members.clear()


def extract_bundle(archive: Path, into: Path, limits: Limits = DEFAULT_LIMITS) -> None:
    """Unpack `archive` into the empty private directory `into`, checking every member (see module doc)."""
    extracted: dict[str, tuple[int, str]] = {}
    total = count = 0
    # room for the tar headers and padding of every member besides the members' own bytes
    tar_bytes = limits.max_total_bytes + _MAX_READ + limits.max_members * 2 * tarfile.BLOCKSIZE
    try:
        with (
            gzip.open(archive, "rb") as stream,
            tarfile.open(  # type: ignore[call-overload]  # _BoundedReader: read, seek and tell only
                fileobj=(reader := _BoundedReader(stream, tar_bytes)),
                mode="r:",
                tarinfo=_guarded_info(reader),
            ) as tar,
        ):
            while (member := tar.next()) is not None:
                count += 1
                if count > limits.max_members:
                    raise BundleError(
                        f"more than {limits.max_members} members: not a bundle gpu-doctor wrote"
                    )
                parts = member_parts(member.name)
                refused = _kind_refused(member)
                if refused:
                    raise BundleError(f"member {member.name!r} is {refused}: refused")
                if not parts:
                    continue
                name = "/".join(parts)
                if member.isdir():
                    _mkdirs(into, parts)
                    _forget(tar)
                    continue
                if member.size > limits.max_member_bytes:
                    raise BundleError(
                        f"member {name}: {human_size(member.size)}, over the {human_size(limits.max_member_bytes)} limit for one member"
                    )
                parent = _mkdirs(into, parts[:-1])
                source = tar.extractfile(member)
                assert source is not None  # a regular file
                if name in extracted:
                    raise BundleError(f"member {name} appears twice")
                try:
                    size, sha = _copy(
                        source, parent / parts[-1], name, limits.max_total_bytes - total, limits
                    )
                except FileExistsError as exc:
                    raise BundleError(f"member {name} appears twice") from exc
                total += size
                extracted[name] = (size, sha)
                _forget(tar)
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        if isinstance(exc, OSError) and exc.errno is not None:
            raise BundleError(f"{archive}: cannot unpack it ({exc.strerror}: {exc.filename})") from exc
        raise BundleError(
            f"{archive}: not a gzip-compressed tar archive, or a truncated one ({exc})"
        ) from exc
    _verify(into, extracted)
    _make_links(into)


def _load(into: Path, name: str) -> Any:
    try:
        data = json.loads((into / name).read_text(encoding="utf-8"))
    except RecursionError:
        raise BundleError(f"{name}: unreadable (nested too deep)") from None
    except (OSError, ValueError) as exc:
        raise BundleError(f"{name}: unreadable ({exc})") from exc
    if too_deep(data):
        raise BundleError(f"{name}: unreadable (nested deeper than {MAX_JSON_DEPTH} levels)")
    return data


def _verify(into: Path, extracted: dict[str, tuple[int, str]]) -> None:
    if MANIFEST not in extracted:
        raise BundleError(f"no {MANIFEST}: not a bundle that gpu-doctor wrote")
    document = _load(into, MANIFEST)
    rows = document.get("members") if isinstance(document, dict) else None
    if not isinstance(rows, list):
        raise BundleError(f"{MANIFEST}: no member list")
    listed: dict[str, tuple[int, str]] = {}
    for row in rows:
        if isinstance(row, dict) and row.get("type") == "file":
            listed[str(row.get("path"))] = (row.get("size"), row.get("sha256"))  # type: ignore[assignment]
    for name, (size, sha) in extracted.items():
        if name == MANIFEST:
            continue
        if name not in listed:
            raise BundleError(f"member {name} is not in {MANIFEST}: refused")
        if listed[name] != (size, sha):
            raise BundleError(
                f"member {name} does not match its sha256 in {MANIFEST}: the bundle was altered or damaged"
            )
    missing = sorted(set(listed) - set(extracted))
    if missing:
        raise BundleError(f"{MANIFEST} lists {missing[0]}, which the archive does not hold")


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _make_links(into: Path) -> None:
    """Recreate the capture's symlinks: relative targets that stay inside root/, at paths inside root/."""
    if not (into / LINKS).is_file():
        return
    document = _load(into, LINKS)
    links = document.get("links") if isinstance(document, dict) else None
    if not isinstance(links, dict):
        raise BundleError(f"{LINKS}: expected {{'links': {{path: target}}}}")
    base = Path(os.path.realpath(into))
    root = str(base / layout.ROOT_DIR)
    made: list[Path] = []
    for path, target in sorted(links.items()):
        if not isinstance(path, str) or not isinstance(target, str):
            raise BundleError(f"{LINKS}: a link is not a pair of strings")
        parts = member_parts(path)
        if not parts or parts[0] != layout.ROOT_DIR or len(parts) < 2:
            raise BundleError(f"{LINKS}: link {path!r} is outside {layout.ROOT_DIR}/: refused")
        if target.startswith("/") or "\x00" in target:
            raise BundleError(f"{LINKS}: link {path!r} -> {target!r} is absolute: refused")
        parent = _mkdirs(into, parts[:-1])
        real_parent = os.path.realpath(parent)
        if not _inside(real_parent, root) or Path(real_parent) != base.joinpath(*parts[:-1]):
            raise BundleError(f"{LINKS}: link {path!r} would be made through another link: refused")
        if not _inside(posixpath.normpath(posixpath.join(real_parent, target)), root):
            raise BundleError(f"{LINKS}: link {path!r} -> {target!r} points outside the capture: refused")
        local = Path(real_parent) / parts[-1]
        if local.is_symlink() or local.exists():
            raise BundleError(f"{LINKS}: link {path!r} is also a member: refused")
        local.symlink_to(target)
        made.append(local)
    for local in made:  # a chain of links, each inside, may still lead out through `..` after a hop
        if not _inside(os.path.realpath(local), root):
            raise BundleError(
                f"{LINKS}: link {os.path.relpath(local, base)!r} resolves outside the capture: refused"
            )
