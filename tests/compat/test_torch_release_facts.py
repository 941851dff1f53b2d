"""The shipped torch-release data, checked fact by fact against ../shared/reference/compat-errata.md (which wins over
the draft) and compat.md. Each test names the errata row / line it checks; every assertion is a concrete value."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

from torch_gpu_doctor.compat import load_matrix
from torch_gpu_doctor.compat.torch_parse import load_torch_releases, parse_torch_compat
from torch_gpu_doctor.compat.torch_releases import (
    KernelModule,
    TorchCompat,
    TorchRelease,
    TorchVariant,
)

TURING_UP = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
CU12_OLD = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]


def _raw() -> Any:
    text = resources.files("torch_gpu_doctor.compat").joinpath("cuda_matrix.json").read_text(encoding="utf-8")
    return json.loads(text)


@pytest.fixture(scope="module")
def data() -> TorchCompat:
    return load_torch_releases()


def _rel(data: TorchCompat, minor: str) -> TorchRelease:
    found = data.release(minor)
    assert found is not None, minor
    return found


def _var(data: TorchCompat, minor: str, name: str) -> TorchVariant:
    found = _rel(data, minor).variant(name)
    assert found is not None, (minor, name)
    return found


# --- the file as a whole -------------------------------------------------------------------------------------


def test_file_validates_with_both_loaders() -> None:
    raw = _raw()
    assert raw["schema"] == "gpu-doctor cuda_matrix v1"
    assert raw["data_date"] == "2026-11-22"
    assert load_matrix().data_date == "2026-11-22"  # the existing loader ignores the new sections
    parsed = parse_torch_compat(raw)
    assert [r.minor for r in parsed.releases] == [
        "2.15", "2.14", "2.13", "2.12", "2.11", "2.10", "2.9", "2.8", "2.7", "2.6",
        "2.5", "2.4", "2.3", "2.2", "2.1", "2.0", "1.13",
    ]  # fmt: skip


def _walk(value: Any, path: str) -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(value, dict):
        found.append((path, value))
        for key, child in value.items():
            found += _walk(child, f"{path}.{key}")
    elif isinstance(value, list):
        for i, child in enumerate(value):
            found += _walk(child, f"{path}[{i}]")
    return found


# objects that are parts of a sourced entry rather than entries themselves
_PARTS = (
    "arch_list",
    "ptx",
    "pypi_default",
    "for_patches",
    "arch_unconfirmed",
    "renamed_ccs",
    "examples",
    "first_linux_driver",
    "codegen_ended_earlier",
)


@pytest.mark.parametrize(
    "section",
    [
        "torch_releases",
        "wheel_bundled_cuda_runtime",
        "pytorch_device_rule",
        "architecture_last_driver",
        "cuda_toolkits",
    ],
)
def test_every_entry_has_a_source(section: str) -> None:
    missing = [
        path
        for path, obj in _walk(_raw()[section], section)
        # parts of an entry (and the cubin rows, which share the rule's source) carry no source of their own
        if not any(f".{part}" in path for part in (*_PARTS, "cubins"))
        and not isinstance(obj.get("source"), str)
    ]
    assert missing == []


def test_every_pci_id_list_has_its_source() -> None:
    gpus = [g for g in _raw()["gpus"] if "pci_device_ids" in g]
    assert len(gpus) == 77
    assert all(g["pci_device_ids_source"].startswith("Debian pci.ids 0.0~2023.04.11-1") for g in gpus)


def test_every_unconfirmed_marker_says_why() -> None:
    markers = [
        (path, obj[key])
        for path, obj in _walk(_raw(), "$")
        for key in obj
        if "unconfirmed" in key and isinstance(obj[key], str)
    ]
    assert len(markers) > 50
    assert all(len(text) > 20 for _, text in markers)


# --- releases and PyPI defaults (compat-errata.md §1a, §5) ----------------------------------------------------


def test_newest_release_is_2_15(data: TorchCompat) -> None:
    # compat-errata.md #13 (line 58) and §5.2 (line 261): 2.15.0 released 2026-10-28
    assert data.newest.version == "2.15.0"
    assert data.newest.release_date == "2026-10-28"
    assert data.is_newer_than_data("2.16.0+cu132") and not data.is_newer_than_data("2.15.0")


def test_2_14_is_released_with_a_patch(data: TorchCompat) -> None:
    # compat-errata.md #11 (line 56), §5.1 (line 260): 2.14.0 on 2026-09-02, 2.14.1 on 2026-09-30
    rel = _rel(data, "2.14")
    assert (rel.version, rel.patches, rel.release_date) == ("2.14.0", ("2.14.1",), "2026-09-02")
    assert data.release("2.14.1+cu130") is rel


def test_2_13_has_no_patch_release(data: TorchCompat) -> None:
    # compat-errata.md #14 (line 59): only 2.13.0 exists
    assert _rel(data, "2.13").patches == ()
    assert data.release("2.13.1") is None


def test_2_12_patches(data: TorchCompat) -> None:
    # compat-errata.md #15 (line 60): 2.12.0 (2026-05-13), 2.12.1
    rel = _rel(data, "2.12")
    assert (rel.release_date, rel.patches) == ("2026-05-13", ("2.12.1",))


@pytest.mark.parametrize(
    ("minor", "variant"),
    [
        ("2.15", "cu132"),  # compat-errata.md #13 (line 58)
        ("2.14", "cu130"),  # compat-errata.md #12 (line 57): cu130, not the planned cu132
        ("2.13", "cu130"),  # #10 (line 55)
        ("2.12", "cu130"),  # #10 (line 55)
        ("2.11", "cu130"),  # #9 (line 54)
        ("2.10", "cu128"),  # #8 (line 53)
        ("2.9", "cu128"),  # #8
        ("2.8", "cu128"),  # #7 (line 52)
        ("2.7", "cu126"),  # #6 (line 51)
        ("2.6", "cu124"),  # #5
        ("2.5", "cu124"),  # #4
        ("2.4", "cu121"),  # #3
        ("2.1", "cu121"),  # #2
        ("2.0", "cu117"),  # #1
    ],
)
def test_pypi_default_linux_x86_64(data: TorchCompat, minor: str, variant: str) -> None:
    assert _rel(data, minor).pypi_default["linux_x86_64"] == variant


def test_pypi_default_other_platforms(data: TorchCompat) -> None:
    # compat-errata.md #16 (line 61): Windows PyPI = CPU; #17 (line 62): aarch64 2.13.0 = cu130, 2.15.0 = cu132
    assert all(r.pypi_default["windows"] == "cpu" and r.pypi_default["macos"] == "cpu" for r in data.releases)
    assert _rel(data, "2.13").pypi_default["linux_aarch64"] == "cu130"
    assert _rel(data, "2.15").pypi_default["linux_aarch64"] == "cu132"
    assert _rel(data, "2.14").pypi_default["linux_aarch64"] is None  # not checked: stays unknown
    assert "linux-aarch64 not checked" in (_rel(data, "2.14").unconfirmed or "")


def test_python_versions(data: TorchCompat) -> None:
    # compat-errata.md #13 (line 58): 2.15 Requires-Python >=3.11, cp311-cp315, 3.14t, 3.15t
    rel = _rel(data, "2.15")
    assert rel.requires_python == ">=3.11"
    assert rel.python_versions == ("3.11", "3.12", "3.13", "3.14", "3.15", "3.14t", "3.15t")
    # compat-errata.md #20 (line 65): 2.13/2.14 cp310-cp314 + cp314t; 2.5 has a cp313 wheel; 2.4 cp38-cp312
    assert _rel(data, "2.13").python_versions == ("3.10", "3.11", "3.12", "3.13", "3.14", "3.14t")
    assert "3.13" in _rel(data, "2.5").python_versions
    assert _rel(data, "2.4").python_versions == ("3.8", "3.9", "3.10", "3.11", "3.12")


def test_glibc(data: TorchCompat) -> None:
    # compat-errata.md #19 (line 64) and §5.10: glibc 2.28 from 2.7.0, 2.6.0 needs 2.17
    assert _rel(data, "2.7").linux_x86_64_glibc_min == "2.28"
    assert _rel(data, "2.6").linux_x86_64_glibc_min == "2.17"


# --- variants (compat-errata.md §1b) -------------------------------------------------------------------------


def _cuda_names(data: TorchCompat, minor: str) -> list[str]:
    return [v.name for v in _rel(data, minor).variants if v.cuda is not None]


def test_cu129_exists_for_2_9_to_2_13_except_2_12(data: TorchCompat) -> None:
    # compat-errata.md #25 (line 75), #26 (line 76), #27 (line 77), §5.3 (line 263)
    for minor in ("2.9", "2.10", "2.11", "2.13"):
        assert "cu129" in _cuda_names(data, minor), minor
    assert "cu129" not in _cuda_names(data, "2.12")
    assert "cu129" not in _cuda_names(data, "2.14")  # #28: conflicting, stays out
    assert "cu129" in (_rel(data, "2.14").unconfirmed or "")


def test_variant_lists(data: TorchCompat) -> None:
    # compat-errata.md #26-#29 (lines 76-79), §5.2/§5.4: cu126 still in 2.15; cu134 in 2.14/2.15
    assert _cuda_names(data, "2.15") == ["cu134", "cu132", "cu130", "cu126"]
    assert _cuda_names(data, "2.14") == ["cu134", "cu132", "cu130", "cu126"]
    assert _cuda_names(data, "2.12") == ["cu132", "cu130", "cu126"]
    assert _cuda_names(data, "2.8") == ["cu129", "cu128", "cu126"]  # #24
    assert _cuda_names(data, "2.7") == ["cu128", "cu126", "cu118"]  # #23


def test_cu134_is_linux_x86_64_only(data: TorchCompat) -> None:
    # compat-errata.md §5.4 (line 266): Linux only per test-infra CUDA_ARCHES_NO_WINDOWS
    for minor in ("2.14", "2.15"):
        var = _var(data, minor, "cu134")
        assert var.platforms == ("linux_x86_64",)
        assert var.arch_list == {}  # not quoted by any source: unknown, not guessed
        assert var.unconfirmed is not None


def test_non_default_variants_resting_on_a_release_table_are_marked(data: TorchCompat) -> None:
    # compat-errata.md §6: cu126 for 2.15, cu132 anything, cu129 for 2.14 are not index-verified
    assert _var(data, "2.15", "cu126").unconfirmed is not None
    assert _var(data, "2.12", "cu132").unconfirmed is not None
    assert _var(data, "2.15", "cu132").unconfirmed is None  # the PyPI default itself was inspected


# --- arch lists and PTX (compat-errata.md §1c) ---------------------------------------------------------------


def test_2_13_cu130_linux_arch_list(data: TorchCompat) -> None:
    # compat-errata.md #41 (line 99): published 2.13.0 wheels have sm_75..sm_120 and no compute_120
    var = _var(data, "2.13", "cu130")
    assert list(var.arch_list["linux_x86_64"]) == TURING_UP
    assert var.ptx["linux_x86_64"] == ()
    # #43 (line 101): aarch64 sm_80 sm_90 sm_100 sm_110 sm_120, no PTX
    assert list(var.arch_list["linux_aarch64"]) == ["sm_80", "sm_90", "sm_100", "sm_110", "sm_120"]
    assert var.ptx["linux_aarch64"] == ()


def test_no_ptx_in_any_pypi_default_wheel_2_1_to_2_15(data: TorchCompat) -> None:
    # compat-errata.md #42 (line 100) and §5.5 (line 267): no PyPI release wheel 2.1-2.15 carries PTX
    checked = 0
    for rel in data.releases:
        if rel.minor in ("1.13", "2.0"):
            continue
        for plat in ("linux_x86_64", "linux_aarch64"):
            name = rel.pypi_default[plat]
            if name is None:
                continue
            var = rel.variant(name)
            assert var is not None
            assert var.ptx.get(plat, ()) == (), (rel.version, name, plat)
            assert not any(a.startswith("compute_") for a in var.arch_list.get(plat, ()))
            checked += 1
    assert checked == 17  # 15 x86_64 defaults (2.1-2.15) + aarch64 2.13 and 2.15


def test_ptx_only_where_a_source_shows_it(data: TorchCompat) -> None:
    every = {
        (r.minor, v.name, plat, code)
        for r in data.releases
        for v in r.variants
        for plat, codes in v.ptx.items()
        for code in codes
    }
    # Windows 3.7+PTX of the cu11x builds (builder .bat files, compat-errata.md #45) and 2.7 cu128 (likely)
    assert ("2.7", "cu128", "linux_x86_64", "compute_120") in every
    assert all(code == "compute_37" for minor, _, plat, code in every if minor != "2.7" or plat == "windows")
    assert _var(data, "2.7", "cu128").arch_unconfirmed["linux_x86_64"].startswith("'likely' only")


def test_windows_cu128_and_newer_have_no_sm_70(data: TorchCompat) -> None:
    # compat-errata.md #46 (line 104) and §5.9 (line 274)
    seen = 0
    for rel in data.releases:
        for var in rel.variants:
            if var.name in ("cu128", "cu129", "cu130", "cu132") and "windows" in var.arch_list:
                assert list(var.arch_list["windows"]) == TURING_UP, (rel.version, var.name)
                seen += 1
    assert seen == 17  # cu128 2.7-2.11, cu129 2.8, cu130 2.9-2.15, cu132 2.12-2.15


def test_linux_cu128_keeps_sm_70_in_2_8_to_2_10_but_not_2_11(data: TorchCompat) -> None:
    # compat-errata.md #35 (line 93): sm_70 in 2.8.0/2.9.0/2.10.0 cu128; #38 (line 96): 2.11 drop kept, marked
    for minor in ("2.8", "2.9", "2.10"):
        assert "sm_70" in _var(data, minor, "cu128").arch_list["linux_x86_64"]
    var = _var(data, "2.11", "cu128")
    assert list(var.arch_list["linux_x86_64"]) == TURING_UP
    assert "#38" in var.arch_unconfirmed["linux_x86_64"]


def test_cu126_windows_adds_sm_61_linux_does_not(data: TorchCompat) -> None:
    # compat-errata.md #37 (line 95), #44 (line 102), §5.9: Windows cu124/cu126 add 6.1, Linux has none
    var = _var(data, "2.14", "cu126")
    assert list(var.arch_list["linux_x86_64"]) == CU12_OLD
    assert list(var.arch_list["windows"]) == ["sm_50", "sm_60", "sm_61", *CU12_OLD[2:]]
    assert "sm_61" not in _var(data, "2.7", "cu126").arch_list["linux_x86_64"]  # #34 (line 92)


def test_2_0_cu117_has_no_sm_90(data: TorchCompat) -> None:
    # compat-errata.md #30 (line 88): H100 unsupported on the 2.0 PyPI wheel
    assert list(_var(data, "2.0", "cu117").arch_list["linux_x86_64"]) == [
        "sm_37", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86",
    ]  # fmt: skip


def test_2_13_cu129(data: TorchCompat) -> None:
    # compat-errata.md #27 (line 77): x86_64 {75,80,86,90,100,120}, aarch64 {80,90,100,120}
    var = _var(data, "2.13", "cu129")
    assert list(var.arch_list["linux_x86_64"]) == TURING_UP
    assert list(var.arch_list["linux_aarch64"]) == ["sm_80", "sm_90", "sm_100", "sm_120"]


def test_unknown_arch_lists_are_left_out_not_guessed(data: TorchCompat) -> None:
    # compat.md §8 and compat-errata.md §2: Linux arch list of 2.6 / 2.7 cu118 unconfirmed
    for minor in ("2.6", "2.7"):
        var = _var(data, minor, "cu118")
        assert "linux_x86_64" in var.platforms and "linux_x86_64" not in var.arch_list
        assert var.unconfirmed is not None


# --- cuDNN, NCCL, bundled runtime (compat-errata.md §1d) -----------------------------------------------------


def test_2_11_cudnn_is_9_19(data: TorchCompat) -> None:
    # compat-errata.md #48 (line 111) and §5.6 (line 269): 9.19.0.56, not RELEASE.md's 9.17.1.4
    assert _var(data, "2.11", "cu130").cudnn == "9.19.0.56"
    cu128 = _var(data, "2.11", "cu128")
    assert cu128.cudnn is None and "9.17.1.4" in (cu128.cudnn_unconfirmed or "")


@pytest.mark.parametrize(
    ("minor", "variant", "cudnn", "nccl"),
    [
        ("2.15", "cu132", "9.26.0.51", "2.30.7"),  # compat-errata.md #51 (line 114)
        ("2.14", "cu130", "9.24.0.43", "2.30.7"),  # #50 (line 113)
        ("2.13", "cu130", "9.20.0.48", "2.29.7"),  # #49 (line 112)
        ("2.8", "cu128", "9.10.2.21", "2.27.3"),  # #7 (line 52)
        ("2.7", "cu126", "9.5.1.17", None),  # #6 (line 51)
        ("2.0", "cu117", "8.5.0.96", None),  # #1
    ],
)
def test_cudnn_nccl(data: TorchCompat, minor: str, variant: str, cudnn: str, nccl: str | None) -> None:
    var = _var(data, minor, variant)
    assert (var.cudnn, var.nccl) == (cudnn, nccl)


@pytest.mark.parametrize(
    ("minor", "variant", "runtime", "linux_driver"),
    [
        ("2.15", "cu132", "13.2.2", "595.71.05"),  # compat-errata.md #53 (line 116), §5.7: 13.2 Update 2
        ("2.14", "cu132", "13.2.1", "595.58.03"),  # compat.md §2 note (RELEASE.md), 13.2 Update 1
        ("2.13", "cu130", "13.0.3", "580.95.05"),  # #53: cuda-toolkit 13.0.3 = 13.0 U2 runtime
        ("2.11", "cu130", "13.0.2", "580.95.05"),  # #9, #53
        ("2.9", "cu128", "12.8.90", "570.124.06"),  # #54 (line 117): 12.8 Update 1
        ("2.7", "cu126", "12.6.77", "560.35.05"),  # #54: 12.6 Update 3
    ],
)
def test_bundled_runtime_and_full_compat_driver(
    data: TorchCompat, minor: str, variant: str, runtime: str, linux_driver: str
) -> None:
    rel = _rel(data, minor)
    found = data.bundled_runtime(rel, variant)
    assert found is not None and found.cuda_runtime == runtime
    assert data.full_compat_min_driver(rel, variant) == linux_driver


def test_every_cuda_variant_has_a_bundled_runtime(data: TorchCompat) -> None:
    missing = [
        (r.minor, v.name)
        for r in data.releases
        for v in r.variants
        if v.cuda is not None and data.bundled_runtime(r, v.name) is None
    ]
    assert missing == []
    assert data.full_compat_min_driver(_rel(data, "2.8"), "cu128", "windows") == "572.61"


# --- companions (compat-errata.md §3) ------------------------------------------------------------------------


def test_companions(data: TorchCompat) -> None:
    # compat-errata.md §3 lines 190-207 and §5.11 (line 276)
    assert _rel(data, "2.13").companions.torchvision == "0.28.0"
    for minor in ("2.12", "2.13", "2.14", "2.15"):
        assert _rel(data, minor).companions.torchaudio == "2.11.0", minor
    assert _rel(data, "2.11").companions.torchaudio == "2.11.0"
    assert _rel(data, "2.15").companions.torchvision == "0.29.2"
    two = _rel(data, "2.0").companions
    assert (two.torchvision, two.torchaudio) == ("0.15.1", "2.0.1")  # PyPI pins, not conda's 0.15.0 / 2.0.0
    patch = two.for_version("2.0.1")
    assert (patch.torchvision, patch.torchaudio) == ("0.15.2", "2.0.2")
    old = _rel(data, "1.13").companions.for_version("1.13.1")
    assert (old.torchvision, old.torchaudio) == ("0.14.1", "0.13.1")


# --- device rule (compat.md §3b, compat-errata.md #47) -------------------------------------------------------


def test_device_rule_integrated_ccs(data: TorchCompat) -> None:
    # compat.md §3b line 254: 5.3/6.2/7.2/8.7 integrated; Thor 10.1 -> 11.0 (pytorch/pytorch#175029)
    assert data.device_rule.integrated_ccs == {(5, 3), (6, 2), (7, 2), (8, 7), (10, 1), (11, 0)}
    assert data.device_rule.renamed_ccs == {(10, 1): (11, 0)}
    assert len(data.device_rule.cubins) == 20  # compat.md §3b table, lines 241-252


# --- architectures and old drivers ---------------------------------------------------------------------------


def test_architecture_last_driver(data: TorchCompat) -> None:
    # compat.md §1c lines 113-119: Kepler R470 / CUDA 11.4; Maxwell/Pascal/Volta R580, CUDA 13 cannot compile
    kepler = data.architecture_last_driver("3.7")
    assert kepler is not None
    assert (kepler.last_driver_branch, kepler.max_driver_cuda, kepler.last_toolkit_major_with_codegen) == (
        "R470",
        "11.4",
        11,
    )
    for cc in ("5.2", "6.1", "7.0"):
        arch = data.architecture_last_driver(cc)
        assert arch is not None
        assert (arch.last_driver_branch, arch.max_driver_cuda, arch.last_toolkit_major_with_codegen) == (
            "R580",
            "13.0",
            12,
        )
    turing = data.architecture_last_driver("7.5")
    assert turing is not None and turing.last_driver_branch is None
    assert data.architecture_last_driver("8.7") is None  # Jetson: JetPack drivers, not listed


@pytest.mark.parametrize(
    ("cc", "module"),
    [
        ("12.0", KernelModule.OPEN_REQUIRED),  # NVIDIA blog (R560): Blackwell must use the open modules
        ("10.0", KernelModule.OPEN_REQUIRED),
        ("9.0", KernelModule.OPEN_RECOMMENDED),  # Turing..Hopper: recommended
        ("7.5", KernelModule.OPEN_RECOMMENDED),
        ("7.0", KernelModule.PROPRIETARY_ONLY),  # Maxwell/Pascal/Volta have no GSP
        ("6.1", KernelModule.PROPRIETARY_ONLY),
        ("3.7", KernelModule.PROPRIETARY_ONLY),  # Kepler: R470 predates the open modules (R515)
    ],
)
def test_kernel_module_guidance(data: TorchCompat, cc: str, module: KernelModule) -> None:
    arch = data.architecture_last_driver(cc)
    assert arch is not None and arch.kernel_module is module
    assert "Open-Source GPU Kernel Modules" in arch.kernel_module_source


def test_minor_version_compatibility_minimum_drivers(data: TorchCompat) -> None:
    # NVIDIA minor-version compatibility table (compat-errata.md #55-#57)
    assert data.min_driver_for_cuda("13.0") == "580"
    assert data.min_driver_for_cuda("12.6") == "525.60.13"
    assert data.min_driver_for_cuda("12.6", "windows") == "528.33"
    assert data.min_driver_for_cuda("11.8") == "450.80.02"
    assert data.min_driver_for_cuda("10.2") is None


@pytest.mark.parametrize(
    ("cuda", "release", "linux", "windows"),
    [
        # NVIDIA release notes Table 3 (13.1 edition); compat.md §1b stops at 11.0, these rows extend it
        ("10.2", "GA (10.2.89)", "440.33", "441.22"),
        ("10.1", "GA (10.1.105) and updates", "418.39", "418.96"),
        ("10.0", "GA (10.0.130)", "410.48", "411.31"),
        ("9.2", "Update 1 (9.2.148)", "396.37", "398.26"),
        ("9.0", "GA (9.0.76)", "384.81", "385.54"),
        ("8.0", "GA2 (8.0.61)", "375.26", "376.51"),
        ("8.0", "GA1 (8.0.44)", "367.48", "369.30"),
    ],
)
def test_old_cuda_rows(cuda: str, release: str, linux: str, windows: str) -> None:
    rows = {(t.cuda, t.release): t for t in load_matrix().toolkits}
    row = rows[(cuda, release)]
    assert (row.linux_min_driver, row.windows_min_driver) == (linux, windows)
    assert "Table 3" in row.source


@pytest.mark.parametrize(
    ("driver", "system", "cuda"),
    [
        ("525.60.11", "linux", "12.0"),  # nvidia-smi says 12.0, though CUDA 12.0 GA bundles 525.60.13
        ("525.60.02", "linux", "12.0"),  # WSL's Linux-side version of Windows 526.98
        ("520.56.06", "linux", "11.8"),  # 11.8 GA bundles 520.61.05
        ("526.98", "windows", "12.0"),
        ("525.53", "linux", "11.8"),  # the branch, but before its first driver that reports 12.0
        ("530.30.02", "linux", "12.1"),  # a later branch: the toolkit rows decide
    ],
)
def test_a_branchs_first_drivers_report_their_toolkits_cuda(driver: str, system: str, cuda: str) -> None:
    assert load_matrix().max_cuda_for_driver(driver, system) == cuda


def test_old_rows_answer_old_drivers() -> None:
    matrix = load_matrix()
    assert matrix.max_cuda_for_driver("440.33") == "10.2"
    assert matrix.max_cuda_for_driver("418.96", "windows") == "10.1"
    assert matrix.max_cuda_for_driver("390.46") == "9.1"
    assert matrix.max_cuda_for_driver("375.26") == "8.0"
    assert matrix.max_cuda_for_driver("367.47") == "7.5"  # the rows before CUDA 8 (third-party below 7.0)
    assert matrix.max_cuda_for_driver("342.01") == "6.5"
    assert matrix.max_cuda_for_driver("342.01", "windows") == "6.5"  # no Windows row: the shared branches'
    assert matrix.max_cuda_for_driver("190.18") is None  # older than the oldest row (3.0, 195.36.15)
    cudas = [t.cuda for t in matrix.toolkits]
    assert cudas[cudas.index("10.2") :][:9] == [
        "10.2",
        "10.1",
        "10.0",
        "9.2",
        "9.2",
        "9.1",
        "9.0",
        "8.0",
        "8.0",
    ]
    assert cudas[-12:] == ["7.5", "7.0", "6.5", "6.0", "5.5", "5.0", "4.2", "4.1", "4.0", "3.2", "3.1", "3.0"]
    assert all(t.unconfirmed for t in matrix.toolkits[-10:])  # NVIDIA's table stops at 7.0


def test_windows_drivers_of_cuda_13_are_placed_by_their_branch() -> None:
    """NVIDIA prints no Windows minimum for CUDA 13.x ("N/A"); the branches are shared, so a Windows (or WSL)
    driver 595.95 is R595, CUDA 13.2, not the last row with a Windows number (12.9): blind set 5 found a WSL
    machine with CUDA working told its driver was too old."""
    matrix = load_matrix()
    assert matrix.max_cuda_for_driver("595.95", "windows") == "13.2"
    assert matrix.max_cuda_for_driver("581.57", "windows") == "13.0"
    assert matrix.max_cuda_for_driver("591.44", "windows") == "13.1"
    # a Windows number of its own still rules
    assert matrix.max_cuda_for_driver("576.57", "windows") == "12.9"
    assert matrix.max_cuda_for_driver("576.02", "windows") == "12.9"


# --- PCI ids -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("device_id", "name", "cc"),
    [
        ("2684", "GeForce RTX 4090", "8.9"),  # pci.ids: 2684 AD102 [GeForce RTX 4090]
        ("0x2204", "GeForce RTX 3090", "8.6"),
        ("10de:20b2", "NVIDIA A100", "8.0"),  # 20b2 GA100 [A100 SXM4 80GB]
        ("2330", "NVIDIA H100", "9.0"),  # 2330 GH100[H100 SXM5 80GB]
        ("1DB4", "NVIDIA V100", "7.0"),  # 1db4 GV100GL [Tesla V100 PCIe 16GB]
        ("1eb8", "NVIDIA T4", "7.5"),
        ("1b80", "GeForce GTX 1080", "6.1"),
        ("13c0", "GeForce GTX 980", "5.2"),
        ("102d", "Tesla K80", "3.7"),
    ],
)
def test_pci_ids(data: TorchCompat, device_id: str, name: str, cc: str) -> None:
    gpu = data.gpu_by_pci_id(device_id)
    assert gpu is not None and (gpu.name, gpu.compute_capability) == (name, cc)


def test_pci_ids_left_out_when_ambiguous(data: TorchCompat) -> None:
    assert data.gpu_by_pci_id("11c7") is None  # GK106 [GeForce GTX 750 Ti]: Kepler chip, table says Maxwell
    assert data.gpu_by_pci_id("1af1") is None  # GA100 [A100 NVSwitch]: not a GPU
    assert data.gpu_by_pci_id("2520") is None  # GA106M [GeForce RTX 3060 Mobile / Max-Q]
    assert data.gpu_by_pci_id("1002:2684") is None  # another vendor
    assert len(data.pci_gpus) == 130


def test_pypis_own_build_of_a_release_per_platform() -> None:
    """What an untagged `pip install torch==X` gets: a CUDA build on Linux (2.2.1: cu121; 1.5.0, a legacy
    release: cu102), the CPU build on Windows (no CUDA), nothing for a release the data does not know."""
    data = load_torch_releases()
    assert data.pypi_cuda("2.2.1") == "12.1" and data.pypi_cuda("1.5.0") == "10.2"
    assert data.pypi_cuda("2.2.1", "windows") is None and data.pypi_cuda("9.9.9") is None
