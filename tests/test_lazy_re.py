"""torch_gpu_doctor.lazy_re: a pattern compiles at its first use and then is the compiled pattern's methods;
and every module-level pattern of the package compiles (an error would otherwise wait for the paste that
first reaches it)."""

from __future__ import annotations

import importlib
import re
from typing import Any

import pytest

from tests.test_architecture import modules
from torch_gpu_doctor import lazy_re, pattern_cache
from torch_gpu_doctor.lazy_re import lazy


def test_compiles_at_first_use_and_then_answers_as_the_compiled_pattern(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compiled: list[str] = []
    real = pattern_cache.compile

    def counting(pattern: str, flags: int = 0) -> re.Pattern[str]:
        compiled.append(pattern)
        return real(pattern, flags)

    monkeypatch.setattr(pattern_cache, "compile", counting)  # what lazy() compiles with
    pattern = lazy(r"(?P<major>\d+)\.(?P<minor>\d+)", re.ASCII)
    assert compiled == []
    found = pattern.search("driver 12.4")
    assert found is not None and found["minor"] == "4"
    assert [m[0] for m in pattern.finditer("1.2 and 3.4")] == ["1.2", "3.4"]
    assert pattern.sub("x", "1.2 then 3.4") == "x then x"
    assert (pattern.pattern, pattern.groups, pattern.flags & re.ASCII) == (
        r"(?P<major>\d+)\.(?P<minor>\d+)",
        2,
        re.ASCII,
    )
    assert compiled == [r"(?P<major>\d+)\.(?P<minor>\d+)"]  # once


def test_an_invalid_pattern_fails_at_first_use_and_other_names_are_not_invented() -> None:
    broken = lazy(r"(unclosed")
    with pytest.raises(re.error):
        broken.search("x")
    with pytest.raises(AttributeError):
        lazy("a").no_such_method  # type: ignore[attr-defined]  # noqa: B018


def _lazies(value: Any, seen: set[int]) -> list[Any]:
    if id(value) in seen:
        return []
    seen.add(id(value))
    if isinstance(value, lazy_re._Lazy):
        return [value]
    if isinstance(value, (tuple, list, frozenset, set)):
        return [x for item in value for x in _lazies(item, seen)]
    if isinstance(value, dict):
        return [x for item in value.values() for x in _lazies(item, seen)]
    return []


def test_every_module_level_pattern_compiles() -> None:
    found: list[Any] = []
    for name in modules():
        if ".tui" in name or name.endswith(
            "__main__"
        ):  # Textual's import is the TUI tests' cost; __main__ runs the command line
            continue
        module = importlib.import_module(name)
        seen: set[int] = set()
        for value in vars(module).values():
            found.extend(_lazies(value, seen))
    assert len(found) > 150  # the package's patterns, not an empty walk
    for pattern in found:
        assert isinstance(pattern.pattern, (str, bytes))  # compiles it, or raises re.error naming it
