"""Known bugs of a bundled CUDA library on some GPUs (compat/library_bugs.json): which installed library version,
beside which GPU, crashes, and the version that ends it."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from torch_gpu_doctor.compat import CompatDataError
from torch_gpu_doctor.package_data import package_text
from torch_gpu_doctor.records import dataclass


@dataclass(frozen=True)
class LibraryBug:
    id: str
    gpu: str  # a word of the GPU's name ("H20": not "H200")
    distribution: str  # the pip distribution that ships the library
    fixed_in: str  # the first version without the bug
    install: str  # the version to install
    torch_cuda: tuple[str, ...]  # torch's CUDA builds that pin an affected version
    symptom: str
    sources: tuple[str, ...]

    def on(self, gpu_name: str) -> bool:
        return re.search(rf"(?<![\w-]){re.escape(self.gpu)}(?![\w-])", gpu_name, re.IGNORECASE) is not None


def _bug(raw: dict[str, Any]) -> LibraryBug:
    try:
        return LibraryBug(
            str(raw["id"]),
            str(raw["gpu"]),
            str(raw["distribution"]),
            str(raw["fixed_in"]),
            str(raw["install"]),
            tuple(str(c) for c in raw["torch_cuda"]),
            str(raw["symptom"]),
            tuple(str(s) for s in raw["sources"]),
        )
    except (KeyError, TypeError) as exc:
        raise CompatDataError(f"library_bugs.json: malformed row {raw!r}: {exc}") from exc


@functools.cache
def library_bugs() -> tuple[LibraryBug, ...]:
    rows = tuple(
        _bug(r) for r in json.loads(package_text("torch_gpu_doctor.compat", "library_bugs.json"))["bugs"]
    )
    if any(not r.sources for r in rows):
        raise CompatDataError("library_bugs.json: every row needs a source")
    return rows
