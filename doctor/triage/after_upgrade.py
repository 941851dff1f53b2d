"""CUDA's unknown error at start-up where the paste says it began after a system upgrade (and a reboot): the
upgrade is the suspect, not suspend and resume, which the catalogue's answer assumes (blind set 30: "upgraded my
system with apt upgrade ... then restarted the system and this problem appeared", in a container,
AbdBarho/stable-diffusion-webui-docker#388). A new kernel whose NVIDIA module did not build, driver libraries of
another version than the loaded module, or a container toolkit the upgrade changed: the host's own driver is
the first thing to see."""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.fixes.container_gpus import GPU_TEST
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Remediation, Target
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS, line_number

# the system upgraded: "apt upgrade", "after a system update", "upgraded my Ubuntu" (never a driver reinstalled
# as a remedy, "I already tried reinstalling the nvidia driver")
_SYSTEM_UPGRADE = lazy(
    r"\bapt(?:-get)?[ \t]+(?:dist-|full-)?upgrade\b"
    r"|\b(?:system|ubuntu|debian|fedora|os|kernel|security|software|package)[ \t]+(?:update|upgrade)s?\b"
    r"|\bupgraded[ \t]+(?:my[ \t]+|the[ \t]+)?(?:system|ubuntu|os|kernel|packages)\b",
    re.IGNORECASE,
)
# the suspend story itself, which the catalogue's answer already tells
_SUSPEND = lazy(r"\bsuspend|\bhibernat|\bwak(?:e|es|ing)[ \t]+(?:up[ \t]+)?from\b", re.IGNORECASE)
UNKNOWN_ERROR = "unknown_error"  # the catalogue's class of CUDA's unknown error (999, "CUDA unknown error")
ON_THE_HOST = "on the host: it must list the GPUs; an error here is the driver the upgrade left broken"


def system_upgraded(pasted: PastedText) -> int | None:
    """The line that says the system (not a driver the person reinstalled as a remedy) was upgraded before the
    failure, where no word tells the suspend story instead; None elsewhere."""
    text = pasted.paste.text[:MAX_CHARS]
    said = _SYSTEM_UPGRADE.search(text)
    if said is None or _SUSPEND.search(text) is not None:
        return None
    return line_number(text, said)


def unknown_error_after_an_upgrade(
    verdict: Verdict, pasted: PastedText, updated: int, container: bool
) -> Verdict:
    """The unknown error's verdict with the upgrade's story, where the paste says the machine was upgraded
    (`updated`: that line); `container`: the program runs in one, which needs its own test after the host's."""
    finding = verdict.finding
    errors = {h.line for h in pasted.hits if h.signature.cls == UNKNOWN_ERROR}
    if finding.check_id != "torch.cuda_init" or not errors.intersection(verdict.lines):
        return verdict
    commands = [
        Command(("nvidia-smi",), note=ON_THE_HOST + " (then `dkms status` and `uname -r`)", runs_here=False)
    ]
    if container:
        commands.append(
            Command(
                GPU_TEST,
                note="on the host: the GPUs through the container toolkit",
                runs_here=False,
            )
        )
    commands.append(
        Command(
            ("sudo", "modprobe", "nvidia-uvm"),
            note="if both work: the unified-memory module",
            runs_here=False,
        )
    )
    fix = Remediation(
        text=f"It began after a system upgrade (line {updated} of the paste), so the upgrade is the suspect, not "
        "suspend and resume: a new kernel whose NVIDIA module did not build (DKMS), driver libraries of another "
        "version than the loaded module, or a container toolkit the upgrade changed. See the host's driver first; "
        "if it answers, load the unified-memory module (not always loaded at boot without a desktop), then start "
        "the program" + (" and recreate its container" if container else "") + " again.",
        commands=tuple(commands),
        target=Target.SYSTEM,
    )
    return dataclasses.replace(verdict, finding=dataclasses.replace(finding, remediation=fix), find_out=None)
