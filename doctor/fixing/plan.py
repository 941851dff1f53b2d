"""The fix plan: the report's remediations in the order a person applies them (the setup wizard, DESIGN §3).

Pure: a Report in, a FixPlan out. Order: what hides the GPU (an eGPU not authorized), the NVIDIA driver (system), torch with torchvision and torchaudio
into the target interpreter (python-env), every other warning or failure whose fix has commands, a reboot
when a needed step asks for one, and a last check that everything works. gpu-doctor itself only ever runs a
step's `runnable_argv` (doctor/fixing/apply.py): `python -m pip ...` in the target interpreter. System commands are
shown for the person to run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from torch_gpu_doctor import TOOL_NAME
from torch_gpu_doctor.checks.support.causes import first_cause
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.gpu_state import device_access_refused, driver_hung, gpu_not_initialised
from torch_gpu_doctor.fixes.kernel_modules import REBOOT, gpu_lost, load_nvidia_module, reload_after_upgrade
from torch_gpu_doctor.fixes.recommendation import Recommendation
from torch_gpu_doctor.fixes.torch_wheel import install_remediation
from torch_gpu_doctor.model import Command, Finding, Remediation, Status, Target
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.report import ENVIRONMENT_CAUSES, Report
from torch_gpu_doctor.unavailable import Unavailable

DRIVER_KEY, TORCH_KEY, REBOOT_KEY, VERIFY_KEY = "driver", "torch", "reboot", "verify"
# The checks whose system fix is "the driver": installing it, loading its module, rebooting into an update.
# torch.* checks carry a system fix only when no wheel runs on the installed driver (torch_wheel.fix_for_torch).
DRIVER_CHECKS = ("driver.installed", "driver.nvml", "driver.reboot_pending")
# torch checks whose system-wide fix is a newer driver (torch.cuda_init's system fixes are reboots, services
# and environment: steps of their own)
DRIVER_UPDATING_TORCH_CHECKS = ("torch.driver_compat",)
PROBLEMS = (Status.FAIL, Status.WARN)
# Checks whose fix makes a hidden GPU appear (an eGPU enclosure not authorized): planned before the driver,
# each step named for what the person does
REVEALING_CHECKS = {
    "egpu.authorized": "Authorize the Thunderbolt/USB4 enclosure",
    "platform.container_gpus": "Pass the GPUs into the container",
    "platform.virtual_machine": "Give the virtual machine a GPU",
}
# A step is named for what the person does, not for what the check hopes to see; checks not listed keep
# their title. Some checks have several fixes: the name covers each of them.
ACTION_TITLES = {
    "driver.secure_boot": "Let Secure Boot load the NVIDIA module (sign it, or turn Secure Boot off)",
    "driver.nouveau": "Turn nouveau off",
    "driver.kernel_module_build": "Build the NVIDIA module for the running kernel",
    "driver.xid_errors": "Recover the GPU after its Xid errors",
    "driver.nvml": "Make the driver's management library (NVML) answer",
    "gpu.present": "Find out why the driver cannot use the GPU",
    "gpu.persistence_mode": "Turn persistence mode on",
    "gpu.throttle": "Fix the GPU's cooling or power",
    "gpu.memory_errors": "Have the GPU's bad memory retired (reset or reboot)",
    "platform.container_gpus": "Pass the GPUs into the container",
    "platform.wsl_linux_driver": "Remove the Linux NVIDIA driver from WSL",
    "platform.wsl_gpu": "Update the Windows NVIDIA driver and WSL",
    "platform.virtual_machine": "Give the virtual machine a GPU",
    "platform.iommu_p2p": "Let GPU peer-to-peer traffic take its direct path",
    "memory.shm": "Make /dev/shm larger",
    "memory.locked_limit": "Raise the locked-memory limit",
    "env.cuda_visible_devices": "Fix CUDA_VISIBLE_DEVICES",
    "env.library_path": "Stop LD_LIBRARY_PATH overriding torch's CUDA libraries",
    "python.env_kind": "Make a virtual environment for torch",
    "pcie.link": "Give the GPU its full PCIe link",
    "torch.companions": "Install the torchvision and torchaudio that match torch",
    "torch.installed": "Let the environment's own torch import first",
    "torch.nvidia_wheels": "Install the nvidia-* wheels torch needs",
}


@dataclass(frozen=True)
class FixStep:
    key: str  # stable: "driver", "torch", "reboot", "verify", or the check id it comes from
    title: str
    why: str  # plain words: what is wrong and what this step changes (or why nothing is needed)
    remediation: Remediation | None  # None when nothing is needed
    needed: bool
    check_ids: tuple[str, ...]  # the findings this step answers: compare them after applying
    runnable_argv: tuple[str, ...] | None  # the one command gpu-doctor may run itself, else None
    waits_for: str | None = None  # the key of a step that must be done before this one can be planned
    applies: bool = True  # False: nothing to do because it does not apply here (no NVIDIA GPU: no driver)


@dataclass(frozen=True)
class FixPlan:
    python: str  # the target interpreter (facts.python.executable); "" when it could not be read
    steps: tuple[FixStep, ...]

    @property
    def changes_needed(self) -> bool:
        """True when a step other than the final verification has something to do."""
        return any(s.needed for s in self.steps if s.key != VERIFY_KEY)

    def step(self, key: str) -> FixStep | None:
        return next((s for s in self.steps if s.key == key), None)


def pip_may_install(facts: Facts) -> bool:
    """False for a system Python marked externally managed (PEP 668): pip refuses to install into it."""
    packages, py = facts.torch_packages, facts.python
    managed = not isinstance(packages, Unavailable) and packages.externally_managed
    in_env = not isinstance(py, Unavailable) and (
        py.in_virtualenv is True or isinstance(py.conda_prefix, str)
    )
    return not managed or in_env


def runnable_argv(
    remediation: Remediation, python: str, facts: Facts | None = None
) -> tuple[str, ...] | None:
    """The first command, when it is `python -m pip ...` for the target interpreter of a python-env fix
    (and, given the facts, when pip will not refuse that interpreter: offering a run bound to fail is not
    a fix)."""
    if remediation.target is not Target.PYTHON_ENV or not remediation.commands or not python:
        return None
    if facts is not None and not pip_may_install(facts):
        return None
    first = remediation.commands[0]
    argv = first.argv
    if first.stdin or len(argv) < 4 or argv[0] != python or argv[1:3] != ("-m", "pip"):
        return None
    return argv


def plan_fixes(report: Report) -> FixPlan:
    facts = report.facts
    python = facts.python.executable if not isinstance(facts.python, Unavailable) else ""
    # A symptom whose cause has a fix is answered by that fix: it gets no step of its own, so no step runs
    # before the one it depends on (a modprobe before Secure Boot signing would fail).
    covered = {f.check_id: root for f in report.findings if (root := _fixing_cause(f, report)) is not None}
    problems = [f for f in report.findings if f.status in PROBLEMS and f.check_id not in covered]
    # What hides the GPU comes first: the driver and the wheel are planned for the GPUs visible now
    reveal = [
        replace(step, title=REVEALING_CHECKS[step.key]) for step in _revealing_steps(report, problems, python)
    ]
    driver = _driver_step(report, problems)
    if reveal and not driver.needed:
        driver = replace(driver, why=_driver_after(reveal[0]), waits_for=reveal[0].key)
    torch = _torch_step(report, problems, python, driver.needed)
    rec = report.recommended_install
    if (
        reveal and torch.needed and rec is not None and rec.variant == "cpu"
    ):  # chosen for no GPU: one is coming
        torch = replace(torch, needed=False, why=_torch_after(reveal[0], torch), waits_for=reveal[0].key)
    done = {
        *(cid for step in reveal for cid in step.check_ids),
        *(driver.check_ids if driver.needed else ()),
        *(torch.check_ids if torch.needed else ()),
    }
    taken = {_identity(s.remediation) for s in (*reveal, driver, torch) if s.remediation is not None}
    steps = [*reveal, driver, torch, *_by_root(_other_steps(report, problems, done, taken, python), report)]
    steps = [_with_symptoms(step, covered) for step in steps]
    reboot = _reboot_step(steps)
    if reboot is not None:  # one reboot at the end: the steps before it do not each reboot on their own
        steps = [_without_reboot(s) for s in steps]
        steps.append(reboot)
    steps.append(_verify_step(_python_after(steps) or python))
    return FixPlan(python=python, steps=tuple(steps))


def _action_title(rem: Remediation) -> str | None:
    """A fix shared by several checks is named for itself, not for the check that happened to give it."""
    if rem == gpu_not_initialised():
        return "Find out why the driver cannot start the GPU (its kernel messages)"
    if rem == driver_hung():
        return "Recover the hung driver (kernel log, then reset or reboot)"
    return None


def _by_root(steps: list[FixStep], report: Report) -> list[FixStep]:
    """The other steps in the order of the report's root causes (the most telling first), then the rest."""
    rank = {f.check_id: i for i, f in enumerate(report.roots())}
    return sorted(steps, key=lambda s: min((rank.get(c, len(rank)) for c in s.check_ids), default=len(rank)))


def _python_after(steps: Sequence[FixStep]) -> str | None:
    """The interpreter a needed step creates (`python -m venv DIR`): the one to check afterwards."""
    for step in steps:
        if step.needed and step.remediation is not None:
            for command in step.remediation.commands:
                if command.argv[1:3] == ("-m", "venv") and len(command.argv) == 4:
                    return f"{command.argv[3]}/bin/python"
    return None


def _torch_after(reveal: FixStep, torch: FixStep) -> str:
    command = (
        torch.remediation.commands[0].display() if torch.remediation and torch.remediation.commands else ""
    )
    stay = f" To stay on the CPU instead: `{command}`." if command else ""
    return (
        f'Not yet: the build is chosen for the GPUs that are visible, and "{reveal.title}" adds one. Then run '
        f"this plan again (`{TOOL_NAME} setup`).{stay}"
    )


def _fixing_cause(finding: Finding, report: Report) -> Finding | None:
    """The root cause whose fix answers this problem, when it has one."""
    if finding.status not in PROBLEMS:
        return None
    root = first_cause(finding, report.findings)
    return root if root is not None and root.remediation is not None else None


def _with_symptoms(step: FixStep, covered: dict[str, Finding]) -> FixStep:
    """A step also answers the symptoms of its findings: compare them too after applying it."""
    if not step.needed:
        return step
    symptoms = [cid for cid, root in covered.items() if root.check_id in step.check_ids]
    return replace(step, check_ids=tuple(dict.fromkeys((*step.check_ids, *symptoms))))


def _revealing_steps(report: Report, problems: Sequence[Finding], python: str) -> list[FixStep]:
    """The steps of REVEALING_CHECKS, each with every finding its fix answers (egpu.tunnel's is the same)."""
    fixes = {
        _identity(f.remediation)
        for f in problems
        if f.check_id in REVEALING_CHECKS and f.remediation is not None
    }
    answered = [f for f in problems if f.remediation is not None and _identity(f.remediation) in fixes]
    return [s for s in _other_steps(report, answered, set(), set(), python) if s.key in REVEALING_CHECKS]


def _driver_after(reveal: FixStep) -> str:
    return (
        f'Not yet: no NVIDIA GPU is visible until "{reveal.title}" is done. Then run this plan again '
        f"(`{TOOL_NAME} setup`): it plans the driver for the GPU it finds."
    )


def _identity(remediation: Remediation) -> tuple[object, ...]:
    """Two findings with the same commands (or, without commands, the same text) have one fix."""
    if remediation.commands:
        return (remediation.target, remediation.commands)
    return (remediation.target, remediation.text)


def _is_driver_fix(finding: Finding) -> bool:
    rem = finding.remediation
    return (
        rem is not None
        and rem.target is Target.SYSTEM
        and (finding.check_id in DRIVER_CHECKS or finding.check_id in DRIVER_UPDATING_TORCH_CHECKS)
    )


def _driver_priority(finding: Finding) -> int:
    if finding.check_id == "driver.installed":
        return 0
    if finding.check_id.startswith("torch."):
        return 1
    return 2 + DRIVER_CHECKS.index(finding.check_id)


def _driver_step(report: Report, problems: Sequence[Finding]) -> FixStep:
    sources = sorted((f for f in problems if _is_driver_fix(f)), key=_driver_priority)
    if not sources:
        verdict = next((f for f in report.findings if f.check_id == "driver.installed"), None)
        applies = (
            verdict is None or verdict.status is not Status.SKIP
        )  # skip: no NVIDIA GPU, no driver needed
        return FixStep(
            DRIVER_KEY, "NVIDIA driver", _driver_fine(report.findings), None, False, (), None, applies=applies
        )
    source = sources[0]
    rem = source.remediation
    assert rem is not None
    ids = [f.check_id for f in problems if _answered_by_driver_step(f, source, rem)]
    return FixStep(
        DRIVER_KEY,
        _driver_title(source, rem, report.facts),
        f"{source.summary} {rem.text}",
        rem,
        True,
        tuple(dict.fromkeys(ids)),
        None,
    )


def _answered_by_driver_step(finding: Finding, source: Finding, rem: Remediation) -> bool:
    """The same fix; a driver check with no fix of its own; or a wheel that waits for the driver being
    installed. A different driver fix (reboot after an update, beside a module to load) stays its own step."""
    if finding.remediation is None:
        return finding.check_id in DRIVER_CHECKS
    if _identity(finding.remediation) == _identity(rem):
        return True
    installs = source.check_id == "driver.installed" and rem != load_nvidia_module()
    return installs and finding.check_id.startswith("torch.") and _is_driver_fix(finding)


def _driver_fine(findings: Sequence[Finding]) -> str:
    """Why no driver step is needed, in the words of driver.installed's own verdict."""
    verdict = next((f for f in findings if f.check_id == "driver.installed"), None)
    if verdict is None:
        return "driver.installed did not run, so there is nothing to plan for the driver."
    if verdict.status in (Status.PASS, Status.SKIP):
        return f"Nothing to do: {_lower_first(verdict.summary)}"
    cause = first_cause(verdict, findings)
    if cause is not None:
        return f"{verdict.summary} That follows from {cause.check_id}: its step fixes it, no driver change is needed."
    return f"{verdict.summary} {TOOL_NAME} cannot plan a driver change from this."


def _lower_first(text: str) -> str:
    """'No NVIDIA GPU here' -> 'no NVIDIA GPU here'; 'NVIDIA driver' stays as it is."""
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        return text[0].lower() + text[1:]
    return text


def _driver_title(source: Finding, rem: Remediation, facts: Facts) -> str:
    if rem == load_nvidia_module():
        return "Load the NVIDIA kernel module"
    if rem == reload_after_upgrade():
        return "Reboot into the updated NVIDIA driver"
    if rem == gpu_lost():
        return "Reboot to bring the lost GPU back"
    if rem == device_access_refused():
        return "Give this process access to the NVIDIA devices"
    if rem == driver_hung():
        return "Recover the hung driver (kernel log, then reset or reboot)"
    if not isinstance(facts.os, Unavailable) and facts.os.is_wsl:
        return "Install or update the NVIDIA driver on Windows"
    if source.check_id.startswith("torch."):
        return "Update the NVIDIA driver"
    return "Install the NVIDIA driver"


def _torch_title(rec: Recommendation) -> str:
    parts = [f"torch {rec.torch} ({rec.variant})"]
    parts += [f"torchvision {rec.torchvision}"] if rec.torchvision else []
    parts += [f"torchaudio {rec.torchaudio}"] if rec.torchaudio else []
    listed = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
    return f"Install {listed}"


def _torch_step(report: Report, problems: Sequence[Finding], python: str, driver_needed: bool) -> FixStep:
    rec = report.recommended_install
    if rec is None:
        why = (
            "No torch wheel runs on the installed driver: update the driver first, then run "
            f"`{TOOL_NAME} fix` again to choose the wheel."
            if driver_needed
            else f"{TOOL_NAME} has no torch wheel to recommend for this Python, platform and GPU."
        )
        return FixStep(TORCH_KEY, "Install torch", why, None, False, (), None)
    rem = install_remediation(report.facts, rec)
    same = _identity(rem)
    answered = [f for f in problems if f.remediation is not None and _identity(f.remediation) == same]
    title = _torch_title(rec)
    if rec.already_installed and not answered:
        why = f"Nothing to do: torch {rec.torch} ({rec.variant}) is installed already; {rec.reason}."
        return FixStep(TORCH_KEY, title, why, None, False, (), None)
    elsewhere = [r.check_id for r in report.roots() if r.check_id in ENVIRONMENT_CAUSES]
    if elsewhere and not report.install_needed():  # a reinstall would change nothing: the environment decides
        why = (
            f"Not needed: the torch build is not the problem here, {elsewhere[0]} is. Fix that first; "
            f"`{TOOL_NAME} fix` then shows whether torch itself still needs a change."
        )
        return FixStep(TORCH_KEY, title, why, None, False, (), None)
    # torch findings without a fix of their own (torch.cuda_init) are answered by the right wheel too
    ids = [f.check_id for f in answered] + [
        f.check_id for f in problems if f.check_id.startswith("torch.") and f.remediation is None
    ]
    wrong = " ".join(f.summary for f in answered) or f"{TOOL_NAME} recommends another torch build."
    why = " ".join([wrong, rem.text])
    argv = runnable_argv(rem, python, report.facts)
    return FixStep(TORCH_KEY, title, why, rem, True, tuple(dict.fromkeys(ids)), argv)


def _other_steps(
    report: Report,
    problems: Sequence[Finding],
    done: set[str],
    taken: set[tuple[object, ...]],
    python: str,
) -> list[FixStep]:
    titles = {s.id: s.title for s in report.specs}
    grouped: dict[tuple[object, ...], list[Finding]] = {}
    for f in problems:
        rem = f.remediation
        # a fix without a command (a firmware setting, a VM's passthrough) is a step too: never "nothing to do"
        if f.check_id in done or rem is None or _identity(rem) in taken:
            continue
        grouped.setdefault(_identity(rem), []).append(f)
    steps = []
    for group in grouped.values():
        first = group[0]
        rem = first.remediation
        assert rem is not None
        steps.append(
            FixStep(
                first.check_id,
                _action_title(rem)
                or ACTION_TITLES.get(first.check_id)
                or titles.get(first.check_id, first.check_id),
                " ".join([*(f.summary for f in group), rem.text]),
                rem,
                True,
                tuple(f.check_id for f in group),
                runnable_argv(rem, python, report.facts),
            )
        )
    return steps


def _reboot_step(steps: Sequence[FixStep]) -> FixStep | None:
    rebooting = [s for s in steps if s.needed and s.remediation is not None and s.remediation.requires_reboot]
    if not rebooting:
        return None
    only = rebooting[0].remediation if len(rebooting) == 1 else None
    if only is not None and any(c.argv == REBOOT.argv for c in only.commands):
        return None  # that one step has the reboot among its commands already: one is enough
    names = "; ".join(s.title for s in rebooting)
    return FixStep(
        REBOOT_KEY,
        "Reboot",
        f"These steps take effect only after a restart: {names}. Reboot once, after all of them.",
        Remediation(
            text="Restart the machine once every step above is done.",
            commands=(REBOOT,),
            requires_reboot=True,
            target=Target.SYSTEM,
        ),
        True,
        tuple(dict.fromkeys(cid for s in rebooting for cid in s.check_ids)),
        None,
    )


def _without_reboot(step: FixStep) -> FixStep:
    rem = step.remediation
    if rem is None or not any(c.argv == REBOOT.argv for c in rem.commands):
        return step
    kept = tuple(c for c in rem.commands if c.argv != REBOOT.argv)
    return replace(step, remediation=replace(rem, commands=kept))


def _verify_step(python: str) -> FixStep:
    argv = (TOOL_NAME, "--smoke", "quick") + (("--python", python) if python else ())
    return FixStep(
        VERIFY_KEY,
        f"Re-run {TOOL_NAME} and the quick smoke test",
        "Checks everything again and proves that the GPU computes correctly with the installed torch.",
        Remediation(
            text=f"Re-run {TOOL_NAME} with the quick smoke test.",
            commands=(Command(argv, note="checks everything again and runs a short GPU test"),),
            target=Target.SYSTEM,
        ),
        True,
        (),
        None,
    )
