"""Frameworks that run vLLM and take its settings under their own names (compat/wrappers.json): LLaMA-Factory's
vllm_maxlen is vLLM's max_model_len. Triage puts a fix that names vLLM's options in the wrapper's words."""

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
class Wrapper:
    name: str
    words: re.Pattern[str]
    options: dict[str, str]  # vLLM's option -> the wrapper's name for it
    how: str
    source: str


def parse_wrappers(data: Any) -> tuple[Wrapper, ...]:
    rows = lst(obj(data, "wrappers.json").get("wrappers"), "wrappers.json.wrappers", non_empty=True)
    wrappers = []
    for i, raw in enumerate(rows):
        where = f"wrappers.json.wrappers[{i}]"
        entry = obj(raw, where)
        words = regex(entry, "words", where)
        options = obj(entry.get("options"), f"{where}.options")
        if not options or not all(
            isinstance(k, str) and isinstance(v, str) and v for k, v in options.items()
        ):
            raise CompatDataError(f"{where}.options: vLLM's option names to the wrapper's, none empty")
        wrappers.append(
            Wrapper(text(entry, "name", where), words, dict(options), text(entry, "how", where),
                    text(entry, "source", where))
        )  # fmt: skip
    return tuple(wrappers)


@functools.cache
def load_wrappers() -> tuple[Wrapper, ...]:
    return parse_wrappers(json.loads(package_text("torch_gpu_doctor.compat", "wrappers.json")))


def wrapper_in(text: str) -> Wrapper | None:
    """The first framework the text names, if any."""
    return next((w for w in load_wrappers() if w.words.search(text)), None)
