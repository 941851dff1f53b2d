"""Reading one sysfs attribute through the Host: the text, parsed, or why not."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

T = TypeVar("T")


def read_attribute(host: Host, path: str, parse: Callable[[str], T | None]) -> Maybe[T]:
    """`parse` returns None for text it does not accept; that becomes UNPARSEABLE with the text quoted."""
    text = host.read_text(path)
    if isinstance(text, Unavailable):
        return text
    value = parse(text)
    return value if value is not None else Unavailable(Reason.UNPARSEABLE, f"{path}: {text.strip()[:40]!r}")


def flag(true: str, false: str) -> Callable[[str], bool | None]:
    """A parser for a two-valued file: `flag("1", "0")` for sysctls, `flag("Y", "N")` for module params."""

    def parse(text: str) -> bool | None:
        value = text.strip()
        return True if value == true else False if value == false else None

    return parse
