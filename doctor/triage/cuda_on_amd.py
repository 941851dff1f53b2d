"""A program with its own CUDA runtime (CTranslate2 behind faster-whisper, and the like) failing on a machine whose
only GPU named is an AMD one: it runs on NVIDIA's CUDA alone, so its CUDA error is that no NVIDIA GPU or driver is
there, and no ROCm or HSA setting reaches it (blind set 29: Faster-Whisper-XXL run with `-d cuda` on an RX 6750
XT, answered with ROCm's gfx advice)."""

from __future__ import annotations

import re

from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.triage.outcome import Kind, Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS
from torch_gpu_doctor.triage.whose import runtime_owner

PRESENT = "gpu.present"
_ROCM_WORDS = lazy(r"\b(?:rocm|hip|hsa_\w+|zluda|directml)\b", re.IGNORECASE)


def cuda_program_on_amd(
    verdicts: tuple[Verdict, ...], pasted: PastedText, facts: Facts, titles: dict[str, str]
) -> tuple[Verdict, ...]:
    amd = [g for g in facts.gpus if g.vendor == "amd"]
    if not amd or facts.nvidia_gpus or _ROCM_WORDS.search(pasted.paste.text, 0, MAX_CHARS) is not None:
        return verdicts
    owner = runtime_owner(pasted)
    if owner is None:
        return verdicts
    name, line = owner
    gpu = amd[0].name if isinstance(amd[0].name, str) else "an AMD GPU"
    finding = Finding(
        PRESENT,
        Status.FAIL,
        f"{name} was built for NVIDIA's CUDA here, and this machine's GPU is {gpu}: its CUDA error (line {line} of "
        "the paste) says no NVIDIA GPU or driver is there.",
        details="No NVIDIA driver, CUDA toolkit or HSA setting changes that: this build's GPU code is CUDA's (its "
        "PyPI wheels are CUDA builds; a ROCm build of it, where its project publishes one, is another install).",
        evidence=(Evidence("GPU", gpu, "the paste"),),
        remediation=Remediation(
            text="Run it on the CPU (its device option: device='cpu' with compute_type='int8' in faster-whisper, "
            "`-d cpu` in Faster-Whisper-XXL; in an application, its CPU choice), or use a program that runs on AMD "
            "GPUs (whisper.cpp with Vulkan, for speech), or a machine with an NVIDIA GPU.",
            target=Target.PYTHON_ENV,
        ),
    )
    added = Verdict(finding, titles.get(PRESENT, PRESENT), Kind.PROBLEM, (), None, (line,))
    # the ROCm checks' answers (a gfx target, a ROCm build) are for programs that run on ROCm: this one does not
    kept = (
        v
        for v in verdicts
        if v.kind != Kind.PROBLEM
        or (v.finding.check_id != PRESENT and not v.finding.check_id.startswith("amd."))
    )
    return (added, *kept)
