"""gpu_datasheets in cuda_matrix.json: every row of compat-errata.md §4 with its figures, exact-name matching
(with the look-alike names that must NOT match), unconfirmed/derived marks, and refusal of malformed data."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from importlib import resources
from typing import Any

import pytest

from torch_gpu_doctor.compat import CompatDataError
from torch_gpu_doctor.compat.datasheets import (
    GpuDatasheet,
    datasheet_for,
    load_datasheets,
    normalize_name,
    parse_datasheets,
)

GIB = 1024**3
MIB = 1024**2

# Typed again from compat-errata.md §4 (not copied from the JSON), so a typo in either shows up here.
# model: (mem BW GB/s, FP32, TF32, FP16/BF16 tensor FP32-acc, BF16, FP16 tensor FP16-acc)
ERRATA: dict[str, tuple[float, float | None, float | None, float | None, float | None, float | None]] = {
    "H100 SXM5 80GB": (3350, 67, 494.7, 989.4, 989.4, 989.4),
    "H100 PCIe 80GB": (2000, 51, 378, 756, 756, 756),
    "H200 SXM 141GB": (4800, 67, 494.7, 989.4, 989.4, 989.4),
    "B200 (HGX B200)": (7700, 75, 1100, 2250, 2250, 2250),
    "A100 SXM4 80GB": (2039, 19.5, 156, 312, 312, 312),
    "A100 40GB (SXM4 / PCIe)": (1555, 19.5, 156, 312, 312, 312),
    "A100 80GB PCIe": (1935, 19.5, 156, 312, 312, 312),
    "A10": (600, 31.2, 62.5, 125, 125, 125),
    "L4": (300, 30.3, 60, 121, 121, 121),
    "L40S": (864, 91.6, 183, 362, 362, 362),
    "T4": (320, 8.1, None, 65, None, 65),
    "V100 SXM2": (900, 15.7, None, 125, None, 125),
    "V100 PCIe": (900, 14, None, 112, None, 112),
    "RTX 3060 12GB": (360, 12.7, 12.7, 25.5, 25.5, 51),
    "RTX 3080 10GB": (760, 29.8, 29.8, 59.5, 59.5, 119),
    "RTX 3090": (936, 35.6, 35.6, 71, 71, 142),
    "RTX 4060 Ti": (288, 22.1, 22.1, 44.1, 44.1, 88.3),
    "RTX 4070": (504, 29.1, 29.1, 58.3, 58.3, 116.6),
    "RTX 4080 (16GB)": (716.8, 48.7, 48.7, 97.5, 97.5, 194.9),
    "RTX 4090": (1008, 82.6, 82.6, 165.2, 165.2, 330.3),
    "RTX 5070": (672, 30.9, None, 61.7, 61.7, 123.5),
    "RTX 5080": (960, 56.3, None, 112.6, 112.6, 225),
    "RTX 5090": (1792, 104.8, 104.8, 209.5, 209.5, 419),
    "RTX 2080 Ti": (616, 13.4, None, 53.8, None, 107.6),  # reference clock; Turing has no BF16
    "GTX 1080 Ti": (484, 11.3, None, None, None, None),
    "GTX 1080": (320, 8.9, None, None, None, None),
}

UNCONFIRMED = {
    "RTX 5070": {"tf32_tflops", "fp16_tflops", "bf16_tflops"},
    "RTX 5080": {"tf32_tflops", "fp16_tflops", "bf16_tflops"},
    "RTX 5090": {"tf32_tflops", "fp16_tflops", "bf16_tflops"},
}
DERIVED = {
    "RTX 3060 12GB": {"fp32_tflops", "tf32_tflops", "fp16_tflops", "bf16_tflops", "fp16_acc16_tflops"},
    "RTX 4060 Ti": {"tf32_tflops", "fp16_tflops", "bf16_tflops", "fp16_acc16_tflops"},
    "RTX 4070": {"tf32_tflops", "fp16_tflops", "bf16_tflops", "fp16_acc16_tflops"},
    "RTX 5070": {"fp32_tflops", "fp16_acc16_tflops"},
    "RTX 5080": {"fp32_tflops", "fp16_acc16_tflops"},
}


def _by_model() -> dict[str, GpuDatasheet]:
    return {sheet.model: sheet for sheet in load_datasheets()}


def test_every_errata_row_is_encoded_and_nothing_else() -> None:
    assert sorted(_by_model()) == sorted(ERRATA)


@pytest.mark.parametrize("model", sorted(ERRATA))
def test_figures_match_the_errata(model: str) -> None:
    sheet = _by_model()[model]
    bandwidth, fp32, tf32, fp16, bf16, acc16 = ERRATA[model]
    assert sheet.memory_bandwidth_gbytes_per_s == bandwidth
    assert (sheet.peak_tflops("fp32"), sheet.peak_tflops("tf32")) == (fp32, tf32)
    assert (sheet.peak_tflops("fp16"), sheet.peak_tflops("bf16"), sheet.fp16_acc16_tflops) == (
        fp16,
        bf16,
        acc16,
    )


@pytest.mark.parametrize("model", sorted(ERRATA))
def test_unconfirmed_and_derived_marks(model: str) -> None:
    sheet = _by_model()[model]
    assert set(sheet.unconfirmed) == UNCONFIRMED.get(model, set())
    assert set(sheet.derived) == DERIVED.get(model, set())


def test_every_entry_cites_its_figures_and_its_names() -> None:
    for sheet in load_datasheets():
        assert "https://" in sheet.source or "product page" in sheet.source, sheet.model
        assert sheet.names_source, sheet.model


@pytest.mark.parametrize(
    ("name", "model"),
    [
        ("NVIDIA H100 80GB HBM3", "H100 SXM5 80GB"),
        ("NVIDIA H100 PCIe", "H100 PCIe 80GB"),
        ("NVIDIA H200", "H200 SXM 141GB"),
        ("NVIDIA B200", "B200 (HGX B200)"),
        ("NVIDIA A100-SXM4-80GB", "A100 SXM4 80GB"),
        ("A100-SXM-80GB", "A100 SXM4 80GB"),  # driver R450's name for the same board
        ("NVIDIA A100-SXM4-40GB", "A100 40GB (SXM4 / PCIe)"),
        ("NVIDIA A100-PCIE-40GB", "A100 40GB (SXM4 / PCIe)"),
        ("A100-SXM4-40GB", "A100 40GB (SXM4 / PCIe)"),
        ("NVIDIA A100 80GB PCIe", "A100 80GB PCIe"),
        ("Tesla T4", "T4"),
        ("Tesla V100-SXM2-16GB", "V100 SXM2"),
        ("Tesla V100-SXM2-32GB", "V100 SXM2"),
        ("Tesla V100-PCIE-16GB", "V100 PCIe"),
        ("Tesla V100-PCIE-32GB", "V100 PCIe"),
        ("NVIDIA A10", "A10"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA L40S", "L40S"),
        ("NVIDIA GeForce RTX 4090", "RTX 4090"),
        ("NVIDIA GeForce RTX 4060 Ti", "RTX 4060 Ti"),
        ("NVIDIA GeForce RTX 4070", "RTX 4070"),
        ("NVIDIA GeForce RTX 4080", "RTX 4080 (16GB)"),
        ("NVIDIA GeForce RTX 3090", "RTX 3090"),
        ("GeForce RTX 3090", "RTX 3090"),
        ("NVIDIA GeForce RTX 5070", "RTX 5070"),
        ("NVIDIA GeForce RTX 5080", "RTX 5080"),
        ("NVIDIA GeForce RTX 5090", "RTX 5090"),
        ("NVIDIA GeForce RTX 2080 Ti", "RTX 2080 Ti"),
        ("GeForce RTX 2080 Ti", "RTX 2080 Ti"),
        ("NVIDIA GeForce GTX 1080 Ti", "GTX 1080 Ti"),
        ("GeForce GTX 1080 Ti", "GTX 1080 Ti"),
        ("NVIDIA GeForce GTX 1080", "GTX 1080"),
        ("  nvidia   geforce rtx 4090 ", "RTX 4090"),  # case and runs of spaces do not matter
    ],
)
def test_reported_names_find_their_datasheet(name: str, model: str) -> None:
    sheet = datasheet_for(name)
    assert sheet is not None
    assert sheet.model == model


@pytest.mark.parametrize(
    "name",
    [
        "NVIDIA H100 NVL",  # 94 GB PCIe card, different figures
        "NVIDIA H100",  # 10de:2339, another H100 SKU
        "NVIDIA H200 NVL",
        "NVIDIA H20",
        "NVIDIA H800",
        "NVIDIA GH200 480GB",
        "NVIDIA A10G",  # AWS part, not an A10
        "NVIDIA A10M",
        "NVIDIA A100-SXM-64GB",
        "NVIDIA PG509-210",
        "NVIDIA A800-SXM4-80GB",
        "NVIDIA L40",
        "Tesla V100S-PCIE-32GB",
        "Tesla V100-SXM3-32GB",
        "NVIDIA GeForce RTX 4090 Laptop GPU",  # a smaller chip
        "NVIDIA GeForce RTX 4090 D",
        "NVIDIA GeForce RTX 4080 SUPER",
        "NVIDIA GeForce RTX 3090 Ti",
        "NVIDIA GeForce RTX 3060 Ti",
        "NVIDIA GeForce RTX 3060 Laptop GPU",
        "NVIDIA GeForce RTX 5090 D",
        "NVIDIA GeForce GTX 1080 Ti Founders",
        "NVIDIA A100-SXM4-40GB MIG 1g.5gb",  # a MIG slice is not the whole GPU
        "NVIDIA",
        "",
        "Graphics Device",  # what an old driver calls a GPU it does not know
    ],
)
def test_look_alike_names_get_no_datasheet(name: str) -> None:
    assert datasheet_for(name) is None


def test_rtx_3060_needs_the_memory_size_to_tell_12gb_from_8gb() -> None:
    name = "NVIDIA GeForce RTX 3060"
    assert datasheet_for(name) is None
    sheet = datasheet_for(name, memory_total_bytes=12288 * MIB)  # nvidia-smi, telegraf-rtx-3060-v12.xml
    assert sheet is not None
    assert sheet.memory_bandwidth_gbytes_per_s == 360
    assert (
        datasheet_for(name, memory_total_bytes=int(11.76 * GIB)) is sheet
    )  # torch's total_memory is a bit less
    assert datasheet_for(name, memory_total_bytes=8192 * MIB) is None  # the 240 GB/s card


def test_rtx_3080_needs_the_memory_size_to_tell_10gb_from_12gb() -> None:
    name = "NVIDIA GeForce RTX 3080"
    assert datasheet_for(name) is None
    sheet = datasheet_for(name, memory_total_bytes=10240 * MIB)  # telegraf-rtx-3080-v12.xml
    assert sheet is not None
    assert sheet.memory_bandwidth_gbytes_per_s == 760
    assert datasheet_for(name, memory_total_bytes=12288 * MIB) is None  # the 912 GB/s card


def test_memory_size_does_not_matter_where_one_name_is_one_card() -> None:
    assert datasheet_for("NVIDIA H100 80GB HBM3", memory_total_bytes=81559 * MIB) is datasheet_for(
        "NVIDIA H100 80GB HBM3"
    )


def test_peak_and_caveat() -> None:
    sheet = datasheet_for("NVIDIA GeForce RTX 5090")
    assert sheet is not None
    assert sheet.peak_tflops("tf32") == 104.8
    assert sheet.caveat("tf32") == "unconfirmed"
    assert sheet.caveat("fp32") is None
    assert sheet.caveat("memory_bandwidth") is None
    rtx5070 = datasheet_for("NVIDIA GeForce RTX 5070")
    assert rtx5070 is not None
    assert rtx5070.peak_tflops("tf32") is None  # unconfirmed and no estimate at all
    assert rtx5070.caveat("tf32") == "unconfirmed"
    assert rtx5070.caveat("fp32") == "derived"
    t4 = datasheet_for("Tesla T4")
    assert t4 is not None
    assert (t4.peak_tflops("bf16"), t4.caveat("bf16")) == (None, None)  # not in hardware, not "unknown"
    with pytest.raises(ValueError, match="precision"):
        sheet.peak_tflops("fp8")
    with pytest.raises(ValueError, match="precision"):
        sheet.caveat("fp16_acc16")


def test_normalize_name() -> None:
    assert normalize_name(" NVIDIA\tGeForce  RTX 4090\n") == "nvidia geforce rtx 4090"


# --- malformed data ------------------------------------------------------------------------------------------


def _raw() -> Any:
    text = resources.files("torch_gpu_doctor.compat").joinpath("cuda_matrix.json").read_text(encoding="utf-8")
    return json.loads(text)


RAW = _raw()


def _edit(change: Callable[[list[dict[str, Any]]], None]) -> Any:
    doc = copy.deepcopy(RAW)
    change(doc["gpu_datasheets"])
    return doc


def _set(index: int, key: str, value: Any) -> Callable[[list[dict[str, Any]]], None]:
    def change(sheets: list[dict[str, Any]]) -> None:
        sheets[index][key] = value

    return change


def _drop(index: int, key: str) -> Callable[[list[dict[str, Any]]], None]:
    def change(sheets: list[dict[str, Any]]) -> None:
        del sheets[index][key]

    return change


def _append_copy(index: int, **changes: Any) -> Callable[[list[dict[str, Any]]], None]:
    def change(sheets: list[dict[str, Any]]) -> None:
        sheets.append({**sheets[index], **changes})

    return change


def test_the_packaged_data_parses() -> None:
    assert parse_datasheets(RAW) == load_datasheets()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_set(0, "fp32_tflops", "67"), r"gpu_datasheets\[0\]\.fp32_tflops: '67' is not a number"),
        (_set(0, "fp32_tflops", True), "is not a number"),
        (_set(0, "fp32_tflops", -1), "is not a positive number"),
        (_set(0, "fp32_tflops", 0), "is not a positive number"),
        (_set(0, "fp32_tflops", 10**400), "out of range"),
        (
            _set(0, "memory_bandwidth_gbytes_per_s", None),
            "memory_bandwidth_gbytes_per_s: NoneType is not a number",
        ),
        (_drop(0, "tf32_tflops"), r"missing keys \['tf32_tflops'\]"),
        (_set(0, "fp16_tflop", 1), r"unknown keys \['fp16_tflop'\]"),
        (_set(0, "names", []), r"gpu_datasheets\[0\]\.names: must not be empty"),
        (_set(0, "names", "NVIDIA H100 80GB HBM3"), "names: must be a list"),
        (_set(0, "names", ["  "]), r"names\[0\]: '  ' is not a GPU name"),
        (_set(0, "names", [7]), r"names\[0\]: int is not a GPU name"),
        (_set(0, "model", ""), "model: must be a non-empty string"),
        (_set(0, "source", None), "source: must be a non-empty string"),
        (_set(0, "unconfirmed", ["fp64_tflops"]), r"unconfirmed\[0\]: 'fp64_tflops' does not match"),
        (_set(0, "derived", "fp32_tflops"), "derived: must be a list"),
        (_set(10, "derived", ["tf32_tflops"]), r"gpu_datasheets\[10\]\.derived: tf32_tflops is null"),
        (_set(0, "tf32_tflops", 9894), "tf32_tflops 9894.0 is above fp16_tflops 989.4"),
        (_set(0, "fp16_acc16_tflops", 98.94), "fp16_tflops 989.4 is above fp16_acc16_tflops 98.94"),
        (_set(0, "memory_gib_below", "11"), r"memory_gib_below: '11' is not a number"),
        (_append_copy(0, model="Other"), r"'NVIDIA H100 80GB HBM3' is already a name of 'H100 SXM5 80GB'"),
        (
            _append_copy(0, model="Other", names=["nvidia  H100 80GB hbm3"]),
            r"'nvidia  H100 80GB hbm3' is already a name of 'H100 SXM5 80GB'",
        ),
        (_append_copy(0, names=["Other"]), r"model: 'H100 SXM5 80GB' appears twice"),
        (_set(0, "note", 5), "note: must be a non-empty string"),
    ],
)
def test_malformed_entries_are_refused_with_their_path(
    change: Callable[[list[dict[str, Any]]], None], message: str
) -> None:
    with pytest.raises(CompatDataError, match=message):
        parse_datasheets(_edit(change))


def test_memory_bounds_must_leave_room() -> None:
    doc = _edit(_set(0, "memory_gib_at_least", 12))
    doc["gpu_datasheets"][0]["memory_gib_below"] = 11
    with pytest.raises(
        CompatDataError, match=r"memory_gib_at_least 12\.0 is not below memory_gib_below 11\.0"
    ):
        parse_datasheets(doc)


@pytest.mark.parametrize(
    "doc",
    [
        None,
        [],
        {},
        {"gpu_datasheets": {}},
        {"gpu_datasheets": []},
        {"gpu_datasheets": [None]},
        {"gpu_datasheets": [[]]},
    ],
)
def test_wrong_shapes_are_refused(doc: Any) -> None:
    with pytest.raises(CompatDataError):
        parse_datasheets(doc)
