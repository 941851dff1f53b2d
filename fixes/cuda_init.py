"""What to do about a CUDA initialisation error, by its class in the signature catalogue.

torch.cuda_init shows the raw message and what it means; this is the step that answers it. The class comes
from checks/support/error_signatures.json (`class`); a class without a builder here gets none, and the check
points at the one that has it.
"""

from __future__ import annotations

from torch_gpu_doctor.model import Command, Remediation, Target

FABRIC_MANAGER = "nvidia-fabricmanager"


def init_error_fix(signature_id: str, cls: str) -> Remediation | None:
    """The next step for a CUDA init error (its signature and class), or None when another check carries it."""
    if cls == "unknown_error":
        return Remediation(
            text="The driver's unified-memory module lost its state, most often after suspend and resume. Reload "
            "it with nothing using the GPU (close the programs that do), or reboot.",
            commands=(
                Command(("sudo", "rmmod", "nvidia_uvm"), note="fails while a program still uses the GPU"),
                Command(("sudo", "modprobe", "nvidia_uvm")),
            ),
            requires_root=True,
            target=Target.SYSTEM,
        )
    if cls == "forward_compat":
        return _forward_compat_fix(signature_id)
    if cls == "no_visible_gpu":
        return Remediation(
            text="CUDA sees no GPU although torch is a CUDA build: CUDA_VISIBLE_DEVICES is empty or names GPUs that "
            "do not exist, the container was started without `--gpus all` (or the NVIDIA runtime), or a Slurm or "
            "Kubernetes job got no GPU. See what the process sees:",
            commands=(Command(("nvidia-smi", "-L")),),
            target=Target.SYSTEM,
        )
    if cls == "wsl":
        return Remediation(
            text="In WSL2 this comes from the Windows driver: update the NVIDIA driver on Windows and WSL itself "
            "(`wsl --update`, then `wsl --shutdown`, from a Windows terminal). With several GPUs, limit CUDA to "
            "the ones you use with CUDA_VISIBLE_DEVICES.",
            needs_network=True,
            target=Target.SYSTEM,
        )
    return None


def _forward_compat_fix(signature_id: str) -> Remediation:
    """802, 803 and 804 share a class (the driver and what runs on it disagree) but not a fix."""
    if "803" in signature_id:
        return Remediation(
            text="Error 803: the driver's user-space libraries and its kernel module are different versions, "
            "usually after a driver update without a reboot. Reboot (or stop everything that uses the GPU and "
            "reload the nvidia modules).",
            commands=(Command(("systemctl", "reboot"), note="save your work first"),),
            requires_root=True,
            requires_reboot=True,
            target=Target.SYSTEM,
        )
    if "804" in signature_id:
        return Remediation(
            text="Error 804: the forward-compatibility libraries of a newer CUDA (cuda-compat, a folder named "
            ".../compat) are loaded on a GPU that does not support them (GeForce and most workstation cards). "
            "Remove that folder from LD_LIBRARY_PATH or /etc/ld.so.conf.d, or update the driver instead. See "
            "which libcuda.so.1 is found:",
            commands=(Command(("ldconfig", "-p"), note="a libcuda.so.1 under .../compat is the culprit"),),
            target=Target.SYSTEM,
        )
    return Remediation(
        text="Error 802 (system not yet initialized) on an NVSwitch machine (HGX, DGX, some cloud VMs): "
        "nvidia-fabricmanager must run, at exactly the driver's version. Start it, and install the "
        "fabric-manager package of the driver's version if it is missing or differs.",
        commands=(
            Command(("sudo", "systemctl", "enable", "--now", FABRIC_MANAGER)),
            Command(("systemctl", "status", FABRIC_MANAGER), note="its version and why it stopped"),
        ),
        requires_root=True,
        target=Target.SYSTEM,
    )
