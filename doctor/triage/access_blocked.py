"""NVML's "GPU access blocked by the operating system" (NVML_ERROR_OPERATING_SYSTEM), answered for where the paste
shows it happened. The catalogue's own answer is generic; each place has its own cause:

- in WSL itself: a GPU in Windows' TCC driver model, which WSL's GPU paravirtualisation cannot reach (data-centre
  boards; microsoft/WSL#11865, #14339); a GeForce card cannot be in TCC, so there it is WSL and the driver;
- in a container (WSL's Docker, or a Linux host's): the container toolkit set to leave the device cgroups alone
  (`no-cgroups = true`, the rootless setup) where the engine is not rootless (microsoft/WSL#9938 and #9962,
  NVIDIA/nvidia-container-toolkit#85: false fixed it);
- in a Hyper-V VM given a GPU partition, on a stock distribution kernel: no dxgkrnl driver, which WSL's kernel has
  (blind set 29: dxgkrnl_ubuntu#1, kernel 5.15.0-41-generic beside lspci's "Microsoft Corporation Device 008e")."""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.fixes.gpu_access import cgroups_fix, dxgkrnl_fix, tcc_fix, wsl_update_fix
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Finding, Remediation
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS, line_number

BLOCKED = "wsl_gpu_access_blocked"
# a Hyper-V guest with a GPU partition: the paravirtual adapter in lspci with a GPU-PV device id ("3D controller:
# Microsoft Corporation Device 008e"; WSL's own lspci shows "Basic Render Driver"), or words naming Hyper-V's GPU
# partitioning
_GPU_PV_GUEST = lazy(
    r"3D controller:[ \t]*Microsoft Corporation Device\b|\bHyper-?V\b|\bGPU-?PV\b|\bGPU[ \t]+partition",
    re.IGNORECASE,
)
# a kernel release of a distribution's own flavour: a VM's kernel, never WSL's (…-microsoft-standard-WSL2)
_DISTRIBUTION_KERNEL = lazy(r"(?<![\w.])\d+\.\d+\.\d+-\d+-(?:generic|lowlatency|amd64|cloud-amd64)\b")
# a container started, or the failure put inside one
_CONTAINER = lazy(
    r"\b(?:docker|podman|nerdctl)[ \t]+(?:container[ \t]+)?run\b|\b(?:in|inside)[ \t]+(?:the|a|my)[ \t]+container\b",
    re.IGNORECASE,
)
_GEFORCE = lazy(r"\bGeForce\b|\bRTX[ \t]*[2-5]0[5-9]0\b|\bGTX[ \t]*1[0-9]{3}\b", re.IGNORECASE)


def blocked_line(pasted: PastedText) -> int | None:
    return next((h.line for h in pasted.hits if h.signature.id == BLOCKED), None)


def in_a_vm_guest(pasted: PastedText) -> int | None:
    """The line that shows a Hyper-V guest with a GPU partition: a distribution's own kernel (never WSL's) beside
    the paravirtual adapter or words for GPU partitioning; None elsewhere."""
    text = pasted.paste.text[:MAX_CHARS]
    if "microsoft-standard" in text.lower() or _DISTRIBUTION_KERNEL.search(text) is None:
        return None
    guest = _GPU_PV_GUEST.search(text)
    return line_number(text, guest) if guest is not None else None


def where_blocked(verdict: Verdict, pasted: PastedText, wsl: bool) -> Verdict:
    """The blocked access's verdict with the answer for where it happened (see the module's list)."""
    line = blocked_line(pasted)
    if line is None or line not in verdict.lines:
        return verdict
    text = pasted.paste.text[:MAX_CHARS]
    guest = in_a_vm_guest(pasted)
    if guest is not None:
        summary = (
            f"This Linux is a Hyper-V VM with a GPU partition (line {guest} of the paste), not WSL: its kernel has "
            "no dxgkrnl driver, so Windows' paravirtual GPU is blocked ('GPU access blocked by the operating "
            "system')."
        )
        return _answered(verdict, summary, dxgkrnl_fix())
    if _CONTAINER.search(text) is not None:
        where = "WSL's" if wsl else "this host's"
        summary = (
            f"The container gets no access to the GPU's devices ('GPU access blocked by the operating system'): "
            f"{where} NVIDIA container toolkit is most likely set to leave the device cgroups alone (no-cgroups)."
        )
        return _answered(verdict, summary, cgroups_fix())
    if wsl and _GEFORCE.search(text) is None:
        summary = (
            "WSL gets no access to the GPU ('GPU access blocked by the operating system'): most likely the GPU runs "
            "in Windows' TCC driver model, which WSL cannot reach."
        )
        return _answered(verdict, summary, tcc_fix())
    if wsl:
        summary = (
            "WSL gets no access to the GeForce GPU ('GPU access blocked by the operating system'): a GeForce card is "
            "never in TCC, so it is WSL's GPU support or the Windows driver."
        )
        return _answered(verdict, summary, wsl_update_fix())
    return verdict


def _answered(verdict: Verdict, summary: str, fix: Remediation) -> Verdict:
    finding: Finding = dataclasses.replace(verdict.finding, summary=summary, remediation=fix)
    return dataclasses.replace(verdict, finding=finding, find_out=None)
