"""Where the answer is to run on the CPU, an application's own CPU switch comes first (compat/app_pythons.json).

A GPU no current torch supports (a Fermi GT 540M under Fooocus, blind set 23), or a ROCm GPU no wheel has
kernels for, leaves the CPU. An application with a switch of its own (Fooocus `--always-cpu`, ComfyUI `--cpu`,
the web UI's `--use-cpu all`) runs there with whatever torch it has, at once; replacing its torch with the CPU
build only saves the CUDA libraries' space, and goes into the application's Python, not PATH's."""

from __future__ import annotations

import dataclasses

from torch_gpu_doctor.compat.app_pythons import AppPython
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.target import on_windows
from torch_gpu_doctor.fixes.torch_wheel import INDEX_CPU
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command
from torch_gpu_doctor.triage import wanted_build
from torch_gpu_doctor.triage.outcome import Verdict

_WINDOWS_PATH = lazy(r"^(?:[A-Za-z]:\\|\.\\)")  # the install goes to a Windows Python (E:\...\python.exe)


def on_the_apps_cpu(verdict: Verdict, app: AppPython, facts: Facts) -> Verdict:
    """The application's CPU switch before a fix that installs torch's CPU build."""
    fix = verdict.finding.remediation
    if app.cpu_run is None or fix is None or verdict.finding.check_id == wanted_build.CHECK:
        return verdict  # (a CUDA build where the CPU one was asked for: the build itself is the problem)
    installs = [c for c in fix.commands if INDEX_CPU in c.argv and "install" in c.argv]
    if not installs:
        return verdict  # the fix is not the CPU: the application's GPU is still the way
    windows = on_windows(facts) or any(_WINDOWS_PATH.match(c.argv[0]) for c in installs)
    argv = app.cpu_run_windows if windows and app.cpu_run_windows else app.cpu_run
    switch = Command(argv, note=app.cpu_note or "")
    said = (
        f"{app.name} runs on the CPU with its own switch, whatever torch build it has: start it with "
        f"`{' '.join(argv[-_switch_words(argv) :])}`. The CPU build of torch after it only saves the space of "
        "CUDA's libraries. "
    )
    remediation = dataclasses.replace(fix, text=said + fix.text, commands=(switch, *fix.commands))
    return dataclasses.replace(verdict, finding=dataclasses.replace(verdict.finding, remediation=remediation))


def _switch_words(argv: tuple[str, ...]) -> int:
    """How many of the last words are the switch: from the first option on ("--use-cpu all ...")."""
    first = next((i for i, word in enumerate(argv) if word.startswith("-")), len(argv))
    return len(argv) - first
