"""driver.nouveau: does the open-source nouveau driver hold the NVIDIA GPU?"""

from __future__ import annotations

from torch_gpu_doctor.checks.support.driver import module_loaded
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.kernel_modules import blacklist_nouveau
from torch_gpu_doctor.model import Evidence, Finding, Status
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Unavailable


@check("driver.nouveau", "The nouveau driver does not hold the NVIDIA GPU", "driver")
def driver_nouveau(facts: Facts) -> Finding:
    """
    ## What it checks
    Whether the open-source `nouveau` kernel module is loaded and bound to an NVIDIA GPU, and where nouveau is
    blacklisted (modprobe.d files, the kernel command line).

    ## Why it matters
    nouveau and the NVIDIA driver cannot both own a GPU. When nouveau is loaded first it claims the card and
    the NVIDIA module cannot bind, so CUDA sees no device. nouveau has no CUDA support. A blacklist file is
    not enough when nouveau is loaded from the initramfs, which still contains the old configuration.

    ## How to fix
    Blacklist nouveau, rebuild the initramfs so the blacklist reaches early boot, and reboot; then install or
    load the NVIDIA driver. The exact commands for your distribution are shown.
    """
    cid = "driver.nouveau"
    kernel = facts.kernel
    if not facts.nvidia_gpus:
        return Finding(cid, Status.SKIP, "No NVIDIA GPU here.")
    loaded = module_loaded(kernel, "nouveau")
    if loaded is None or isinstance(kernel, Unavailable):
        reason = kernel if isinstance(kernel, Unavailable) else kernel.modules
        return Finding(cid, Status.UNKNOWN, f"Could not read the loaded kernel modules: {reason}.")
    blacklists = kernel.nouveau_blacklisted_by
    evidence = (
        Evidence("nouveau module", "loaded" if loaded else "not loaded", "/proc/modules"),
        Evidence(
            "blacklisted by",
            ", ".join(blacklists) or "nothing",
            "/etc/modprobe.d, /usr/lib/modprobe.d, /proc/cmdline",
        ),
        *(
            Evidence(f"kernel driver of {g.bdf}", g.kernel_driver or "none", "sysfs driver link")
            for g in facts.nvidia_gpus
        ),
    )
    bound = [g for g in facts.nvidia_gpus if g.kernel_driver == "nouveau"]
    if bound:
        details = (
            "nouveau has no CUDA support, and while it holds the GPU the NVIDIA driver cannot bind to it."
        )
        if blacklists:
            details += (
                f" nouveau is blacklisted ({', '.join(blacklists)}) yet still loaded: the initramfs was built "
                "before the blacklist and loads it at boot."
            )
        return Finding(
            cid,
            Status.FAIL,
            f"The open-source nouveau driver holds {len(bound)} NVIDIA GPU{'s' if len(bound) > 1 else ''}, "
            "so CUDA cannot use it.",
            details=details,
            evidence=evidence,
            remediation=blacklist_nouveau(facts.os),
        )
    if loaded:
        return Finding(
            cid,
            Status.WARN,
            "The nouveau module is loaded but holds no NVIDIA GPU.",
            details="Harmless right now, but it may claim the GPU at the next boot before the NVIDIA driver does.",
            evidence=evidence,
            remediation=blacklist_nouveau(facts.os),
        )
    return Finding(cid, Status.PASS, "nouveau is not loaded.", evidence=evidence)
