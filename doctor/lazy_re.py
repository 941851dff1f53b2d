"""Regular expressions compiled when first used, not when their module is imported (issues 17 and 21).

Python's `re.compile` parses and compiles a pattern in Python code: 0.1-4 ms a pattern on the 2-core machines
this project is measured on. `gpu-doctor triage` imports about 340 module-level patterns; a paste uses about
260 of them, and the TUI's first screen far fewer. `lazy(...)` stands where `re.compile(...)` stood: the first
use of any of its attributes compiles the pattern and binds the compiled pattern's methods onto the object,
so later calls cost what a compiled pattern's do.
"""

from __future__ import annotations

import re
from typing import Any, cast, overload

from torch_gpu_doctor import pattern_cache

# what a compiled pattern offers; once compiled, each is the compiled pattern's own
_ATTRIBUTES = (
    "search",
    "match",
    "fullmatch",
    "finditer",
    "findall",
    "sub",
    "subn",
    "split",
    "scanner",
    "pattern",
    "flags",
    "groups",
    "groupindex",
)


class _Lazy:
    """A pattern and its flags until something is asked of it."""

    def __init__(self, pattern: str | bytes, flags: int) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:  # called only while the pattern is not compiled yet
        if name.startswith("__") or name not in _ATTRIBUTES:
            raise AttributeError(name)
        pattern, flags = self._source
        compiled = pattern_cache.compile(pattern, flags)  # str or bytes, as given
        for attribute in _ATTRIBUTES:
            setattr(self, attribute, getattr(compiled, attribute))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy({self._source[0]!r}, {self._source[1]!r})"


@overload
def lazy(pattern: str, flags: int | re.RegexFlag = 0) -> re.Pattern[str]: ...
@overload
def lazy(pattern: bytes, flags: int | re.RegexFlag = 0) -> re.Pattern[bytes]: ...
def lazy(pattern: str | bytes, flags: int | re.RegexFlag = 0) -> re.Pattern[Any]:
    """`re.compile(pattern, flags)`, done at the first use. An invalid pattern raises `re.error` there, so
    tests/test_lazy_re.py compiles every module-level one."""
    return cast("re.Pattern[Any]", _Lazy(pattern, int(flags)))
