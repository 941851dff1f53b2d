"""A torch install for a project that uv manages (`uv sync`, `uv run` in the paste): uv's own command first, into
the project's .venv, and the lockfile's torch said: `uv run` and `uv sync` put it back at the next start unless
the project's PyTorch index covers this platform (blind set 30: lerobot#4093, `uv sync` on Windows installing
torch 2.11.0+cpu because the project maps PyTorch's CUDA index for Linux only). uv venvs have no pip of their
own, so `python -m pip` there is another Python's."""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.triage.outcome import Verdict, installs_torch
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS, line_number

_UV_PROJECT = lazy(r"\buv[ \t]+(?:sync|run|add|lock)\b", re.IGNORECASE)
RESYNC = (
    " uv keeps the project's lockfile: `uv run` and `uv sync` put its torch back at the next start unless the "
    "project's PyTorch index covers this platform ([[tool.uv.index]] with explicit = true and [tool.uv.sources] "
    "for torch in pyproject.toml; a `sys_platform` marker that names only Linux leaves Windows on PyPI's CPU "
    "build), so fix it there, or start with `uv run --no-sync` after the install."
)


def uv_project_line(pasted: PastedText) -> int | None:
    """The line that shows uv managing the project, or None."""
    found = _UV_PROJECT.search(pasted.paste.text, 0, MAX_CHARS)
    return line_number(pasted.paste.text, found) if found is not None else None


def with_uv_first(verdict: Verdict) -> Verdict:
    """A fix that installs torch with pip and with uv: uv's command first, into the project's .venv."""
    fix = verdict.finding.remediation
    if fix is None or not installs_torch(fix):
        return verdict
    uv = [c for c in fix.commands if c.argv[:3] == ("uv", "pip", "install")]
    if not uv:
        return verdict
    argv = uv[0].argv
    if "--python" in argv:  # the project's environment, not whichever python is first on PATH
        at = argv.index("--python") + 1
        argv = (*argv[:at], ".venv", *argv[at + 1 :])
    first = dataclasses.replace(uv[0], argv=argv, note="in the project's folder: into its .venv")
    rest = tuple(c for c in fix.commands if c is not uv[0] and "pip" not in c.argv[:4])
    remediation = dataclasses.replace(fix, text=fix.text + RESYNC, commands=(first, *rest))
    return dataclasses.replace(verdict, finding=dataclasses.replace(verdict.finding, remediation=remediation))
