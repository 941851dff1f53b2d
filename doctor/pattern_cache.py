"""Compiled regular expressions kept between runs of the command (issues 17 and 21).

`re.compile` parses a pattern and generates its matching code in Python: 0.1-3 ms a pattern on the 2-core
machines this project is measured on, about 40 ms of a 5 KB `gpu-doctor triage`. The code it generates
depends only on the pattern, its flags and the interpreter, so the command keeps it in a cache file the way
Python keeps a module's byte code in `__pycache__`: the next run hands it straight to the regular-expression
engine (`_sre.compile`, which validates it), skipping the parse.

- Only the package's own patterns pass through here: `lazy_re.lazy` (module-level patterns) and the
  catalogues' data (error signatures, GPU families). Nothing a user pasted or a machine reported is stored.
- Off unless `enable` was called: only `cli.entry`, the console script, does, so tests and programs that call
  `main` or import the package never read or write the file.
- The file lives in the caches' folder and is trusted, read and written as cache_files says (a file another
  user may write is never read; `GPU_DOCTOR_NO_CACHE=1` turns it off).
- Anything wrong with it (missing, unreadable, another interpreter's, garbage, an entry the engine refuses)
  costs only the speed: the pattern is compiled as `re.compile` would. Writing is best effort and happens only
  when a run compiled something the file lacked.
- CPython 3.11 to 3.13 only, the versions whose `re._compiler.compile` this mirrors (tests compare every
  cached pattern with `re.compile`'s, which compares their code); elsewhere `compile` is `re.compile`.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]  # CPython's engine (no stubs): it refuses code that is not valid
import array
import contextlib
import marshal
import os
import re
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from torch_gpu_doctor.cache_files import cache_folder, read_trusted, write_private

FORMAT = 2  # the file's layout; a file of another layout is ignored and rewritten
MAX_BYTES = 4 * 1024 * 1024  # a bigger file is not ours: ignored
MAX_ENTRIES = 2048  # past this, a write keeps only what this run used (old package versions' patterns go)

# (pattern, flags) -> the arguments `re._compiler.compile` hands `_sre.compile` after the pattern itself:
# (flags with the parsed inline flags, code, group count - 1, name -> group, group -> name). The code is the
# engine's 32-bit words as bytes: a file of ~1,000 patterns as lists of ints took 15 ms to load (an int object
# for each word), as bytes about 1 ms; only the ~250 patterns a run uses become lists
Entry = tuple[int, bytes, int, dict[str, int], tuple[str | None, ...]]
_WORD = "I"  # array's typecode for the engine's SRE_CODE (uint32), where it is 4 bytes (_SUPPORTED checks)

_SUPPORTED = (
    sys.implementation.name == "cpython"
    and (3, 11) <= sys.version_info[:2] <= (3, 13)
    and _sre.CODESIZE == array.array(_WORD).itemsize == 4
)


class _Store:
    """One file's entries, read at the first compile and written by `save`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[tuple[str, int], Entry] | None = None  # None: not read yet
        self.new: dict[tuple[str, int], Entry] = {}
        self.used: set[tuple[str, int]] = set()
        self._lock = threading.Lock()  # the TUI's worker compiles while its main thread does

    def compile(self, pattern: str, flags: int) -> re.Pattern[str]:
        key = (pattern, flags)
        with self._lock:
            if self.entries is None:
                self.entries = _read(self.path)
            entry = self.entries.get(key)
            if entry is not None:
                try:
                    compiled = _engine_compile(pattern, entry)
                except Exception:  # a stale or damaged entry: compile it again, below
                    del self.entries[key]
                else:
                    self.used.add(key)
                    return compiled
        entry = _generate(pattern, flags)  # outside the lock: it raises re.error for an invalid pattern
        with self._lock:
            self.new[key] = entry
            self.used.add(key)
        return _engine_compile(pattern, entry)

    def save(self) -> None:
        with self._lock:
            if not self.new or self.entries is None:
                return
            merged = {**self.entries, **self.new}
            if len(merged) > MAX_ENTRIES:
                merged = {key: merged[key] for key in self.used if key in merged}
            self.entries, self.new = merged, {}
        write_private(self.path, marshal.dumps((FORMAT, sys.version, merged)))


class _Active:
    """The process's store; None (the default) leaves `compile` to `re.compile`."""

    store: _Store | None = None


def cache_path(env: Mapping[str, str] = os.environ) -> Path | None:
    """Where this interpreter's file lives, or None when the cache is off (or cannot work here)."""
    base = cache_folder(env) if _SUPPORTED else None
    if base is None:
        return None
    # named for the interpreter, the engine's code format and the file's layout: a file made for another one is
    # never read, and installs of two layouts (an upgrade beside an older venv) never take turns rewriting one
    return base / f"patterns-{sys.implementation.cache_tag}-{_sre.MAGIC}-{FORMAT}.marshal"


def enable(env: Mapping[str, str] = os.environ) -> None:
    """Use the cache file for the rest of this process (the console script calls this)."""
    path = cache_path(env)
    _Active.store = _Store(path) if path else None


def disable() -> None:
    _Active.store = None


def compile(pattern: str | bytes, flags: int = 0) -> re.Pattern[Any]:
    """`re.compile(pattern, flags)`, from the cache file when it is on and holds the pattern."""
    store = _Active.store
    if store is None or not isinstance(pattern, str):
        return re.compile(pattern, flags)
    return store.compile(pattern, int(flags))


def save() -> None:
    """Write what this run compiled that the file lacked; never raises (the cache is only a speed-up)."""
    store = _Active.store
    if store is not None:
        # a read-only home, a full disk, a folder that is a file: the next run compiles again
        with contextlib.suppress(OSError, ValueError):
            store.save()


def _read(path: Path) -> dict[tuple[str, int], Entry]:
    data = read_trusted(path, MAX_BYTES)
    try:
        # marshal, as Python's own byte-code cache: a file this user alone can write (read_trusted checked)
        loaded = marshal.loads(data) if data is not None else None  # noqa: S302
    except (EOFError, ValueError, TypeError):
        return {}
    if not (isinstance(loaded, tuple) and len(loaded) == 3 and loaded[:2] == (FORMAT, sys.version)):
        return {}
    entries = loaded[2]
    return entries if isinstance(entries, dict) else {}


def _engine_compile(pattern: str, entry: Entry) -> re.Pattern[str]:
    final_flags, code, groups, groupindex, indexgroup = entry
    words = array.array(_WORD)
    words.frombytes(code)  # ValueError for a length that is no whole number of words: compiled anew
    compiled: re.Pattern[str] = _sre.compile(
        pattern, final_flags, words.tolist(), groups, groupindex, indexgroup
    )
    return compiled


def _generate(pattern: str, flags: int) -> Entry:
    """What `re._compiler.compile` computes before it calls the engine (3.11-3.13 alike), as plain values."""
    # private modules, mirrored for these versions only; imported here because Python 3.10 has none of that name
    # (this module loads there too, with the cache off)
    from re import _compiler, _parser  # type: ignore[attr-defined]

    parsed = _parser.parse(pattern, flags)
    code = array.array(_WORD, [int(op) for op in _compiler._code(parsed, flags)]).tobytes()
    groupindex = {str(name): int(index) for name, index in parsed.state.groupdict.items()}
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return int(flags | parsed.state.flags), code, parsed.state.groups - 1, groupindex, tuple(indexgroup)
