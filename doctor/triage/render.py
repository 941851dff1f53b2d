"""Triage as text and as one JSON document.

The text leads with what a person acts on: the most likely cause in one sentence and how sure it is, the exact
fix, the one command that settles the rest on that machine, and `gpu-doctor --json` for everything a paste
never shows. What the paste showed, the other findings and what stays unknown follow.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

from torch_gpu_doctor import TOOL_NAME, __version__
from torch_gpu_doctor.checks.support.driver import forward_compat
from torch_gpu_doctor.checks.support.signatures import Hit
from torch_gpu_doctor.compat.program_reports import report_to_ask
from torch_gpu_doctor.facts.describe import gib
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Remediation, Status, escape_controls
from torch_gpu_doctor.serialize import json_document, to_json
from torch_gpu_doctor.triage.build_env import extension_probe
from torch_gpu_doctor.triage.healthy import healthy_next_step
from torch_gpu_doctor.triage.hunch import Hunch
from torch_gpu_doctor.triage.interpreter import interpreter_shown
from torch_gpu_doctor.triage.outcome import WHOLE_MACHINE, Confidence, Kind, Triage, Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.paste_facts import TORCH_VERSION_UNSAID
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis
from torch_gpu_doctor.triage.prose import GPU_NOT_FOUND, MAX_CHARS, Said
from torch_gpu_doctor.triage.shown_error import ShownError
from torch_gpu_doctor.triage.where import NO_NVIDIA_GPU
from torch_gpu_doctor.triage.whose import about_amd, mentions_torch
from torch_gpu_doctor.unavailable import Reason, Unavailable

TRIAGE_SCHEMA = "gpu-doctor triage v2"
_ABSENT = "not in the paste"
PART_NAMES = {
    "collect_env": "a collect_env report",
    "nvidia_smi": "nvidia-smi output",
    "pip_list": "a pip package list",
    "conda_list": "a conda package list",
    "kernel_log": "kernel log lines",
    "ldd": "ldd output",
    "session": "a Python session",
    "xformers_info": "python -m xformers.info output",
    "nvidia_smi_topo": "nvidia-smi topo -m output",
    "p2p_test": "p2pBandwidthLatencyTest output",
    "nccl_log": "an NCCL debug log",
    "error": "known error messages",
    "unknown_error": "an error it does not know",
}
SURE = {
    Confidence.STATED: "the paste says so",
    Confidence.INFERRED: "inferred from gpu-doctor's GPU and driver tables",
    Confidence.LIKELY: "the usual cause of what the paste shows; the command below settles it",
}


def _parts_line(pasted: PastedText) -> str:
    kinds: dict[str, list[str]] = {}
    for part in pasted.parts:
        span = (
            str(part.first_line)
            if part.first_line == part.last_line
            else f"{part.first_line}-{part.last_line}"
        )
        kinds.setdefault(part.kind, []).append(span)
    read = "; ".join(
        f"{PART_NAMES.get(k, k)} (line{'s' if len(v) > 1 or '-' in v[0] else ''} {', '.join(v)})"
        for k, v in kinds.items()
    )
    unread = (
        f"; {len(pasted.unread)} line{'s' if len(pasted.unread) != 1 else ''} not understood"
        if pasted.unread
        else ""
    )
    return (read or "nothing gpu-doctor knows") + unread


def header_lines(facts: Facts, said_torch: Said | None = None, no_gpu_said: bool = False) -> list[str]:
    """What the paste shows, whichever part said it. `said_torch`: a version the words give where the facts
    have none (untagged, on a platform whose default build is not known: the checks do not use it);
    `no_gpu_said`: the words say the machine has no NVIDIA GPU, so none is assumed."""
    packages, driver, runtime = facts.torch_packages, facts.driver, facts.torch
    if isinstance(packages, Unavailable) and said_torch is not None:
        torch = f"torch {said_torch.value} (said on line {said_torch.line}; its build is not in the paste)"
    elif isinstance(packages, Unavailable):
        torch = f"torch: {_ABSENT}"
    elif packages.version is None:
        torch = (
            "torch: not importable (PyTorch version: N/A)"
            if packages.distributions or packages.torch_paths == ()
            else "torch: not installed"
        )
    else:
        version = "" if packages.version == TORCH_VERSION_UNSAID else f" {packages.version}"
        build = (
            f"CUDA {packages.cuda} build"
            if packages.cuda
            else f"ROCm {packages.hip} build"
            if packages.hip
            # it reached the GPU: a GPU build whose CUDA the paste does not say (an old untagged version)
            else "a GPU build; its CUDA is not in the paste"
            if not isinstance(runtime, Unavailable) and runtime.cuda_available is True
            else "CPU-only build"
        )
        torch = f"torch{version} ({build})"
    python = facts.python
    py = (
        f"Python {python.version}"
        if not isinstance(python, Unavailable) and isinstance(python.version, str)
        else ""
    )
    os_facts = facts.os
    where = (
        " · ".join(
            x
            for x in (
                os_facts.distro_name
                if isinstance(os_facts.distro_name, str)
                else {"Darwin": "macOS"}.get(os_facts.system, os_facts.system),
                _wsl_said(facts) if os_facts.is_wsl else "",
            )
            if x
        )
        if not isinstance(os_facts, Unavailable)
        else f"OS {_ABSENT}"
    )
    gpus = ", ".join(
        g.name + (f" ({gib(g.memory_total_bytes)})" if isinstance(g.memory_total_bytes, int) else "")
        for g in facts.gpus
        if isinstance(g.name, str)
    )
    if not gpus and no_gpu_said:
        gpus = "none: the paste says the machine has no NVIDIA GPU"
    elif not gpus and facts.gpus:  # the unnamed GPU a CUDA paste implies
        gpus = "none named in the paste (it is about CUDA, so an NVIDIA GPU is assumed)"
    if not gpus and facts.jetson_board is not None:  # its GPU is the SoC's: the board says which
        board = facts.jetson_board
        gpus = f"{board.integrated_gpu()}" + (f", L4T {board.l4t}" if board.l4t else "")
    if isinstance(driver, Unavailable):
        drv = _ABSENT
    elif isinstance(driver.version, str):
        cuda = f", supports CUDA ≤ {driver.cuda_version}" if isinstance(driver.cuda_version, str) else ""
        if (compat := forward_compat(facts)) is not None:  # what libcuda reports is a compat copy's
            cuda = f", supports CUDA ≤ {compat.own} (CUDA {compat.reported} shown: a forward-compatibility libcuda)"
        drv = driver.version + cuda
    elif isinstance(driver.cuda_version, str):
        drv = f"version {_ABSENT}; it supports CUDA ≤ {driver.cuda_version} (torch's warning)"
    elif driver.version.reason is Reason.NOT_RECORDED:  # a driver may answer; the paste does not say
        drv = f"version {_ABSENT}" + (" (a Jetson: no nvidia-smi there)" if driver.is_jetson else "")
    else:
        drv = f"none answers ({driver.version.detail})" if driver.version.detail else "none answers"
    available = _ABSENT
    if not isinstance(runtime, Unavailable):
        available = {True: "True", False: "False", None: _ABSENT}[runtime.cuda_available]
        if runtime.outcome != "ok":
            available = f"torch failed to import: {runtime.message}"
    topology = facts.topology
    if not gpus and not isinstance(topology, Unavailable):  # a matrix counts them, without their names
        gpus = f"{len(topology.gpus)} in the topology matrix (their names are not in the paste)"
    lines = [
        " · ".join(x for x in (torch, py) if x),
        where,
        f"GPUs: {gpus or _ABSENT}",
        f"NVIDIA driver: {drv}",
    ]
    lines.append(f"Is CUDA available: {available}")
    if not isinstance(runtime, Unavailable) and runtime.arch_list:
        lines.append(f"torch's kernels are built for: {' '.join(runtime.arch_list)}")
    return lines


def _fix_lines(fix: Remediation | None, indent: str, windows: bool = False) -> list[str]:
    if fix is None:
        return []
    lines = [f"{indent}Fix: {fix.text}"]
    lines += [
        f"{indent}  $ {c.display(windows)}" + (f"   # {c.note}" if c.note else "") for c in fix.commands
    ]
    return lines


KNOWN_SHOWN = 3  # known messages explained beside "no problem found"


def render_text(diagnosis: PasteDiagnosis, source: str, out: TextIO) -> None:
    pasted, facts, result = diagnosis.pasted, diagnosis.facts, diagnosis.result
    out.write(f"{TOOL_NAME} triage · {source}\n")
    out.write(f"Read: {_parts_line(pasted)}\n")
    for note in pasted.paste.notes:
        out.write(f"Note: {note}\n")
    if pasted.paste.encoding not in ("utf-8",):
        out.write(f"Note: decoded as {pasted.paste.encoding}\n")
    out.write("\n")
    cause = result.cause
    windows = not isinstance(facts.os, Unavailable) and facts.os.system == "Windows"  # cmd's quotes, not sh's
    if cause is None and result.unrecognised is not None:
        out.writelines(
            f"{line}\n"
            for line in unrecognised_lines(
                result.unrecognised,
                facts,
                reported=pasted.collect_env is not None,
                python=_PYTHON_SHOWN.search(pasted.paste.text, 0, MAX_CHARS) is not None
                or mentions_torch(pasted.paste.text[:MAX_CHARS]),
                amd=about_amd(facts, pasted)
                or _AMD_SHOWN.search(pasted.paste.text, 0, MAX_CHARS) is not None,
                guess=result.hunch,
                program_report=report_to_ask(pasted.paste.text[:MAX_CHARS]),
            )
        )
        probe = (
            extension_probe(pasted.collect_env, interpreter_shown(facts))
            if result.unrecognised.said
            else None
        )
        if probe is not None:  # an extension project's report: its own build is what such reports are about
            out.write(
                "  How this project's compiled operators were built is not in the report; this says:\n"
                f"    $ {probe}\n"
            )
    elif cause is None:
        out.write(f"No problem found in what this paste shows{_STILL_FAILS if pasted.hits else _NO_ERROR}\n")
        first: dict[str, Hit] = {}
        for hit in pasted.hits:  # each entry once, at the first line it matched
            first.setdefault(hit.signature.id, hit)
        known = list(first.values())[:KNOWN_SHOWN]
        if known:  # a message it knows that is no problem (WSL's ldconfig warning) is still explained
            out.write("  What the messages it knows mean:\n")
            out.writelines(f"    - line {h.line}: {escape_controls(h.signature.means)}\n" for h in known)
        ruled_out = _ruled_out(result)
        if ruled_out:  # what the paste does settle: where the failure it does not show cannot be
            out.write("  What it rules out:\n")
            out.writelines(f"    - {escape_controls(summary)}\n" for summary in ruled_out)
        unused = healthy_next_step(result, pasted, facts)
        if unused is not None:  # "running only on CPU", a GPU without its name, beside a stack that works
            fix = unused[1]
            out.write(escape_controls("\n".join(_fix_lines(fix, "  ")).replace("Fix: ", "Next: ", 1)) + "\n")
        probe = extension_probe(pasted.collect_env, interpreter_shown(facts))
        if probe is not None:  # an extension project's report: its own build is what such reports are about
            out.write(
                "  How this project's compiled operators were built is not in the report; this says:\n"
                f"    $ {probe}\n"
            )
    else:
        f = cause.finding
        sure = SURE.get(result.confidence or "", "")
        out.write(f"Most likely cause ({sure}): {f.summary}\n")
        if f.details:
            out.write(f"  {f.details}\n")
        out.writelines(f"{line}\n" for line in _fix_lines(f.remediation, "  ", windows))
        if cause.lines:
            out.write(
                f"  From the paste: line{'s' if len(cause.lines) > 1 else ''} {', '.join(map(str, cause.lines))}\n"
            )
    settle = cause.find_out if cause is not None and cause.find_out else None
    if settle:
        out.write(f"\nTo be sure, run this on that machine: {settle}\n")
    out.write(
        f"Everything a paste cannot show (PCIe, eGPU, modules, storage): run `{WHOLE_MACHINE}` there.\n"
    )
    out.write("\nWhat the paste shows\n")
    # the words' "no NVIDIA GPU", where the verdicts took it (never beside a driver that answered)
    no_gpu = cause is not None and cause.finding.summary.startswith(NO_NVIDIA_GPU)
    out.writelines(f"  {line}\n" for line in header_lines(facts, pasted.prose.torch, no_gpu))
    lines = pasted.paste.text.split("\n")
    others = [
        v
        for v in result.verdicts
        if v.kind == Kind.PROBLEM and v is not cause and not _said_already(v, cause, result.verdicts, lines)
    ]
    if others:
        out.write("\nAlso found\n")
        for v in others:
            out.write(f"  {v.finding.status.value.upper():<5} {v.finding.check_id}: {v.finding.summary}\n")
            out.writelines(f"{line}\n" for line in _fix_lines(v.finding.remediation, "        ", windows))
    unknown = [v for v in result.verdicts if v.kind == Kind.UNKNOWN]
    if unknown:
        out.write("\nUnknown from this paste (run on that machine to know)\n")
        by_command: dict[str, list[str]] = {}
        for v in unknown:
            by_command.setdefault(v.find_out or WHOLE_MACHINE, []).append(v.finding.check_id)
        for command, ids in by_command.items():
            out.write(f"  $ {command}\n      {', '.join(ids)}\n")
    fine = [v.finding.check_id for v in result.verdicts if v.kind == Kind.FINE]
    if fine and (cause is not None or result.unrecognised is not None):  # else listed as what it rules out
        out.write(f"\nFine: {', '.join(fine)}\n")


def _said_already(
    verdict: Verdict, cause: Verdict | None, verdicts: tuple[Verdict, ...], lines: list[str]
) -> bool:
    """Another check's reading of the cause's own error (its lines, or their text quoted in its summary), or the
    cause's fix again (blind set 17: a Jetson's missing libcudss.so.0 as the cause, then as the library check,
    then as an import failure to reinstall): the cause already says it."""
    if cause is None:
        return False
    fix = cause.finding.remediation

    def same_fix(v: Verdict) -> bool:
        return fix is not None and v.finding.remediation == fix

    # the lines the cause stands for: its own and those of the checks that give its very fix
    covered = {n for v in verdicts if v is cause or same_fix(v) for n in v.lines}
    quoted = [lines[n - 1].strip() for n in sorted(covered) if 0 < n <= len(lines)]
    same_lines = bool(verdict.lines) and set(verdict.lines) <= covered
    same_error = not verdict.lines and any(len(q) > 20 and q in verdict.finding.summary for q in quoted)
    return same_fix(verdict) or same_lines or same_error


# passing checks that describe the machine (which torch, which GPUs, how new the data is) but rule nothing out
_DESCRIBE_ONLY = frozenset({"torch.installed", "gpu.present", "compat.data_age"})


def _ruled_out(result: Triage) -> list[str]:
    """The passing checks the paste decided, in their own words: 'torch 1.11.0+cu113 has kernels for compute
    capability 3.7' says where a 'no kernel image' the paste does not show cannot come from. Each sentence once
    (two checks may say the same of one build: torch.cpu_build and amd.torch_rocm)."""
    said = [
        v.finding.summary
        for v in result.verdicts
        if v.kind == Kind.FINE
        and v.finding.status is Status.PASS
        and v.finding.check_id not in _DESCRIBE_ONLY
    ]
    return list(dict.fromkeys(said))


_NO_ERROR = ", and no failing program's error. If something fails, paste the error's last lines too."
_STILL_FAILS = ". If something still fails, paste the error's last lines too."


# a Python program in the paste: its traceback, or a command that runs python
# an AMD GPU's stack in the paste: ROCm, HIP, its override, a gfx target, a Radeon or Instinct card
# (not collect_env's own "ROCM used to build PyTorch: N/A" on an NVIDIA machine: blind set 21 #02 asked for rocminfo)
_AMD_SHOWN = lazy(
    r"\b(?:rocm(?!\s+(?:used to build pytorch|version)\s*:\s*(?:n/a|none|could not collect)\b)"
    r"|hipblas|hsa_override_gfx_version|gfx\s?\d{3,4}|radeon|instinct)\b",
    re.IGNORECASE,
)
_PYTHON_SHOWN = lazy(r"Traceback \(most recent call last\)|\bpython[23]?(?:\.exe)?\b", re.IGNORECASE)


def unrecognised_lines(
    shown: ShownError,
    facts: Facts,
    *,
    reported: bool = False,
    python: bool = True,
    amd: bool = False,
    guess: Hunch | None = None,
    program_report: str | None = None,
) -> list[str]:
    """What triage says of a failure no signature knows: the line, what is missing, what to paste. Beside a
    collect_env report (`reported`), not that report again, nor where the paste shows no Python program and
    never names torch (`python`: llama.cpp, an app's own CUDA build): nvidia-smi where the driver is not shown."""
    text = escape_controls(shown.text if len(shown.text) <= 300 else shown.text[:300] + "…")
    driver = facts.driver
    driver_shown = not isinstance(driver, Unavailable) and isinstance(driver.version, str)
    ask = (
        program_report or None
        if program_report is not None  # the failing program's own report: `python3 -m sglang.check_env`
        else f"{interpreter_shown(facts) or 'python'} -m torch.utils.collect_env"
        if not reported and python
        else "rocminfo"  # an AMD GPU's own listing, with its gfx target
        if amd
        else "nvidia-smi"
        if not driver_shown
        else None
    )
    if shown.said:
        nccl = "nccl" in shown.text.lower()
        unused = (
            GPU_NOT_FOUND.search(shown.text) is not None
        )  # the GPU not used: there may be no error at all
        return [
            f"The paste says it fails (line {shown.line}) but shows no error message:",
            f"  {text}",
            *(
                [
                    f"  Likeliest on the machine shown (a guess: the error would settle it): {guess.text}",
                    *([f"    $ {guess.command}"] if guess.command else []),
                ]
                if guess is not None
                else []
            ),
            (
                "  Why it does not use the GPU is in what the program prints as it starts, which is not in the paste"
                if unused
                else "  What failed and why is in the program's own error, which is not in the paste"
            )
            + (" (a screenshot of it cannot be read)." if shown.image else "."),
            (
                "  Next: paste what the program prints as it starts (where it picks its device) as text"
                if unused
                else "  Next: paste the error's last lines as text"
            )
            + (
                ", from a run with NCCL_DEBUG=INFO in its environment (NCCL then prints its reason)"
                if nccl
                else ""
            )
            + (", and the output of this from the same environment:" if ask else "."),
            *([f"    $ {ask}"] if ask else []),
        ]
    if ask is None:
        return [
            f"The paste shows an error gpu-doctor does not know (line {shown.line}):",
            f"  {text}",
            "  Nothing in the paste says why; the errors gpu-doctor knows are listed in its signature catalogue.",
            "  Next: paste the whole error with the lines before it.",
        ]
    if shown.cut:
        return [
            f"The paste shows a traceback cut before its last line (line {shown.line} is its last frame):",
            f"  {text}",
            "  The error itself, the traceback's final line, is not in the paste, so its cause cannot be read.",
            "  Next: paste the traceback's last lines, and the output of this from the same environment:",
            f"    $ {ask}",
        ]
    return [
        f"The paste shows an error gpu-doctor does not know (line {shown.line}):",
        f"  {text}",
        "  Nothing in the paste says why; the errors gpu-doctor knows are listed in its signature catalogue.",
        "  Next: paste the whole error with the lines before it, and the output of this from the same environment:",
        f"    $ {ask}",
    ]


def render_json(diagnosis: PasteDiagnosis, source: str, exit_code: int) -> str:
    pasted, facts, result = diagnosis.pasted, diagnosis.facts, diagnosis.result
    rec = result.report.recommended_install
    gpus_named = any(isinstance(g.name, str) for g in facts.gpus)
    cause = result.cause
    document: dict[str, Any] = {
        "schema": TRIAGE_SCHEMA,
        "tool": {"name": TOOL_NAME, "version": __version__},
        "source": source,
        "encoding": pasted.paste.encoding,
        "notes": list(pasted.paste.notes),
        "parts": [
            {"kind": p.kind, "first_line": p.first_line, "last_line": p.last_line} for p in pasted.parts
        ],
        "unread_lines": list(pasted.unread),
        "errors": [
            {
                "signature": h.signature.id,
                "class": h.signature.cls,
                "line": h.line,
                "text": h.text,
                "means": h.signature.means,
                "check": h.signature.check,
                "source": h.signature.url,
            }
            for h in pasted.hits
        ],
        "cause": None
        if cause is None
        else {**_finding(cause), "confidence": result.confidence, "to_be_sure": cause.find_out},
        "to_be_sure": cause.find_out
        if cause is not None
        else (
            next((c.display() for c in unused[1].commands), None)  # a next step in words alone has none
            if (unused := healthy_next_step(result, pasted, facts)) is not None
            else extension_probe(pasted.collect_env, interpreter_shown(facts))
        ),
        "unrecognised_error": None if result.unrecognised is None else to_json(result.unrecognised),
        "likeliest_without_the_error": None if result.hunch is None else to_json(result.hunch),
        "whole_machine": WHOLE_MACHINE,
        "report": to_json(pasted.collect_env) if pasted.collect_env is not None else None,
        "facts": to_json(facts),
        "findings": [_finding(v) for v in result.verdicts],
        "unknown": [_finding(v) for v in result.verdicts if v.kind == Kind.UNKNOWN],
        "not_in_report": {"check_ids": list(result.not_in_report), "find_out": WHOLE_MACHINE},
        "recommended_install": None
        if rec is None or not gpus_named
        else {**to_json_dict(rec), "pip_argv": list(rec.pip_argv("python"))},
        "summary": {
            "exit_code": exit_code,
            "problems": sum(1 for v in result.verdicts if v.kind == Kind.PROBLEM),
            "unknown": sum(1 for v in result.verdicts if v.kind == Kind.UNKNOWN),
            # an error the catalogue does not know is a failure shown too: exit code 1 counts it
            "errors_not_known": 0 if result.unrecognised is None else 1,
        },
    }
    return json_document(document)


def to_json_dict(value: object) -> dict[str, Any]:
    data = to_json(value)
    assert isinstance(data, dict)
    return data


def _finding(v: Verdict) -> dict[str, Any]:
    f = v.finding
    fix = f.remediation
    return {
        "check_id": f.check_id,
        "title": v.title,
        "status": f.status.value,
        "kind": v.kind,
        "summary": f.summary,
        "details": f.details,
        "missing": list(v.missing),
        "find_out": v.find_out,
        "lines": list(v.lines),
        "remediation": None
        if fix is None
        else {
            "text": fix.text,
            "commands": [list(c.argv) for c in fix.commands],
            "target": fix.target.value,
            "requires_root": fix.requires_root,
            "requires_reboot": fix.requires_reboot,
        },
    }


def _wsl_said(facts: Facts) -> str:
    """WSL 1 where its kernel release says so, else WSL2 (the only WSL with a GPU, and the usual one)."""
    wsl = facts.wsl
    return "WSL 1" if not isinstance(wsl, Unavailable) and wsl.version == 1 else "WSL2"
