"""What the amd.* checks share: which AMD GPUs this run is about, and when the checks do not apply."""

from __future__ import annotations

import re

from torch_gpu_doctor.facts.gpus import Gpu
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.rocm import KfdAgent
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Finding, Status
from torch_gpu_doctor.unavailable import Reason, Unavailable

_MINOR = lazy(r"([0-9]{1,3})\.([0-9]{1,3})", re.ASCII)


def amd_gpus(facts: Facts) -> tuple[Gpu, ...]:
    return tuple(g for g in facts.gpus if g.vendor == "amd")


def kfd_agents(facts: Facts) -> tuple[KfdAgent, ...]:
    rocm = facts.rocm
    if isinstance(rocm, Unavailable) or isinstance(rocm.agents, Unavailable):
        return ()
    return rocm.agents


def torch_is_rocm(facts: Facts) -> bool:
    packages = facts.torch_packages
    return not isinstance(packages, Unavailable) and packages.hip is not None


def not_applicable(facts: Facts, cid: str) -> Finding | None:
    """SKIP without AMD GPUs, and beside NVIDIA GPUs unless torch is a ROCm build (an AMD integrated GPU next to
    an NVIDIA card is common on Ryzen machines, and there torch is meant for the NVIDIA GPU); UNKNOWN when
    neither the PCI list nor the KFD topology could be read."""
    if not amd_gpus(facts) and not kfd_agents(facts):
        rocm = facts.rocm
        agents = rocm if isinstance(rocm, Unavailable) else rocm.agents
        unreadable = isinstance(agents, Unavailable) and agents.reason is not Reason.NOT_FOUND
        if isinstance(facts.pci, Unavailable) and (unreadable or isinstance(rocm, Unavailable)):
            return Finding(cid, Status.UNKNOWN, f"Could not tell whether an AMD GPU is present: {facts.pci}.")
        return Finding(cid, Status.SKIP, "No AMD GPU here.")
    if facts.nvidia_gpus and not torch_is_rocm(facts):
        return Finding(
            cid,
            Status.SKIP,
            "AMD graphics beside NVIDIA GPUs, and torch is not a ROCm build: torch is for the NVIDIA GPUs here.",
        )
    return None


def rocm_minor(facts: Facts) -> tuple[int, int] | None:
    """The ROCm that matters for torch: the ROCm build's own HIP version, else the system's /opt/rocm."""
    packages = facts.torch_packages
    candidates: list[object] = []
    if not isinstance(packages, Unavailable):
        candidates.append(packages.hip)
    if not isinstance(facts.rocm, Unavailable):
        candidates.append(facts.rocm.version)
    for value in candidates:
        match = _MINOR.match(value) if isinstance(value, str) else None
        if match:
            return int(match.group(1)), int(match.group(2))
    return None
