"""A kernel fault from a server started with an optional kernel feature (compat/kernel_features.json): the same
command without that feature comes first, before CUDA_LAUNCH_BLOCKING=1, which reruns the fault with the feature
still on (blind set 24: vLLM 0.4.3 with GPTQ, FLASH_ATTN and --enable-prefix-caching)."""

from __future__ import annotations

import dataclasses

from torch_gpu_doctor.compat.kernel_features import features_in
from torch_gpu_doctor.model import Command
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS, line_number

ILLEGAL_ADDRESS = "illegal_address_memory_access"


def without_the_feature(verdict: Verdict, pasted: PastedText) -> Verdict:
    """An illegal memory access beside a server option that turns on its own kernels: run without it first."""
    fix = verdict.finding.remediation
    if fix is None or not any(
        h.signature.id == ILLEGAL_ADDRESS and h.line in verdict.lines for h in pasted.hits
    ):
        return verdict
    text = pasted.paste.text[:MAX_CHARS]
    found = features_in(text)
    if not found:
        return verdict
    named = "; ".join(f"{f.feature} (line {line_number(text, said)}): {f.without}" for f, said in found)
    said = (
        "The server runs with options that switch on kernels of their own, the usual place of such a fault: run the "
        f"same command without them first ({named}); if it then works, that feature's bug is the cause: upgrade the "
        "server, or keep it off. "
    )
    rerun = Command(
        ("SERVER_COMMAND",),
        note="the same command without " + ", ".join(f.feature for f, _ in found),
        runs_here=False,
    )
    remediation = dataclasses.replace(fix, text=said + fix.text, commands=(rerun, *fix.commands))
    return dataclasses.replace(verdict, finding=dataclasses.replace(verdict.finding, remediation=remediation))
