"""driver.installed, driver.nvml, driver.nouveau: is the NVIDIA driver there, loaded, and answering?"""

from __future__ import annotations

from gpu_doctor.describe import fact, gpu_inventory
from gpu_doctor.facts.model import DriverFacts, Facts, KernelFacts, NvmlFacts
from gpu_doctor.fixes.driver_install import OPEN_MODULE_MIN_CC, driver_install
from gpu_doctor.fixes.kernel_modules import blacklist_nouveau, load_nvidia_module, reload_after_upgrade
from gpu_doctor.model import Evidence, Finding, Remediation, Status, Target
from gpu_doctor.registry import check
from gpu_doctor.unavailable import Reason, Unavailable


def _is_wsl(facts: Facts) -> bool:
    return not isinstance(facts.os, Unavailable) and facts.os.is_wsl


def _driver_evidence(driver: DriverFacts) -> list[Evidence]:
    items = [fact(f"driver version ({r.source})", r.version, r.origin) for r in driver.readings]
    items.append(
        fact("newest CUDA the driver supports", driver.cuda_version, driver.cuda_version_source or "-")
    )
    items.append(fact("kernel module flavour", driver.kernel_module_flavor, "/proc/driver/nvidia/version"))
    items.append(fact("user-space NVML library", driver.userspace_library, "libnvidia-ml.so.1"))
    return items


def _loaded(kernel: KernelFacts | Unavailable, name: str) -> bool | None:
    if isinstance(kernel, Unavailable) or isinstance(kernel.modules, Unavailable):
        return None
    return any(m.name == name and m.loaded for m in kernel.modules)


def _before_turing(cc: object) -> bool:
    if not isinstance(cc, str) or "." not in cc:
        return False
    major, _, minor = cc.partition(".")
    return major.isdigit() and minor.isdigit() and (int(major), int(minor)) < OPEN_MODULE_MIN_CC


def _capabilities(facts: Facts) -> list[str]:
    return [g.compute_capability for g in facts.nvidia_gpus if isinstance(g.compute_capability, str)]


@check("driver.installed", "The NVIDIA driver is installed and loaded", "driver", required=True)
def driver_installed(facts: Facts) -> Finding:
    """
    ## What it checks
    Reads the NVIDIA driver version from NVML, `/sys/module/nvidia/version`, `/proc/driver/nvidia/version`
    and `nvidia-smi`, in that order, and the newest CUDA version that driver supports.

    ## Why it matters
    PyTorch's CUDA wheels bring their own CUDA runtime but not the driver: the kernel module and `libcuda`
    must come from an NVIDIA driver installed on the machine (or, in WSL2, from the Windows driver). Without
    it `torch.cuda.is_available()` is False. The driver's version also decides which CUDA builds of PyTorch
    can run at all.

    ## How to fix
    Install the NVIDIA driver package of your distribution (the exact command is shown) and reboot. If the
    driver is installed but its module is not loaded, load it with `sudo modprobe nvidia`; a refusal
    mentioning a rejected key means Secure Boot blocks the unsigned module. In WSL2 install the driver on
    Windows, never inside Linux.
    """
    cid = "driver.installed"
    driver = facts.driver
    if isinstance(driver, Unavailable):
        return Finding(cid, Status.UNKNOWN, f"Could not read the driver facts: {driver}.")
    evidence = tuple(_driver_evidence(driver))
    old_gpus = [g for g in facts.nvidia_gpus if _before_turing(g.compute_capability)]
    if isinstance(driver.version, str) and driver.kernel_module_flavor == "open" and old_gpus:
        return Finding(
            cid,
            Status.FAIL,
            f"The open NVIDIA kernel module {driver.version} is loaded, but it does not support "
            f"{gpu_inventory(tuple(old_gpus))}: only Turing (RTX 20 / GTX 16) and newer.",
            details="Install the proprietary kernel module of the same driver branch instead.",
            evidence=evidence,
            remediation=driver_install(facts.os, _capabilities(facts)),
        )
    if isinstance(driver.version, str):
        if driver.is_jetson:
            summary = f"NVIDIA L4T (Jetson) driver {driver.version} is loaded."
        else:
            flavour = driver.kernel_module_flavor
            kind = f" ({flavour} kernel module)" if isinstance(flavour, str) else ""
            where = " from Windows through WSL2" if _is_wsl(facts) else ""
            cuda = (
                f", supports CUDA up to {driver.cuda_version}" if isinstance(driver.cuda_version, str) else ""
            )
            summary = f"NVIDIA driver {driver.version}{kind}{where} is loaded{cuda}."
        return Finding(cid, Status.PASS, summary, evidence=evidence)
    if not facts.nvidia_gpus:
        return Finding(
            cid, Status.SKIP, "No NVIDIA GPU here, so no NVIDIA driver is needed.", evidence=evidence
        )
    if driver.version.reason in (Reason.PERMISSION_DENIED, Reason.TIMED_OUT):
        return Finding(
            cid, Status.UNKNOWN, f"Could not read the driver version: {driver.version}.", evidence=evidence
        )
    if _is_wsl(facts):
        return Finding(
            cid,
            Status.FAIL,
            "The Windows NVIDIA driver does not reach this WSL2 distribution.",
            details=(
                "In WSL2 the driver lives on Windows and is projected into Linux under /usr/lib/wsl/lib. "
                "Do not install a Linux NVIDIA driver inside WSL: it would replace the projected libraries."
            ),
            evidence=evidence,
            remediation=Remediation(
                text="Install or update the NVIDIA driver on Windows, then run `wsl --update` and `wsl --shutdown` "
                "from a Windows terminal.",
                needs_network=True,
                target=Target.SYSTEM,
            ),
        )
    if isinstance(driver.installed_module_version, str):
        return Finding(
            cid,
            Status.FAIL,
            f"NVIDIA driver {driver.installed_module_version} is installed but its kernel module is not loaded.",
            details="The module exists for the running kernel but nothing loaded it: a reboot after installing "
            "was skipped, it was blacklisted, or Secure Boot refused it.",
            evidence=evidence,
            remediation=load_nvidia_module(),
        )
    return Finding(
        cid,
        Status.FAIL,
        "No NVIDIA driver is installed: the GPU cannot be used by PyTorch.",
        details="No source reports a driver version: NVML is missing, no nvidia kernel module is loaded and none "
        "is installed for the running kernel.",
        evidence=evidence,
        remediation=driver_install(facts.os, _capabilities(facts)),
    )


_NVML_ERRORS: dict[str, tuple[str, str]] = {
    # name: (summary, plain explanation)
    "DriverNotLoaded": (
        "NVML is installed but the NVIDIA kernel module is not loaded.",
        "The user-space part of the driver is present, the kernel part is not running.",
    ),
    "NoPermission": (
        "NVML was refused access to the GPU (permission denied).",
        "Your user cannot open /dev/nvidiactl or /dev/nvidia*; usually the device nodes have unusual "
        "permissions, or a container was started without access to them.",
    ),
    "GpuIsLost": (
        "A GPU has fallen off the bus: NVML reports it lost.",
        "The GPU stopped answering on PCIe (kernel log: Xid 79). Causes: power, overheating, a riser or "
        "extender cable, or a hardware fault. Only a reboot (or a GPU reset) brings it back.",
    ),
    "OperatingSystem": (
        "The operating system blocked NVML.",
        "Typically a container's device cgroup does not allow the NVIDIA devices.",
    ),
    "InsufficientPower": (
        "A GPU reports insufficient power.",
        "Check that every PCIe power connector is plugged in and the power supply is large enough.",
    ),
    "Timeout": (
        "NVML timed out talking to the driver.",
        "The driver did not answer in time; it may be wedged.",
    ),
}


@check("driver.nvml", "NVML, the driver's management library, answers", "driver", required=True)
def driver_nvml(facts: Facts) -> Finding:
    """
    ## What it checks
    Initialises NVML (libnvidia-ml, the library behind nvidia-smi) and asks it for the driver version and the
    GPUs; maps every NVML error to what it means on this machine.

    ## Why it matters
    NVML failing is the most precise early signal of a broken driver installation: "Driver/library version
    mismatch" means the driver was upgraded without a reboot; "driver not loaded" means the kernel module is
    not running; "library not found" means the user-space half of the driver is missing (or a container was
    started without the `utility` capability). CUDA, and therefore PyTorch, fails in the same situations
    with far less helpful messages.

    ## How to fix
    Version mismatch: reboot (or unload and reload the nvidia modules). Module not loaded: `sudo modprobe
    nvidia`. Library missing: install the driver's user-space package, or start the container with
    `NVIDIA_DRIVER_CAPABILITIES=compute,utility`. A GPU "lost": reboot and check power and risers.
    """
    cid = "driver.nvml"
    nvml = facts.nvml
    driver = facts.driver
    if isinstance(nvml, Unavailable):
        return Finding(cid, Status.UNKNOWN, f"NVML could not be queried: {nvml}.")
    error = nvml.init_error
    evidence = [fact("NVML init", f"NVMLError_{error.name} ({error.code})" if error else "ok", "nvmlInit")]
    if not isinstance(driver, Unavailable):
        evidence += _driver_evidence(driver)
    if error is None:
        return _nvml_ok(nvml, driver, tuple(evidence))
    if not facts.nvidia_gpus and not isinstance(facts.pci, Unavailable):
        # e.g. a cloud image with the driver preinstalled, booted on a CPU instance: nothing to fix
        return Finding(
            cid,
            Status.SKIP,
            f"No NVIDIA GPU here (NVML says NVMLError_{error.name}, as expected without one).",
            evidence=tuple(evidence),
        )
    if error.name == "LibRmVersionMismatch":
        kernel = _kernel_version(driver)
        user = driver.userspace_version if not isinstance(driver, Unavailable) else None
        versions = (
            f" The running kernel module is {kernel}, the installed library is {user}."
            if isinstance(kernel, str) and isinstance(user, str)
            else ""
        )
        return Finding(
            cid,
            Status.FAIL,
            "Driver/library version mismatch: the NVIDIA driver was updated but the old kernel module still runs.",
            details="The user-space libraries (libnvidia-ml, libcuda) and the loaded kernel module come from "
            f"different driver versions, so neither NVML nor CUDA can start.{versions} This happens when the "
            "driver packages are upgraded (often by unattended upgrades) and the machine was not rebooted.",
            evidence=tuple(evidence),
            remediation=reload_after_upgrade(),
        )
    if error.name == "LibraryNotFound":
        loaded = not isinstance(driver, Unavailable) and isinstance(driver.version, str)
        if not loaded:
            return Finding(
                cid,
                Status.FAIL,
                "NVML is missing because no NVIDIA driver is installed (see driver.installed).",
                evidence=tuple(evidence),
            )
        return Finding(
            cid,
            Status.FAIL,
            "The NVIDIA kernel module is loaded, but its user-space library libnvidia-ml.so.1 is missing.",
            details="Inside a container this means the NVIDIA runtime was not asked for the `utility` capability; on a "
            "host, the driver's user-space package (e.g. libnvidia-ml / nvidia-utils) is not installed or does not "
            "match the module.",
            evidence=tuple(evidence),
            remediation=Remediation(
                text="Install the driver's user-space package matching the loaded module, or start the container "
                "with `--gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility`.",
                target=Target.SYSTEM,
            ),
        )
    summary, explanation = _NVML_ERRORS.get(
        error.name, (f"NVML failed to start: NVMLError_{error.name} ({error.message}).", "")
    )
    remediation = load_nvidia_module() if error.name == "DriverNotLoaded" else None
    if error.name == "GpuIsLost":
        remediation = Remediation(
            text="Reboot; if it happens again check power cables, risers and temperatures.",
            requires_reboot=True,
            target=Target.SYSTEM,
        )
    return Finding(
        cid, Status.FAIL, summary, details=explanation, evidence=tuple(evidence), remediation=remediation
    )


LOST_ERRORS = ("NVMLError_GpuIsLost", "NVMLError_ResetRequired", "NVMLError_Unknown")


def _kernel_version(driver: DriverFacts | Unavailable) -> str | None:
    if isinstance(driver, Unavailable):
        return None
    for reading in driver.readings:
        if reading.source in ("sysfs", "procfs") and isinstance(reading.version, str):
            return reading.version
    return None


def _nvml_ok(nvml: NvmlFacts, driver: DriverFacts | Unavailable, evidence: tuple[Evidence, ...]) -> Finding:
    cid = "driver.nvml"
    if isinstance(nvml.device_count, Unavailable):
        return Finding(
            cid,
            Status.FAIL,
            f"NVML started but could not list the GPUs ({nvml.device_count}).",
            evidence=evidence,
        )
    lost = sorted(
        {
            dev.index
            for dev in nvml.devices
            for value in vars(dev).values()
            if isinstance(value, Unavailable) and value.detail in LOST_ERRORS
        }
    )
    if lost:
        return Finding(
            cid,
            Status.FAIL,
            f"NVML answers, but GPU {', '.join(map(str, lost))} stopped responding (fallen off the bus).",
            details=_NVML_ERRORS["GpuIsLost"][1],
            evidence=evidence,
            remediation=Remediation(
                text="Reboot; if it happens again check power cables, risers and temperatures.",
                requires_reboot=True,
                target=Target.SYSTEM,
            ),
        )
    count = nvml.device_count
    version = nvml.driver_version if isinstance(nvml.driver_version, str) else "unknown"
    unsupported = sorted(
        {
            name
            for dev in nvml.devices
            for name, value in vars(dev).items()
            if isinstance(value, Unavailable) and value.reason is Reason.NOT_SUPPORTED
        }
    )
    details = (
        f"Some values are not supported by this GPU or driver (normal, e.g. on GeForce or vGPU): {', '.join(unsupported)}."
        if unsupported
        else ""
    )
    kernel = _kernel_version(driver)
    if kernel is not None and version not in ("unknown", kernel):
        return Finding(
            cid,
            Status.WARN,
            f"NVML answers, but reports driver {version} while the loaded kernel module is {kernel}.",
            details="The user-space libraries and the kernel module should come from the same driver release; "
            "a reboot after the last driver update usually fixes it.",
            evidence=evidence,
            remediation=reload_after_upgrade(),
        )
    return Finding(
        cid,
        Status.PASS,
        f"NVML answers: driver {version}, {count} GPU{'s' if count != 1 else ''}.",
        details=details,
        evidence=evidence,
    )


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
    loaded = _loaded(kernel, "nouveau")
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
