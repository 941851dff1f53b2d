"""What the torch checks say when there is no CUDA torch to judge: one wording, so that no line calls a missing
torch "not a CUDA build"."""

from __future__ import annotations

import functools

from torch_gpu_doctor.compat.extensions import load_extensions
from torch_gpu_doctor.facts.torch import TorchPackages
from torch_gpu_doctor.model import Finding, Status
from torch_gpu_doctor.unavailable import Unavailable


@functools.cache
def built_for_one_torch() -> frozenset[str]:
    """Packages whose wheels are built against one torch release and its CUDA (vLLM and SGLang pin torch==X;
    xformers' and flash-attn's wheels are compiled per torch): installing another torch build breaks them. Their
    pip names and module names, from compat/extensions.json."""
    rows = load_extensions().packages
    return frozenset(n for p in rows if p.built_for_one_torch for n in (p.name, *p.modules))


def no_cuda_torch(cid: str, packages: TorchPackages | Unavailable) -> Finding:
    """The SKIP of a check that judges a CUDA build, for a torch that is missing or is not one."""
    if isinstance(packages, Unavailable):
        return Finding(cid, Status.SKIP, f"Which torch build this is, is not known ({packages}).")
    if packages.version is None:
        return Finding(cid, Status.SKIP, "torch is not installed (see torch.installed).")
    if packages.hip is not None:
        return Finding(cid, Status.SKIP, f"torch {packages.version} is a ROCm build (see amd.torch_rocm).")
    return Finding(cid, Status.SKIP, f"torch {packages.version} is not a CUDA build (see torch.cpu_build).")
