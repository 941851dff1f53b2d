"""An application's own start switches where they beat the generic fix (compat/app_pythons.json "switches").

- The CPU: a GPU no current torch supports (a Fermi GT 540M under Fooocus, blind set 23; a GT 710 under the web
  UI), or a ROCm GPU no wheel has kernels for, leaves the CPU. An application with a switch of its own (Fooocus
  `--always-cpu`, ComfyUI `--cpu`, the web UI's `--use-cpu all`) runs there with whatever torch it has, at once;
  replacing its torch with the CPU build only saves the CUDA libraries' space, and goes into the application's
  Python, not PATH's.
- Low memory: out of GPU memory in an application with a low-VRAM mode (ComfyUI `--lowvram`, the web UI's
  `--medvram`, Fooocus `--always-low-vram`) is answered by that mode before a training script's remedies, which
  the person cannot apply to someone else's program (blind set 24: ComfyUI on a 6 GB card)."""

from __future__ import annotations

import dataclasses

from torch_gpu_doctor.compat.app_pythons import AppPython
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.target import on_windows
from torch_gpu_doctor.fixes.torch_wheel import INDEX_CPU
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Remediation
from torch_gpu_doctor.triage import wanted_build
from torch_gpu_doctor.triage.job_size import OOM
from torch_gpu_doctor.triage.outcome import Verdict

_WINDOWS_PATH = lazy(r"^(?:[A-Za-z]:\\|\.\\)")  # a command for a Windows Python (E:\...\python.exe)


def with_the_apps_switches(verdict: Verdict, app: AppPython, facts: Facts) -> Verdict:
    """The application's own switch first, where the verdict's fix is what that switch is for."""
    fix = verdict.finding.remediation
    if fix is None:
        return verdict
    if verdict.finding.check_id == OOM:
        return _first(verdict, fix, app, "low_memory", facts, "runs in less GPU memory with its own switch")
    if verdict.finding.check_id == wanted_build.CHECK:
        return verdict  # a CUDA build where the CPU one was asked for: the build itself is the problem
    if any(INDEX_CPU in c.argv and "install" in c.argv for c in fix.commands):
        return _first(
            verdict,
            fix,
            app,
            "cpu",
            facts,
            "runs on the CPU with its own switch, whatever torch build it has",
        )
    return verdict  # the fix is not what a switch is for: the application's GPU is still the way


def _first(
    verdict: Verdict, fix: Remediation, app: AppPython, purpose: str, facts: Facts, does: str
) -> Verdict:
    switch = app.switch(purpose)
    if switch is None:
        return verdict
    windows = on_windows(facts) or any(c.argv and _WINDOWS_PATH.match(c.argv[0]) for c in fix.commands)
    said = f"{app.name} {does}: start it with `{switch.words(windows)}`. " + _after(purpose)
    rest = fix.text if purpose == "cpu" else fix.text[:1].lower() + fix.text[1:]
    remediation = dataclasses.replace(
        fix, text=said + rest, commands=(Command(switch.argv(windows), note=switch.note), *fix.commands)
    )
    return dataclasses.replace(verdict, finding=dataclasses.replace(verdict.finding, remediation=remediation))


def _after(purpose: str) -> str:
    if purpose == "cpu":
        return "The CPU build of torch after it only saves the space of CUDA's libraries. "
    return "Beyond that, "
