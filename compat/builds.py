"""The build a torch, torchvision or torchaudio version names in its local tag, and the build that an untagged
companion release is on PyPI.

torch's own version.py says its CUDA (`cuda = '12.4'`); torchvision's and torchaudio's do not (torchvision's
setup.py writes `__version__` and `git_version` literally and `cuda` only under an `if` at import time, and
torchaudio writes no `cuda` at all: seen on a real torch 2.11 machine, 2026-11-26). Their local tag is what says
the variant: `0.26.0+cu130`, `+cpu`, `+rocm6.2`; an untagged version is PyPI's default build of its release.
"""

from __future__ import annotations

from torch_gpu_doctor.lazy_re import lazy

_TAG_CUDA = lazy(r"\+cu(\d+)(\d)\b")
_TAG_ROCM = lazy(r"\+rocm(\d+\.\d+(?:\.\d+)?)")
_TAG_NO_CUDA = lazy(r"\+(?:cpu|xpu)\b")  # the CPU build, and the Intel GPU build

Build = tuple[str | None, str | None]  # (torch.version.cuda, torch.version.hip): (None, None) for CPU and XPU
UNKNOWN_DEFAULT = "unknown"


def tag_build(version: str) -> Build | None:
    """The build a local version tag names: ("12.1", None) for `+cu121`, (None, "6.2") for `+rocm6.2`,
    (None, None) for `+cpu`/`+xpu`; None when the version has no such tag (untagged, or a source build's
    `+git…`)."""
    tag = _TAG_CUDA.search(version)
    if tag is not None:
        return f"{tag.group(1)}.{tag.group(2)}", None
    rocm = _TAG_ROCM.search(version)
    if rocm is not None:
        return None, rocm.group(1)
    if _TAG_NO_CUDA.search(version):
        return None, None
    return None


def companion_default_cuda(name: str, version: str, platform: str | None) -> str | None:
    """The CUDA of PyPI's default build of an untagged torchvision/torchaudio `version` on a wheel platform
    (linux_x86_64, linux_aarch64, windows): "12.4", None for a CPU default, UNKNOWN_DEFAULT when the release
    or the platform is not in the compat data."""
    from torch_gpu_doctor.compat.torch_parse import load_torch_releases  # the data loads when asked

    if platform is None:
        return UNKNOWN_DEFAULT
    base = version.split("+", maxsplit=1)[0]
    for release in load_torch_releases().releases:
        for torch_version in release.all_versions:
            pair = release.companions.for_version(torch_version)
            if (pair.torchvision if name == "torchvision" else pair.torchaudio) == base:
                if name in pair.untagged:  # one wheel for every variant: it has no build of its own
                    return UNKNOWN_DEFAULT
                variant = release.pypi_default.get(platform)
                if variant is None:
                    return UNKNOWN_DEFAULT
                found = release.variant(variant)
                return found.cuda if found is not None else None
    return UNKNOWN_DEFAULT
