"""Which driver this machine needs: the minimum version for a current torch wheel, the branch to install, and
whether NVIDIA's open kernel modules are required, recommended or impossible for these GPUs.

Pure: facts and compat data in, a DriverPlan out. Architectures at the end of their life (Kepler after R470;
Maxwell, Pascal and Volta after R580, and never in CUDA 13 wheels) are named plainly, with the newest torch
and driver combination that still works for them.
"""

from __future__ import annotations

from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.compat.torch_releases import (
    ArchitectureLastDriver,
    KernelModule,
    TorchCompat,
    version_key,
)
from torch_gpu_doctor.compat.wheel_candidates import (
    Candidate,
    supporting_candidates,
)
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.target import (
    driver_system,
    gpu_capabilities,
    installed_torch,
    installed_variant,
    python_minor,
    target_platform,
)
from torch_gpu_doctor.records import dataclass

_NO_CAP = "99.9"  # a driver with no CUDA limit: what the GPUs alone allow


@dataclass(frozen=True)
class DriverPlan:
    """The driver to install. Every field may be unknown (None): the remediation then says less, never wrong."""

    min_driver: str | None  # the oldest driver that loads `torch` `variant`: "580", "525.60.13"
    branch: int | None  # the branch to install: the last branch of an end-of-life GPU, else the wheel's own
    torch: str | None  # the newest torch this driver unlocks for every GPU here
    variant: str | None  # its CUDA variant: "cu130"
    open_modules: bool  # install NVIDIA's open kernel modules (False: the proprietary ones)
    module_note: str  # why open or proprietary, in a sentence ("" when unknown)
    end_of_life: tuple[str, ...]  # plain sentences about architectures no current wheel or driver serves

    def summary(self) -> str:
        """One sentence: which driver, for which torch ("" when the data has no answer)."""
        if self.min_driver is None or self.torch is None:
            return ""
        text = f"torch {self.torch} ({self.variant}) needs driver ≥ {self.min_driver}"
        if self.end_of_life and self.branch:
            return text + f"; install the R{self.branch} branch, the last one these GPUs have."
        if self.branch and str(self.branch) != self.min_driver.split(".")[0]:
            return (
                text
                + f"; R{self.branch} or newer is best (the branch the newest torch's CUDA runtime shipped with)."
            )
        return text + "."


def planned_driver_cuda(facts: Facts, data: TorchCompat) -> str:
    """The newest CUDA of the best driver every GPU here can have: an end-of-life architecture's last
    branch caps it (Kepler: R470, CUDA 11.4); otherwise no cap."""
    capabilities = sorted(set(gpu_capabilities(facts)))
    ended = [a for a in (data.architecture_last_driver(cc) for cc in capabilities) if a is not None]
    caps = [a.max_driver_cuda for a in ended if a.max_driver_cuda is not None]
    return min(caps, key=version_key, default=_NO_CAP)


def newest_for_gpus(facts: Facts, data: TorchCompat, keep_installed: bool = False) -> Candidate | None:
    """The newest torch wheel with kernels for every GPU here, on the best driver these GPUs can still have.
    `keep_installed`: the installed build instead, when it is one of those."""
    capabilities = sorted(set(gpu_capabilities(facts)))
    platform = target_platform(facts)
    if not capabilities or platform is None:
        return None
    cap = planned_driver_cuda(facts, data)
    installed, variant = installed_torch(facts), installed_variant(facts)
    for include_unconfirmed in (False, True):
        found = supporting_candidates(
            data, capabilities, python_minor(facts), platform, cap, include_unconfirmed
        )
        kept = [c for c in found if installed in c.release.all_versions and c.variant.name == variant]
        if keep_installed and kept:
            return kept[0]
        if found:
            return found[0]
    return None


def plan_driver(facts: Facts, data: TorchCompat | None = None) -> DriverPlan:
    data = data or load_torch_releases()
    capabilities = sorted(set(gpu_capabilities(facts)))
    archs = [a for a in (data.architecture_last_driver(cc) for cc in capabilities) if a is not None]
    ended = [a for a in archs if a.last_driver_branch is not None]
    platform = target_platform(facts)
    best = newest_for_gpus(facts, data)
    # the sentence names the torch the person has when it runs on these GPUs: the driver is for it
    named = newest_for_gpus(facts, data, keep_installed=True)
    min_driver = (
        data.min_driver_for_cuda(named.variant.cuda, driver_system(facts))
        if named is not None and named.variant.cuda
        else None
    )
    newest_min = (
        data.min_driver_for_cuda(best.variant.cuda, driver_system(facts))
        if best is not None and best.variant.cuda
        else None
    )
    open_modules, module_note = _module_choice(archs, platform, capabilities)
    return DriverPlan(
        min_driver=min_driver,
        branch=_branch(ended, data, best, newest_min),
        torch=_named_version(named, installed_torch(facts)) if named else None,
        variant=named.variant.name if named else None,
        open_modules=open_modules,
        module_note=module_note,
        end_of_life=tuple(_end_of_life(a, best) for a in ended),
    )


def _named_version(best: Candidate, installed: str | None) -> str:
    return installed if installed in best.release.all_versions else best.release.latest


def _branch(
    ended: list[ArchitectureLastDriver], data: TorchCompat, best: Candidate | None, min_driver: str | None
) -> int | None:
    branches = [int(a.last_driver_branch[1:]) for a in ended if a.last_driver_branch]
    if branches:
        return min(branches)  # the last branch every GPU here still has
    if best is not None:  # the driver the wheel's CUDA runtime was released with: full compatibility, PTX too
        full = data.full_compat_min_driver(best.release, best.variant.name)
        if full and full.split(".")[0].isdigit():
            return int(full.split(".")[0])
    head = (min_driver or "").split(".")[0]
    return int(head) if head.isdigit() else None


def _module_choice(
    archs: list[ArchitectureLastDriver], platform: str | None, capabilities: list[str]
) -> tuple[bool, str]:
    kinds = {a.kernel_module for a in archs}
    if platform == "linux_aarch64" and "9.0" in capabilities:
        kinds.add(KernelModule.OPEN_REQUIRED)  # Grace Hopper
    old = sorted({a.architecture for a in archs if a.kernel_module is KernelModule.PROPRIETARY_ONLY})
    new = sorted({a.architecture for a in archs if a.kernel_module is KernelModule.OPEN_REQUIRED})
    if old and new:
        return True, (
            f"{' and '.join(new)} GPUs need NVIDIA's open kernel modules, which do not support "
            f"{' and '.join(old)} GPUs: no single driver serves both, so move one kind of GPU to another machine."
        )
    if old:
        return (
            False,
            f"{' and '.join(old)} GPUs need the proprietary kernel modules (the open ones need Turing or newer).",
        )
    if KernelModule.OPEN_REQUIRED in kinds:
        return (
            True,
            "NVIDIA requires its open kernel modules for this GPU (the proprietary ones do not support it).",
        )
    if kinds == {KernelModule.OPEN_RECOMMENDED}:
        return (
            True,
            "NVIDIA recommends its open kernel modules for Turing and newer GPUs (the default since R560).",
        )
    return True, ""


def _end_of_life(arch: ArchitectureLastDriver, best: Candidate | None) -> str:
    text = f"{arch.architecture} GPUs were last supported by driver {arch.last_driver_branch} (CUDA ≤ {arch.max_driver_cuda})"
    if arch.last_toolkit_major_with_codegen is not None:
        text += (
            f", and CUDA {arch.last_toolkit_major_with_codegen + 1}+ torch wheels have no kernels for them"
        )
    if best is not None:
        text += (
            f": the newest combination that still works is torch {best.release.latest} ({best.variant.name}) "
            f"on the {arch.last_driver_branch} driver"
        )
    return text + "."
