"""nvidia-smi's "No devices were found" where the paste names a GPU that only NVIDIA's open kernel modules drive
(Blackwell): the proprietary module loads and takes no device, or a driver older than the GPU does the same, so
the driver's open flavour of a branch that knows the GPU is the answer, not a reading of the kernel log first
(blind set 32: compute-gpu-installation#50, an RTX PRO 6000 on a VM an install script set up)."""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.compat.torch_releases import version_key
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.driver_install import driver_install
from torch_gpu_doctor.fixes.driver_plan import plan_driver
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS

SIGNATURE = "no_visible_gpu_nvidia_smi_no_devices"
# a GPU passed through by hand (Qubes, Proxmox, Xen, vfio): its memory window or reset may be why, which the
# kernel log tells first (qubes-issues#10036, an RTX 5070 in a Qubes HVM); a cloud's GPU VM passes it whole
_PASSED_THROUGH = lazy(
    r"\bpass-?through\b|\bqubes\b|\bproxmox\b|\bxen\b|\bvfio\b|\bhvm\b|\besxi\b", re.IGNORECASE
)
OPEN_ONLY_FROM = (10, 0)  # Blackwell and newer: the open kernel modules only


def no_devices_on_an_open_only_gpu(verdict: Verdict, pasted: PastedText, facts: Facts) -> Verdict:
    hit = next((h for h in pasted.hits if h.signature.id == SIGNATURE and h.line in verdict.lines), None)
    if hit is None or _PASSED_THROUGH.search(pasted.paste.text, 0, MAX_CHARS) is not None:
        return verdict
    named = [
        g
        for g in facts.nvidia_gpus
        if isinstance(g.compute_capability, str) and version_key(g.compute_capability)[:2] >= OPEN_ONLY_FROM
    ]
    plan = plan_driver(facts) if named else None
    if plan is None or not plan.open_modules:
        return verdict
    name = named[0].name if isinstance(named[0].name, str) else "this GPU"
    summary = (
        f"nvidia-smi found no GPU (line {hit.line} of the paste): the {name} is driven only by NVIDIA's open "
        "kernel modules, from the R570 branch on; the proprietary module, or an older driver, takes no device."
    )
    fix = driver_install(facts.os, plan)
    fix = dataclasses.replace(
        fix,
        text="Install the open flavour of a current driver branch (Ubuntu: nvidia-driver-<branch>-open, 570 or "
        "newer; NVIDIA's .run installer: -m=kernel-open), which replaces the proprietary module, then reboot; "
        "`sudo dmesg | grep NVRM` shows the driver's refusal if it persists. " + fix.text,
    )
    finding = dataclasses.replace(verdict.finding, summary=summary, remediation=fix)
    return dataclasses.replace(verdict, finding=finding)
