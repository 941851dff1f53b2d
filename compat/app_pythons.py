"""Applications that run their own Python (compat/app_pythons.json): ComfyUI's portable build, a web UI's venv.
A pip command on the person's PATH installs into another Python; triage names the application's own where
the paste does not show the interpreter."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from torch_gpu_doctor.compat import CompatDataError
from torch_gpu_doctor.compat.json_fields import lst, obj, regex, text
from torch_gpu_doctor.package_data import package_text
from torch_gpu_doctor.records import dataclass


@dataclass(frozen=True)
class AppPython:
    name: str
    words: re.Pattern[str]
    portable_marker: re.Pattern[str] | None
    portable_python: str | None  # the portable build's Python, from its folder
    where: str  # where its Python is, in one sentence
    source: str
    # its own switch to run on the CPU alone (whatever torch build is installed), where to run it, and whence
    cpu_run: tuple[str, ...] | None = None
    cpu_run_windows: tuple[str, ...] | None = None  # None: cpu_run serves Windows too
    cpu_note: str | None = None
    cpu_source: str | None = None


def _pattern(entry: dict[str, Any], key: str, where: str) -> re.Pattern[str] | None:
    return None if entry.get(key) is None else regex(entry, key, where)


def parse_app_pythons(data: Any) -> tuple[AppPython, ...]:
    rows = lst(obj(data, "app_pythons.json").get("apps"), "app_pythons.json.apps", non_empty=True)
    apps = []
    for i, raw in enumerate(rows):
        where = f"app_pythons.json.apps[{i}]"
        entry = obj(raw, where)
        words = _pattern(entry, "words", where)
        if words is None:
            raise CompatDataError(f"{where}.words: required")
        marker, portable = _pattern(entry, "portable_marker", where), entry.get("portable_python")
        if (marker is None) != (portable is None) or (portable is not None and not isinstance(portable, str)):
            raise CompatDataError(f"{where}: portable_marker and portable_python come together, or neither")
        apps.append(
            AppPython(text(entry, "name", where), words, marker, portable, text(entry, "where", where),
                      text(entry, "source", where), *_cpu_switch(entry, where))
        )  # fmt: skip
    return tuple(apps)


def _cpu_switch(
    entry: dict[str, Any], where: str
) -> tuple[tuple[str, ...] | None, tuple[str, ...] | None, str | None, str | None]:
    """The row's CPU switch: its argument lists (the Windows one where it differs) with its note and source,
    or none of them."""
    if entry.get("cpu_run") is None:
        if any(entry.get(key) is not None for key in ("cpu_run_windows", "cpu_note", "cpu_source")):
            raise CompatDataError(f"{where}: cpu_run_windows, cpu_note and cpu_source come with a cpu_run")
        return None, None, None, None
    windows = None if entry.get("cpu_run_windows") is None else _argv(entry, "cpu_run_windows", where)
    return (
        _argv(entry, "cpu_run", where),
        windows,
        text(entry, "cpu_note", where),
        text(entry, "cpu_source", where),
    )


def _argv(entry: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    argv = lst(entry.get(key), f"{where}.{key}", non_empty=True)
    if not all(isinstance(word, str) and word for word in argv):
        raise CompatDataError(f"{where}.{key}: a list of non-empty strings")
    return tuple(argv)


@functools.cache
def load_app_pythons() -> tuple[AppPython, ...]:
    return parse_app_pythons(json.loads(package_text("torch_gpu_doctor.compat", "app_pythons.json")))


def app_in(text_: str) -> AppPython | None:
    """The application a paste names (the first row whose words it has), or None."""
    return next((app for app in load_app_pythons() if app.words.search(text_) is not None), None)
