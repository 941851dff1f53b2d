"""A newer NVIDIA driver, where that driver lives: the Windows one under WSL2 and on Windows, the host's in a
container, the distribution's package on Linux (fixes/distro.py).

Two causes end here: no torch build runs on the installed driver (fixes/torch_wheel.py), and a program's own
"CUDA driver version is insufficient for CUDA runtime version" (fixes/cuda_init.py). Either way the first
step is the install, not `nvidia-smi`: the driver's CUDA is what the error already said.
"""

from __future__ import annotations

from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.distro import NVIDIA_DOWNLOADS
from torch_gpu_doctor.fixes.driver_install import driver_install
from torch_gpu_doctor.fixes.driver_plan import DriverPlan
from torch_gpu_doctor.model import Remediation, Target
from torch_gpu_doctor.unavailable import Unavailable


def driver_update(
    facts: Facts,
    plan: DriverPlan,
    lead: str,
    needed: str = "",
    *,
    alternative: str = "",
    in_container: bool = False,
) -> Remediation:
    """`lead` (what is too old, and for what), then how to install the driver `plan` names on this machine.
    `needed` says which driver where no package command does (a distribution's install text has the plan's
    own summary); `alternative`, what else works, closes the text. `in_container`: the paste or the machine
    shows that the program ran in a container."""
    os_facts = facts.os
    said = f"{lead} {needed}".strip()
    known = os_facts if not isinstance(os_facts, Unavailable) else None
    branch = f" (R{plan.branch} or newer)" if plan.branch and not plan.end_of_life else ""
    if known is not None and known.is_wsl:
        return Remediation(
            text=f"{said} In WSL2 the driver is the Windows one: update the NVIDIA driver on Windows{branch} "
            f"({NVIDIA_DOWNLOADS} or the NVIDIA app; never install a Linux driver inside WSL), then run `wsl "
            f"--shutdown` from a Windows terminal. {alternative}".strip(),
            needs_network=True,
            target=Target.SYSTEM,
        )
    if known is not None and known.system == "Windows":
        return Remediation(
            text=f"{said} Update the NVIDIA driver{branch} from {NVIDIA_DOWNLOADS} or the NVIDIA app, then "
            f"restart the program. {alternative}".strip(),
            needs_network=True,
            target=Target.SYSTEM,
        )
    if in_container or (known is not None and known.container):
        return Remediation(
            text=f"{said} Inside a container the driver is the host's: update the NVIDIA driver on the "
            f"host{branch} (the container cannot change it), or use an image built for the CUDA the host's "
            "driver runs.",
            needs_network=True,
            target=Target.SYSTEM,
        )
    base = driver_install(os_facts, plan)
    return Remediation(
        text=f"{lead} {base.text} {alternative}".strip(),
        commands=base.commands,
        requires_root=base.requires_root,
        requires_reboot=base.requires_reboot,
        needs_network=base.needs_network,
        target=base.target,
    )
