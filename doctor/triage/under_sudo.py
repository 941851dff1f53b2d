"""A library the loader cannot find, for a program the paste starts with sudo: sudo resets the environment, and
LD_LIBRARY_PATH is one of the variables it always removes (sudoers' env_reset; the dynamic loader's variables
are dropped even with -E), so a library found through it in the person's shell is gone for the program (blind set
25: `(CUDA113+CUDNN82) han@han:~/...$ sudo ./trt_infer ...`, then libcudnn.so.8 not found)."""

from __future__ import annotations

import dataclasses
import shlex

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Remediation, Target
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText

MISSING_LIBRARY = "missing_library"
# a command line run with sudo: a shell prompt (an activated env's "(name) ", "user@host:dir$ ") or a bare "$ ",
# or the line itself starting with sudo; its options (-E, -u root) skipped
_SUDO_RUN = lazy(
    r"^\s*(?:\([^)\n]{1,60}\)\s*)?(?:[\w.-]+@[\w.-]+:[^\n$#]*[$#]\s*|[$#]\s+)?sudo\s+(?:-[\w-]+\s+)*"
    r"(?P<command>[^\s-][^\n]{0,300}?)\s*$"
)
NEAR = 4  # lines between the command and the loader's error


def started_with_sudo(verdict: Verdict, pasted: PastedText) -> Verdict:
    """The missing library's fix, for a program started with sudo: the same command without it first."""
    hit = next(
        (
            h
            for h in pasted.hits
            if h.line in verdict.lines and h.signature.implies.get("error") == MISSING_LIBRARY
        ),
        None,
    )
    if hit is None or verdict.finding.remediation is None:
        return verdict
    lines = pasted.paste.text.split("\n")
    run = next(
        (
            found
            for number in range(hit.line - 1, max(0, hit.line - 1 - NEAR), -1)
            if (found := _SUDO_RUN.match(lines[number - 1])) is not None
        ),
        None,
    )
    if run is None:
        return verdict
    try:
        argv = tuple(shlex.split(run["command"]))
    except ValueError:  # an unbalanced quote: the words as they stand
        argv = tuple(run["command"].split())
    if not argv:
        return verdict
    fix = Remediation(
        text="The program was started with sudo, and sudo removes LD_LIBRARY_PATH (even with -E), so a library "
        "your shell finds through it, as an activated environment sets it, is not found for the program. Run it "
        'without sudo; where it needs root, pass the path on (`sudo env LD_LIBRARY_PATH="$LD_LIBRARY_PATH" '
        "COMMAND`, which the shell expands before sudo runs), or register the library's folder for every user "
        "(a file in /etc/ld.so.conf.d naming it, then `sudo ldconfig`). Only if it is still missing without sudo "
        "is the library itself to install.",
        commands=(Command(argv, note="the same command, without sudo", runs_here=False),),
        target=Target.PYTHON_ENV,
    )
    library = (hit.values.get("library") or "a library") + (hit.values.get("soversion") or "")
    summary = (
        f"{library} was not found for a program started with sudo, which removes LD_LIBRARY_PATH (where an "
        "activated environment puts such libraries)."
    )
    details = (
        "The dynamic loader looks in LD_LIBRARY_PATH's folders first, then in the system's (ldconfig's cache); "
        "sudo starts the program with a clean environment, so only the system's folders are left."
    )
    finding = dataclasses.replace(verdict.finding, summary=summary, details=details, remediation=fix)
    return dataclasses.replace(verdict, finding=finding)
