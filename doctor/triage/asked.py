"""Questions a paste asks that the data answers, where it shows no failure: which torch build runs on the CUDA
the person says they have."""

from __future__ import annotations

import dataclasses

from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.torch_wheel import fix_for_torch
from torch_gpu_doctor.model import Command, Finding, Remediation, Status
from torch_gpu_doctor.triage.outcome import Kind, Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.paste_facts import WORDS, pasted_driver
from torch_gpu_doctor.unavailable import Reason, Unavailable

DRIVER_COMPAT = "torch.driver_compat"
SAID_CUDA = "the CUDA the person says the machine has"
NO_BUILD_NEEDED = (
    "No torch build for CUDA"  # how the answer starts: the data's answer to words, not a message
)


def build_for_said_cuda(
    verdicts: tuple[Verdict, ...], pasted: PastedText, facts: Facts, titles: dict[str, str]
) -> tuple[Verdict, ...]:
    """'I have CUDA 11.4; PyTorch has no build for it, could you build one?' (pytorch/pytorch#75992,
    pyg-team/pytorch_geometric#5464, the K80 thread of blind set 19): no build per CUDA release is needed. A pip
    or conda torch brings its own CUDA runtime; only the driver must support the wheel's CUDA, and within a CUDA
    major a newer build runs on an older minor's driver. Answered with the build the data picks for a driver of
    that CUDA, where the paste shows no failure, no report and no driver of its own."""
    prose = pasted.prose
    if (
        prose.cuda is None
        or prose.asks_build is None
        or pasted.collect_env is not None
        or pasted.hits
        or any(v.kind == Kind.PROBLEM for v in verdicts)
    ):
        return verdicts
    driver = facts.driver
    if not isinstance(driver, Unavailable) and isinstance(driver.cuda_version, str):
        return verdicts  # the paste's own nvidia-smi or warning says the driver's CUDA: the checks judged it
    said = prose.cuda.value
    unsaid = Unavailable(Reason.NOT_FOUND, "not in the paste")
    assumed = dataclasses.replace(facts, driver=pasted_driver(unsaid, said, SAID_CUDA, WORDS))
    fix = fix_for_torch(assumed)
    check = Remediation(
        text="To be sure it is the driver's CUDA, not a toolkit's: nvidia-smi's 'CUDA Version' is the newest CUDA "
        "the driver runs, and the build's CUDA must not be newer (or only newer within the same major).",
        commands=(Command(("nvidia-smi",), note="'CUDA Version' in its header"),),
        target=fix.target,
    )
    finding = Finding(
        DRIVER_COMPAT,
        Status.WARN,
        f"{NO_BUILD_NEEDED} {said} is needed: a pip or conda torch brings its own CUDA runtime and runs "
        f"wherever the driver supports that CUDA, so a machine with CUDA {said} (line {prose.cuda.line}) runs "
        "the builds for CUDA up to it, and within the same major newer ones too.",
        details="The CUDA toolkit installed on the machine (nvcc) is not used by a torch wheel; it matters only for "
        "compiling extensions. " + check.text,
        remediation=dataclasses.replace(fix, commands=fix.commands + check.commands),
    )
    lines = tuple(sorted({prose.cuda.line, prose.asks_build}))
    added = Verdict(finding, titles.get(DRIVER_COMPAT, DRIVER_COMPAT), Kind.PROBLEM, (), None, lines)
    return (added, *verdicts)
