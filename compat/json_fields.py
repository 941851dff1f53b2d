"""Typed field readers for cuda_matrix.json: each returns the value or raises CompatDataError naming the path."""

from __future__ import annotations

import re
from typing import Any

from torch_gpu_doctor import pattern_cache
from torch_gpu_doctor.compat import CompatDataError
from torch_gpu_doctor.compat.torch_releases import CC, parse_cc


def show(value: Any) -> str:
    """A short, always-printable picture of a bad value (str() of a huge int raises)."""
    return repr(value[:60]) if isinstance(value, str) else type(value).__name__


def obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise CompatDataError(f"{where}: must be an object with string keys")
    return value


def lst(value: Any, where: str, non_empty: bool = False) -> list[Any]:
    if not isinstance(value, list):
        raise CompatDataError(f"{where}: must be a list")
    if non_empty and not value:
        raise CompatDataError(f"{where}: must not be empty")
    return value


def text(entry: dict[str, Any], key: str, where: str, pattern: re.Pattern[str] | None = None) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CompatDataError(f"{where}.{key}: must be a non-empty string")
    if pattern is not None and not pattern.fullmatch(value):
        raise CompatDataError(f"{where}.{key}: {value[:60]!r} does not match {pattern.pattern}")
    return value


def opt_text(
    entry: dict[str, Any], key: str, where: str, pattern: re.Pattern[str] | None = None
) -> str | None:
    if entry.get(key) is None:
        return None
    return text(entry, key, where, pattern)


def regex(entry: dict[str, Any], key: str, where: str) -> re.Pattern[str]:
    """A regular expression, matched case-insensitively (the words that name a program in a paste)."""
    try:
        return pattern_cache.compile(text(entry, key, where), re.IGNORECASE)
    except re.error as error:
        raise CompatDataError(f"{where}.{key}: not a regular expression ({error})") from None


def texts(value: Any, where: str, pattern: re.Pattern[str], non_empty: bool = False) -> tuple[str, ...]:
    items = lst(value, where, non_empty)
    out: list[str] = []
    for i, item in enumerate(items):
        if not isinstance(item, str) or not pattern.fullmatch(item):
            raise CompatDataError(f"{where}[{i}]: {show(item)} does not match {pattern.pattern}")
        if item in out:
            raise CompatDataError(f"{where}[{i}]: duplicate {item!r}")
        out.append(item)
    return tuple(out)


def cc(text: Any, where: str) -> CC:
    found = parse_cc(text) if isinstance(text, str) else None
    if found is None or text != text.strip():
        raise CompatDataError(f"{where}: {show(text)} is not a compute capability like '8.6'")
    return found
