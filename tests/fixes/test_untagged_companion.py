"""A companion published as one wheel for every variant (torchvision 0.29.2 is `py3-none`, compat-errata.md
§3) has no local version: the replacement pins it bare while torch keeps its `+cuXXX`, and an installed copy
of it is never "built for another CUDA"."""

from __future__ import annotations

import pytest

from torch_gpu_doctor.compat import CompatDataError
from torch_gpu_doctor.compat.builds import UNKNOWN_DEFAULT, companion_default_cuda
from torch_gpu_doctor.compat.torch_parse import _parse_companions
from torch_gpu_doctor.fixes.recommendation import Recommendation


def _rec(untagged: tuple[str, ...]) -> Recommendation:
    return Recommendation(
        torch="2.15.0",
        torchvision="0.29.2",
        torchaudio="2.11.0",
        variant="cu130",
        index_url="https://download.pytorch.org/whl/cu130",
        reason="test",
        confirmed=True,
        replaces=True,
        untagged=untagged,
    )


def test_only_the_untagged_companion_loses_the_local_version() -> None:
    assert _rec(("torchvision",)).packages() == (
        "torch==2.15.0+cu130",
        "torchvision==0.29.2",
        "torchaudio==2.11.0+cu130",
    )
    assert _rec(()).packages() == (
        "torch==2.15.0+cu130",
        "torchvision==0.29.2+cu130",
        "torchaudio==2.11.0+cu130",
    )


def test_the_data_names_which_companions_are_untagged() -> None:
    base = {"torchvision": "0.29.2", "torchaudio": "2.11.0", "source": "s"}
    parsed = _parse_companions({**base, "untagged": ["torchvision"]}, "c", ())
    assert parsed.for_version("2.15.0").untagged == frozenset({"torchvision"})
    assert _parse_companions(base, "c", ()).for_version("2.15.0").untagged == frozenset()
    with pytest.raises(CompatDataError, match="untagged"):
        _parse_companions({**base, "untagged": ["torch"]}, "c", ())


def test_an_untagged_wheel_has_no_default_build_to_compare() -> None:
    assert companion_default_cuda("torchvision", "0.29.2", "linux_x86_64") == UNKNOWN_DEFAULT
    assert companion_default_cuda("torchvision", "0.28.0", "linux_x86_64") is not None  # 2.13's cu130 default
