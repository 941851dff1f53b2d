"""Exact JSON round trip for the frozen dataclasses that make up Facts and Reports.

Rules: a dataclass becomes an object; a field holding `Unavailable` becomes `null` and its reason goes into
the object's `unavailable` map (consumers see `null` for unknown, never sentinel strings, and still learn why);
enums become their values; tuples become lists. Decoding follows the type hints, so `from_json(to_json(x)) == x`.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
import types
import typing
from enum import Enum
from typing import Any, TypeVar, Union, get_args, get_origin

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.unavailable import Reason, Unavailable

UNAVAILABLE_KEY = "unavailable"
T = TypeVar("T")
JsonValue = Any


class DecodeError(ValueError):
    """The JSON does not match the expected shape."""


def to_json(value: object) -> JsonValue:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, JsonValue] = {}
        missing: dict[str, JsonValue] = {}
        for field in dataclasses.fields(value):
            item = getattr(value, field.name)
            if isinstance(item, Unavailable):
                out[field.name] = None
                missing[field.name] = {"reason": item.reason.value, "detail": item.detail}
            else:
                out[field.name] = to_json(item)
        if missing:
            out[UNAVAILABLE_KEY] = missing
        return out
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"cannot serialise {type(value).__name__}")


def from_json(cls: type[T], data: JsonValue) -> T:
    return typing.cast(T, _decode(cls, data, "$"))


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    # A module that imports its annotations' types only for type checkers offers them with annotation_names()
    names = getattr(sys.modules.get(cls.__module__), "annotation_names", None)
    return typing.get_type_hints(cls, localns=names() if callable(names) else None)


def _decode(tp: Any, data: JsonValue, where: str) -> Any:
    origin = get_origin(tp)
    if origin is Union or origin is types.UnionType:
        return _decode_union(tp, data, where, None)
    if tp is Any:
        return data
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _decode_dataclass(tp, data, where)
    if isinstance(tp, type) and issubclass(tp, Enum):
        try:
            return tp(data)
        except ValueError as exc:
            raise DecodeError(f"{where}: {data!r} is not a {tp.__name__}") from exc
    if origin is tuple:
        if not isinstance(data, list):
            raise DecodeError(f"{where}: expected a list")
        args = get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v, f"{where}[{i}]") for i, v in enumerate(data))
        if len(args) != len(data):
            raise DecodeError(f"{where}: expected {len(args)} items")
        return tuple(_decode(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, data, strict=True)))
    if origin is dict:
        if not isinstance(data, dict):
            raise DecodeError(f"{where}: expected an object")
        _, vt = get_args(tp)
        return {k: _decode(vt, v, f"{where}.{k}") for k, v in data.items()}
    if tp is float:
        if isinstance(data, int | float) and not isinstance(data, bool):
            return float(data)
        raise DecodeError(f"{where}: expected a number")
    if tp in (str, int, bool):
        if type(data) is not tp:
            raise DecodeError(f"{where}: expected {tp.__name__}, got {type(data).__name__}")
        return data
    if tp is type(None):
        if data is not None:
            raise DecodeError(f"{where}: expected null")
        return None
    raise TypeError(f"{where}: unsupported type {tp!r}")


def _decode_union(tp: Any, data: JsonValue, where: str, missing: JsonValue) -> Any:
    args = get_args(tp)
    if data is None:
        if missing is not None and Unavailable in args:
            return Unavailable(Reason(missing["reason"]), str(missing.get("detail", "")))
        if type(None) in args:
            return None
        raise DecodeError(f"{where}: null without a reason")
    concrete = [a for a in args if a is not Unavailable and a is not type(None)]
    if len(concrete) != 1:
        raise TypeError(f"{where}: ambiguous union {tp!r}")
    return _decode(concrete[0], data, where)


def _decode_dataclass(cls: type, data: JsonValue, where: str) -> Any:
    if not isinstance(data, dict):
        raise DecodeError(f"{where}: expected an object for {cls.__name__}")
    missing_map = data.get(UNAVAILABLE_KEY) or {}
    kwargs: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        hint = _hints(cls)[field.name]
        path = f"{where}.{field.name}"
        if field.name not in data:
            if field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING:
                continue
            raise DecodeError(f"{path}: missing")
        raw = data[field.name]
        origin = get_origin(hint)
        if origin is Union or origin is types.UnionType:
            kwargs[field.name] = _decode_union(hint, raw, path, missing_map.get(field.name))
        else:
            kwargs[field.name] = _decode(hint, raw, path)
    return cls(**kwargs)


_SURROGATE = lazy(r"[\ud800-\udfff]")


def json_document(value: Any) -> str:
    """A JSON document that is valid UTF-8 whatever it quotes: non-ASCII text stays readable, and a lone
    surrogate (an undecodable byte of a path or a probe's output, as Python keeps it) is written as its `\\u`
    escape instead of a byte no UTF-8 reader accepts. Ends with a newline."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


MAX_JSON_DEPTH = 64  # far beyond any capture or bundle file gpu-doctor writes (at most about 8 levels)


def too_deep(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether parsed JSON nests deeper than `limit` (counted without recursion: a hostile file must not make
    the check itself overflow, nor the code that walks the data after it)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False
