"""NCCL settings the paste itself sets. Several NCCL_* variables exported together, beside an NCCL failure, are
most often copied from other threads while chasing it, and some contradict each other (NCCL_IB_DISABLE=1 next to
NCCL_IB_HCA and NCCL_IB_GID_INDEX; NCCL_P2P_DISABLE=1 next to NCCL_P2P_LEVEL): the failure the job hits is then
partly theirs, and what NCCL would say of the plain run is hidden. The first step is the plain run with only
NCCL_DEBUG=INFO (blind set 26: InstructGLM#3, eleven exports and a five-hour timeout)."""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Status
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS

# `export NCCL_IB_HCA=mlx5_2:1`, `NCCL_P2P_DISABLE=1 torchrun ...`, `os.environ["NCCL_SOCKET_IFNAME"] = "eth1"`,
# `set NCCL_DEBUG=INFO` (Windows), `-x NCCL_IB_DISABLE=1` (mpirun), `-e NCCL_P2P_LEVEL=NVL` (docker)
_SETTING = lazy(
    r"""(?:^|[\s;(])(?:export[ \t]+|set[ \t]+|-[xe][ \t]+|os\.environ\[["'])?(?P<name>NCCL_[A-Z0-9_]+)["']?\]?"""
    r"""[ \t]*=[ \t]*["']?(?P<value>[^\s"';]*)""",
    re.MULTILINE,
)
# what to keep: NCCL's own report
_DEBUGGING = frozenset({"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"})
COPIED = 3  # this many NCCL settings besides its debug output: a set gathered while chasing the failure


def nccl_settings(text: str) -> dict[str, tuple[str, int]]:
    """The NCCL variables the text sets, other than its debug output: name -> (value, line), the last setting."""
    found: dict[str, tuple[str, int]] = {}
    for match in _SETTING.finditer(text, 0, MAX_CHARS):
        if match["name"] not in _DEBUGGING:
            found[match["name"]] = (match["value"], text.count("\n", 0, match.start("name")) + 1)
    return found


def _contradictions(settings: dict[str, tuple[str, int]]) -> list[str]:
    said = []
    ib = sorted(n for n in settings if n.startswith("NCCL_IB_") and n != "NCCL_IB_DISABLE")
    if settings.get("NCCL_IB_DISABLE", ("",))[0] == "1" and ib:
        said.append(f"NCCL_IB_DISABLE=1 beside {', '.join(ib)}")
    if settings.get("NCCL_P2P_DISABLE", ("",))[0] == "1" and "NCCL_P2P_LEVEL" in settings:
        said.append("NCCL_P2P_DISABLE=1 beside NCCL_P2P_LEVEL")
    return said


def with_the_settings_set(verdict: Verdict, pasted: PastedText) -> Verdict:
    """An NCCL failure beside COPIED or more NCCL settings: the plain run first, with only NCCL_DEBUG=INFO."""
    finding = verdict.finding
    fix = finding.remediation
    if finding.check_id != "nccl.communication" or finding.status is not Status.FAIL or fix is None:
        return verdict
    settings = nccl_settings(pasted.paste.text)
    if len(settings) < COPIED:
        return verdict
    lines = sorted(line for _, line in settings.values())
    clash = _contradictions(settings)
    unset = Command(
        ("unset", *settings),
        note="in the shell that starts the job (or drop them from the script); keep NCCL_DEBUG=INFO",
        runs_here=False,
    )
    text = (
        f"The paste sets {len(settings)} NCCL variables (lines {lines[0]}-{lines[-1]})"
        + (f", some of which contradict each other ({'; '.join(clash)})" if clash else "")
        + ": settings gathered while chasing a failure change what fails and hide what NCCL says of the plain "
        "run. Unset them all, run again with only NCCL_DEBUG=INFO, and read the 'NCCL WARN' lines; add back "
        "only a setting that a WARN line asks for. Then: " + fix.text
    )
    fix = dataclasses.replace(fix, text=text, commands=(unset, *fix.commands))
    return dataclasses.replace(
        verdict,
        finding=dataclasses.replace(finding, remediation=fix),
        lines=tuple(sorted({*verdict.lines, *lines})),
    )
