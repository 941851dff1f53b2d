"""gpu.present: the GPUs on the PCI bus, and whether the NVIDIA driver exposes each of them."""

from __future__ import annotations

from torch_gpu_doctor.checks.support.jetson import board_line
from torch_gpu_doctor.facts.describe import fact, gpu_inventory, gpu_label
from torch_gpu_doctor.facts.gpus import Gpu
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.gpu_state import gpu_not_initialised
from torch_gpu_doctor.model import Command, Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Unavailable

ID = "gpu.present"
VM_DRIVERS = ("vfio-pci", "pci-stub")


def _evidence(facts: Facts) -> tuple[Evidence, ...]:
    items = [
        Evidence(
            f"GPU {gpu_label(g)}",
            f"kernel driver {g.kernel_driver or 'none'}; NVML index {g.nvml_index if g.nvml_index is not None else '-'}",
            "sysfs /sys/bus/pci/devices" if g.on_pci_bus else "NVML",
        )
        for g in facts.gpus
    ]
    if isinstance(facts.pci, Unavailable):
        items.append(fact("PCI devices", facts.pci, "/sys/bus/pci/devices"))
    if not isinstance(facts.nvml, Unavailable):
        items.append(fact("NVML device count", facts.nvml.device_count, "nvmlDeviceGetCount"))
    return tuple(items)


def _why_hidden(gpu: Gpu, facts: Facts) -> str:
    if gpu.excluded:
        return 'the NVIDIA driver excluded it ("GPU Excluded: Yes": NVreg_ExcludedGpus, or it failed to initialise)'
    driver = gpu.kernel_driver
    if driver == "nouveau":
        return "the open-source nouveau driver has claimed it (see driver.nouveau)"
    if driver in VM_DRIVERS:
        return f"it is bound to {driver}, i.e. reserved for a virtual machine"
    if driver is None:
        return "no kernel driver is bound to it (see driver.installed)"
    if not isinstance(facts.nvml, Unavailable) and facts.nvml.init_error is not None:
        return f"NVML does not answer (NVMLError_{facts.nvml.init_error.name}, see driver.nvml)"
    return (
        "the NVIDIA driver is bound but NVML does not list it (a GPU that fell off the bus looks like this)"
    )


@check(ID, "NVIDIA GPUs are present and visible to the driver", "gpu", required=True)
def gpu_present(facts: Facts) -> Finding:
    """
    ## What it checks
    Lists the display-class NVIDIA and AMD devices on the PCI bus (sysfs) and the GPUs the NVIDIA driver
    exposes through NVML, joins them by PCI address, and compares the two.

    ## Why it matters
    PyTorch can only use a GPU that the NVIDIA driver has claimed and exposes. A GPU that is on the bus but
    not visible to the driver (nouveau bound to it, reserved for a VM, excluded after an error, no driver at
    all) is invisible to `torch.cuda`, and the failure you see later ("no CUDA GPUs are available") does not
    say why. No GPU at all usually means a cloud instance without a GPU, a container started without
    `--gpus`, or an eGPU that is not connected.

    ## How to fix
    Follow the reason given for each hidden GPU: install or load the NVIDIA driver (driver.installed), stop
    nouveau (driver.nouveau), release the GPU from vfio-pci, or reboot after a GPU fell off the bus. With no
    GPU at all, pick a GPU instance type, pass GPUs to the container (`--gpus all`), or connect the eGPU.
    """
    evidence = _evidence(facts)
    nvidia = facts.nvidia_gpus
    amd = [g for g in facts.gpus if g.vendor == "amd"]
    nvml_silent = isinstance(facts.nvml, Unavailable) or facts.nvml.init_error is not None
    wsl = not isinstance(facts.os, Unavailable) and facts.os.is_wsl
    if not nvidia:
        jetson = facts.jetson_board
        if jetson is not None or (not isinstance(facts.driver, Unavailable) and facts.driver.is_jetson):
            board = f" of {board_line(jetson, mid=True)}" if jetson is not None else " of a Jetson (L4T)"
            return Finding(
                ID,
                Status.PASS,
                f"The integrated GPU{board}: not a PCI device, and NVML does not cover it.",
                details="A Jetson's GPU is reached through its L4T driver (nvgpu), not the desktop driver; "
                "see platform.jetson for the torch it needs.",
                evidence=evidence,
            )
        if isinstance(facts.pci, Unavailable) and nvml_silent and not wsl:
            return Finding(
                ID,
                Status.UNKNOWN,
                f"Could not list the PCI devices ({facts.pci}), and NVML did not answer.",
                evidence=evidence,
            )
        if amd:  # an AMD machine: the amd.* checks judge it; no NVIDIA GPU is not a problem here
            return Finding(
                ID,
                Status.SKIP,
                f"No NVIDIA GPU here; the AMD {gpu_inventory(tuple(amd))} is judged by the amd.* checks.",
                details="For AMD GPUs PyTorch needs a ROCm build.",
                evidence=evidence,
            )
        details = (
            "This is WSL2: the GPU comes from the Windows NVIDIA driver through /dev/dxg"
            + (
                ""
                if not isinstance(facts.os, Unavailable) and facts.os.has_dxg
                else ", which is missing here"
            )
            + ". Install or update the NVIDIA driver on Windows and run `wsl --update`; a Linux NVIDIA driver "
            "installed inside WSL hides it (see platform.wsl_linux_driver)."
            if wsl
            else "The PCI bus lists no NVIDIA display device and NVML sees none. On a cloud VM choose a GPU "
            "instance type; in a container pass the GPUs (`docker run --gpus all`); check that an eGPU is "
            "connected and authorized. PyTorch will run on the CPU only."
        )
        return Finding(
            ID,
            Status.FAIL,
            "No NVIDIA GPU was found on this machine.",
            details=details,
            evidence=evidence,
            remediation=_wsl_driver() if wsl else _no_gpu(),
        )

    hidden = [g for g in nvidia if g.nvml_index is None]
    inventory = gpu_inventory(nvidia)
    plural = "s" if len(nvidia) > 1 else ""
    if not hidden:
        return Finding(ID, Status.PASS, f"{len(nvidia)} NVIDIA GPU{plural}: {inventory}.", evidence=evidence)
    usable = [g for g in nvidia if g.nvml_index is not None]
    if isinstance(facts.nvml, Unavailable):
        return Finding(
            ID,
            Status.UNKNOWN,
            f"{len(nvidia)} NVIDIA GPU{plural} on the PCI bus, but NVML could not be asked about them ({facts.nvml}).",
            evidence=evidence,
        )
    container = None if isinstance(facts.os, Unavailable) else facts.os.container
    if container and usable and all(g.kernel_driver == "nvidia" for g in hidden):
        # sysfs is not namespaced: a container sees every GPU of the host but only those passed in work.
        return Finding(
            ID,
            Status.PASS,
            f"{len(usable)} of the host's {len(nvidia)} NVIDIA GPUs {'was' if len(usable) == 1 else 'were'} "
            f"passed to this {container} container: {gpu_inventory(tuple(usable))}.",
            details="The others belong to the host; pass them with `--gpus all` (or more nvidia.com/gpu) if needed.",
            evidence=evidence,
        )
    reasons = "\n".join(f"- {gpu_label(g)}: {_why_hidden(g, facts)}" for g in hidden)
    summary = (
        f"{len(hidden)} of {len(nvidia)} NVIDIA GPU{plural} on the PCI bus "
        f"{'is' if len(hidden) == 1 else 'are'} not usable through the NVIDIA driver"
        + (f" ({len(usable)} usable)." if usable else ".")
    )
    details = f"PyTorch can only use GPUs that the NVIDIA driver exposes and NVML can reach.\n{reasons}"
    if all(g.kernel_driver in VM_DRIVERS for g in hidden):
        # Reserved for virtual machines on purpose: worth knowing, not a fault of this machine.
        return Finding(
            ID, Status.WARN, summary, details=details, evidence=evidence, remediation=_release_vfio()
        )
    # A GPU the loaded driver holds but could not bring up: only the kernel log says why. The other reasons
    # (no driver, nouveau, NVML errors) are the findings of their own checks (checks/support/causes.json).
    stuck = any(g.excluded or (g.kernel_driver == "nvidia" and not nvml_silent) for g in hidden)
    return Finding(
        ID,
        Status.FAIL,
        summary,
        details=details,
        evidence=evidence,
        remediation=gpu_not_initialised() if stuck else None,
    )


def _no_gpu() -> Remediation:
    return Remediation(
        text="Check whether the machine has an NVIDIA GPU at all: lspci lists NVIDIA's devices (vendor 10de). None "
        "listed: on a cloud VM choose a GPU instance type, in a container pass the GPUs (`docker run --gpus all`), "
        "connect and authorize an eGPU, or seat the card and its power cables. Otherwise PyTorch runs on the CPU.",
        commands=(Command(("lspci", "-nn", "-d", "10de:")),),
        target=Target.SYSTEM,
    )


def _wsl_driver() -> Remediation:
    return Remediation(
        text="Install or update the NVIDIA driver on Windows (the GeForce/Studio or data-center driver; never a "
        "Linux driver inside WSL), then update WSL and restart it.",
        commands=(
            Command(("wsl", "--update"), note="in Windows PowerShell", runs_here=False),
            Command(("wsl", "--shutdown"), note="in Windows PowerShell: restarts WSL", runs_here=False),
        ),
        needs_network=True,
        target=Target.SYSTEM,
    )


def _release_vfio() -> Remediation:
    return Remediation(
        text="Nothing to do if the GPU is meant for a virtual machine. To use it here instead, remove its id from "
        "vfio-pci (the `vfio-pci.ids=` kernel parameter or an `options vfio-pci ids=` line in /etc/modprobe.d), "
        "rebuild the initramfs and reboot.",
        requires_root=True,
        requires_reboot=True,
        target=Target.SYSTEM,
    )
