"""Token-shaped text: opaque values that identify something without saying what (issue 21).

A GPU or MIG UUID in CUDA_VISIBLE_DEVICES, a device-plugin ID in NVIDIA_VISIBLE_DEVICES, a hash or a random
suffix in a path (`.../snapshots/8cca5276...`, a CI runner's work folder) carry no meaning for a diagnosis and
may point at one machine or one person. Bundles replace them in environment variables and paths with a
numbered pseudonym; `--json`, whose readers are the user's own scripts, keeps them and lists where they are.

The shape: a UUID (8-4-4-4-12 hex digits, with GPU- or MIG- before it or not), or one run of 16 or more
letters and digits holding at least two of each (`cu124`, `x86_64`, `libcudnn_cnn_infer`, a version or a word
never is one).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from torch_gpu_doctor.lazy_re import lazy

TOKEN = lazy(
    r"(?<![A-Za-z0-9])"
    r"(?:(?:GPU-|MIG-)?[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"
    r"|(?=(?:[A-Za-z]*\d){2})(?=(?:\d*[A-Za-z]){2})[A-Za-z0-9]{16,})"
    r"(?![A-Za-z0-9])"
)


def tokens_in(text: str) -> list[str]:
    """Every token-shaped run in `text`, in order."""
    return TOKEN.findall(text)


def is_path(text: str) -> bool:
    """A file system path as facts hold them: absolute, or home-relative."""
    return text.startswith(("/", "~/")) and "\n" not in text


def token_places(document: Any, where: str = "") -> Iterator[str]:
    """The dotted places in a JSON document whose environment values or paths hold token-shaped text:
    `facts.env.CUDA_VISIBLE_DEVICES`, `facts.python.executable`, `facts.torch_packages.sys_path[3]`."""
    if isinstance(document, dict):
        for key, value in document.items():
            place = f"{where}.{key}" if where else str(key)
            if key == "env" and isinstance(value, dict):
                for name, text in value.items():
                    if isinstance(text, str) and tokens_in(text):
                        yield f"{place}.{name}"
            else:
                yield from token_places(value, place)
    elif isinstance(document, list):
        for i, value in enumerate(document):
            yield from token_places(value, f"{where}[{i}]")
    elif isinstance(document, str) and is_path(document) and tokens_in(document):
        yield where
