"""Which published wheels can run here: the (release, CUDA variant) candidates for a set of GPUs, a Python, a
platform and a driver, newest first, and the plain `pip install` line for one. Pure queries over TorchCompat.
"""

from __future__ import annotations

from collections.abc import Sequence

from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.compat.torch_releases import (
    TorchCompat,
    TorchRelease,
    TorchVariant,
    _minor_tuple_strict,
    arch_supported,
    driver_runs_cuda,
)
from torch_gpu_doctor.records import dataclass


def variants_for(
    release: TorchRelease, platform: str, include_unconfirmed: bool = True
) -> tuple[TorchVariant, ...]:
    """The release's variants published for `platform`, optionally only those confirmed for it."""
    return tuple(
        v
        for v in release.variants
        if platform in v.platforms and (include_unconfirmed or v.confirmed_for(platform))
    )


@dataclass(frozen=True)
class Candidate:
    release: TorchRelease
    variant: TorchVariant
    platform: str
    confirmed: bool

    @property
    def pypi_default(self) -> bool:
        return self.release.pypi_default.get(self.platform) == self.variant.name

    def command(self, with_companions: bool = False) -> str:
        return install_command(self.release, self.variant, self.platform, with_companions=with_companions)


def install_command(
    release: TorchRelease,
    variant: TorchVariant,
    platform: str,
    version: str | None = None,
    with_companions: bool = False,
) -> str:
    """`pip install torch==X` (plain when the variant is the platform's PyPI default, else with --index-url)."""
    chosen = version or release.latest
    parts = [f"torch=={chosen}"]
    if with_companions:
        comp = release.companions.for_version(chosen)
        parts += [f"torchvision=={comp.torchvision}", f"torchaudio=={comp.torchaudio}"]
    command = "pip install " + " ".join(parts)
    if release.pypi_default.get(platform) == variant.name:
        return command
    return f"{command} --index-url {variant.index_url}"


def supporting_candidates(
    data: TorchCompat,
    compute_capabilities: Sequence[str],
    python: str | None,
    platform: str,
    driver_max_cuda: str | None,
    include_unconfirmed: bool = False,
    minor_version_compat: bool = True,
) -> list[Candidate]:
    """Every (release, CUDA variant) whose wheel has kernels for all the GPUs, exists for `platform` and `python`,
    and loads on the driver. Newest release first; within a release the PyPI default first, then newest CUDA."""
    if driver_max_cuda is None or not compute_capabilities:
        return []
    found: list[Candidate] = []
    for rel in data.releases:
        if python is not None and python not in rel.python_versions:
            continue
        ok: list[Candidate] = []
        for var in variants_for(rel, platform, include_unconfirmed):
            if var.cuda is None or platform not in var.arch_list:
                continue
            if not driver_runs_cuda(driver_max_cuda, var.cuda, minor_version_compat):
                continue
            sass, ptx = var.arch_list[platform], var.ptx.get(platform, ())
            if all(arch_supported(sass, ptx, cc, data.device_rule) for cc in compute_capabilities):
                ok.append(Candidate(rel, var, platform, var.confirmed_for(platform)))
        ok.sort(
            key=lambda c: (
                not c.pypi_default,
                tuple(-n for n in _minor_tuple_strict(c.variant.cuda or "0.0")),
            )
        )
        found += ok
    return found


def newest_release_supporting(
    compute_capabilities: Sequence[str],
    python: str | None,
    platform: str,
    driver_max_cuda: str | None,
    data: TorchCompat | None = None,
    include_unconfirmed: bool = False,
) -> Candidate | None:
    """The newest torch release (and its best CUDA variant) that runs on these GPUs with this driver, or None."""
    found = supporting_candidates(
        data or load_torch_releases(),
        compute_capabilities,
        python,
        platform,
        driver_max_cuda,
        include_unconfirmed,
    )
    return found[0] if found else None
