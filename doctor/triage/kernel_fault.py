"""A kernel's illegal memory access, where the paste already answers what its usual first step asks: a rerun
with CUDA_LAUNCH_BLOCKING=1 it shows (set on a command line, in the code, or said), a fault that Triton's
launcher reported from a library's own kernel with no torch.compile in sight, or a torch nightly build, whose
own kernels are the first suspect (blind set 27: flex attention's compiled block mask on a 2.6.0.dev build)."""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.compat.torch_releases import TorchCompat, version_key
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.recommendation import install_argv
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command
from torch_gpu_doctor.triage.features_on import ILLEGAL_ADDRESS
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS, line_around, line_number
from torch_gpu_doctor.unavailable import Unavailable

IN_TRITON = ILLEGAL_ADDRESS + "_in_triton"
KERNEL_FAULTS = frozenset({ILLEGAL_ADDRESS, IN_TRITON})
LAUNCH_BLOCKING = "CUDA_LAUNCH_BLOCKING=1"
COMPILE_OFF = "TORCH_COMPILE_DISABLE=1"

# CUDA_LAUNCH_BLOCKING set to 1 by the person: `CUDA_LAUNCH_BLOCKING=1 python ...`, `export ...`, PowerShell's
# `$env:CUDA_LAUNCH_BLOCKING="1"`, `os.environ["CUDA_LAUNCH_BLOCKING"] = "1"`, "when setting ...=1". torch's
# own hint ("For debugging consider passing CUDA_LAUNCH_BLOCKING=1") is no run: its lines are skipped.
_SET = lazy(
    r"""(?:^|[\s;`'"(:$])CUDA_LAUNCH_BLOCKING['"]?\]?[ \t]*=[ \t]*['"]?1\b""",
    re.MULTILINE,
)
_HINT = ("consider passing", "for debugging")
# torch.compile at work: Inductor's generated code and frames, its options and calls
_COMPILED = lazy(
    r"torchinductor|torch[/\\.]_inductor|torch[/\\.]_dynamo|torch\.compile|\b_compile=True|--inductor|"
    r"\bcompile_fx\b"
)
# a nightly: "2.6.0.dev20241112+cu121" (a source build's "2.2.0a0+git..." and NGC's "a0+81ea7a4" are not)
_NIGHTLY = lazy(r"^(?P<base>\d+\.\d+\.\d+)\.dev(?P<date>\d{8})\b")


_SANITIZER = Command(
    ("compute-sanitizer", "--tool", "memcheck", "PROGRAM"),
    note="PROGRAM: the failing command line; slow, from the CUDA toolkit",
    runs_here=False,
)


def launch_blocking_line(pasted: PastedText) -> int | None:
    """The line where the paste shows a run with CUDA_LAUNCH_BLOCKING=1, not torch's hint to make one."""
    text = pasted.paste.text[:MAX_CHARS]
    if "CUDA_LAUNCH_BLOCKING" not in text:
        return None
    for found in _SET.finditer(text):
        if not any(hint in line_around(text, found).lower() for hint in _HINT):
            return line_number(text, found)
    return None


def _nightly(facts: Facts) -> re.Match[str] | None:
    packages = facts.torch_packages
    if isinstance(packages, Unavailable) or not packages.version:
        return None
    return _NIGHTLY.match(packages.version)


def stable_for_nightly(
    base: str, cuda: str | None, data: TorchCompat | None = None
) -> tuple[str, str] | None:
    """The stable release a nightly of `base` ("2.6.0") became, or the oldest after it, and its variant nearest
    the nightly's CUDA ("12.1"): the same major, the oldest at or above it (cu124 for a cu121 nightly of 2.6.0,
    whose stable builds are cu118, cu124 and cu126). None when the data has no such release yet."""
    data = data or load_torch_releases()
    later = [r for r in data.releases if version_key(r.version) >= version_key(base)]
    if not later:
        return None
    release = min(later, key=lambda r: version_key(r.version))
    cudas = [v for v in release.variants if v.cuda]
    if cuda:
        major = cuda.split(".")[0]
        same = sorted(
            (v for v in cudas if v.cuda and v.cuda.split(".")[0] == major),
            key=lambda v: version_key(v.cuda or ""),
        )
        above = [v for v in same if version_key(v.cuda or "") >= version_key(cuda)]
        cudas = above or same[-1:] or cudas
    if not cudas:
        return None
    return release.version, cudas[0].name


def _with(verdict: Verdict, text: str, commands: tuple[Command, ...]) -> Verdict:
    fix = verdict.finding.remediation
    assert fix is not None
    fix = dataclasses.replace(fix, text=text, commands=commands)
    return dataclasses.replace(verdict, finding=dataclasses.replace(verdict.finding, remediation=fix))


def next_step(verdict: Verdict, pasted: PastedText, facts: Facts) -> Verdict:
    """The fault's next step, given what the paste shows was done or is installed."""
    fix = verdict.finding.remediation
    ids = {h.signature.id for h in pasted.hits if h.line in verdict.lines}
    if fix is None or not ids & KERNEL_FAULTS:
        return verdict
    text = pasted.paste.text[:MAX_CHARS]
    commands = fix.commands
    said = fix.text
    if IN_TRITON in ids and _COMPILED.search(text) is None:  # a library's Triton kernel, no torch.compile
        commands = (*(c for c in commands if COMPILE_OFF not in c.argv), _SANITIZER)
        said = (
            "Nothing in the paste shows torch.compile, so the kernel is most likely a library's own Triton kernel "
            "(an attention, quantization or MoE kernel): that library's bug for these shapes, or the Triton "
            "release under it. Upgrade the library with the torch and Triton release it is tested with, and "
            "report the failing shapes to it (compute-sanitizer names the kernel). The CUDA context is lost "
            "after the error: restart the program; the GPU needs no reset."
        )
    blocking = launch_blocking_line(pasted)
    if blocking is not None and any(LAUNCH_BLOCKING in c.argv for c in commands):
        commands = tuple(c for c in commands if LAUNCH_BLOCKING not in c.argv)
        rest = said.split(": each kernel then reports its own error", 1)
        said = (
            f"Line {blocking} shows the run with CUDA_LAUNCH_BLOCKING=1 already: the last frames of that run's "
            "traceback are the operation that faults (an index or size out of range, a custom kernel or extension "
            "built for another torch), so another such run adds nothing. Next, compute-sanitizer names the kernel "
            "and the address it read or wrote. The CUDA context is lost after the error: restart the program."
            if len(rest) == 2
            else f"Line {blocking} shows the run with CUDA_LAUNCH_BLOCKING=1 already. " + said
        )
        if _SANITIZER not in commands:
            commands = (_SANITIZER, *commands)
    nightly = _nightly(facts)
    packages = facts.torch_packages
    if nightly is not None and not isinstance(packages, Unavailable) and packages.cuda is not None:
        stable = stable_for_nightly(nightly.group("base"), packages.cuda)
        date = nightly.group("date")
        first = (
            f"torch {packages.version} is a nightly build (of {date[:4]}-{date[4:6]}-{date[6:]}): its compiler "
            "and kernels change daily and such faults are often fixed in a later build. Retest on a stable "
            "release first"
        )
        if stable is not None:
            version, variant = stable
            first += f" (torch {version}, from the {variant} index); if it still faults there, "
            commands = (
                Command(
                    install_argv((f"torch=={version}",), variant),
                    note="the stable release; torchvision and torchaudio of the same release with it if installed",
                ),
                *commands,
            )
        else:
            first += "; if it still faults there, "
        said = first + (said[:1].lower() + said[1:])
    if said == fix.text and commands == fix.commands:
        return verdict
    return _with(verdict, said, commands)
