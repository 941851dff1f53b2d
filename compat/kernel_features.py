"""Options of inference servers that switch on kernels a plain run does not use (compat/kernel_features.json):
vLLM's prefix caching, chunked prefill, speculative decoding, an FP8 KV cache, a forced attention backend. A kernel
fault from a server started with one of them is, first, that feature's bug."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from torch_gpu_doctor.compat.json_fields import lst, obj, regex, text
from torch_gpu_doctor.package_data import package_text
from torch_gpu_doctor.records import dataclass


@dataclass(frozen=True)
class KernelFeature:
    feature: str
    words: re.Pattern[str]
    without: str  # how to run without it
    source: str


def parse_kernel_features(data: Any) -> tuple[KernelFeature, ...]:
    rows = lst(
        obj(data, "kernel_features.json").get("features"), "kernel_features.json.features", non_empty=True
    )
    features = []
    for i, raw in enumerate(rows):
        where = f"kernel_features.json.features[{i}]"
        entry = obj(raw, where)
        features.append(
            KernelFeature(text(entry, "feature", where), regex(entry, "words", where),
                          text(entry, "without", where), text(entry, "source", where))
        )  # fmt: skip
    return tuple(features)


@functools.cache
def load_kernel_features() -> tuple[KernelFeature, ...]:
    return parse_kernel_features(json.loads(package_text("torch_gpu_doctor.compat", "kernel_features.json")))


def features_in(text_: str) -> list[tuple[KernelFeature, re.Match[str]]]:
    """Each feature the text switches on, with where it says so, in the table's order."""
    found = []
    for feature in load_kernel_features():
        said = feature.words.search(text_)
        if said is not None:
            found.append((feature, said))
    return found
