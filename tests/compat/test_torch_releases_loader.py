"""The loader refuses bad data with a CompatDataError naming the path, and its query helpers answer the questions
the recommendation engine asks (device rule per compat.md §3b / compat-errata.md #47, driver rule per compat.md §1a)."""

from __future__ import annotations

import copy
import json
from importlib import resources
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torch_gpu_doctor.compat import CompatDataError, load_matrix
from torch_gpu_doctor.compat.torch_parse import load_torch_releases, parse_torch_compat
from torch_gpu_doctor.compat.torch_releases import (
    TorchCompat,
    arch_supported,
    cubin_runs_on,
    driver_runs_cuda,
    parse_cc,
    ptx_runs_on,
)
from torch_gpu_doctor.compat.wheel_candidates import (
    install_command,
    newest_release_supporting,
    supporting_candidates,
    variants_for,
)


def _raw() -> Any:
    text = resources.files("torch_gpu_doctor.compat").joinpath("cuda_matrix.json").read_text(encoding="utf-8")
    return json.loads(text)


RAW = _raw()


@pytest.fixture(scope="module")
def data() -> TorchCompat:
    return load_torch_releases()


def _broken(edit: Any) -> Any:
    doc = copy.deepcopy(RAW)
    edit(doc)
    return doc


# --- validation ----------------------------------------------------------------------------------------------


def _set(path: tuple[Any, ...], value: Any) -> Any:
    def edit(doc: Any) -> None:
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


def _delete(path: tuple[Any, ...]) -> Any:
    def edit(doc: Any) -> None:
        target = doc
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return edit


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_set(("torch_releases",), {}), "torch_releases: must be a list"),
        (_set(("torch_releases", 0, "version"), "2.15"), "torch_releases[0].version"),
        (_set(("torch_releases", 1, "patches"), ["2.13.9"]), "torch_releases[1].patches[0]"),
        (_set(("torch_releases", 0, "release_date"), "2026-02-30"), "torch_releases[0].release_date"),
        (_set(("torch_releases", 0, "requires_python"), ">=3.12"), "excludes python_versions 3.11"),
        (
            _set(("torch_releases", 0, "python_versions"), ["3.11", "py3"]),
            "torch_releases[0].python_versions[1]",
        ),
        (_set(("torch_releases", 0, "pypi_default", "linux_x86_64"), "cu999"), "pypi_default.linux_x86_64"),
        (_delete(("torch_releases", 0, "pypi_default", "macos")), "pypi_default: needs exactly the keys"),
        (_set(("torch_releases", 2, "variants", 1, "cuda"), "13.2"), "torch_releases[2].variants[1].cuda"),
        (_set(("torch_releases", 2, "variants", 1, "name"), "cuda130"), "variants[1].name"),
        (
            _set(("torch_releases", 2, "variants", 1, "arch_list", "linux_x86_64", 0), "sm_7.5"),
            "arch_list.linux_x86_64[0]",
        ),
        (_set(("torch_releases", 2, "variants", 1, "arch_list", "macos"), ["sm_80"]), "arch_list.macos"),
        (_set(("torch_releases", 2, "variants", 1, "ptx", "linux_x86_64"), ["sm_80"]), "ptx.linux_x86_64[0]"),
        (_set(("torch_releases", 2, "variants", 1, "cudnn"), "nine"), "variants[1].cudnn"),
        (_delete(("torch_releases", 2, "variants", 1, "source")), "torch_releases[2].variants[1].source"),
        (
            _set(("torch_releases", 2, "variants", 5, "arch_list"), {"linux_x86_64": ["sm_90"]}),
            "only CUDA variants",
        ),
        (
            _set(("torch_releases", 1, "companions", "for_patches", "2.14.2"), {}),
            "companions.for_patches.2.14.2",
        ),
        (lambda doc: doc["torch_releases"].reverse(), "newest first"),
        (_set(("wheel_bundled_cuda_runtime", 0, "releases"), ["2.12"]), "torch 2.12 has no variant 'cu134'"),
        (_set(("wheel_bundled_cuda_runtime", 1, "toolkit_release"), "Update 9"), "no cuda_toolkits row 13.2"),
        (
            _set(("pytorch_device_rule", "integrated_ccs", 0), "5.3.1"),
            "pytorch_device_rule.integrated_ccs[0]",
        ),
        (_set(("pytorch_device_rule", "cubins", 10, "except"), []), "pytorch_device_rule.examples[1]"),
        (_set(("pytorch_device_rule", "examples", 0, "runs"), False), "pytorch_device_rule.examples[0]"),
        (_set(("architecture_last_driver", 5, "last_driver_branch"), "580"), "architecture_last_driver[5]"),
        (_set(("architecture_last_driver", 5, "max_driver_cuda"), None), "go together"),
        (_set(("architecture_last_driver", 0, "kernel_module"), "open"), "is not one of open_required"),
        (_delete(("architecture_last_driver", 0, "kernel_module_source")), "kernel_module_source"),
        (_set(("cuda_minor_version_compatibility", 1, "cuda_major"), 13), "listed once"),
        (
            _set(("cuda_minor_version_compatibility", 0, "linux_min_driver"), "R580"),
            "cuda_minor_version_compatibility[0].linux_min_driver",
        ),
        (
            _set(("gpus", 25, "pci_device_ids"), ["27b8"]),
            "gpus[26].pci_device_ids[0]: 27b8 is also 'NVIDIA H100'",
        ),
        (_set(("gpus", 25, "pci_device_ids"), ["27B8"]), "gpus[25].pci_device_ids[0]"),
        (_delete(("gpus", 25, "pci_device_ids_source")), "gpus[25].pci_device_ids_source"),
        (
            _set(("torch_releases", 0, "variants", 1, "arch_unconfirmed"), {"macos": "x" * 30}),
            "arch_unconfirmed.macos",
        ),
        (_set(("torch_releases", 0, "pypi_default"), {1: "cu132"}), "must be an object with string keys"),
    ],
)
def test_bad_data_names_the_path(edit: Any, message: str) -> None:
    with pytest.raises(CompatDataError) as err:
        parse_torch_compat(_broken(edit))
    assert message in str(err.value)


def test_the_edits_above_hit_what_they_mean_to() -> None:
    # guards the indices used above against the file being reordered
    assert RAW["torch_releases"][2]["variants"][1]["name"] == "cu130"
    assert RAW["torch_releases"][2]["variants"][5]["name"] == "rocm7.1"
    assert RAW["pytorch_device_rule"]["cubins"][10]["sm"] == "sm_86"
    assert RAW["architecture_last_driver"][5]["architecture"] == "Volta"
    assert RAW["gpus"][25]["name"] == "NVIDIA H100"
    assert RAW["wheel_bundled_cuda_runtime"][0]["variant"] == "cu134"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    """The real file with one value somewhere inside the new sections replaced by garbage."""

    def mutate(value: Any, depth: int) -> Any:
        if not (isinstance(value, dict | list) and value) or depth > 6 or draw(st.integers(0, 5)) == 0:
            return draw(json_values)
        if isinstance(value, dict):
            key = draw(st.sampled_from(sorted(value)))
            return {**value, key: mutate(value[key], depth + 1)}
        index = draw(st.integers(0, len(value) - 1))
        return [*value[:index], mutate(value[index], depth + 1), *value[index + 1 :]]

    section = draw(
        st.sampled_from(
            [
                "torch_releases",
                "wheel_bundled_cuda_runtime",
                "pytorch_device_rule",
                "architecture_last_driver",
                "gpus",
            ]
        )
    )
    return {**RAW, section: mutate(RAW[section], 1)}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_data_raises_only_compat_error(doc: Any) -> None:
    try:
        parsed = parse_torch_compat(doc)
    except CompatDataError:
        return
    # whatever got through still answers queries without crashing
    found = newest_release_supporting(
        ["8.9"], "3.12", "linux_x86_64", "12.8", parsed, include_unconfirmed=True
    )
    assert found is None or found.variant.cuda is not None
    rel = parsed.release("2.13.0")
    assert rel is None or rel.minor == "2.13"
    assert all(
        parsed.bundled_runtime(r, v.name) is None or v.cuda for r in parsed.releases for v in r.variants
    )


@settings(max_examples=100, deadline=None)
@given(json_values)
def test_garbage_raises_only_compat_error(doc: Any) -> None:
    with pytest.raises(CompatDataError):
        parse_torch_compat(doc)


# --- device rule ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "cc", "runs"),
    [
        ("sm_86", "8.9", True),  # compat.md §3b line 256: RTX 40 (8.9) runs the sm_86 cubin
        ("sm_86", "8.7", False),  # compat.md §3b line 243: 86 runs on >=8.6,<9.0 except 8.7 (Jetson Orin)
        ("sm_80", "8.6", True),  # line 252: 80 runs on >=8.0,<9.0 except 8.7
        ("sm_80", "8.7", False),
        ("sm_90", "8.9", False),  # 90 runs on >=9.0,<10.0
        ("sm_90", "10.0", False),
        ("sm_100", "10.3", True),  # line 256: B300 (10.3) runs on sm_100
        ("sm_100", "10.1", False),  # compat-errata.md #47 (line 105): 100 excludes 101
        ("sm_101", "11.0", True),  # 101 = {101, 110}
        ("sm_120", "12.1", True),  # GB10 runs on sm_120
        ("sm_121", "12.0", False),
        ("sm_87", "8.7", True),
        ("sm_87", "8.9", False),  # 87 = {8.7}
        ("sm_53", "5.3", True),
        ("sm_50", "5.3", False),  # 50 excludes 53
        ("sm_61", "6.0", False),
        ("sm_60", "6.1", True),  # GTX 10xx runs the sm_60 cubin (compat-errata.md #34)
        ("sm_37", "3.7", True),  # not in the table: general rule
        ("sm_35", "3.7", True),
        ("sm_37", "3.5", False),
        ("sm_90a", "9.0", True),  # arch-specific: only exactly 9.0 (conservative)
        ("sm_100f", "10.3", False),
        ("sm_8.6", "8.6", False),  # malformed never runs
        ("sm_86", "eight", False),
    ],
)
def test_cubin_runs_on(data: TorchCompat, code: str, cc: str, runs: bool) -> None:
    assert cubin_runs_on(code, cc, data.device_rule) is runs


def test_general_rule_agrees_with_pytorchs_table(data: TorchCompat) -> None:
    # compat.md §3b line 254: the table is the rule "same major, minor >=, integrated CCs only run their own",
    # checked on every compute capability NVIDIA knows (sm_to_arch, from cuda-samples helper_cuda.h)
    rule = data.device_rule
    ccs = sorted(load_matrix().sm_to_arch)
    assert len(ccs) == 24
    for code, row in rule.cubins.items():
        for cc in ccs:
            device = parse_cc(cc)
            assert device is not None
            general = device == code or rule.renamed_ccs.get(code) == device
            if not general and code not in rule.integrated_ccs and device not in rule.integrated_ccs:
                general = device[0] == code[0] and device[1] >= code[1]
            assert row.runs_on(device) is general, (row.sm, cc)


@pytest.mark.parametrize(
    ("code", "cc", "runs"),
    [
        ("compute_80", "9.0", True),  # compat.md §3b line 255: PTX JITs to any CC >= X.Y
        ("compute_80", "8.7", True),
        ("compute_120", "12.1", True),
        ("compute_90", "8.9", False),
        ("compute_37", "12.0", True),
        ("compute_90a", "10.0", False),
        ("sm_80", "9.0", False),
    ],
)
def test_ptx_runs_on(code: str, cc: str, runs: bool) -> None:
    assert ptx_runs_on(code, cc) is runs


def test_arch_supported(data: TorchCompat) -> None:
    rule = data.device_rule
    cu130 = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
    assert arch_supported(cu130, [], "8.9", rule)
    assert not arch_supported(cu130, [], "6.1", rule)  # GTX 1080 on cu130: "no kernel image"
    assert not arch_supported(cu130, [], "8.7", rule)  # Jetson Orin
    assert not arch_supported(cu130, [], "13.0", rule)  # a future GPU: no PTX to JIT
    assert arch_supported(cu130, ["compute_120"], "13.0", rule)
    assert arch_supported([*cu130, "compute_120"], [], "13.0", rule)  # get_arch_list() as is
    assert not arch_supported([], [], "8.0", rule)


# --- driver rule ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("driver", "wheel", "runs"),
    [
        ("12.8", "12.6", True),  # newer drivers run older CUDA
        ("12.4", "12.8", True),  # compat.md §1a: 12.x minor-version compatibility (>= 525)
        ("12.8", "13.0", False),  # cu130 needs >= 580 (compat.md §6 "driver too old")
        ("13.0", "13.2", True),  # 13.x minor-version compatibility (>= 580)
        ("11.4", "11.8", True),  # R470 runs cu118 under 11.x minor-version compatibility
        ("11.0", "11.8", False),  # an 11.0 driver may be below 450.80.02
        ("10.2", "11.0", False),
        ("10.1", "10.2", False),  # no minor-version compatibility before 11
        ("13.0", "12.8", True),
        ("garbage", "12.8", False),
    ],
)
def test_driver_runs_cuda(driver: str, wheel: str, runs: bool) -> None:
    assert driver_runs_cuda(driver, wheel) is runs


def test_driver_without_minor_version_compat() -> None:
    assert not driver_runs_cuda("12.4", "12.8", minor_version_compat=False)
    assert driver_runs_cuda("12.8", "12.8", minor_version_compat=False)


# --- lookups and recommendations -----------------------------------------------------------------------------


def test_release_lookup(data: TorchCompat) -> None:
    found = data.release("2.14.1+cu130")
    assert found is not None and found.version == "2.14.0"
    assert data.release("2.13") is not None
    assert data.release("2.99.0") is None
    assert data.release("") is None


def test_variants_for(data: TorchCompat) -> None:
    rel = data.release("2.15.0")
    assert rel is not None
    assert [v.name for v in variants_for(rel, "windows")] == ["cu132", "cu130", "cu126", "cpu"]
    assert [v.name for v in variants_for(rel, "windows", include_unconfirmed=False)] == ["cu132"]
    assert [v.name for v in variants_for(rel, "macos")] == ["cpu"]


def test_install_command(data: TorchCompat) -> None:
    rel = data.release("2.15")
    assert rel is not None
    cu132, cu126 = rel.variant("cu132"), rel.variant("cu126")
    assert cu132 is not None and cu126 is not None
    assert install_command(rel, cu132, "linux_x86_64") == "pip install torch==2.15.0"
    assert (
        install_command(rel, cu126, "linux_x86_64")
        == "pip install torch==2.15.0 --index-url https://download.pytorch.org/whl/cu126"
    )
    assert (
        install_command(rel, cu132, "windows", with_companions=True)
        == "pip install torch==2.15.0 torchvision==0.29.2 torchaudio==2.11.0 --index-url https://download.pytorch.org/whl/cu132"
    )
    two14 = data.release("2.14")
    assert two14 is not None and two14.latest == "2.14.1"


def _best(
    data: TorchCompat, ccs: list[str], platform: str, driver: str, unconfirmed: bool = False
) -> tuple[str, str]:
    found = newest_release_supporting(ccs, None, platform, driver, data, include_unconfirmed=unconfirmed)
    assert found is not None
    return found.release.version, found.variant.name


def test_gtx_1080_on_driver_580_gets_cu126(data: TorchCompat) -> None:
    # compat.md §7 line 415: GTX 1080 (6.1) + driver 580 -> cu126 (uv would pick cu130/cu132 — wrong);
    # compat-errata.md #29: cu126 for 2.15 is only in the release table, so the confirmed answer is 2.14
    assert _best(data, ["6.1"], "linux_x86_64", "13.0") == ("2.14.0", "cu126")
    assert _best(data, ["6.1"], "linux_x86_64", "13.0", unconfirmed=True) == ("2.15.0", "cu126")
    found = newest_release_supporting(["6.1"], None, "linux_x86_64", "13.0", data)
    assert found is not None
    assert found.command() == "pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/cu126"


def test_rtx_5090_on_driver_570(data: TorchCompat) -> None:
    # compat-errata.md §5.3 (line 263): torch 2.13 cu129 is a candidate for RTX 50 + driver 570
    assert _best(data, ["12.0"], "linux_x86_64", "12.8", unconfirmed=True) == ("2.13.0", "cu129")
    # confirmed data only: 2.10 cu128 (the PyPI default, plain pip install)
    found = newest_release_supporting(["12.0"], None, "linux_x86_64", "12.8", data)
    assert found is not None and (found.release.version, found.variant.name, found.pypi_default) == (
        "2.10.0",
        "cu128",
        True,
    )
    assert found.command() == "pip install torch==2.10.0"


def test_v100(data: TorchCompat) -> None:
    # compat-errata.md #46 (line 104): Windows cu128 has no sm_70; Linux cu128 keeps it up to 2.10 (#35)
    assert _best(data, ["7.0"], "windows", "12.8") == ("2.14.0", "cu126")
    candidates = supporting_candidates(data, ["7.0"], None, "linux_x86_64", "12.8")
    assert ("2.10.0", "cu128") in [(c.release.version, c.variant.name) for c in candidates]
    assert ("2.11.0", "cu128") not in [(c.release.version, c.variant.name) for c in candidates]


def test_h100_on_driver_580_gets_the_pypi_default(data: TorchCompat) -> None:
    found = newest_release_supporting(["9.0"], "3.12", "linux_x86_64", "13.0", data)
    assert found is not None and found.pypi_default and found.command() == "pip install torch==2.15.0"


def test_python_and_mixed_gpus(data: TorchCompat) -> None:
    # 2.15 needs Python >= 3.11 (compat-errata.md #13): a 3.10 user gets 2.14
    found = newest_release_supporting(["9.0"], "3.10", "linux_x86_64", "13.0", data)
    assert found is not None and found.release.version == "2.14.0"
    # a GTX 1080 next to an RTX 4090: only cu126 has kernels for both
    assert _best(data, ["6.1", "8.9"], "linux_x86_64", "13.0") == ("2.14.0", "cu126")


def test_nothing_for_jetson_or_without_a_driver(data: TorchCompat) -> None:
    # compat.md §3a: Jetson (sm_87) is not covered by the aarch64 wheels
    assert newest_release_supporting(["8.7"], None, "linux_aarch64", "12.6", data) is None
    assert newest_release_supporting(["8.9"], None, "linux_x86_64", None, data) is None
    assert newest_release_supporting([], None, "linux_x86_64", "13.0", data) is None
    assert newest_release_supporting(["8.9"], None, "macos", "13.0", data) is None


def test_kepler_only_old_wheels(data: TorchCompat) -> None:
    # compat.md §1c line 118: R470 -> CUDA 11.4 -> only cu11x wheels; sm_37 in cu118 builds up to 2.5
    assert _best(data, ["3.7"], "linux_x86_64", "11.4") == ("2.5.0", "cu118")


def test_a_toolkits_minimum_driver_keeps_nvidias_spelling() -> None:
    from torch_gpu_doctor.compat import load_matrix  # the CUDA table, not the releases this file is about

    matrix = load_matrix()
    assert matrix.min_driver_for("10.2") == "440.33"
    assert matrix.min_driver_for("11.8") == "520.61.05"  # not packaging's 520.61.5
    assert matrix.min_driver_for("10.1.243", "windows") == "418.96"
    assert matrix.min_driver_for("99.0") is None
