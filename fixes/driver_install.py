"""The NVIDIA driver package for the user's distribution, for a DriverPlan (branch, open or proprietary)."""

from __future__ import annotations

from torch_gpu_doctor.facts.model import OsFacts
from torch_gpu_doctor.fixes.distro import major_version, recipe
from torch_gpu_doctor.fixes.driver_plan import DriverPlan
from torch_gpu_doctor.model import Remediation, Target
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
