"""What `gpu-doctor verify` expects of a machine: from flags, a TOML file, or both (flags win).

The TOML schema is one table, `[expect]`, with the same names as the flags (dashes become underscores):

    [expect]
    gpus = 8                  # exactly 8 GPUs visible to the driver (NVML)
    gpu_name = "H100"         # every GPU's name contains this text (any case)
    min_driver = "550.54.15"  # this NVIDIA driver or newer
    torch_cuda = "12.4"       # torch built for CUDA 12.4 ("12": any 12.x)
    min_pcie_gen = 5          # each GPU's link can run at Gen5 or faster
    min_pcie_width = 16       # each GPU's link runs at x16 or wider
    smoke = true              # the quick GPU smoke test passes
    nccl = true               # its NCCL all-reduce over every GPU passes

Anything else (another table, an unknown key, a value of the wrong type) is an `ExpectationError`: the CLI
turns it into a usage error (exit 2), so a typo in a gate never passes silently.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

TABLE = "expect"
_VERSION = lazy(r"\d+(\.\d+)*")
MAX_CONFIG_BYTES = 64 * 1024


class ExpectationError(ValueError):
    """A bad expectation: an unknown key, a wrong type, an impossible value, an unreadable file."""


@dataclass(frozen=True)
class Expectations:
    gpus: int | None = None
    gpu_name: str | None = None
    min_driver: str | None = None
    torch_cuda: str | None = None
    min_pcie_gen: int | None = None
    min_pcie_width: int | None = None
    smoke: bool = False
    nccl: bool = False

    @property
    def needs_smoke(self) -> bool:
        return self.smoke or self.nccl

    @property
    def empty(self) -> bool:
        return self == Expectations()


_KINDS: dict[str, type] = {
    "gpus": int,
    "gpu_name": str,
    "min_driver": str,
    "torch_cuda": str,
    "min_pcie_gen": int,
    "min_pcie_width": int,
    "smoke": bool,
    "nccl": bool,
}


def parse_expectations(raw: dict[str, Any], origin: str) -> Expectations:
    """Validate a decoded TOML document: exactly one `[expect]` table of known keys and types."""
    extra = sorted(set(raw) - {TABLE})
    if extra:
        raise ExpectationError(f"{origin}: unknown table or key {extra[0]!r} (expected only [{TABLE}])")
    table = raw.get(TABLE)
    if not isinstance(table, dict):
        raise ExpectationError(f"{origin}: no [{TABLE}] table")
    values: dict[str, Any] = {}
    for key, value in table.items():
        kind = _KINDS.get(key)
        if kind is None:
            known = ", ".join(_KINDS)
            raise ExpectationError(f"{origin}: unknown key {TABLE}.{key} (known: {known})")
        # bool is an int in Python: `gpus = true` must not read as 1
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ExpectationError(f"{origin}: {TABLE}.{key} must be {kind.__name__}, not {value!r}")
        values[key] = value
    return validated(Expectations(**values), origin)


def load_expectations(path: Path) -> Expectations:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ExpectationError(f"--config {path}: {exc.strerror or exc}") from exc
    if len(data) > MAX_CONFIG_BYTES:
        raise ExpectationError(f"--config {path}: larger than {MAX_CONFIG_BYTES} bytes")
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ExpectationError(f"--config {path}: not valid TOML ({exc})") from exc
    return parse_expectations(raw, str(path))


def with_flags(base: Expectations, flags: dict[str, Any]) -> Expectations:
    """Flags given on the command line replace the file's values; `False`/`None` flags leave them (`--gpus 0`
    is a value: 0 == False, so compare by identity)."""
    given = {k: v for k, v in flags.items() if k in _KINDS and v is not None and v is not False}
    return validated(replace(base, **given), "command line")


def validated(e: Expectations, origin: str) -> Expectations:
    for name in ("gpus", "min_pcie_width"):
        value = getattr(e, name)
        if value is not None and not 0 <= value <= 1024:
            raise ExpectationError(f"{origin}: {name} = {value} is out of range")
    if e.min_pcie_gen is not None and not 1 <= e.min_pcie_gen <= 7:
        raise ExpectationError(f"{origin}: min_pcie_gen = {e.min_pcie_gen}: PCIe generations are 1 to 7")
    for name in ("min_driver", "torch_cuda"):
        value = getattr(e, name)
        if value is not None and not _VERSION.fullmatch(value):
            raise ExpectationError(f"{origin}: {name} = {value!r} is not a version like 550.54.15")
    if e.gpu_name is not None and not e.gpu_name.strip():
        raise ExpectationError(f"{origin}: gpu_name is empty")
    return e


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))
