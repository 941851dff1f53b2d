"""Libraries that bring a CUDA runtime of their own (compat/runtime_builds.json): the CUDA and cuDNN of each of
their release lines, and the last release of a line, so a driver too old for the newest line, or a machine with
only the older cuDNN, gets that library's older build instead of another torch."""

from __future__ import annotations

import functools
import json
from typing import Any

from torch_gpu_doctor.compat.json_fields import lst, obj, opt_text, text
from torch_gpu_doctor.package_data import package_text
from torch_gpu_doctor.records import dataclass


@dataclass(frozen=True)
class RuntimeLine:
    first: str  # "4.0.0"
    cuda: str  # major: "12"
    cudnn: str  # major: "8"
    last: str | None  # "4.4.0"; None: the current line


@dataclass(frozen=True)
class RuntimeLibrary:
    name: str
    modules: tuple[str, ...]
    shown_as: str
    lines: tuple[RuntimeLine, ...]  # oldest first
    source: str

    def last_for(self, cuda: str, cudnn: str | None = None) -> str | None:
        """The newest release built for CUDA major `cuda` (and cuDNN major `cudnn`, where given)."""
        fitting = [ln for ln in self.lines if ln.cuda == cuda and (cudnn is None or ln.cudnn == cudnn)]
        return fitting[-1].last if fitting else None


def parse_runtime_builds(data: Any) -> tuple[RuntimeLibrary, ...]:
    rows = lst(
        obj(data, "runtime_builds.json").get("libraries"), "runtime_builds.json.libraries", non_empty=True
    )
    libraries = []
    for i, raw in enumerate(rows):
        where = f"runtime_builds.json.libraries[{i}]"
        entry = obj(raw, where)
        lines = []
        for j, line in enumerate(lst(entry.get("lines"), f"{where}.lines", non_empty=True)):
            at = f"{where}.lines[{j}]"
            row = obj(line, at)
            lines.append(
                RuntimeLine(text(row, "from", at), text(row, "cuda", at), text(row, "cudnn", at), opt_text(row, "last", at))
            )  # fmt: skip
        modules = tuple(str(m) for m in lst(entry.get("modules"), f"{where}.modules", non_empty=True))
        libraries.append(
            RuntimeLibrary(text(entry, "name", where), modules, text(entry, "shown_as", where), tuple(lines),
                           text(entry, "source", where))
        )  # fmt: skip
    return tuple(libraries)


@functools.cache
def load_runtime_builds() -> tuple[RuntimeLibrary, ...]:
    return parse_runtime_builds(json.loads(package_text("torch_gpu_doctor.compat", "runtime_builds.json")))


def runtime_library(owner: str) -> RuntimeLibrary | None:
    """The row of the library a traceback frame ("faster_whisper") or a known message names."""
    lowered = owner.lower()
    return next(
        (r for r in load_runtime_builds() if lowered in r.modules or lowered == r.shown_as.lower()), None
    )
