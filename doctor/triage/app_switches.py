"""An application's own start switches where they beat the generic fix (compat/app_pythons.json "switches").

- The CPU: a GPU no current torch supports (a Fermi GT 540M under Fooocus, blind set 23; a GT 710 under the web
  UI), or a ROCm GPU no wheel has kernels for, leaves the CPU. An application with a switch of its own (Fooocus
  `--always-cpu`, ComfyUI `--cpu`, the web UI's `--use-cpu all`) runs there with whatever torch it has, at once;
  replacing its torch with the CPU build only saves the CUDA libraries' space, and goes into the application's
  Python, not PATH's.
- Low memory: out of GPU memory in an application with a low-VRAM mode (ComfyUI `--lowvram`, the web UI's
  `--medvram`, Fooocus `--always-low-vram`) is answered by that mode before a training script's remedies, which
  the person cannot apply to someone else's program (blind set 24: ComfyUI on a 6 GB card).
- A CPU build of torch in an application that installs its own CUDA build (the web UI, once its torch is uninstalled,
  Fooocus's pinned torch 2.1.0 from cu121): that build first, into the application's Python, rather than the
  newest torch, which the application was never tested with (blind set 26: A1111#17236, Fooocus#1202). Not for
  a GPU newer than those pins (compute capability 10 and up): the application's build has no kernels for it.
- No NVIDIA GPU at all, said in words: the application's CPU switch is how it runs (blind set 28: Fooocus with
  "i don't have nivida gpu")."""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.compat.app_pythons import AppPython
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.target import on_windows
from torch_gpu_doctor.fixes.torch_wheel import INDEX_CPU
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Remediation
from torch_gpu_doctor.triage import wanted_build
from torch_gpu_doctor.triage.job_size import OOM
from torch_gpu_doctor.triage.outcome import Verdict, installs_torch
from torch_gpu_doctor.triage.where import NO_NVIDIA_GPU

_WINDOWS_PATH = lazy(r"^(?:[A-Za-z]:\\|\.\\)")  # a command for a Windows Python (E:\...\python.exe)


def with_the_apps_switches(
    verdict: Verdict, app: AppPython, facts: Facts, batch_file: bool = False
) -> Verdict:
    """The application's own switch first, where the verdict's fix is what that switch is for. `batch_file`: the
    paste names a Windows batch file (webui-user.bat, run.bat), which says Windows where nothing else does."""
    fix = verdict.finding.remediation
    if fix is None:
        return verdict
    if verdict.finding.check_id == OOM:
        return _first(
            verdict, fix, app, "low_memory", facts, "runs in less GPU memory with its own switch", batch_file
        )
    if verdict.finding.check_id == wanted_build.CHECK:
        return verdict  # a CUDA build where the CPU one was asked for: the build itself is the problem
    if verdict.finding.check_id == CPU_BUILD and installs_torch(fix) and not _newer_than_app_pins(facts):
        return _first(
            verdict,
            fix,
            app,
            "reinstall_torch",
            facts,
            "installs its own CUDA build of torch into its own Python",
            batch_file,
        )
    # the CPU build as the fix, or no NVIDIA GPU said: the application's CPU switch is its way to run at all
    if _no_gpu_to_use(verdict) or any(INDEX_CPU in c.argv and "install" in c.argv for c in fix.commands):
        return _first(
            verdict,
            fix,
            app,
            "cpu",
            facts,
            "runs on the CPU with its own switch, whatever torch build it has",
            batch_file,
        )
    return verdict  # the fix is not what a switch is for: the application's GPU is still the way


def _no_gpu_to_use(verdict: Verdict) -> bool:
    """No NVIDIA GPU, said, and no other GPU named (an Intel Arc has torch's XPU build, an AMD one ROCm or
    DirectML: the program's device, not the CPU, is the way there)."""
    finding = verdict.finding
    if finding.check_id != "gpu.present" or not finding.summary.startswith(NO_NVIDIA_GPU):
        return False
    said = " ".join(e.value for e in finding.evidence if e.label == "said").lower()
    return "only an amd gpu" not in finding.summary.lower() and not any(
        w in said for w in ("intel", "iris", "arc")
    )


def _first(
    verdict: Verdict,
    fix: Remediation,
    app: AppPython,
    purpose: str,
    facts: Facts,
    does: str,
    batch_file: bool,
) -> Verdict:
    switch = app.switch(purpose)
    if switch is None:
        return verdict
    windows = (
        on_windows(facts)
        or batch_file
        or any(c.argv and _WINDOWS_PATH.match(c.argv[0]) for c in fix.commands)
    )
    argv = _in_the_python_shown(switch.argv(windows), fix)
    if "uninstall" in argv:  # the application installs its torch where none is: take the CPU one out
        said = f"{app.name} {does} where none is installed: remove the CPU one (`{' '.join(argv)}`), then start it again. "
        said += _after(purpose, fix)
    elif "pip" in argv:  # the application's own install command (its pinned torch), not a start switch
        said = f"{app.name} {does}: `{' '.join(argv)}`. " + _after(purpose, fix)
    else:
        said = f"{app.name} {does}: start it with `{switch.words(windows)}`. " + _after(purpose, fix)
    rest = fix.text if purpose != "low_memory" else fix.text[:1].lower() + fix.text[1:]
    remediation = dataclasses.replace(
        fix, text=said + rest, commands=(Command(argv, note=switch.note), *fix.commands)
    )
    return dataclasses.replace(verdict, finding=dataclasses.replace(verdict.finding, remediation=remediation))


_PYTHON = lazy(r"(?:^|[/\\])python[0-9.]*(?:\.exe)?$", re.IGNORECASE)


def _in_the_python_shown(argv: tuple[str, ...], fix: Remediation) -> tuple[str, ...]:
    """The switch's command with the application's Python that the paste shows (the fix's own commands name it:
    "D:\\sd\\sd-webui-aki-v4.10\\python\\python.exe", a bundle's Python where the table has the usual venv's)."""
    if not argv or _PYTHON.search(argv[0]) is None:
        return argv
    shown = next(
        (
            c.argv[0]
            for c in fix.commands
            if c.argv and ("/" in c.argv[0] or "\\" in c.argv[0]) and _PYTHON.search(c.argv[0])
        ),
        None,
    )
    return (shown, *argv[1:]) if shown is not None else argv


def _after(purpose: str, fix: Remediation) -> str:
    if purpose == "cpu":  # after a switch, the fix's own CPU build (where it installs one) is only for space
        installs_cpu = any(INDEX_CPU in c.argv and "install" in c.argv for c in fix.commands)
        return (
            "The CPU build of torch after it only saves the space of CUDA's libraries. "
            if installs_cpu
            else ""
        )
    if purpose == "reinstall_torch":
        return "If it still reports a CPU build, install a CUDA build into its Python yourself: "
    return "Beyond that, "


CPU_BUILD = "torch.cpu_build"
APP_PIN_NEWEST_CC = 9  # the applications' own torch pins (cu121) have kernels up to Hopper's 9.0


def _newer_than_app_pins(facts: Facts) -> bool:
    """A GPU named in the paste that the applications' pinned builds have no kernels for (Blackwell, 10.0+)."""
    for gpu in facts.gpus:
        cc = gpu.compute_capability
        if isinstance(cc, str) and cc.split(".")[0].isdigit() and int(cc.split(".")[0]) > APP_PIN_NEWEST_CC:
            return True
    return False
