"""torch's extension builder says CUDA_HOME is not set, where the paste shows a CUDA toolkit (nvcc's banner):
torch's cpp_extension sets CUDA_HOME only when torch itself was built with CUDA (`CUDA_HOME = _find_cuda_home()
if torch.cuda._is_compiled() ... else None`), so the torch that ran is a CPU build, whatever toolkit is there
(blind set 28: a Jetson container's nvcc 11.4 beside a PyPI aarch64 torch, NVIDIA-AI-IOT/torch2trt#933)."""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.jetson import jetson_torch_remediation
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Remediation, Target
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS, line_number
from torch_gpu_doctor.unavailable import Unavailable

CUDA_HOME_NOT_SET = "other_cuda_home_not_set"
# nvcc's own banner ("Cuda compilation tools, release 11.4, V11.4.315"), or `which nvcc` answering with a path
_TOOLKIT_SHOWN = lazy(
    r"Cuda compilation tools, release (?P<release>\d+\.\d+)|^[ \t]*/\S*/bin/nvcc[ \t]*$", re.MULTILINE
)
DETAILS = (
    "torch's cpp_extension finds the CUDA toolkit only for a torch built with CUDA (CUDA_HOME = _find_cuda_home() "
    "if torch.cuda._is_compiled() else None): under a CPU build it reports CUDA_HOME as not set, wherever nvcc is."
)
_PROBE = Command(
    ("python", "-c", "import torch; print(torch.__version__, torch.version.cuda)"),
    note="None after the version: a CPU build of torch, which leaves CUDA_HOME unset whatever toolkit is there",
)


def toolkit_shown_line(pasted: PastedText) -> int | None:
    text = pasted.paste.text[:MAX_CHARS]
    shown = _TOOLKIT_SHOWN.search(text)
    return line_number(text, shown) if shown is not None else None


def torch_without_cuda(verdict: Verdict, pasted: PastedText, facts: Facts) -> Verdict:
    """CUDA_HOME unset beside a toolkit the paste shows: the torch that ran has no CUDA."""
    finding = verdict.finding
    if not any(h.signature.id == CUDA_HOME_NOT_SET and h.line in verdict.lines for h in pasted.hits):
        return verdict
    line = toolkit_shown_line(pasted)
    packages = facts.torch_packages
    if line is None or (not isinstance(packages, Unavailable) and packages.cuda is not None):
        return verdict  # a CUDA build shown: the build did not see the toolkit (sudo, build isolation, PATH)
    jetson = facts.jetson_board is not None or pasted.prose.jetson is not None
    install = jetson_torch_remediation(facts) if jetson else None
    text = (
        f"Line {line} shows a CUDA toolkit, and torch still leaves CUDA_HOME unset: torch's extension builder "
        "sets it only when torch itself was built with CUDA, so the torch that ran is a CPU build (on a Jetson, "
        "most often PyPI's aarch64 wheel installed over NVIDIA's). The command below says: None after the "
        "version is a CPU build, to replace with a CUDA build of torch in that Python before building again. A "
        "CUDA version there means the build did not see the toolkit instead (sudo drops the environment, pip's "
        "build isolation another torch): set CUDA_HOME=/usr/local/cuda-X.Y for it."
    )
    fix = Remediation(
        text=text + (" " + install.text if install is not None else ""),
        commands=(_PROBE, *(install.commands if install is not None else ())),
        target=Target.PYTHON_ENV,
    )
    summary = (
        f"The torch that ran is most likely a CPU build: its extension builder leaves CUDA_HOME unset although a "
        f"CUDA toolkit is there (line {line} of the paste)."
    )
    return dataclasses.replace(
        verdict,
        finding=dataclasses.replace(finding, summary=summary, details=DETAILS, remediation=fix),
        lines=tuple(sorted({*verdict.lines, line})),
    )
