"""The ROCm torch wheel for an AMD-only machine: the newest ROCm variant the compat data lists for the installed
torch release, or for the newest release that has one (2.14 and 2.15 list none: their ROCm variants are not
confirmed). ROCm wheels exist only for Linux x86_64. Pure: facts in, a Recommendation or None out.
"""

from __future__ import annotations

from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.compat.torch_releases import (
    TorchCompat,
    TorchRelease,
    TorchVariant,
)
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.recommendation import Recommendation
from torch_gpu_doctor.fixes.target import installed_torch, installed_variant, python_minor
from torch_gpu_doctor.model import Command, Remediation, Target
from torch_gpu_doctor.unavailable import Unavailable

ROCM_PLATFORM = "linux_x86_64"


def _rocm_key(variant: TorchVariant) -> tuple[int, ...]:
    return tuple(int(p) for p in variant.name.removeprefix("rocm").split("."))


def newest_rocm_variant(release: TorchRelease) -> TorchVariant | None:
    rocm = [v for v in release.variants if v.kind == "rocm" and ROCM_PLATFORM in v.platforms]
    return max(rocm, key=_rocm_key) if rocm else None


def recommend_rocm(facts: Facts, data: TorchCompat | None = None) -> Recommendation | None:
    """None when the compat data has no ROCm wheel for this Python."""
    data = data or load_torch_releases()
    python, installed = python_minor(facts), installed_torch(facts)
    releases = [r for r in data.releases if python is None or python in r.python_versions]
    kept = next((r for r in releases if installed and installed in r.all_versions), None)
    if kept is not None and newest_rocm_variant(kept) is not None:
        release, version = kept, installed or kept.latest
        reason = f"the newest ROCm build of the installed torch {version}"
    else:
        release_or_none = next((r for r in releases if newest_rocm_variant(r) is not None), None)
        if release_or_none is None:
            return None
        release, version = release_or_none, release_or_none.latest
        reason = "the newest torch with a ROCm wheel" + (
            f" (torch {installed} has none in gpu-doctor's data)" if installed else ""
        )
    variant = newest_rocm_variant(release)
    assert variant is not None
    companion = release.companions.for_version(version)
    # Companions are pinned as for CUDA wheels: a torchvision from PyPI would pull a CUDA torch back in.
    return Recommendation(
        torch=version,
        torchvision=companion.torchvision or None,
        torchaudio=companion.torchaudio or None,
        untagged=tuple(sorted(companion.untagged)),
        variant=variant.name,
        index_url=variant.index_url,
        reason=reason,
        confirmed=variant.unconfirmed is None,
        already_installed=version == installed and installed_variant(facts) == variant.name,
    )


def rocm_install_remediation(facts: Facts, rec: Recommendation) -> Remediation:
    python = facts.python.executable if not isinstance(facts.python, Unavailable) else "python3"
    return Remediation(
        text=f"Install torch {rec.torch} built for ROCm ({rec.variant}) into {python}: {rec.reason}. The wheel "
        "brings its own HIP/ROCm runtime; the system needs only the amdgpu kernel driver and access to /dev/kfd."
        + (
            ""
            if rec.confirmed
            else " (Which gfx targets this wheel has kernels for is not in gpu-doctor's data; see amd.gfx_target.)"
        ),
        commands=(
            Command(rec.pip_argv(python)),
            Command(rec.uv_argv(python), note="the same with uv"),
        ),
        needs_network=True,
        target=Target.PYTHON_ENV,
    )


def no_rocm_target_fix(gfx: str) -> Remediation:
    """A target no ROCm release builds and no sibling stands in for, in a program that is not torch: nothing to
    install, and rocminfo would name the target again."""
    return Remediation(
        text=f"No ROCm build has kernels for {gfx}, and no sibling of its family can stand in for it "
        "(HSA_OVERRIDE_GFX_VERSION): this program cannot use this GPU through ROCm. Run it on the CPU (its "
        "device option) or on a GPU ROCm supports.",
        target=Target.SYSTEM,
    )


def rocm_release_fix(gfx: str, family: str, release: str, windows: bool) -> Remediation:
    """A target AMD's ROCm supports from a release on (RDNA4's gfx1201 from 6.4), in a program whose ROCm
    libraries (rocBLAS's Tensile kernels, a HIP SDK's) have no kernels for it: they predate that release. The
    release that has it, not a sibling's override, and not rocminfo, which would name the target again."""
    where = (
        "On Windows the program uses the HIP SDK's libraries (C:\\Program Files\\AMD\\ROCm\\<version>): install "
        f"a HIP SDK whose rocBLAS has kernels for {gfx} (its release notes list the GPUs it supports), or the "
        "rocBLAS build for the target that the program's own instructions name, then start the program again."
        if windows
        else f"Install ROCm {release} or newer (AMD's amdgpu-install for the distribution), or the program's build "
        f"for ROCm {release} or newer, then start the program again."
    )
    return Remediation(
        text=f"{gfx} ({family}) is supported by AMD's ROCm from {release} on; the ROCm libraries the program "
        f"loaded are older and have no kernels for it. {where}",
        commands=()
        if windows
        else (
            Command(
                ("cat", "/opt/rocm/.info/version"), note=f"the installed ROCm: {release} or newer is needed"
            ),
        ),
        needs_network=True,
        target=Target.SYSTEM,
    )


def gfx_target_fix() -> Remediation:
    """The target is not named, or the wheels have it: a build for it, and how to find the target."""
    return Remediation(
        text="A ROCm torch has kernels for a list of gfx targets, and this GPU's is not on it: `rocminfo | grep gfx` "
        "names the target. Where a ROCm release builds it, install that torch. For a consumer or integrated GPU "
        "of a family it builds a sibling of, HSA_OVERRIDE_GFX_VERSION makes ROCm load the sibling's kernels "
        "(10.3.0 for RDNA2 cards such as gfx1031/gfx1032, 11.0.0 for RDNA3, 9.0.0 for the Vega GPUs of Ryzen "
        "APUs such as gfx90c and gfx902, with a ROCm torch that still builds gfx900): unsupported by AMD, but what "
        "most users of such cards do; an APU also needs enough memory set aside for its GPU (UMA frame buffer).",
        commands=(Command(("rocminfo",), note="the gfx target of each GPU (the 'Name: gfx...' lines)"),),
        target=Target.SYSTEM,
    )


def directml_or_cpu() -> Remediation:
    """An AMD GPU under Windows, where PyTorch publishes no ROCm wheel: DirectML, the CPU, or Linux."""
    return Remediation(
        text="PyTorch's ROCm wheels are for Linux only. On Windows, torch reaches an AMD GPU through DirectML: "
        "install the torch-directml package and run a program that supports it (it asks for torch_directml.device(), "
        "not 'cuda'; ComfyUI's `--directml`). Otherwise run the program on the CPU, or use the GPU from Linux with "
        "a ROCm build where ROCm supports the card.",
        commands=(Command(("python", "-m", "pip", "install", "torch-directml")),),
        needs_network=True,
        target=Target.PYTHON_ENV,
    )
