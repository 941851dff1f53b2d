"""Which torch wheel fits this machine, and the exact command that installs it into the target environment.

Pure: facts in, a Recommendation out. Policy (issue 2/6): keep the installed torch version when one of its
variants works here; otherwise the newest release that has kernels for every GPU, loads on the installed
driver and exists for this Python and platform; within a release prefer the plain PyPI wheel. Confirmed data
first; entries marked unconfirmed are used only when nothing confirmed fits, and the result says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from gpu_doctor.compat.torch_releases import (
    Candidate,
    TorchCompat,
    load_torch_releases,
    supporting_candidates,
)
from gpu_doctor.facts.model import Facts
from gpu_doctor.fixes.driver_install import driver_install
from gpu_doctor.model import Command, Remediation, Target
from gpu_doctor.unavailable import Unavailable

INDEX_CPU = "https://download.pytorch.org/whl/cpu"
_LOCAL = re.compile(r"\+.*$")


@dataclass(frozen=True)
class Recommendation:
    torch: str
    torchvision: str | None
    torchaudio: str | None
    variant: str  # cu126, cpu, ...
    index_url: str | None  # None: the plain PyPI wheel is this variant
    reason: str
    confirmed: bool

    def packages(self) -> tuple[str, ...]:
        pins = [f"torch=={self.torch}"]
        pins += [f"torchvision=={self.torchvision}"] if self.torchvision else []
        pins += [f"torchaudio=={self.torchaudio}"] if self.torchaudio else []
        return tuple(pins)

    def pip_argv(self, python: str) -> tuple[str, ...]:
        index = ("--index-url", self.index_url) if self.index_url else ()
        return (python, "-m", "pip", "install", "--force-reinstall", *self.packages(), *index)

    def uv_argv(self, python: str) -> tuple[str, ...]:
        index = ("--index-url", self.index_url) if self.index_url else ()
        return ("uv", "pip", "install", "--python", python, "--reinstall", *self.packages(), *index)


def target_platform(facts: Facts) -> str | None:
    """The wheel platform of the diagnosed interpreter: linux_x86_64, linux_aarch64 or windows."""
    py = facts.python
    if isinstance(py, Unavailable) or not isinstance(py.machine, str):
        return None
    system = py.system if isinstance(py.system, str) else "Linux"
    if system == "Windows":
        return "windows"
    machine = py.machine.lower()
    if system == "Linux" and machine in ("x86_64", "amd64"):
        return "linux_x86_64"
    if system == "Linux" and machine in ("aarch64", "arm64"):
        return "linux_aarch64"
    return None


def python_minor(facts: Facts) -> str | None:
    py = facts.python
    if isinstance(py, Unavailable) or not isinstance(py.version, str):
        return None
    return ".".join(py.version.split(".")[:2])


def installed_torch(facts: Facts) -> str | None:
    packages = facts.torch_packages
    if isinstance(packages, Unavailable) or packages.version is None:
        return None
    return _LOCAL.sub("", packages.version)


def gpu_capabilities(facts: Facts) -> list[str]:
    usable = [g for g in facts.nvidia_gpus if g.nvml_index is not None] or list(facts.nvidia_gpus)
    return [g.compute_capability for g in usable if isinstance(g.compute_capability, str)]


def _from_candidate(candidate: Candidate, version: str, reason: str) -> Recommendation:
    companion = candidate.release.companions.for_version(version)
    return Recommendation(
        torch=version,
        torchvision=companion.torchvision or None,
        torchaudio=companion.torchaudio or None,
        variant=candidate.variant.name,
        index_url=None if candidate.pypi_default else candidate.variant.index_url,
        reason=reason,
        confirmed=candidate.confirmed,
    )


def recommend(facts: Facts, data: TorchCompat | None = None) -> Recommendation | None:
    """The wheel to install, or None when no wheel can work here with the installed driver."""
    data = data or load_torch_releases()
    platform = target_platform(facts)
    python = python_minor(facts)
    if platform is None:
        return None
    capabilities = gpu_capabilities(facts)
    driver = facts.driver
    driver_cuda = (
        None
        if isinstance(driver, Unavailable) or not isinstance(driver.cuda_version, str)
        else driver.cuda_version
    )
    installed = installed_torch(facts)
    if not capabilities:
        return _cpu_recommendation(data, python, installed)
    if driver_cuda is None:
        return None
    for include_unconfirmed in (False, True):
        candidates = supporting_candidates(
            data, capabilities, python, platform, driver_cuda, include_unconfirmed
        )
        if not candidates:
            continue
        same = [c for c in candidates if installed and installed in c.release.all_versions]
        if same:
            return _from_candidate(
                same[0], installed or same[0].release.latest, "keeps the installed torch version"
            )
        best = candidates[0]
        return _from_candidate(
            best,
            best.release.latest,
            f"the newest torch with kernels for compute capability {', '.join(sorted(set(capabilities)))} on CUDA ≤ {driver_cuda}",
        )
    return None


def _cpu_recommendation(
    data: TorchCompat, python: str | None, installed: str | None
) -> Recommendation | None:
    releases = [r for r in data.releases if python is None or python in r.python_versions]
    kept = next((r for r in releases if installed and installed in r.all_versions), None)
    rel = kept or (releases[0] if releases else None)
    if rel is None:
        return None
    version = installed if kept is not None and installed else rel.latest
    companion = rel.companions.for_version(version)
    return Recommendation(
        torch=version,
        torchvision=companion.torchvision or None,
        torchaudio=companion.torchaudio or None,
        variant="cpu",
        index_url=INDEX_CPU,
        reason="no usable NVIDIA GPU here: the CPU build avoids several GB of CUDA libraries",
        confirmed=(cpu := rel.variant("cpu")) is not None and cpu.unconfirmed is None,
    )


def driver_remediation(facts: Facts) -> Remediation:
    """When no wheel can run on the installed driver, the fix is the driver, where the driver lives."""
    os_facts = facts.os
    if not isinstance(os_facts, Unavailable) and os_facts.is_wsl:
        return Remediation(
            text="No torch wheel supports this GPU with the current driver. In WSL2 the driver is the Windows one: "
            "update the NVIDIA driver on Windows (never install a Linux driver inside WSL), then `wsl --shutdown`.",
            needs_network=True,
            target=Target.SYSTEM,
        )
    if not isinstance(os_facts, Unavailable) and os_facts.container:
        return Remediation(
            text="No torch wheel supports this GPU with the current driver. Inside a container the driver is the "
            "host's: update the NVIDIA driver on the host (the container cannot change it).",
            target=Target.SYSTEM,
        )
    base = driver_install(facts.os, gpu_capabilities(facts))
    return replace(
        base,
        text="No torch wheel supports this GPU with the installed driver: update the driver. " + base.text,
    )


def fix_for_torch(facts: Facts) -> Remediation:
    """The recommended wheel, or the driver when no wheel can work here."""
    rec = recommend(facts)
    return install_remediation(facts, rec) if rec is not None else driver_remediation(facts)


def install_remediation(facts: Facts, rec: Recommendation) -> Remediation:
    python = facts.python.executable if not isinstance(facts.python, Unavailable) else "python3"
    conda = not isinstance(facts.python, Unavailable) and isinstance(facts.python.conda_prefix, str)
    note = (
        " In a conda environment pip installs over conda's packages: prefer this command to mixing both."
        if conda
        else ""
    )
    return Remediation(
        text=f"Install torch {rec.torch} ({rec.variant}) into {python}: {rec.reason}."
        + ("" if rec.confirmed else " (Some of the data behind this choice is unconfirmed.)")
        + note,
        commands=(
            Command(rec.pip_argv(python)),
            Command(rec.uv_argv(python), note="the same with uv"),
        ),
        needs_network=True,
        target=Target.PYTHON_ENV,
    )
