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

SWITCH_PURPOSES = (
    "cpu",
    "low_memory",
    "reinstall_torch",
)  # what an application's own switch is for (app_pythons.json "switches")


@dataclass(frozen=True)
class AppSwitch:
    """An application's own start switch for one purpose: its command, on Windows where it differs, where to run
    it, and where it comes from."""

    run: tuple[str, ...]
    run_windows: tuple[str, ...] | None
    note: str
    source: str

    def argv(self, windows: bool) -> tuple[str, ...]:
        return self.run_windows if windows and self.run_windows else self.run

    def words(self, windows: bool) -> str:
        """The switch itself: the command's words from its first option on ("--use-cpu all ...")."""
        argv = self.argv(windows)
        first = next((i for i, word in enumerate(argv) if word.startswith("-")), len(argv))
        return " ".join(argv[first:])


@dataclass(frozen=True)
class AppPython:
    name: str
    words: re.Pattern[str]
    portable_marker: re.Pattern[str] | None
    portable_python: str | None  # the portable build's Python, from its folder
    where: str  # where its Python is, in one sentence
    source: str
    switches: tuple[tuple[str, AppSwitch], ...] = ()  # by purpose (SWITCH_PURPOSES)

    def switch(self, purpose: str) -> AppSwitch | None:
        return dict(self.switches).get(purpose)


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
                      text(entry, "source", where), _switches(entry, where))
        )  # fmt: skip
    return tuple(apps)


def _switches(entry: dict[str, Any], where: str) -> tuple[tuple[str, AppSwitch], ...]:
    """The row's own switches by purpose, each with its command, note and source."""
    found = []
    for purpose, raw in obj(entry.get("switches", {}), f"{where}.switches").items():
        at = f"{where}.switches.{purpose}"
        if purpose not in SWITCH_PURPOSES:
            raise CompatDataError(f"{at}: not one of {', '.join(SWITCH_PURPOSES)}")
        row = obj(raw, at)
        windows = None if row.get("run_windows") is None else _argv(row, "run_windows", at)
        switch = AppSwitch(_argv(row, "run", at), windows, text(row, "note", at), text(row, "source", at))
        found.append((purpose, switch))
    return tuple(found)


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
