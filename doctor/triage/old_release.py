"""A torch release said in words ("pytorch 1.3.1"), with no build tag, beside a GPU whose architecture came after
every CUDA that release was built with: whichever of its builds is installed, none has kernels for that GPU
(blind set 28: an RTX 3080 with "cudatoolkit 10.0, pytorch 1.3.1", where cuBLAS's EXECUTION_FAILED was the only
error). The checks cannot say it from a version without its build; every build of the release can."""

from __future__ import annotations

import dataclasses

from torch_gpu_doctor.compat import load_matrix
from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.compat.torch_releases import TorchCompat, version_key
from torch_gpu_doctor.facts.gpus import Gpu
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.torch_wheel import fix_for_torch, other_legacy_build
from torch_gpu_doctor.model import Evidence, Finding, Status
from torch_gpu_doctor.triage.facts import shown_packages
from torch_gpu_doctor.triage.outcome import Kind, Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.unavailable import Unavailable

ARCH = "torch.arch_compat"
# releases before the oldest in the data (1.4) were built with CUDA 10.1 at most (1.3's cu101)
BEFORE_THE_DATA = "10.1"


def newest_cuda_of(version: str, data: TorchCompat | None = None) -> str | None:
    """The newest CUDA any build of torch `version` ("1.3.1") was made with; None where the data cannot say."""
    data = data or load_torch_releases()
    for release in data.releases:
        if version in release.all_versions:
            cudas = [v.cuda for v in release.variants if v.cuda]
            return max(cudas, key=version_key) if cudas else None
    for legacy in data.legacy:
        if version == legacy.version or version in legacy.patches:
            cudas = [b.variant.cuda for b in legacy.builds if b.variant.cuda]
            return max(cudas, key=version_key) if cudas else None
    oldest = min((legacy.version for legacy in data.legacy), key=version_key, default=None)
    if oldest is not None and version_key(version) < version_key(oldest):
        return BEFORE_THE_DATA
    return None


def _after(gpu: Gpu, newest: str) -> str | None:
    """The first CUDA for the GPU's architecture (its major's X.0: a cubin for X.0 runs on X.y), where it is
    newer than every build's CUDA."""
    first = load_matrix().first_cuda_for(f"{str(gpu.compute_capability).split('.')[0]}.0")
    return first if first is not None and version_key(newest)[:2] < version_key(first)[:2] else None


def built_before_the_gpu(
    verdicts: tuple[Verdict, ...], pasted: PastedText, facts: Facts, titles: dict[str, str]
) -> tuple[Verdict, ...]:
    said = pasted.prose.torch
    if said is None or not isinstance(facts.torch_packages, Unavailable):
        return verdicts
    newest = newest_cuda_of(said.value.split("+")[0])
    if newest is None:
        return verdicts
    late = [
        (g, first)
        for g in facts.nvidia_gpus
        if isinstance(g.compute_capability, str)
        if (first := _after(g, newest))
    ]
    if not late:
        return verdicts
    gpu, first = late[0]
    name = gpu.name if isinstance(gpu.name, str) else "this GPU"
    finding = Finding(
        ARCH,
        Status.FAIL,
        f"torch {said.value} has no kernels for {name} (compute capability {gpu.compute_capability}): every "
        f"build of it was made with CUDA {newest} or older, and CUDA {first} is the first that compiles for that "
        f"architecture (line {said.line} of the paste).",
        details="Whichever build of that release is installed, CUDA operations on this GPU fail (cuBLAS or "
        "cuDNN's EXECUTION_FAILED, 'no kernel image is available'): a torch built with a CUDA that knows the "
        "GPU is the fix, and an extension built against the old torch is rebuilt after it.",
        evidence=(Evidence("torch", said.value, f"line {said.line} of the paste"),),
        remediation=fix_for_torch(facts),
    )
    verdict = Verdict(finding, titles.get(ARCH, ARCH), Kind.PROBLEM, (), None, (said.line,))
    return (verdict, *(v for v in verdicts if v.finding.check_id != ARCH))


def same_release_build(verdict: Verdict, pasted: PastedText, facts: Facts) -> Verdict:
    """No kernels for the GPU, where the words name the project's torch release (1.4 to 1.12) and another build
    of it has them: that build first, with pytorch.org's command (blind set 29: 'torch 1.10.1' on an A100, whose
    thread was fixed by 1.10.1+cu111; the newest torch breaks a project pinned to 1.10)."""
    said = pasted.prose.torch
    if (
        said is None
        or verdict.finding.check_id != ARCH
        or verdict.finding.status is not Status.FAIL
        or not isinstance(facts.torch_packages, Unavailable)
    ):
        return verdict
    version = said.value.split("+")[0]
    data = load_torch_releases()
    if data.legacy_release(version) is None:
        return verdict
    # the said version as installed, its build unknown: every build of it is a candidate
    with_version = dataclasses.replace(
        facts, torch_packages=shown_packages(f"line {said.line} of the paste", version, (None, None))
    )
    fix = other_legacy_build(with_version, data)
    if fix is None:
        return verdict
    return dataclasses.replace(verdict, finding=dataclasses.replace(verdict.finding, remediation=fix))
