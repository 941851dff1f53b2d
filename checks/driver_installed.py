"""driver.installed: is an NVIDIA driver there and loaded, and does it support these GPUs?"""

from __future__ import annotations

from torch_gpu_doctor.checks.support.driver import before_turing, driver_evidence, forward_compat, is_wsl
from torch_gpu_doctor.checks.support.signatures import reported, reported_evidence
from torch_gpu_doctor.facts.describe import gpu_inventory
from torch_gpu_doctor.facts.driver import DriverFacts
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.cuda_init import init_error_fix
from torch_gpu_doctor.fixes.distro import NVIDIA_DOWNLOADS
from torch_gpu_doctor.fixes.driver_install import driver_install, unsupported_gpu_fix
from torch_gpu_doctor.fixes.driver_plan import plan_driver
from torch_gpu_doctor.fixes.kernel_modules import load_nvidia_module
from torch_gpu_doctor.fixes.module_build import build_module, load_or_build
from torch_gpu_doctor.fixes.target import on_windows
from torch_gpu_doctor.model import Command, Finding, Remediation, Status, Target
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Reason, Unavailable


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
    refused = reported(facts, "driver_unsupported_gpu")
    if refused:
        return Finding(
            cid,
            Status.FAIL,
            f"The installed NVIDIA driver does not support this GPU: its kernel module refused it ({refused[0].where}).",
            details=refused[0].means,
            evidence=reported_evidence(refused),
            remediation=unsupported_gpu_fix(
                refused,
                facts.os,
                _version(driver),
                tuple(
                    g.compute_capability for g in facts.nvidia_gpus if isinstance(g.compute_capability, str)
                ),
            )
            or driver_install(facts.os, plan_driver(facts)),
        )
    blocked = reported(facts, "secure_boot_refused")
    if blocked and (isinstance(driver, Unavailable) or not isinstance(driver.version, str)):
        return Finding(  # installed, not loaded: installing it again changes nothing
            cid,
            Status.FAIL,
            "The NVIDIA kernel module is installed but Secure Boot refused to load it.",
            evidence=reported_evidence(blocked),
            caused_by=("driver.secure_boot",),
        )
    if isinstance(driver, Unavailable):
        return Finding(cid, Status.UNKNOWN, f"Could not read the driver facts: {driver}.")
    evidence = tuple(driver_evidence(driver))
    jetson = facts.jetson_board
    if jetson is not None:  # its driver is part of the board's L4T image, not a package to install
        where = f"L4T {jetson.l4t}" if jetson.l4t else "the board's L4T image"
        state = "is loaded" if jetson.nvgpu else "comes with it (not seen loaded: /sys/module/nvgpu)"
        return Finding(
            cid, Status.PASS, f"The Jetson's GPU driver (nvgpu) of {where} {state}.", evidence=evidence
        )
    old_gpus = [g for g in facts.nvidia_gpus if before_turing(g.compute_capability)]
    if isinstance(driver.version, str) and driver.kernel_module_flavor == "open" and old_gpus:
        return Finding(
            cid,
            Status.FAIL,
            f"The open NVIDIA kernel module {driver.version} is loaded, but it does not support "
            f"{gpu_inventory(tuple(old_gpus))}: only Turing (RTX 20 / GTX 16) and newer.",
            details="Install the proprietary kernel module of the same driver branch instead.",
            evidence=evidence,
            remediation=driver_install(facts.os, plan_driver(facts)),
        )
    if isinstance(driver.version, str):
        compat = _forward_compat_loaded(facts, driver)
        if compat is not None:
            return compat
        if driver.is_jetson:
            summary = f"NVIDIA L4T (Jetson) driver {driver.version} is loaded."
        else:
            flavour = driver.kernel_module_flavor
            kind = f" ({flavour} kernel module)" if isinstance(flavour, str) else ""
            where = " from Windows through WSL2" if is_wsl(facts) else ""
            cuda = (
                f", supports CUDA up to {driver.cuda_version}" if isinstance(driver.cuda_version, str) else ""
            )
            summary = f"NVIDIA driver {driver.version}{kind}{where} is loaded{cuda}."
        return Finding(cid, Status.PASS, summary, evidence=evidence)
    if not facts.nvidia_gpus and not is_wsl(facts):  # WSL2 shows no PCI GPU: only the driver can show it
        return Finding(
            cid, Status.SKIP, "No NVIDIA GPU here, so no NVIDIA driver is needed.", evidence=evidence
        )
    if driver.version.reason is Reason.NOT_RECORDED:  # a capture or a paste that does not say
        if isinstance(driver.cuda_version, str):  # yet a driver answered torch: it is loaded
            return Finding(
                cid,
                Status.PASS,
                f"An NVIDIA driver is loaded: it supports CUDA up to {driver.cuda_version} (its version is not "
                "known here).",
                evidence=evidence,
            )
        return Finding(
            cid, Status.UNKNOWN, f"The driver version is not known: {driver.version}.", evidence=evidence
        )
    if driver.version.reason in (Reason.PERMISSION_DENIED, Reason.TIMED_OUT):
        return Finding(
            cid, Status.UNKNOWN, f"Could not read the driver version: {driver.version}.", evidence=evidence
        )
    if is_wsl(facts):
        return Finding(
            cid,
            Status.FAIL,
            "No NVIDIA driver answers inside this WSL2 distribution.",
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
            caused_by=("platform.wsl_linux_driver",),
        )
    if on_windows(facts):
        return Finding(
            cid,
            Status.FAIL,
            "No NVIDIA driver answers on this Windows machine, so PyTorch cannot use the GPU.",
            details=f"{driver.version.detail or driver.version}. Windows' nvidia-smi reaches no driver: none is "
            "installed, an update or a removal tool left it broken, or the GPU is disabled or missing in Device "
            "Manager (a laptop's NVIDIA GPU can be switched off there or in the BIOS).",
            evidence=evidence,
            remediation=Remediation(
                text=f"Install the NVIDIA driver for the GPU from {NVIDIA_DOWNLOADS} or the NVIDIA app (its "
                "'clean installation' replaces a broken one), then restart Windows. If the installer finds no "
                "NVIDIA GPU, Device Manager > Display adapters shows whether Windows sees it at all.",
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
            # what keeps an installed module out, when those checks find it (checks/support/causes.py)
            caused_by=NOT_LOADED_CAUSES,
        )
    if isinstance(
        driver.installed_module_version, Unavailable
    ) and driver.installed_module_version.reason in (
        Reason.NOT_RECORDED,
        Reason.PERMISSION_DENIED,
        Reason.TIMED_OUT,
    ):  # whether a module is installed was not seen: do not say "not installed"
        if _user_space_answers(facts):
            return Finding(
                cid,
                Status.FAIL,
                f"{INSTALLED_NOT_LOADED}, so PyTorch cannot use the GPU.",
                details=f"{driver.version.detail or driver.version}. nvidia-smi and NVML, the driver's user-space "
                "part, answer this way when its kernel part is not running. Most often the module was never built "
                "for the running kernel: a kernel update, or a second kernel (an -lts or a distribution's own "
                "flavour) whose headers were not installed, so DKMS could not build it. Less often Secure Boot "
                "refused it. `sudo modprobe nvidia` says which.",
                evidence=evidence,
                remediation=load_or_build(facts.os),
                caused_by=NOT_LOADED_CAUSES,
            )
        return Finding(
            cid,
            Status.FAIL,
            "No NVIDIA driver answers: none is loaded, so PyTorch cannot use the GPU.",
            details=f"{driver.version.detail or driver.version}. Either no driver is installed, or it is installed "
            "but not loaded (after a kernel update, or Secure Boot refused it), or this is a container started "
            "without the GPUs (`--gpus all`). `nvidia-smi` on that machine tells them apart.",
            evidence=evidence,
            remediation=_load_or_install(facts),
        )
    user = driver.userspace_version
    module = facts.nvidia_module
    release = None if isinstance(module, Unavailable) else module.running_kernel
    if isinstance(user, str) and isinstance(release, str):
        # the libraries are there, the module for this kernel is not: a kernel update DKMS could not follow.
        # Installing the driver package again would fail the same way without this kernel's headers.
        return Finding(
            cid,
            Status.FAIL,
            f"NVIDIA driver {user} is installed, but no kernel module of it is built for the running kernel "
            f"{release}.",
            details="Its user-space libraries are installed; the module was built for another kernel (usually the "
            "one before an update whose headers were not installed, so DKMS could not build it again).",
            evidence=evidence,
            remediation=build_module(facts.os, release),
            caused_by=("driver.kernel_module_build",),
        )
    return Finding(
        cid,
        Status.FAIL,
        "No NVIDIA driver is installed: the GPU cannot be used by PyTorch.",
        details="No source reports a driver version: NVML is missing, no nvidia kernel module is loaded and none "
        "is installed for the running kernel.",
        evidence=evidence,
        remediation=driver_install(facts.os, plan_driver(facts)),
    )


def _forward_compat_loaded(facts: Facts, driver: DriverFacts) -> Finding | None:
    """The CUDA the loaded libcuda reports (nvidia-smi's 'CUDA Version', NVML, torch's driver warning) above what
    the driver's own branch supports: a forward-compatibility libcuda (cuda-compat, a CUDA image's
    /usr/local/cuda/compat) is loaded in place of the driver's. NVIDIA supports that only on data-centre GPUs
    (CUDA Compatibility guide, 'Forward Compatibility'); on GeForce every CUDA program then fails with error 804
    (blind set 25: driver 470.256.02 showing CUDA 11.8, ApolloAuto/apollo#15613). Other GPUs: a warning, with
    the same fix (most cards people paste from are not data-centre ones)."""
    found = forward_compat(facts)
    if found is None:
        return None
    names = [g.name.lower() for g in facts.nvidia_gpus if isinstance(g.name, str)]
    geforce = any("geforce" in name or "titan" in name for name in names)
    where = "the GeForce GPU here cannot use one" if geforce else "it works only on data-centre GPUs"
    return Finding(
        "driver.installed",
        Status.FAIL if geforce else Status.WARN,
        f"NVIDIA driver {driver.version} is loaded, but CUDA reports {found.reported}, above the {found.own} of "
        f"its branch: a forward-compatibility libcuda (cuda-compat) is loaded in place of the driver's, and {where}.",
        details="CUDA forward compatibility lets a data-centre GPU run a newer CUDA on an older driver. On GeForce "
        "and most workstation cards every CUDA program then fails with error 804 ('forward compatibility was "
        f"attempted on non supported HW'). Driver {driver.version} itself runs programs built for CUDA ≤ "
        f"{found.own}; CUDA {found.reported} needs driver ≥ {found.needed}.",
        evidence=tuple(driver_evidence(driver)),
        remediation=init_error_fix("forward_compat_804_torch", "forward_compat", facts),
    )


def _version(driver: DriverFacts | Unavailable) -> str | None:
    if isinstance(driver, Unavailable):
        return None
    found = (driver.version, driver.userspace_version, driver.installed_module_version)
    return next((v for v in found if isinstance(v, str)), None)


INSTALLED_NOT_LOADED = "The NVIDIA driver is installed but its kernel module is not loaded"


def _user_space_answers(facts: Facts) -> bool:
    """NVML (nvidia-smi's library) is there and says the kernel module is not: "NVIDIA-SMI has failed because
    it couldn't communicate with the NVIDIA driver", NVML_ERROR_DRIVER_NOT_LOADED."""
    nvml = facts.nvml
    return (
        not isinstance(nvml, Unavailable)
        and nvml.init_error is not None
        and (nvml.init_error.name == "DriverNotLoaded")
    )


NOT_LOADED_CAUSES = (
    "platform.wsl_linux_driver",
    "driver.secure_boot",
    "driver.nouveau",
    "driver.kernel_module_build",
)


def _load_or_install(facts: Facts) -> Remediation:
    """Whether a driver is installed is not known (a paste): loading the module first says which case this is,
    and when the paste names no GPU, whether there is an NVIDIA GPU at all comes before that."""
    install = driver_install(facts.os, plan_driver(facts))
    if on_windows(facts):
        return install  # no modules to load by hand: the driver's installer is the answer
    unnamed = any(isinstance(g.name, Unavailable) for g in facts.nvidia_gpus)
    first = (
        (
            Command(
                ("lspci", "-nn", "-d", "10de:"),
                note="lists nothing: no NVIDIA GPU; an AMD one (`lspci -nn -d 1002:`) takes torch's ROCm build, "
                "none at all the CPU build",
            ),
        )
        if unnamed
        else ()
    )
    return Remediation(
        text=(
            "First see whether the machine has an NVIDIA GPU at all (`lspci -nn -d 10de:`). "
            if unnamed
            else ""
        )
        + "See why no driver answers: `sudo modprobe nvidia` loads an installed driver, and its error "
        "names the cause: 'Module nvidia not found' (not built for the running kernel, usually after a kernel "
        "update: reinstall the driver package, or `sudo dkms autoinstall`, then reboot), 'Key was rejected by "
        "service' (Secure Boot: enrol the module's key, see driver.secure_boot). In a container, start it with "
        f"the GPUs (`--gpus all`). If no driver is installed at all: {install.text}",
        commands=(
            *first,
            Command(("sudo", "modprobe", "nvidia"), note="its error names the cause"),
            *install.commands,
        ),
        requires_root=True,
        requires_reboot=install.requires_reboot,
        needs_network=install.needs_network,
        target=Target.SYSTEM,
    )
