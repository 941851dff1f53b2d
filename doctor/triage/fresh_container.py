"""NVML's Unknown Error in a container the paste shows being started (`docker run --rm --gpus all IMAGE
nvidia-smi`), with no word that it ever worked: not the daemon-reload that takes the GPUs' device files from a
container that ran for days, but the toolkit's setup of every new container (blind set 27: ublue-os/bluefin#3883,
a fresh run on Fedora atomic; NVIDIA/nvidia-container-toolkit#115 and nvidia-docker#1171 alike)."""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.fixes.container_gpus import new_containers_without_devices
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS, line_number

NVML_UNKNOWN = "nvml_unknown_error"
NVML = "driver.nvml"
DETAILS = (
    "NVML found the driver's library but could not open the GPUs' device files (/dev/nvidia*). In a container "
    "started just now that is how the container was set up, where a container that ran for days loses them to "
    "the host's `systemctl daemon-reload`."
)

# a container being started: `docker run`, `podman run`, `nerdctl run`, `docker container run`
_RUN = lazy(r"\b(?:docker|podman|nerdctl)[ \t]+(?:container[ \t]+)?run\b")
# words that the container, or containers on this host, worked before: a daemon-reload, hours or days of running
_WORKED_BEFORE = lazy(
    r"daemon-reload|(?<!never[ \t])(?<!n't[ \t])(?<!not[ \t])\bworked\b|\bworks?[ \t]+(?:well|fine|great|until)\b"
    r"|\bsuddenly\b|\brandom(?:ly)?\b|\bafter[ \t]+(?:a[ \t]+(?:while|few|couple)|some[ \t]+time|running)\b"
    r"|\b(?:for|after)[ \t]+(?:\w+[ \t]+)?(?:hours|days|weeks)\b|"
    r"\bstopped[ \t]+working\b|\bno[ \t]+longer\b|\banymore\b",
    re.IGNORECASE,
)


def started_just_now(pasted: PastedText) -> int | None:
    """The line of the container run that NVML's Unknown Error follows, where no word says it worked before."""
    text = pasted.paste.text[:MAX_CHARS]
    error = next((h.line for h in pasted.hits if h.signature.id == NVML_UNKNOWN), None)
    if error is None or _WORKED_BEFORE.search(text) is not None:
        return None
    runs = [line_number(text, m) for m in _RUN.finditer(text)]
    before = [line for line in runs if line <= error]
    return before[-1] if before else None


def in_a_new_container(verdict: Verdict, pasted: PastedText) -> Verdict:
    """NVML's Unknown Error right after a container's start: the toolkit's device setup, not a lost cgroup."""
    finding = verdict.finding
    if finding.check_id != NVML or finding.remediation is None:
        return verdict
    line = started_just_now(pasted)
    if line is None:
        return verdict
    summary = (
        f"A container started just now (line {line} of the paste) gets NVIDIA's libraries but not the GPUs' "
        "device files: NVML's Unknown Error there is the container toolkit's setup, not a GPU fault."
    )
    return dataclasses.replace(
        verdict,
        finding=dataclasses.replace(
            finding, summary=summary, details=DETAILS, remediation=new_containers_without_devices()
        ),
        find_out="docker info | grep -iE 'cgroup|runtimes|selinux'   # the cgroup version and driver, the runtimes",
    )
