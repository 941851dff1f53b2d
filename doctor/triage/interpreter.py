"""Which Python the fixes and questions go to: the one the paste shows, an application's own (ComfyUI, a web UI),
or the other one a second torch lives in."""

from __future__ import annotations

import dataclasses
import itertools
from typing import TYPE_CHECKING

from torch_gpu_doctor.compat.app_pythons import AppPython
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Status
from torch_gpu_doctor.triage.facts import PYTHON
from torch_gpu_doctor.triage.outcome import Verdict, installs_torch
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS, line_around, line_number
from torch_gpu_doctor.unavailable import Unavailable

if TYPE_CHECKING:
    pass


def interpreter_shown(facts: Facts) -> str | None:
    """The paste's own Python as a command line shows it (a conda env's, a portable one's), or None."""
    python = facts.python
    if isinstance(python, Unavailable) or python.executable == PYTHON or python.executable.startswith("~"):
        return None  # "~/miniconda3/...": a quoted ~ is not the home folder, and unquoted it is not one path
    return Command((python.executable,)).display()


def asked_with(verdict: Verdict, interpreter: str, executable: str) -> Verdict:
    ask = verdict.find_out
    if ask is not None and ask.startswith("python "):
        verdict = dataclasses.replace(verdict, find_out=f"{interpreter} {ask.removeprefix('python ')}")
    fix = verdict.finding.remediation
    if fix is None or not any(_plain_python(c.argv) for c in fix.commands):
        return verdict
    commands = tuple(
        dataclasses.replace(c, argv=_with_python(c.argv, executable)) if _plain_python(c.argv) else c
        for c in fix.commands
    )
    fix = dataclasses.replace(fix, commands=commands)
    return dataclasses.replace(verdict, finding=dataclasses.replace(verdict.finding, remediation=fix))


def _program_at(argv: tuple[str, ...]) -> int:
    """Where the program is in a command: after `env`'s own `-u VAR` and `VAR=value` arguments."""
    if not argv or argv[0] != "env":
        return 0
    i = 1
    while i < len(argv) and (argv[i] == "-u" or ("=" in argv[i] and not argv[i].startswith("-"))):
        i += 2 if argv[i] == "-u" else 1
    return i


def _plain_python(argv: tuple[str, ...]) -> bool:
    """The command runs `python` by that name (`python -m pip ...`, `env -u LD_LIBRARY_PATH python -c ...`,
    `uv pip install --python python ...`)."""
    at = _program_at(argv)
    return (at < len(argv) and argv[at] == PYTHON) or any(
        a == "--python" and b == PYTHON for a, b in itertools.pairwise(argv)
    )


def _with_python(argv: tuple[str, ...], executable: str) -> tuple[str, ...]:
    at = _program_at(argv)
    return tuple(
        executable if a == PYTHON and (i == at or (i > 0 and argv[i - 1] == "--python")) else a
        for i, a in enumerate(argv)
    )


_FIND_ITS_PYTHON = (
    "Print which Python and torch the program gets, then install with that Python's full path. "
)


_WHICH_PYTHON = Command(
    (PYTHON, "-c", "import sys, torch; print(sys.executable, torch.__version__, torch.__file__)"),
    note="run it the way the program runs (its venv, launcher or app folder): the install goes into that Python",
)


def in_the_apps_python(verdict: Verdict, app: AppPython, pasted: PastedText) -> Verdict:
    """A torch install for a bare `python`, in a paste about an application that runs its own Python
    (compat/app_pythons.json): its portable build's Python where the paste shows that build, else which Python
    the application runs, asked first (blind set 16: ComfyUI, Krita AI Diffusion's server)."""
    fix = verdict.finding.remediation
    first = fix.commands[0] if fix is not None and fix.commands else None
    installs = first is not None and "install" in first.argv and "uninstall" not in first.argv
    if (
        fix is None
        or first is None
        or not installs
        or not installs_torch(dataclasses.replace(fix, commands=(first,)))
    ):
        return verdict  # an install of torch leads the fix, or this is not about where torch goes
    if not _plain_python(first.argv) or pasted.interpreter is not None:
        return verdict  # the paste shows the interpreter: the fix names it already
    text = pasted.paste.text[:MAX_CHARS]
    if app.portable_marker is not None and app.portable_python and app.portable_marker.search(text):
        python = app.portable_python
        commands = tuple(
            dataclasses.replace(c, argv=_with_python(c.argv, python)) if _plain_python(c.argv) else c
            for c in fix.commands
        )
        said = f"{app.name}'s portable build runs its own Python: {app.where}. "
    else:
        probe = dataclasses.replace(_WHICH_PYTHON, note=f"with {app.name}'s own Python: {app.where}")
        commands = (probe, *fix.commands)
        said = (
            f"{app.name} runs its own Python ({app.where}), not the one on PATH: install with that Python's full "
            "path in place of `python`. "
        )
    finding = dataclasses.replace(
        verdict.finding, remediation=dataclasses.replace(fix, text=said + fix.text, commands=commands)
    )
    return dataclasses.replace(verdict, finding=finding)


# A CUDA build of torch by its version as pip or a person writes it: "2.0.1+cu117", "version 2.0.1 + cu117"
# (never xFormers' "built for PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.1.0+cpu)": a build, not an install)
NOT_COMPILED = "cpu_build_torch_not_compiled_with_cuda"  # the words the summary quotes
_CUDA_TAG = lazy(r"\+cu\d{2,3}\b")
_CUDA_TORCH_SAID = lazy(
    r"(?<![\w.])(?P<version>\d\.\d{1,2}(?:\.\d{1,2})?)[ \t]*\+[ \t]*(?P<tag>cu\d{2,3})\b(?![ \t]+with[ \t]+CUDA)"
)


def two_torches(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """A CPU build the program imports, beside a CUDA build the same paste shows elsewhere (`pip show torch` says
    2.0.1+cu117, the program runs 2.0.0+cpu: blind set 16): two Pythons, and pip installs into the one the
    program does not run, so which Python runs it comes first."""
    finding, fix = verdict.finding, verdict.finding.remediation
    packages = facts.torch_packages
    if finding.check_id != "torch.cpu_build" or finding.status is not Status.FAIL or fix is None:
        return verdict
    if isinstance(packages, Unavailable) or packages.version is None or not installs_torch(fix):
        return verdict
    if not fix.commands or not _plain_python(fix.commands[0].argv):
        return verdict  # the paste names the interpreter: the install goes there already
    text = pasted.paste.text
    session = pasted.session
    works = (
        session.lines[0]
        if session is not None and session.available is True and session.lines
        else pasted.prose.torch_works
    )
    if (
        works is not None
        and _CUDA_TAG.search(packages.version)
        and any(h.signature.id == NOT_COMPILED for h in pasted.hits)
    ):  # "Torch not compiled with CUDA enabled", while the Python shown has a CUDA torch that works
        summary = (
            f"Two Pythons: the program's torch is a CPU-only build (it says 'Torch not compiled with CUDA'), while "
            f"the Python shown has torch {packages.version} with CUDA available (line {works}): the program runs "
            "another environment (a launcher's, pipx's or another conda environment's)."
        )
        said = (
            _FIND_ITS_PYTHON
            + "A command-line tool installed with pipx or `uv tool` has an environment of its own (`pipx runpip "
            "TOOL install ...` installs there). "
        )
        finding = dataclasses.replace(
            finding,
            summary=summary,
            remediation=dataclasses.replace(
                fix, text=said + fix.text, commands=(_WHICH_PYTHON, *fix.commands)
            ),
        )
        return dataclasses.replace(verdict, finding=finding)
    if "+" not in text or "requirement already satisfied" in text[:MAX_CHARS].lower():
        return verdict  # pip kept the same version's CPU build: a forced reinstall, not another Python
    other = _CUDA_TORCH_SAID.search(text, 0, MAX_CHARS)
    # pip's own word for it (`pip show torch` gave it, `pip install torch==X+cuY` put it somewhere)
    if other is None or "pip" not in line_around(text, other).lower():
        return verdict
    line = line_number(text, other)
    said = "The CUDA build is in the Python the program does not use. " + _FIND_ITS_PYTHON
    commands = (_WHICH_PYTHON, *fix.commands)
    summary = (
        f"Two Pythons: the program runs torch {packages.version}, a CPU-only build, while pip shows or installed "
        f"{other['version']}+{other['tag']} (line {line}) in another."
    )
    finding = dataclasses.replace(
        finding,
        summary=summary,
        remediation=dataclasses.replace(fix, text=said + fix.text, commands=commands),
    )
    return dataclasses.replace(verdict, finding=finding)


def reinstalled_already(verdict: Verdict, line: int) -> Verdict:
    """A torch install for an interpreter the paste does not show, where the person says installing again changed
    nothing (blind set 16: "installed a ton of new pytorch builds ... same error"): those installs went into
    another Python than the program's, so which Python runs it comes first, then the install with that path."""
    fix = verdict.finding.remediation
    if fix is None or not installs_torch(fix) or not any(_plain_python(c.argv) for c in fix.commands):
        return verdict
    asked = fix.commands[0].argv == _WHICH_PYTHON.argv  # an application's own Python was asked for already
    text = (
        "Installing torch again changed nothing (line "
        f"{line} of the paste): the installs went into another Python than the one the program runs. "
        + _FIND_ITS_PYTHON
        + fix.text
    )
    commands = fix.commands if asked else (_WHICH_PYTHON, *fix.commands)
    finding = dataclasses.replace(
        verdict.finding, remediation=dataclasses.replace(fix, text=text, commands=commands)
    )
    return dataclasses.replace(verdict, finding=finding, find_out=None)
