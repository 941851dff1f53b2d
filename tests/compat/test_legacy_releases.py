"""Torch 1.4-1.12 (compat/cuda_matrix.json `legacy_torch_releases`): the compiled architectures of each build,
from pytorch/builder's scripts at the release, and pytorch.org's own install command for it. They judge an
installed old torch and offer another build of the same version; they are never a candidate for a new install."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from torch_gpu_doctor.compat import CompatDataError
from torch_gpu_doctor.compat.torch_parse import load_torch_releases, parse_torch_compat
from torch_gpu_doctor.compat.wheel_candidates import supporting_candidates
from torch_gpu_doctor.fixes.torch_wheel import legacy_command
from torch_gpu_doctor.triage.pipeline import diagnose_paste


def _raw() -> Any:
    text = resources.files("torch_gpu_doctor.compat").joinpath("cuda_matrix.json").read_text(encoding="utf-8")
    return json.loads(text)


def test_a_patch_finds_its_release_and_each_build_its_list() -> None:
    data = load_torch_releases()
    release = data.legacy_release("1.7.1+cu101")
    assert release is not None and release.version == "1.7.0"
    cu110, cu101 = release.build("cu110"), release.build("cu101")
    assert cu110 is not None and cu101 is not None
    assert cu110.arch_list("1.7.1", "linux_x86_64") == ("sm_37", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80")
    assert "sm_61" in (cu110.arch_list("1.7.1", "windows") or ())  # Windows kept sm_61 that Linux dropped
    assert "sm_80" not in (cu101.arch_list("1.7.1", "linux_x86_64") or ())  # CUDA 10.1 cannot build Ampere
    assert cu110.install["1.7.1"] == (
        "pip install torch==1.7.1+cu110 torchvision==0.8.2+cu110 torchaudio==0.7.2 "
        "-f https://download.pytorch.org/whl/torch_stable.html"
    )
    assert data.legacy_release("1.13.1") is None  # in torch_releases, not here
    assert data.release("1.7.1") is None  # and the legacy ones are not there


def test_one_patch_can_have_its_own_list() -> None:
    """A patch built with another list than its release's (arch_list_for_patches) is judged by its own."""
    raw = _raw()
    cu111 = next(v for v in raw["legacy_torch_releases"][4]["variants"] if v["name"] == "cu111")
    cu111["arch_list_for_patches"] = {
        "1.8.0": {"arch_list": {"linux_x86_64": ["sm_50", "sm_70", "sm_80", "sm_86"]}, "source": "test"}
    }
    build = parse_torch_compat(raw).legacy_release("1.8.0")
    cu111_build = build.build("cu111") if build else None
    assert cu111_build is not None
    assert cu111_build.arch_list("1.8.0", "linux_x86_64") == ("sm_50", "sm_70", "sm_80", "sm_86")
    assert "sm_37" in (cu111_build.arch_list("1.8.1", "linux_x86_64") or ())


def test_no_legacy_release_is_a_candidate_for_a_new_install() -> None:
    """A Kepler K80 (3.7) on an old driver: the picker still names only the releases it always knew."""
    data = load_torch_releases()
    oldest = Version(data.releases[-1].version)
    candidates = supporting_candidates(data, ["3.7"], "3.8", "linux_x86_64", "11.4", True)
    assert candidates and all(Version(c.release.version) >= oldest for c in candidates)


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (lambda r: r[0].__setitem__("version", "1.13.0"), "must be older than the release before it"),
        (
            lambda r: r[2]["variants"][0]["install"].__setitem__("1.10.0", "conda install pytorch"),
            "not a pip command for torch 1.10.0",
        ),
        (
            lambda r: r[2]["variants"][0]["install"].__setitem__("1.9.0", "pip install torch==1.9.0"),
            "not one of",
        ),
        (lambda r: r[2]["variants"][0]["arch_list"].__setitem__("linux_x86_64", ["8.6"]), "linux_x86_64"),
        (lambda r: r[0]["pypi_default"].__setitem__("windows", "cu999"), "is not a build for it"),
    ],
)
def test_legacy_rows_are_checked(change: Any, error: str) -> None:
    raw = _raw()
    change(raw["legacy_torch_releases"])
    with pytest.raises(CompatDataError, match=error):
        parse_torch_compat(raw)


def test_a_cu101_pin_on_an_rtx_3090_is_answered_with_the_same_versions_cu110_build() -> None:
    """dinet#100's words: "The requirement in the txt file, torch==1.7.1+cu101, is too low for this card"."""
    paste = (
        b"I have a RTX 3090 graphics card. The requirement in the txt file, torch==1.7.1+cu101, is too low for "
        b"this card.\n\nIs there anything I can do before I have to compile PyTorch myself?\n"
    )
    cause = diagnose_paste(paste, "words").result.cause
    assert cause is not None and cause.finding.check_id == "torch.arch_compat"
    fix = cause.finding.remediation
    assert fix is not None and [c.display() for c in fix.commands] == [
        "python -m pip install torch==1.7.1+cu110 torchvision==0.8.2+cu110 torchaudio==0.7.2 "
        "-f https://download.pytorch.org/whl/torch_stable.html"
    ]
    assert "450.36.06" in fix.text  # CUDA 11.0's driver, since the paste does not show one


def test_an_old_build_that_fits_is_judged_fine_from_its_list() -> None:
    """Colab's torch 1.7.0+cu101 on a Tesla T4 (7.5), healthy: its Linux list has sm_75, so nothing to swap."""
    path = (
        Path(__file__).parents[1]
        / "triage"
        / "reports"
        / "colab-t4-torch170-cu101-debug-build-true-healthy.txt"
    )
    result = diagnose_paste(path.read_bytes(), path.name).result
    arch = next(v.finding for v in result.verdicts if v.finding.check_id == "torch.arch_compat")
    assert arch.status.value == "pass"
    assert any("pytorch/builder" in e.source and "sm_75" in e.value for e in arch.evidence)
    assert result.cause is None


def test_an_untagged_line_is_used_only_where_it_is_pypis_build_and_is_forced() -> None:
    """`pip install torch==1.7.1` is PyPI's cu102 build on Linux (pip takes an installed 1.7.1+cpu as meeting it:
    forced) and the CPU build on Windows (never offered as CUDA 10.2 there); tagged lines stand as written."""
    release = load_torch_releases().legacy_release("1.7.1")
    assert release is not None
    cu102, cu110 = release.build("cu102"), release.build("cu110")
    assert cu102 is not None and cu110 is not None
    assert legacy_command(release, cu102, "1.7.1", "linux_x86_64") == (
        "pip", "install", "--force-reinstall", "torch==1.7.1", "torchvision==0.8.2", "torchaudio==0.7.2"
    )  # fmt: skip
    assert legacy_command(release, cu102, "1.7.1", "windows") is None
    assert (legacy_command(release, cu110, "1.7.1", "windows") or ())[2] == "torch==1.7.1+cu110"
