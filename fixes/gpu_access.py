"""Fixes for a Linux that the operating system gives no access to the GPU (NVML's "GPU access blocked by the
operating system"): WSL's TCC driver model, WSL itself, a container toolkit's cgroups setting, a Hyper-V guest's
missing dxgkrnl. Shown for the machine the error came from; never run here."""

from __future__ import annotations

from torch_gpu_doctor.fixes.container_gpus import TOOLKIT_CONFIG
from torch_gpu_doctor.model import Command, Remediation, Target


def tcc_fix(index: int = 0) -> Remediation:
    """WSL reaches a GPU only in the WDDM (or MCDM) driver model: GPU `index` switched from TCC on Windows."""
    return Remediation(
        text="From an elevated Windows prompt, switch the GPU to the WDDM driver model (MCDM where the board supports "
        "it, `-dm 2`), reboot Windows, then `wsl --shutdown` and start WSL again; `nvidia-smi` on Windows shows the "
        "model (TCC, WDDM or MCDM) beside the GPU's name. Do not install a Linux NVIDIA driver inside WSL.",
        commands=(
            Command(
                ("nvidia-smi", "-i", str(index), "-dm", "0"),
                note=f"Windows, as administrator: GPU {index} to WDDM; then reboot",
            ),
        ),
        requires_root=True,
        target=Target.SYSTEM,
    )


def wsl_update_fix() -> Remediation:
    return Remediation(
        text="Update the NVIDIA driver on Windows and WSL itself, then restart WSL (`wsl --shutdown` from Windows); "
        "inside WSL use only the libraries in /usr/lib/wsl/lib, never a Linux NVIDIA driver package.",
        commands=(Command(("wsl.exe", "--update"), note="from Windows", runs_here=False),),
        needs_network=True,
        target=Target.SYSTEM,
    )


def cgroups_fix() -> Remediation:
    return Remediation(
        text=f"In {TOOLKIT_CONFIG}, `no-cgroups = true` is the setting for rootless engines: with a rootful Docker "
        "the container then never gets the GPUs' device cgroup. Set it to false, restart Docker and run the "
        "container again (a rootless engine keeps true and gets the GPUs through CDI: `--device nvidia.com/gpu=all`).",
        commands=(
            Command(
                (
                    "sudo",
                    "nvidia-ctk",
                    "config",
                    "--set",
                    "nvidia-container-cli.no-cgroups=false",
                    "--in-place",
                ),
                note=f"where Docker runs (in WSL: inside WSL); it edits {TOOLKIT_CONFIG}",
                runs_here=False,
            ),
            Command(("sudo", "systemctl", "restart", "docker"), runs_here=False),
        ),
        requires_root=True,
        target=Target.SYSTEM,
    )


def dxgkrnl_fix() -> Remediation:
    return Remediation(
        text="A Hyper-V VM reaches a GPU partition through Microsoft's dxgkrnl driver (/dev/dxg) and the Windows "
        "driver's libraries copied from the host (C:\\Windows\\System32\\DriverStore\\FileRepository\\nv*) into "
        "/usr/lib/wsl/lib; WSL's kernel has dxgkrnl, stock distribution kernels do not. Build and install the "
        "dxgkrnl module for this kernel (the community DKMS packages and kernels that GPU-PV guides use), reboot "
        "into it, then run nvidia-smi again. Do not install a Linux NVIDIA driver in the VM.",
        commands=(Command(("ls", "-l", "/dev/dxg"), note="in the VM: it must exist once dxgkrnl is loaded"),),
        target=Target.SYSTEM,
    )
