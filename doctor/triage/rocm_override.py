"""HSA_OVERRIDE_GFX_VERSION said in the paste, where the fix is a build with the GPU's own kernels: with the
override still set, ROCm keeps asking that build for the other target's code objects and fails the same way
(blind set 26: gfx1150 with the override at 11.5.1 and then 11.0.0, ROCm/rocm-libraries#37)."""

from __future__ import annotations

import dataclasses

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command
from torch_gpu_doctor.triage.outcome import Verdict, installs_torch
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS, line_number

GFX_TARGET = "amd.gfx_target"
_OVERRIDE = lazy(r"\bHSA_OVERRIDE_GFX_VERSION\b")


def override_left_set(verdict: Verdict, pasted: PastedText) -> Verdict:
    """A ROCm build with the GPU's own target installed, beside an override the paste sets: unset it too."""
    fix = verdict.finding.remediation
    if verdict.finding.check_id != GFX_TARGET or fix is None or not installs_torch(fix):
        return verdict
    said = _OVERRIDE.search(pasted.paste.text, 0, MAX_CHARS)
    if said is None:
        return verdict
    line = line_number(pasted.paste.text, said)
    unset = Command(
        ("unset", "HSA_OVERRIDE_GFX_VERSION"),
        note="in the shell (or the service's environment) that starts the program",
        runs_here=False,
    )
    text = (
        f"{fix.text} Then remove HSA_OVERRIDE_GFX_VERSION (line {line} of the paste sets it): a build with this "
        "GPU's own kernels needs none, and with it set ROCm keeps asking for another target's code."
    )
    commands = (*fix.commands[:1], unset, *fix.commands[1:])
    finding = dataclasses.replace(
        verdict.finding, remediation=dataclasses.replace(fix, text=text, commands=commands)
    )
    return dataclasses.replace(verdict, finding=finding, lines=tuple(sorted({*verdict.lines, line})))
