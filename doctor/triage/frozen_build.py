"""A program frozen into an executable (PyInstaller and the like: `app.exe`) carries its own torch inside it, and
its warnings name torch's files by their path in the bundle, `torch\\cuda\\__init__.py:215`, never under a
site-packages folder. pip cannot replace that torch: the program must be rebuilt with another one, or run from its
source in an environment of one's own (blind set 25: a one-click package's app.exe on an RTX 5070 Ti, its torch
built for sm_37 to sm_90)."""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Remediation
from torch_gpu_doctor.triage.outcome import Kind, Verdict, installs_torch
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS

# torch's own file by its path inside a bundle: at the start of a line or after a space, not after a folder
_BUNDLED_TORCH_FILE = lazy(r"(?:^|[\s`'\"])torch[\\/][\w\\/]*\.py:\d+", re.MULTILINE)
_EXECUTABLE = lazy(r"[A-Za-z0-9_-]\.exe(?![A-Za-z0-9_])", re.IGNORECASE)  # "运行app.exe后": CJK around it


def frozen_build(pasted: PastedText) -> bool:
    """torch's files named inside a bundle, an executable named, and no site-packages anywhere in the paste."""
    text = pasted.paste.text[:MAX_CHARS]
    return (
        "site-packages" not in text
        and _BUNDLED_TORCH_FILE.search(text) is not None
        and _EXECUTABLE.search(text) is not None
    )


def inside_a_frozen_build(verdict: Verdict) -> Verdict:
    """A fix that installs another torch, for a program whose torch is frozen into its executable."""
    fix = verdict.finding.remediation
    if verdict.kind != Kind.PROBLEM or fix is None or not installs_torch(fix):
        return verdict
    remediation = Remediation(
        text="The program is a frozen build: its torch is inside its executable (the warning names torch's files "
        "inside the bundle, not in a site-packages folder), so pip cannot replace it. Get a build of the program "
        "made with a torch for this GPU from its makers, or run the program from its source in a Python "
        "environment of your own and install that torch there: " + fix.text[:1].lower() + fix.text[1:],
        commands=(),
        requires_root=fix.requires_root,
        target=fix.target,
    )
    finding = dataclasses.replace(verdict.finding, remediation=remediation)
    return dataclasses.replace(verdict, finding=finding)
