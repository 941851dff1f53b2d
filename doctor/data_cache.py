"""Parsed package data kept between runs of the command (issue 17's budget).

Three of the package's data files are read on almost every `gpu-doctor triage`: the error-signature catalogue,
and compat/cuda_matrix.json twice (its GPU tables and its torch releases). Decoding and validating them into
records took 35-50 ms of a 300 ms budget on the 2-core machines this project is measured on; unpickling what an
earlier run built takes about 8 ms. So a loader asks `cached(name, build, sources)`: the first run builds and
stores the records, later runs load them.

- An entry is used only while nothing it came from has changed: the package version, and the size and
  modification time of its data files and of every package module loaded when it was built (the builder and
  whatever it called or defined the records with). An editable install whose parser or data was edited builds
  anew; nothing stale is ever served.
- Loading never runs code: the unpickler hands out only record classes (dataclasses) and enums of this
  package's modules that are already imported, and refuses everything else (a function, a builtin, another
  package's class), so a damaged or foreign file is refused, and the data is built again.
- Off unless `enable` was called: only `cli.entry`, the console script, does, so tests and programs that call
  `main` or import the package always build from the files. The folder, trust and writing rules are
  cache_files'. Any failure costs only the speed.
"""

from __future__ import annotations

import contextlib
import enum
import io
import os
import pickle
import sys
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from torch_gpu_doctor import __version__
from torch_gpu_doctor.cache_files import cache_folder, read_trusted, write_private

FORMAT = 1  # the file's layout; a file of another layout is built again
MAX_BYTES = 16 * 1024 * 1024  # a bigger file is not ours: ignored
PACKAGE = __name__.rpartition(".")[0]  # torch_gpu_doctor

# each install (a venv, an editable checkout) its own files: two installs never take turns overwriting one entry
_INSTALL = f"{zlib.crc32(os.fsencode(Path(__file__).parent)):08x}"

T = TypeVar("T")
Stamp = tuple[str, int, int]  # (path, size, modification time in ns)


class _Active:
    """The process's cache folder; None (the default) builds every time."""

    folder: Path | None = None
    stamps: ClassVar[dict[str, Stamp | None]] = {}  # path -> its stamp now, each file asked once a process


def enable(env: Mapping[str, str] = os.environ) -> None:
    """Use the cache folder for the rest of this process (the console script calls this)."""
    _Active.folder, _Active.stamps = cache_folder(env), {}


def disable() -> None:
    _Active.folder, _Active.stamps = None, {}


def cached(name: str, build: Callable[[], T], sources: Sequence[Path]) -> T:
    """`build()`, or the records an earlier run built from the same data files with the same code. `name`
    names the entry's file (one per interpreter and install); `sources` are the data files `build` reads."""
    folder = _Active.folder
    if folder is None:
        return build()
    path = folder / f"data-{name}-{sys.implementation.cache_tag}-{_INSTALL}.pickle"
    found = _load(path, sources)
    if found is not None:
        return found  # type: ignore[no-any-return]  # what build() returned when it was stored
    value = build()
    # a read-only home, a full disk, a folder that is a file, a value that does not pickle: built next time too
    with contextlib.suppress(OSError, ValueError, pickle.PicklingError, TypeError, AttributeError):
        _store(path, value, sources)
    return value


def _stamp(path: str) -> Stamp | None:
    if path not in _Active.stamps:
        try:
            info = Path(path).stat()
        except OSError:
            _Active.stamps[path] = None
        else:
            _Active.stamps[path] = (path, info.st_size, info.st_mtime_ns)
    return _Active.stamps[path]


def _code_files() -> Iterable[str]:
    """The source files of the package's modules loaded now: whatever code a build used is among them."""
    for module_name, module in list(sys.modules.items()):
        if module_name == PACKAGE or module_name.startswith(f"{PACKAGE}."):
            file = getattr(module, "__file__", None)
            if isinstance(file, str):
                yield file


def _store(path: Path, value: object, sources: Sequence[Path]) -> None:
    files = sorted({*map(str, sources), *_code_files()})
    stamps = tuple(_stamp(file) for file in files)
    if any(stamp is None for stamp in stamps):
        return  # a file that cannot be asked now could never prove the entry current
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    write_private(
        path, pickle.dumps((FORMAT, __version__, stamps, payload), protocol=pickle.HIGHEST_PROTOCOL)
    )


def _load(path: Path, sources: Sequence[Path]) -> Any:
    """The stored value, or None when the file is missing, untrusted, damaged, out of date or made from other
    files than these (another install's)."""
    data = read_trusted(path, MAX_BYTES)
    if data is None:
        return None
    try:
        entry = _DataOnly(io.BytesIO(data)).load()
        if not (isinstance(entry, tuple) and len(entry) == 4 and entry[:2] == (FORMAT, __version__)):
            return None
        _, _, stamps, payload = entry
        if not isinstance(stamps, tuple) or not isinstance(payload, bytes):
            return None
        if not all(isinstance(s, tuple) and len(s) == 3 and _stamp(str(s[0])) == s for s in stamps):
            return None  # a data file or a module changed since it was built
        if not {str(source) for source in sources} <= {str(s[0]) for s in stamps}:
            return None  # built from another install's files
        return _DataOnly(io.BytesIO(payload)).load()
    except Exception:  # any damage: unpickling a foreign file may raise anything; the data is built again
        return None


class _DataOnly(pickle.Unpickler):
    """An unpickler that builds only this package's records and enums: it never imports and never calls a
    function, so a file it did not write can at worst be refused."""

    def find_class(self, module: str, name: str) -> Any:
        if module == PACKAGE or module.startswith(f"{PACKAGE}."):
            found = getattr(sys.modules.get(module), name, None)  # only what is imported already
            if isinstance(found, type) and (
                hasattr(found, "__dataclass_fields__") or issubclass(found, enum.Enum)
            ):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not package data")
