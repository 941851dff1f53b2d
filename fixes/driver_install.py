"""The NVIDIA driver package for the user's distribution, for a DriverPlan (branch, open or proprietary)."""

from __future__ import annotations

from collections.abc import Sequence

from torch_gpu_doctor.facts.platform import OsFacts
from torch_gpu_doctor.facts.reported_errors import ReportedError
from torch_gpu_doctor.fixes.distro import major_version, recipe
from torch_gpu_doctor.fixes.driver_plan import DriverPlan
from torch_gpu_doctor.fixes.kernel_modules import REBOOT
from torch_gpu_doctor.model import Command, Remediation, Target
from torch_gpu_doctor.unavailable import Unavailable

OPEN_MODULE_MIN_CC = (7, 5)  # NVIDIA's open kernel modules support Turing and newer only


def driver_install(os_facts: OsFacts | Unavailable, plan: DriverPlan) -> Remediation:
    """Install the distribution's NVIDIA driver for `plan`, then reboot."""
    install = recipe(os_facts).driver(plan, major_version(os_facts))
    extra = " ".join(t for t in (plan.summary(), plan.module_note) if t)
    return Remediation(
        text=f"{install.text} {extra}".strip(),
        commands=install.commands,
        requires_root=bool(install.commands),
        requires_reboot=True,
        needs_network=True,
        target=Target.SYSTEM,
    )


NEEDS_OPEN = "driver_unsupported_gpu_needs_open_modules"
OPEN_WITHOUT_GSP = "driver_unsupported_gpu_open_module_no_gsp"


def unsupported_gpu_fix(
    refusals: Sequence[ReportedError], os_facts: OsFacts | Unavailable, driver_version: str | None = None
) -> Remediation | None:
    """The driver the kernel log names when it refuses a GPU: a legacy branch by number; the open flavour of
    the same branch for a GPU that requires it (Blackwell); or the proprietary flavour when the open module
    has no support for a GPU without GSP (before Turing)."""
    if any(e.signature == NEEDS_OPEN for e in refusals):
        return _open_flavour(os_facts, driver_version)
    branch = next((e.values["legacy_branch"] for e in refusals if "legacy_branch" in e.values), None)
    if branch is not None:
        ubuntu = not isinstance(os_facts, Unavailable) and os_facts.distro_id == "ubuntu"
        return Remediation(
            text=f"The kernel log says this GPU is supported only by the {branch}.xx legacy driver branch: "
            f"install that branch by name (Ubuntu: nvidia-driver-{branch}; Debian: nvidia-legacy-{branch}xx-"
            "driver), on a distribution release that still packages it. Current branches will not drive this "
            "GPU, and a GPU this old has no kernels in any current PyTorch build: the CPU build is the way "
            "to run PyTorch on this machine.",
            commands=(Command(("sudo", "apt", "install", f"nvidia-driver-{branch}")),) if ubuntu else (),
            requires_root=True,
            requires_reboot=True,
            needs_network=True,
            target=Target.SYSTEM,
        )
    if any(e.signature == OPEN_WITHOUT_GSP for e in refusals):
        # a GPU without GSP is older than Turing: Maxwell, Pascal and Volta have R580 as their last branch
        # (compat.md §1c, NVIDIA's Unix deprecation schedule), Kepler's refusal names its legacy branch (above)
        ubuntu_like = not isinstance(os_facts, Unavailable) and (
            os_facts.distro_id == "ubuntu" or "ubuntu" in os_facts.distro_like
        )
        return Remediation(
            text="The open NVIDIA kernel module supports only GPUs with a GSP (Turing, RTX 20 / GTX 16, and "
            "newer). Install the proprietary kernel module instead, of a branch that still supports the GPU: R580 "
            "is the last for Maxwell, Pascal and Volta (R590 and newer drop them). Ubuntu and its derivatives: "
            "nvidia-driver-580, not -open; Fedora/RPM Fusion and negativo17: the closed kmod package, of a 580 "
            "release; NVIDIA's .run installer: a 580 release with -m=kernel. Then reboot.",
            commands=(
                (Command(("sudo", "apt", "install", "nvidia-driver-580")), REBOOT)
                if ubuntu_like
                else (
                    Command(("modinfo", "-F", "license", "nvidia"), note="'Dual MIT/GPL' is the open module"),
                )
            ),
            requires_root=True,
            requires_reboot=True,
            target=Target.SYSTEM,
        )
    return None


def _open_flavour(os_facts: OsFacts | Unavailable, driver_version: str | None) -> Remediation:
    major = (driver_version or "").split(".")[0]
    ubuntu = not isinstance(os_facts, Unavailable) and os_facts.distro_id == "ubuntu"
    package = f"nvidia-driver-{major}-open" if major.isdigit() else "nvidia-driver-<branch>-open"
    return Remediation(
        text="This GPU works only with NVIDIA's open kernel modules; the proprietary module is installed. Install "
        f"the open flavour of the same branch (Ubuntu: {package}, which replaces the closed one; Fedora/RPM Fusion: "
        "the kmod-nvidia-open package; NVIDIA's .run installer: -m=kernel-open), then reboot.",
        commands=(
            (Command(("sudo", "apt", "install", package)), REBOOT)
            if ubuntu and major.isdigit()
            else (REBOOT,)
        ),
        requires_root=True,
        requires_reboot=True,
        needs_network=True,
        target=Target.SYSTEM,
    )
