"""compat/extensions.json: the one table of packages compiled against torch, and what is read from it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from torch_gpu_doctor.compat import CompatDataError
from torch_gpu_doctor.compat.extensions import load_extensions, parse_extensions
from torch_gpu_doctor.package_data import package_text


def _data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(package_text("torch_gpu_doctor.compat", "extensions.json"))
    return data


def test_every_row_has_a_source_and_its_rebuild_is_a_name_or_its_repository() -> None:
    table = load_extensions()
    assert len(table.packages) >= 15
    for row in table.packages:
        assert row.source.startswith("https://"), row.name
        assert row.rebuild is None or row.rebuild == row.name or row.rebuild.startswith("git+https://")
        assert not (row.rebuild and row.built_for_one_torch and row.name in ("vllm", "sglang"))


@pytest.mark.parametrize(
    ("typed", "module"),
    [
        ("flash-attn", "flash_attn"),
        ("flash_attn", "flash_attn"),
        ("Flash-Attn", "flash_attn"),
        ("mmcv-full", "mmcv"),
        ("spconv-cu118", "spconv"),
        ("torch_scatter", "torch_scatter"),
        ("mamba-ssm", "mamba_ssm"),
    ],
)
def test_a_pip_name_as_typed_finds_its_row(typed: str, module: str) -> None:
    row = load_extensions().by_pip_name(typed)
    assert row is not None and row.module == module


@pytest.mark.parametrize("typed", ["flash", "spconv-cuda", "spconv-cu", "spconv-cu11x", "mmcv-lite", "torch"])
def test_other_names_find_no_row(typed: str) -> None:
    assert load_extensions().by_pip_name(typed) is None


def test_a_module_names_its_package() -> None:
    table = load_extensions()
    for module, name in (("selective_scan_cuda", "mamba-ssm"), ("flash_attn_2_cuda", "flash-attn")):
        row = table.by_module(module)
        assert row is not None and row.name == name
    assert table.by_module("torch") is None


def test_the_pip_pattern_takes_either_separator_and_the_cuda_suffix() -> None:
    import re

    pattern = re.compile(rf"(?:{load_extensions().pip_pattern('ops_frames')})\Z")
    for typed in ("flash_attn", "flash-attn", "spconv-cu120", "mmcv-full", "causal_conv1d"):
        assert pattern.match(typed), typed
    assert not pattern.match("torchvision")  # its operators' frames are not read as an extension's


def test_the_libraries_that_word_kernel_failures_as_flashinfer_does() -> None:
    import re

    pattern = re.compile(rf"(?:{load_extensions().pip_pattern('kernel_check')})\Z")
    for typed in ("sgl-kernel", "sgl_kernel", "flashinfer", "flashinfer-python"):
        assert pattern.match(typed), typed
    assert not pattern.match("sglang") and not pattern.match("flash-attn")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["packages"][0].pop("source"), "source"),
        (lambda d: d["packages"][0].update(csrc="yes"), "csrc"),
        (lambda d: d["packages"][0].pop("kernel_check"), "kernel_check"),
        (lambda d: d["packages"][0].update(modules=["not a module"]), "modules"),
        (lambda d: d["packages"][0].update(name="Flash_Attn"), "name"),
        (lambda d: d["packages"][1].update(modules=d["packages"][0]["modules"]), "two rows"),
        (lambda d: d.update(packages=[]), "must not be empty"),
    ],
)
def test_a_broken_table_is_refused_with_where(change: Any, message: str) -> None:
    data = _data()
    change(data)
    with pytest.raises(CompatDataError, match=message):
        parse_extensions(data)
