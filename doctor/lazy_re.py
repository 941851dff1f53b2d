"""Regular expressions compiled when first used, not when their module is imported (issues 17 and 21).

Python's `re.compile` parses and compiles a pattern in Python code: 0.1-4 ms a pattern on the 2-core machines
this project is measured on. `gpu-doctor triage` imports about 340 module-level patterns; a paste uses about
260 of them, and the TUI's first screen far fewer. `lazy(...)` stands where `re.compile(...)` stood: the first
use of any of its attributes compiles the pattern and binds the compiled pattern's methods onto the object,
so later calls cost what a compiled pattern's do.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
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


class OnLines:
    """A pattern searched only on the lines that hold one of its words.

    For a pattern each of whose matches lies within one line and holds one of `words` (lower-case text): a long
    alternation tried at every character of a 5 KB paste costs 1-6 ms, where a few of its 150 lines hold a word
    it needs (issue 17's budget). The results are the whole text's: a line is searched with the text around it
    in view, so lookbehinds, `\\b` and `^` see what they would. tests/test_lazy_re.py checks each one's words
    against its pattern and its results against the whole text's on the corpus.
    """

    def __init__(self, pattern: re.Pattern[str], words: tuple[str, ...]) -> None:
        self.pattern = pattern
        self.words = words

    def finditer(
        self, text: str, lowered: str | None = None, endpos: int | None = None
    ) -> Iterator[re.Match[str]]:
        """The matches in `text` (up to `endpos`, as `re` reads it), in order; `lowered`: `text.lower()`, where
        the caller has it."""
        if endpos is not None and endpos < len(text):
            text, lowered = text[:endpos], None
        lowered = text.lower() if lowered is None else lowered
        if len(lowered) != len(text):  # a letter whose lower case is longer ("İ"): lines would not line up
            yield from self.pattern.finditer(text)
            return
        for start, end in lines_holding(lowered, self.words):
            yield from self.pattern.finditer(text, start, end)

    def search(
        self, text: str, lowered: str | None = None, endpos: int | None = None
    ) -> re.Match[str] | None:
        return next(self.finditer(text, lowered, endpos), None)


def lines_holding(text: str, words: tuple[str, ...]) -> list[tuple[int, int]]:
    """(start, end) of each line of `text` that holds one of `words`, in order; `end` is at its newline."""
    starts: set[int] = set()
    for word in words:
        at = text.find(word)
        while at >= 0:
            start = text.rfind("\n", 0, at) + 1
            starts.add(start)
            end = text.find("\n", at)
            if end < 0:
                break
            at = text.find(word, end)
    spans = []
    for start in sorted(starts):
        end = text.find("\n", start)
        spans.append((start, end if end >= 0 else len(text)))
    return spans
