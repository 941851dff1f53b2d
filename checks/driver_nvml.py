"""driver.nvml: does NVML, the driver's management library, answer, and what does each error mean here?"""

from __future__ import annotations

from torch_gpu_doctor.checks.support.driver import driver_evidence, is_wsl
from torch_gpu_doctor.checks.support.driver_state import loaded_module_version
from torch_gpu_doctor.facts.describe import fact
from torch_gpu_doctor.facts.driver import DriverFacts
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.nvml import NvmlFacts
from torch_gpu_doctor.fixes.gpu_state import (
    confined_process,
    device_access_lost,
    device_access_refused,
    driver_hung,
)
from torch_gpu_doctor.fixes.kernel_modules import gpu_lost, load_nvidia_module, reload_after_upgrade
from torch_gpu_doctor.fixes.wsl_driver import wsl_driver_unreached
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Reason, Unavailable

# "TypeError: ...": a Python exception of the binding, which host/nvml.py reports as Unknown too
_PYTHON_EXCEPTION = lazy(r"[A-Z]\w*(?:Error|Exception|Warning): ")
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
    "Unknown": (
        'NVML cannot reach the GPUs (NVMLError_Unknown: "Unknown Error").',
        "NVML found the driver but could not talk to the GPU device files. Inside a container that worked "
        "before, this is the loss of /dev/nvidia* access after the host ran `systemctl daemon-reload`; on a "
        "host it follows a GPU or driver fault.",
    ),
    "Timeout": (
        "NVML timed out talking to the driver.",
        "The driver did not answer in time; it may be wedged.",
    ),
}


# Why a library/module mismatch usually happens: triage drops it where the paste says otherwise (a reboot that
# did not help, a container's own libraries)
MISSED_REBOOT = (
    " This happens when the driver packages are upgraded (often by unattended upgrades) and the machine was not"
    " rebooted."
)


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
    if facts.jetson_board is not None and (isinstance(nvml, Unavailable) or not nvml.devices):
        # JetPack 4 and 5 have no NVML; JetPack 6's lists the GPU as "Orin (nvgpu)" with little else
        return Finding(
            cid,
            Status.SKIP,
            "A Jetson: NVML does not cover its integrated GPU (torch reaches it through L4T's CUDA; see "
            "platform.jetson).",
        )
    if isinstance(nvml, Unavailable):
        if nvml.reason is Reason.TIMED_OUT and facts.nvidia_gpus:  # a wedged driver is a finding, not a gap
            return Finding(
                cid,
                Status.FAIL,
                f"NVML did not answer: the NVIDIA driver seems hung ({nvml}).",
                details=_NVML_ERRORS["Timeout"][1],
                remediation=driver_hung(),
            )
        return Finding(cid, Status.UNKNOWN, f"NVML could not be queried: {nvml}.")
    error = nvml.init_error
    evidence = [fact("NVML init", f"NVMLError_{error.name} ({error.code})" if error else "ok", "nvmlInit")]
    if not isinstance(driver, Unavailable):
        evidence += driver_evidence(driver)
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
        kernel = loaded_module_version(driver)
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
            f"different driver versions, so neither NVML nor CUDA can start.{versions}{MISSED_REBOOT}",
            evidence=tuple(evidence),
            remediation=reload_after_upgrade(),
        )
    if error.name == "LibraryNotFound":
        loaded = not isinstance(driver, Unavailable) and isinstance(driver.version, str)
        if not loaded:
            return Finding(
                cid,
                Status.FAIL,
                "NVML is missing because no NVIDIA driver is installed.",
                evidence=tuple(evidence),
                caused_by=("driver.installed",),
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
    if error.name == "DriverNotLoaded" and is_wsl(facts):
        # WSL2 has no NVIDIA kernel module to load: this libnvidia-ml is a Linux driver's, not Windows'.
        return Finding(
            cid,
            Status.FAIL,
            "NVML answered DriverNotLoaded inside WSL: the Windows driver's libraries in /usr/lib/wsl/lib were not "
            "reached, most often because a Linux NVIDIA driver's library was loaded in their place.",
            details="WSL2 has no NVIDIA kernel module; modprobe cannot help. A Linux NVIDIA driver package installed "
            "in the distribution shadows /usr/lib/wsl/lib; a distribution running as WSL 1, or (WSL 1.0 to 2.0) an "
            "elevated and a normal WSL session open at once, fail the same way (microsoft/WSL#9099).",
            evidence=tuple(evidence),
            remediation=wsl_driver_unreached(),
            caused_by=("platform.wsl_linux_driver",),
        )
    summary, explanation = _NVML_ERRORS.get(
        error.name, (f"NVML failed to start: NVMLError_{error.name} ({error.message}).", "")
    )
    remediation = _REMEDIES[error.name]() if error.name in _REMEDIES else None
    # NVML's own Unknown Error, not a Python exception the binding raised (host/nvml.py maps those to Unknown);
    # an exception that quotes nvidia-smi's own words is NVML's (GPUtil parsing "Failed to initialize NVML:
    # Unknown Error" as a number, blind set 30)
    quoted = "failed to initialize nvml: unknown error" in error.message.lower()
    if error.name == "Unknown" and (quoted or not _PYTHON_EXCEPTION.match(error.message)):
        container = facts.container
        # no device cgroup and no kernel log of the GPU in WSL: WSL's libraries or Windows' driver
        if is_wsl(facts):
            said = error.message if error.message.lower().startswith("failed to initialize nvml") else ""
            summary = "NVML inside WSL did not reach the Windows driver" + (f" ('{said}')." if said else ".")
            explanation = (
                "WSL2 has no NVIDIA kernel module and no device files of its own: NVML reaches the GPU through the "
                "Windows driver's libraries in /usr/lib/wsl/lib. A Linux NVIDIA driver package installed in the "
                "distribution puts its own nvidia-smi and libnvidia-ml in their place, and an out-of-date WSL or "
                "Windows driver fails the same way."
            )
            remediation = wsl_driver_unreached()
        else:  # a container first, unless this is known to be a machine of its own
            remediation = device_access_lost(
                on_host=not isinstance(container, Unavailable) and container.runtime is None
            )
    if error.name == "NoPermission" and _refused_reading(
        driver
    ):  # world-readable files refused too: confined
        remediation = confined_process()
    return Finding(
        cid, Status.FAIL, summary, details=explanation, evidence=tuple(evidence), remediation=remediation
    )


def _refused_reading(driver: DriverFacts | Unavailable) -> bool:
    """The driver's version files (readable by every user) were refused: the process itself is confined."""
    return (
        not isinstance(driver, Unavailable)
        and isinstance(driver.version, Unavailable)
        and (driver.version.reason is Reason.PERMISSION_DENIED)
    )


def _power() -> Remediation:
    return Remediation(
        text="Plug in every PCIe power connector of the GPU (no adapters from fewer cables), check that the power "
        "supply is large enough for the GPU's board power, then reboot.",
        requires_reboot=True,
        target=Target.SYSTEM,
    )


def _os_blocked() -> Remediation:
    return Remediation(
        text="Give this process the NVIDIA devices: start the container with `--gpus all` (the NVIDIA Container "
        "Toolkit adds /dev/nvidia* to its device cgroup), or allow /dev/nvidia* in the confinement that runs it.",
        target=Target.SYSTEM,
    )


_REMEDIES = {
    "DriverNotLoaded": load_nvidia_module,
    "GpuIsLost": gpu_lost,
    "NoPermission": device_access_refused,
    "Timeout": driver_hung,
    "InsufficientPower": _power,
    "OperatingSystem": _os_blocked,
}

LOST_ERRORS = ("NVMLError_GpuIsLost", "NVMLError_ResetRequired", "NVMLError_Unknown")


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
            remediation=gpu_lost(),
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
    kernel = loaded_module_version(driver)
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
