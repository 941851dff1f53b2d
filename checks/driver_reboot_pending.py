"""driver.reboot_pending: do the loaded module, the module on disk and the user-space library agree?

Three versions (hardware.md §3.6): the running module (/sys/module/nvidia/version, /proc/driver/nvidia/version),
the module installed for this kernel (`modinfo nvidia`) and the user-space library (libnvidia-ml.so.1's file
name). Loaded older than installed = the driver was upgraded and waits for a reboot. Loaded = installed but the
library differs = the packages themselves disagree, and a reboot will not help.

Split with driver.nvml: driver.nvml says whether NVML works and keeps the FAIL when it does not
("Driver/library version mismatch"); this check names the three versions and whether a reboot is the cure, as
a warning when a reboot fixes it (so one cause is not failed twice) and as a failure when it does not.
"""

from __future__ import annotations

from torch_gpu_doctor.checks.support.driver import is_wsl
from torch_gpu_doctor.checks.support.driver_state import loaded_module_version, module_on_disk
from torch_gpu_doctor.facts.describe import fact
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.kernel_modules import reload_after_upgrade
from torch_gpu_doctor.model import Finding, Remediation, Status, Target
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

CID = "driver.reboot_pending"


def _nvml_mismatch(facts: Facts) -> bool:
    nvml = facts.nvml
    return (
        not isinstance(nvml, Unavailable)
        and nvml.init_error is not None
        and (nvml.init_error.name == "LibRmVersionMismatch")
    )


def _finish_upgrade(loaded: str, user: str) -> Remediation:
    return Remediation(
        text=f"The driver packages are half upgraded: the kernel module is {loaded} and the user-space "
        f"libraries are {user}. Finish the upgrade (or reinstall the driver) with your package manager so both "
        "come from one release, then reboot.",
        requires_root=True,
        requires_reboot=True,
        needs_network=True,
        target=Target.SYSTEM,
    )


@check(CID, "No NVIDIA driver update is waiting for a reboot", "driver")
def driver_reboot_pending(facts: Facts) -> Finding:
    """
    ## What it checks
    Compares three versions: the NVIDIA kernel module that is running, the module installed on disk for the
    running kernel (`modinfo nvidia`) and the user-space library (`libnvidia-ml.so.<version>`).

    ## Why it matters
    Driver updates replace the files on disk, but the old module keeps running until a reboot. Until then the
    new libraries refuse to talk to the old module ("Driver/library version mismatch"): nvidia-smi, NVML and
    CUDA, and so PyTorch, fail. When only the module on disk changed, everything works until the reboot, which
    then loads a module the libraries must match. When the library and the module on disk disagree, a reboot
    does not help: the packages themselves are from different releases.

    ## How to fix
    Reboot (or, with nothing using the GPU, unload and reload the nvidia modules). If the module on disk and the
    library differ, finish or redo the driver upgrade with your package manager first.
    """
    driver = facts.driver
    if is_wsl(facts):
        return Finding(
            CID, Status.SKIP, "WSL2 uses the Windows driver: updates there need a Windows restart."
        )
    if not facts.nvidia_gpus:
        return Finding(CID, Status.SKIP, "No NVIDIA GPU here.")
    if isinstance(driver, Unavailable):
        return Finding(CID, Status.UNKNOWN, f"Could not read the driver facts: {driver}.")
    if driver.is_jetson:
        return Finding(CID, Status.SKIP, "Jetson (L4T) drivers come with JetPack; nothing to compare here.")
    loaded = loaded_module_version(driver)
    if loaded is None:
        return Finding(
            CID, Status.SKIP, "The nvidia module is not loaded: nothing to compare (see driver.installed)."
        )
    module = module_on_disk(facts)
    disk: Maybe[str] = module.version if module is not None else _disk_reason(facts)
    user = driver.userspace_version
    evidence = (
        fact("loaded kernel module", loaded, "/sys/module/nvidia/version, /proc/driver/nvidia/version"),
        fact("module on disk for this kernel", disk, "modinfo nvidia"),
        fact("user-space library", user, "libnvidia-ml.so.1"),
    )
    why_nvml = " This is why NVML and CUDA fail now (see driver.nvml)." if _nvml_mismatch(facts) else ""
    if isinstance(disk, str) and disk != loaded:
        if isinstance(user, str) and user != disk:
            return Finding(
                CID,
                Status.WARN,
                f"Driver {disk} is installed but {loaded} still runs, and the library is {user}: rebooting now "
                f"would load module {disk} beside library {user}.",
                details=f"Finish the upgrade so the module and the library match before rebooting.{why_nvml}",
                evidence=evidence,
                remediation=_finish_upgrade(disk, user),
            )
        return Finding(
            CID,
            Status.WARN,
            f"A driver update waits for a reboot: {disk} is installed, {loaded} still runs.",
            details=f"The new module is loaded only at the next boot.{why_nvml}",
            evidence=evidence,
            remediation=reload_after_upgrade(),
        )
    if isinstance(user, str) and user != loaded:
        if disk == loaded:
            return Finding(
                CID,
                Status.FAIL,
                f"The user-space library is {user} but the kernel module is {loaded}, on disk as well: a reboot "
                "will not fix this mismatch.",
                details="The driver's packages come from two releases (an interrupted or partial upgrade).",
                evidence=evidence,
                remediation=_finish_upgrade(loaded, user),
            )
        return Finding(
            CID,
            Status.WARN,
            f"The user-space library is {user} while module {loaded} runs: most likely a driver update waiting "
            "for a reboot.",
            details=f"The module on disk could not be read to confirm it ({disk}).{why_nvml}",
            evidence=evidence,
            remediation=reload_after_upgrade(),
        )
    if isinstance(disk, Unavailable) and isinstance(user, Unavailable):
        return Finding(
            CID,
            Status.UNKNOWN,
            f"Module {loaded} is loaded, but neither the installed module ({disk}) nor the library ({user}) "
            "could be read to compare.",
            evidence=evidence,
        )
    return Finding(
        CID,
        Status.PASS,
        f"No reboot pending: the running module {loaded} matches what is installed.",
        evidence=evidence,
    )


def _disk_reason(facts: Facts) -> Unavailable:
    module = facts.nvidia_module
    if isinstance(module, Unavailable):
        return module
    if isinstance(module.modinfo, Unavailable):
        return module.modinfo
    return Unavailable(Reason.NOT_FOUND, "modinfo")
