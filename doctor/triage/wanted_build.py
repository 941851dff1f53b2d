"""The torch build the person asked for against the one the paste shows installed: a CUDA build (NVIDIA's CUDA
wheels pulled in, a +cu tag) where a CPU-only one was wanted (an installer's --cpu switch, "the CPU-only version")
is a problem of its own, even with no error: gigabytes of CUDA libraries on a machine meant to run without them
(blind set 23: comfy-cli#344, `comfy install --cpu` leaving torch 2.9.1 with nvidia-cublas-cu12)."""

from __future__ import annotations

import re

from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.target import installed_torch, pip_reinstall
from torch_gpu_doctor.fixes.torch_wheel import INDEX_CPU
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Finding, Remediation, Status, Target
from torch_gpu_doctor.triage.outcome import Kind, Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS, line_number

CHECK = "torch.nvidia_wheels"
# the CPU build asked for: an installer's switch, the words, or its index
_CPU_WANTED = lazy(
    r"(?<![\w-])--cpu\b|\bcpu[- ]only\b|\bCPU[ \t]+(?:version|build|wheel)s?\b|download\.pytorch\.org/whl/cpu\b",
    re.IGNORECASE,
)
# the CUDA build chosen over the CPU one, said between the two: "requirements.txt are configured for the cpu only
# versions of torch, so I installed torch==2.9.0+cu130" (blind set 32: ComfyUI#10517 was told to go back to the CPU)
_CHOSE_CUDA = lazy(
    r"\b(?:so|instead|therefore|then)\b[ \t,]*(?:i|we)[ \t]+(?:(?:have|had)[ \t]+)?"
    r"(?:installed|install|used|use|picked|chose|switched|went)\b",
    re.IGNORECASE,
)
# a CUDA build shown: `pip show torch`'s Requires with NVIDIA's CUDA wheels, or a +cu tag on torch
_CUDA_SHOWN = lazy(
    r"^Requires:[^\n]*\bnvidia-[a-z-]+-cu1\d\b|\btorch[ =:-]+\d+\.\d+(?:\.\d+)?\+cu\d{2,3}\b", re.M
)


def _with_companions(version: str | None) -> tuple[str, ...]:
    """torch and its companions, all from one index: a CUDA torchvision left beside a CPU torch cannot load its
    operators. At the installed torch's release where known (its companions from the data), else unpinned, which
    the index resolves to one matching set."""
    release = load_torch_releases().release(version) if version else None
    if version is None or release is None:
        return ("torch", "torchvision", "torchaudio")
    companions = release.companions.for_version(version)
    return (
        f"torch=={version}",
        *((f"torchvision=={companions.torchvision}",) if companions.torchvision else ()),
        *((f"torchaudio=={companions.torchaudio}",) if companions.torchaudio else ()),
    )


def cuda_build_where_cpu_wanted(
    verdicts: tuple[Verdict, ...], pasted: PastedText, facts: Facts, titles: dict[str, str]
) -> tuple[Verdict, ...]:
    """A verdict of its own where no other problem was found: the CPU build was asked for, a CUDA one is there."""
    if any(v.kind == Kind.PROBLEM for v in verdicts):
        return verdicts
    text = pasted.paste.text[:MAX_CHARS]
    if "cpu" not in text.lower():
        return verdicts
    wanted, shown = _CPU_WANTED.search(text), _CUDA_SHOWN.search(text)
    if wanted is None or shown is None:
        return verdicts
    between = text[wanted.end() : shown.start()]
    if "\n" not in between and _CHOSE_CUDA.search(between):  # the person moved from the CPU build on purpose
        return verdicts
    version = installed_torch(facts)
    pins = _with_companions(version)
    finding = Finding(
        CHECK,
        Status.FAIL,
        f"torch{' ' + version if version else ''} is a CUDA build (line {line_number(text, shown)} of the paste) where the "
        f"CPU-only build was asked for (line {line_number(text, wanted)}): it brings NVIDIA's CUDA libraries, gigabytes "
        "a machine without an NVIDIA GPU never uses.",
        remediation=Remediation(
            text="Install torch from PyTorch's CPU index into the same environment, replacing the CUDA build (and its "
            "companions, torchvision and torchaudio, from the same index); then uninstall the nvidia-* wheels it "
            "leaves behind. PyPI's own torch for Linux is the CUDA build: only the CPU index gives the CPU one.",
            commands=(
                pip_reinstall(
                    facts,
                    *pins,
                    "--index-url",
                    INDEX_CPU,
                    note="with uv: uv pip install --reinstall "
                    + " ".join(pins)
                    + " --index-url "
                    + INDEX_CPU,
                ),
            ),
            target=Target.PYTHON_ENV,
        ),
    )
    lines = tuple(sorted({line_number(text, wanted), line_number(text, shown)}))
    return (*verdicts, Verdict(finding, titles.get(CHECK, CHECK), Kind.PROBLEM, (), None, lines))
