"""The NVIDIA driver package for the user's distribution, for a DriverPlan (branch, open or proprietary)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.facts.platform import OsFacts
from torch_gpu_doctor.facts.reported_errors import ReportedError
from torch_gpu_doctor.fixes.distro import major_version, recipe
from torch_gpu_doctor.fixes.driver_plan import DriverPlan
from torch_gpu_doctor.fixes.kernel_modules import REBOOT
from torch_gpu_doctor.lazy_re import lazy
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
    refusals: Sequence[ReportedError],
    os_facts: OsFacts | Unavailable,
    driver_version: str | None = None,
    capabilities: tuple[str, ...] = (),
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
        return _closed_module(refusals, os_facts, capabilities)
    return None


# the GPU a refusal names: "(PCI ID: 10de:1d16)"
_PCI_ID = lazy(r"\b10de:(?P<device>[0-9a-f]{4})\b", re.IGNORECASE)


def _closed_module(
    refusals: Sequence[ReportedError], os_facts: OsFacts | Unavailable, capabilities: tuple[str, ...]
) -> Remediation:
    """A GPU without GSP (older than Turing) refused by the open module: the proprietary module of a branch that
    still drives it. Maxwell, Pascal and Volta have R580 as their last branch, Kepler R470 (compat.md §1c,
    NVIDIA's Unix deprecation schedule). The GPU is known from the refusal's PCI id where the table has it, or
    from the compute capability of the GPUs the facts name; unknown, both branches are said and R580 given."""
    gpu = None
    for error in refusals:
        found = _PCI_ID.search(f"{error.text} {error.context}")
        gpu = load_torch_releases().gpu_by_pci_id(found["device"]) if found is not None else None
        if gpu is not None:
            break
    kepler = (gpu.compute_capability if gpu is not None else " ".join(capabilities)).startswith("3.")
    branch = "470" if kepler else "580"
    which = (
        f"the {gpu.name} ({gpu.architecture}) has R{branch} as its last branch"
        if gpu is not None
        else "Kepler (this GPU) has R470 as its last branch"
        if kepler
        else "R580 is the last for Maxwell, Pascal and Volta, R470 for Kepler"
    )
    ubuntu_like = not isinstance(os_facts, Unavailable) and (
        os_facts.distro_id == "ubuntu" or "ubuntu" in os_facts.distro_like
    )
    return Remediation(
        text="The open NVIDIA kernel module supports only GPUs with a GSP (Turing, RTX 20 / GTX 16, and newer). "
        f"Install the proprietary kernel module instead, of a branch that still supports the GPU: {which} (newer "
        f"branches drop it). Ubuntu and its derivatives: nvidia-driver-{branch}, not -open; Fedora/RPM Fusion and "
        f"negativo17: the closed kmod package of a {branch} release; NVIDIA's .run installer: a {branch} release "
        "with -m=kernel. Then reboot.",
        commands=(
            (Command(("sudo", "apt", "install", f"nvidia-driver-{branch}")), REBOOT)
            if ubuntu_like
            else (Command(("modinfo", "-F", "license", "nvidia"), note="'Dual MIT/GPL' is the open module"),)
        ),
        requires_root=True,
        requires_reboot=True,
        needs_network=True,
        target=Target.SYSTEM,
    )


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
