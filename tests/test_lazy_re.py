"""torch_gpu_doctor.lazy_re: a pattern compiles at its first use and then is the compiled pattern's methods;
and every module-level pattern of the package compiles (an error would otherwise wait for the paste that
first reaches it)."""

from __future__ import annotations

import importlib
import re
from typing import Any

import pytest

from tests.test_architecture import ROOT, modules
from tools import signature_needles
from torch_gpu_doctor import lazy_re, pattern_cache
from torch_gpu_doctor.lazy_re import OnLines, lazy, lines_holding


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
    if isinstance(value, lazy_re.OnLines):
        return _lazies(value.pattern, seen)
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


def _line_searched() -> dict[str, OnLines]:
    found = {}
    for name in modules():
        if ".tui" in name or name.endswith("__main__"):
            continue
        for attribute, value in vars(importlib.import_module(name)).items():
            if isinstance(value, OnLines):
                found[f"{name}.{attribute}"] = value
    return found


def test_a_line_searched_pattern_has_the_words_each_of_its_matches_holds() -> None:
    """The words are those tools/signature_needles.py derives from the pattern (one per alternative), less
    any that holds another ("cannot" where "can" is one): a line without them cannot match."""
    searched = _line_searched()
    assert len(searched) >= 5
    for name, on in searched.items():
        one = signature_needles.derive(on.pattern.pattern)
        derived = [one] if one is not None else signature_needles.derive_any(on.pattern.pattern) or []
        fewest = {w for w in derived if not any(o != w and o in w for o in derived)}
        assert set(on.words) == fewest, name


def test_a_line_searched_pattern_finds_what_the_whole_text_search_finds() -> None:
    """On every paste of the corpus, as written and lowered: the same matches, in the same places."""
    texts = [
        path.read_bytes().decode("utf-8", "replace")
        for folder in ("reports", "pastes")
        for path in sorted((ROOT / "tests" / "triage" / folder).glob("*.txt"))
    ]
    assert len(texts) > 1000
    for name, on in _line_searched().items():
        for text in texts:
            for form in (text, text.lower()):
                whole = [(m.span(), m.groups()) for m in on.pattern.finditer(form)]
                assert [(m.span(), m.groups()) for m in on.finditer(form)] == whole, name


def test_only_the_lines_holding_a_word_are_searched() -> None:
    searched: list[tuple[int, int]] = []

    class Recording:
        def finditer(self, text: str, pos: int = 0, endpos: int = 10**9) -> list[re.Match[str]]:
            searched.append((pos, min(endpos, len(text))))
            return []

    text = "no word here\nmy GPU fails\nnothing\ngpu gpu again"
    on = OnLines(Recording(), ("gpu",))  # type: ignore[arg-type]  # only finditer is used
    assert list(on.finditer(text)) == []
    assert searched == [(13, 25), (34, len(text))]
    assert lines_holding(text.lower(), ("gpu", "here")) == [(0, 12), (13, 25), (34, len(text))]
    # a letter whose lower case is longer ("İ" is two characters lowered): the whole text is searched
    searched.clear()
    assert list(OnLines(Recording(), ("gpu",)).finditer("İ\ngpu")) == []  # type: ignore[arg-type]
    assert searched == [(0, 5)]


def test_a_line_searched_pattern_stops_at_endpos_as_re_does() -> None:
    pattern = re.compile(r"gpu\w*\b")
    text = "gpu1\nGPU22 x\ngpu3"
    for endpos in range(len(text) + 2):
        whole = [m.span() for m in pattern.finditer(text, 0, endpos)]
        assert [m.span() for m in OnLines(pattern, ("gpu",)).finditer(text, endpos=endpos)] == whole
