"""Datasheet peaks per GPU model (`gpu_datasheets` in compat/cuda_matrix.json), for the smoke test's expectations.

Each entry lists the exact names the driver reports (NVML, nvidia-smi and `torch.cuda.get_device_name()` print
the same string). A name is matched whole, ignoring case and runs of whitespace, never by prefix: "NVIDIA H100
NVL" or "NVIDIA GeForce RTX 4090 Laptop GPU" must not get the figures of a faster part, or a healthy GPU looks
broken. Where one name covers cards with different figures (RTX 3060 12 GB and 8 GB), the entry also says which
memory size it holds for, and a caller that cannot tell the size gets no datasheet.
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any

from torch_gpu_doctor.compat import CompatDataError
from torch_gpu_doctor.compat.json_fields import lst, obj, opt_text, show, text, texts
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.package_data import package_text
from torch_gpu_doctor.records import dataclass

PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
_FIGURES = ("fp32_tflops", "tf32_tflops", "fp16_tflops", "bf16_tflops", "fp16_acc16_tflops")
_BANDWIDTH = "memory_bandwidth_gbytes_per_s"
_MARKABLE = lazy("|".join((_BANDWIDTH, *_FIGURES)))
_OPTIONAL = frozenset({"note", "memory_gib_at_least", "memory_gib_below"})
_REQUIRED = frozenset(
    {"model", "names", _BANDWIDTH, *_FIGURES, "unconfirmed", "derived", "source", "names_source"}
)
_GIB = 1024**3


@dataclass(frozen=True)
class GpuDatasheet:
    model: str  # "H100 SXM5 80GB"
    names: tuple[str, ...]  # exact reported names it matches
    memory_bandwidth_gbytes_per_s: float
    fp32_tflops: float | None
    tf32_tflops: float | None
    fp16_tflops: float | None  # tensor, FP32 accumulate, dense: what torch.matmul in fp16 reaches
    bf16_tflops: float | None
    fp16_acc16_tflops: float | None  # tensor, FP16 accumulate, dense: for reference only
    unconfirmed: tuple[str, ...]  # field names whose figure is an unconfirmed estimate (or has none)
    derived: tuple[str, ...]  # field names computed from cores/SMs x clock, not printed by NVIDIA
    source: str
    names_source: str = ""
    memory_gib_at_least: float | None = None  # the figures hold only for a card with this much memory...
    memory_gib_below: float | None = None  # ...or less than this
    note: str | None = None

    def peak_tflops(self, precision: str) -> float | None:
        """Dense peak for "fp32" | "tf32" | "fp16" | "bf16"; None where the hardware has no such path."""
        _field(precision)
        peaks = {
            "fp32": self.fp32_tflops,
            "tf32": self.tf32_tflops,
            "fp16": self.fp16_tflops,
            "bf16": self.bf16_tflops,
        }
        return peaks[precision]

    def caveat(self, precision: str) -> str | None:
        """Why a figure is soft: "unconfirmed", "derived", or None for a quoted datasheet figure.

        `precision` is one of PRECISIONS or "memory_bandwidth"; a renderer prints it beside the figure.
        """
        field = _BANDWIDTH if precision == "memory_bandwidth" else _field(precision)
        if field in self.unconfirmed:
            return "unconfirmed"
        return "derived" if field in self.derived else None

    def holds_for_memory(self, memory_total_bytes: int | None) -> bool:
        if self.memory_gib_at_least is None and self.memory_gib_below is None:
            return True
        if memory_total_bytes is None:
            return False
        gib = memory_total_bytes / _GIB
        low, high = self.memory_gib_at_least, self.memory_gib_below
        return (low is None or gib >= low) and (high is None or gib < high)


def normalize_name(name: str) -> str:
    return " ".join(name.split()).casefold()


def datasheet_for(name: str, memory_total_bytes: int | None = None) -> GpuDatasheet | None:
    """The datasheet for the GPU the driver calls `name`, or None when the data has none that surely applies.

    `memory_total_bytes` (NVML's or torch's total memory) tells apart cards sold under one name; entries that
    need it return None without it.
    """
    sheet = _by_name().get(normalize_name(name))
    return sheet if sheet is not None and sheet.holds_for_memory(memory_total_bytes) else None


@functools.cache
def load_datasheets() -> tuple[GpuDatasheet, ...]:
    raw = package_text("torch_gpu_doctor.compat", "cuda_matrix.json")
    return parse_datasheets(json.loads(raw))


@functools.cache
def _by_name() -> dict[str, GpuDatasheet]:
    return {normalize_name(name): sheet for sheet in load_datasheets() for name in sheet.names}


def parse_datasheets(data: Any) -> tuple[GpuDatasheet, ...]:
    root = obj(data, "cuda_matrix.json")
    sheets: list[GpuDatasheet] = []
    owner: dict[str, str] = {}  # normalized name -> the model it belongs to
    for i, raw in enumerate(lst(root.get("gpu_datasheets"), "gpu_datasheets", non_empty=True)):
        where = f"gpu_datasheets[{i}]"
        sheet = _sheet(obj(raw, where), where)
        if any(sheet.model == other.model for other in sheets):
            raise CompatDataError(f"{where}.model: {sheet.model!r} appears twice")
        for name in sheet.names:
            if normalize_name(name) in owner:
                raise CompatDataError(
                    f"{where}.names: {name!r} is already a name of {owner[normalize_name(name)]!r}"
                )
            owner[normalize_name(name)] = sheet.model
        sheets.append(sheet)
    return tuple(sheets)


def _sheet(entry: dict[str, Any], where: str) -> GpuDatasheet:
    unknown = sorted(set(entry) - _REQUIRED - _OPTIONAL)
    missing = sorted(_REQUIRED - set(entry))
    if unknown or missing:
        raise CompatDataError(f"{where}: unknown keys {unknown}, missing keys {missing}")
    figures = {field: _opt_number(entry[field], f"{where}.{field}") for field in _FIGURES}
    unconfirmed = texts(entry["unconfirmed"], f"{where}.unconfirmed", _MARKABLE)
    derived = texts(entry["derived"], f"{where}.derived", _MARKABLE)
    for field in derived:
        if field != _BANDWIDTH and figures[field] is None:
            raise CompatDataError(f"{where}.derived: {field} is null, so nothing was derived")
    _check_order(figures, where)
    low = _opt_number(entry.get("memory_gib_at_least"), f"{where}.memory_gib_at_least")
    high = _opt_number(entry.get("memory_gib_below"), f"{where}.memory_gib_below")
    if low is not None and high is not None and low >= high:
        raise CompatDataError(f"{where}: memory_gib_at_least {low} is not below memory_gib_below {high}")
    return GpuDatasheet(
        model=text(entry, "model", where),
        names=tuple(_names(entry["names"], f"{where}.names")),
        memory_bandwidth_gbytes_per_s=_number(entry[_BANDWIDTH], f"{where}.{_BANDWIDTH}"),
        fp32_tflops=figures["fp32_tflops"],
        tf32_tflops=figures["tf32_tflops"],
        fp16_tflops=figures["fp16_tflops"],
        bf16_tflops=figures["bf16_tflops"],
        fp16_acc16_tflops=figures["fp16_acc16_tflops"],
        unconfirmed=unconfirmed,
        derived=derived,
        source=text(entry, "source", where),
        names_source=text(entry, "names_source", where),
        memory_gib_at_least=low,
        memory_gib_below=high,
        note=opt_text(entry, "note", where),
    )


def _check_order(figures: dict[str, float | None], where: str) -> None:
    """Typo guard: TF32 never beats FP16 tensor, and FP32 accumulate never beats FP16 accumulate."""
    for slower, faster in (("tf32_tflops", "fp16_tflops"), ("fp16_tflops", "fp16_acc16_tflops")):
        low, high = figures[slower], figures[faster]
        if low is not None and high is not None and low > high:
            raise CompatDataError(f"{where}: {slower} {low} is above {faster} {high}")


def _names(value: Any, where: str) -> list[str]:
    names = lst(value, where, non_empty=True)
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name.strip():
            raise CompatDataError(f"{where}[{i}]: {show(name)} is not a GPU name")
    return names


def _opt_number(value: Any, where: str) -> float | None:
    return None if value is None else _number(value, where)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CompatDataError(f"{where}: {show(value)} is not a number")
    try:
        number = float(value)
    except OverflowError:
        raise CompatDataError(f"{where}: number out of range") from None
    if not math.isfinite(number) or number <= 0:
        raise CompatDataError(f"{where}: {number!r} is not a positive number")
    return number


def _field(precision: str) -> str:
    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r}: expected one of {', '.join(PRECISIONS)}")
    return f"{precision}_tflops"
