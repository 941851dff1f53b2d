"""NVML's "GPU access blocked by the operating system" in a Hyper-V VM given a GPU partition, not in WSL: the
catalogue's answer is WSL's (a GPU in Windows' TCC driver model), but a VM's own Linux kernel needs Microsoft's
dxgkrnl driver, which WSL's kernel has and stock distribution kernels lack (blind set 29: dxgkrnl_ubuntu#1, an
Ubuntu 20.04 VM on kernel 5.15.0-41-generic beside `lspci`'s "Microsoft Corporation Device 008e")."""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Remediation, Target
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS, line_number

BLOCKED = "wsl_gpu_access_blocked"
# a Hyper-V guest with a GPU partition: the paravirtual adapter in lspci ("3D controller: Microsoft Corporation
# Device 008e"), or words that name Hyper-V's GPU partitioning or a VM's guest system
_GPU_PV_GUEST = lazy(
    r"3D controller:[ \t]*Microsoft Corporation|\bHyper-?V\b|\bGPU-?PV\b|\bGPU[ \t]+partition|\bGuest[ \t]+OS\b"
    r"|\bVM[ \t]+OS\b",
    re.IGNORECASE,
)
# a kernel release of a distribution's own flavour: a VM's kernel, never WSL's (…-microsoft-standard-WSL2)
_DISTRIBUTION_KERNEL = lazy(r"(?<![\w.])\d+\.\d+\.\d+-\d+-(?:generic|lowlatency|amd64|cloud-amd64)\b")


def in_a_vm_guest(pasted: PastedText) -> int | None:
    """The line that shows a Hyper-V guest with a GPU partition, where the blocked access is shown and no WSL
    kernel is; None elsewhere."""
    text = pasted.paste.text[:MAX_CHARS]
    if not any(h.signature.id == BLOCKED for h in pasted.hits) or "microsoft-standard" in text.lower():
        return None
    guest = _GPU_PV_GUEST.search(text)
    if guest is None or (
        _DISTRIBUTION_KERNEL.search(text) is None and "microsoft corporation" not in text.lower()
    ):
        return None
    return line_number(text, guest)


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


def blocked_in_a_vm(verdict: Verdict, pasted: PastedText, line: int) -> Verdict:
    """The blocked access's verdict, with the VM's answer in place of WSL's."""
    finding = verdict.finding
    hit_lines = {h.line for h in pasted.hits if h.signature.id == BLOCKED}
    if not hit_lines.intersection(verdict.lines):
        return verdict
    summary = (
        f"This Linux is a Hyper-V VM with a GPU partition (line {line} of the paste), not WSL: its kernel has no "
        "dxgkrnl driver, so Windows' paravirtual GPU is blocked ('GPU access blocked by the operating system')."
    )
    return dataclasses.replace(
        verdict,
        finding=dataclasses.replace(finding, summary=summary, remediation=dxgkrnl_fix()),
        find_out=None,  # the fix's own command is the check
    )
