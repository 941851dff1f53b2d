"""driver.xid_errors: has the NVIDIA driver logged Xid errors since boot, and what do they mean?

Rules: an unreadable kernel log (dmesg_restrict, no journal access) is `unknown` and says why, never "no
errors" (hardware.md §3.8, §8 trap 4); meanings and severities come from checks/support/xid_catalog.py.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from torch_gpu_doctor.checks.support.driver import is_wsl
from torch_gpu_doctor.checks.support.signatures import catalogue_fix, reported, reported_evidence
from torch_gpu_doctor.checks.support.xid_catalog import NVLINK_XIDS, XidSeverity, xid_meaning
from torch_gpu_doctor.facts.describe import gpu_label
from torch_gpu_doctor.facts.kernel_log import KernelLogFacts, XidEvent
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.driver_plan import plan_driver
from torch_gpu_doctor.fixes.driver_update import driver_update
from torch_gpu_doctor.fixes.gpu_state import NOT_ONE_PROGRAM, faults_in_every_program, gpu_not_initialised
from torch_gpu_doctor.fixes.kernel_modules import gpu_lost
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Reason, Unavailable

CID = "driver.xid_errors"
FELL_OFF_THE_BUS = "fell off the bus or stopped answering"  # triage reads it: lost again is power first
SHOWN_LINES = 5
_CAUSED_BY = lazy(r"caused by previous Xid (\d+)")
# The process an Xid names: "NVRM: Xid (PCI:0000:ca:00): 31, pid=1587983, name=exe, Ch 0000000a, ..."
_PROCESS = lazy(r"\bname=([^,\s][^,]{0,63}),")
# The faults a program's own bug raises (NVIDIA: "if it repeats with different programs, run diagnostics"); 43
# is not among them: it follows any program that was stopped or killed
PROGRAM_FAULTS = frozenset({13, 31})
RECOVERY_ACTION = 154
_RANK = {XidSeverity.INFO: 0, XidSeverity.PROGRAM: 1, XidSeverity.ATTENTION: 2, XidSeverity.FAULT: 3}


def _where(event: XidEvent, facts: Facts) -> str:
    if isinstance(event.bdf, Unavailable):
        return "an unknown GPU"
    gpu = next((g for g in facts.nvidia_gpus if g.bdf == event.bdf), None)
    return gpu_label(gpu) if gpu is not None else event.bdf


def _unreadable(log: KernelLogFacts) -> Finding:
    why = log.source if isinstance(log.source, Unavailable) else None
    restricted = log.dmesg_restrict is True
    if restricted:
        reason = "kernel log not readable (kernel.dmesg_restrict = 1)"
    elif why is not None and why.reason is Reason.NOT_FOUND:
        reason = "neither dmesg nor journalctl is available"
    else:
        reason = f"kernel log not readable ({why})"
    return Finding(
        CID,
        Status.UNKNOWN,
        f"Could not look for Xid errors: {reason}. This is not the same as 'no errors'.",
        details="Run gpu-doctor with sudo, or as a member of the systemd-journal or adm group (for "
        "`journalctl -k`), to include the kernel log.",
        evidence=(Evidence("kernel log", str(why), "dmesg, journalctl -k -b"),),
    )


def _summary_line(xid: int, count: int, where: list[str]) -> str:
    meaning = xid_meaning(xid)
    times = f"{count}×" if count > 1 else "once"
    return f"Xid {xid} ({meaning.name}) {times} on {', '.join(sorted(set(where)))}: {meaning.meaning}."


def _program(name: str) -> str:
    """One program's processes under one name: vLLM's "VLLM::Worker_TP0" and "VLLM::Worker_TP1" are one run."""
    return name.split("::", 1)[0].strip()


def shared_fault_details(xids: list[int]) -> str:
    """What program-level Xids mean when they are no one program's: no "usually the program's bug" beside it."""
    named = ", ".join(f"Xid {x} ({xid_meaning(x).name})" for x in xids)
    return (
        f"{named}: a GPU program touched memory it does not own. One program's bug stays in that program; the "
        "same fault in programs that share nothing but the GPU and its driver, or only on this system of the "
        "machine, comes from the driver release (with this kernel) or the GPU."
    )


INIT_FAILED = "other_rm_init_adapter_failed"  # the signature of a GPU the driver found but could not start
GFW_BOOT = "gpu_lost_gfw_boot_timeout"  # ... because the card's own firmware boot never completed
GSP_TIMEOUT = "gpu_lost_gsp_heartbeat_timeout"  # the GPU's GSP firmware stopped answering the driver
# Xid 154's line: "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)"
_RECOVERY = lazy(
    r"recovery action changed from 0x[0-9a-f]+ \([^)]*\) to 0x(?P<code>[0-9a-f]+)", re.IGNORECASE
)


def _severity(event: XidEvent) -> XidSeverity:
    """An Xid's weight. Xid 154 names the recovery the GPU now needs: none is news, but a reset, a reboot or a
    drain (any action but 0x0) is a GPU that no longer works until then, whatever came before it
    (open-gpu-kernel-modules#1200: an RTX 5080 after GSP heartbeat timeouts, 'to 0x1 (GPU Reset Required)')."""
    found = _RECOVERY.search(event.line) if event.xid == RECOVERY_ACTION else None
    if found is not None and int(found["code"], 16) != 0:
        return XidSeverity.FAULT
    return xid_meaning(event.xid).severity


@check(CID, "No Xid errors in the kernel log", "driver")
def driver_xid_errors(facts: Facts) -> Finding:
    """
    ## What it checks
    Reads the kernel log (`dmesg`, or `journalctl -k -b` when dmesg is refused) for the NVIDIA driver's Xid
    lines (`NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.`), names the GPU of each, and explains
    each Xid number from NVIDIA's Xid catalog.

    ## Why it matters
    Xids are how the driver reports GPU faults: a program's illegal memory access (13, 31, 43), memory errors
    (48, 63, 64, 94, 95), firmware hangs (119, 120) or a GPU that dropped off the PCIe bus (79). They explain
    crashes and hangs that PyTorch only reports as "CUDA error: unspecified launch failure". A kernel log
    that cannot be read says nothing, so that is reported as unknown, never as "no errors".

    ## How to fix
    Program-level Xids (13, 31, 43): fix or restart the program; the same fault (13, 31) from several programs
    is the driver release or the GPU: install another driver release, then run the GPU's diagnostics. Memory and firmware Xids: reset the GPU
    (`sudo nvidia-smi -r -i <n>` with nothing running on it) or reboot. Xid 79 and repeated hardware Xids:
    check power cables, risers and cooling; contact the vendor if they return.
    """
    log = facts.kernel_log
    if is_wsl(facts):
        return Finding(CID, Status.SKIP, "In WSL2 the Windows driver logs GPU errors, not the Linux kernel.")
    logged = not isinstance(log, Unavailable) and bool(log.xid_events)
    if not facts.nvidia_gpus and not logged:  # a GPU that fell off the bus is gone from PCI: keep its Xids
        return Finding(CID, Status.SKIP, "No NVIDIA GPU here.")
    faults = reported(facts, "gpu_lost", "ecc", "xid")
    bug = reported(facts, "illegal_address")
    if bug and not faults and (isinstance(log, Unavailable) or not log.xid_events):
        return Finding(
            CID,
            Status.WARN,
            f"A program's kernel made an illegal memory access ({bug[0].where}): usually the program's own bug.",
            details=bug[0].means
            + " Run it with CUDA_LAUNCH_BLOCKING=1 to see the operation that faults; the "
            "kernel log then shows Xid 13 or 31. The same error on every program, or with Xid 79/48/63, is hardware.",
            evidence=reported_evidence(bug),
            remediation=_locate_bug(),
        )
    if faults and (isinstance(log, Unavailable) or not log.xid_events):
        gfw = next((e for e in faults if e.signature == GFW_BOOT), None)
        if all(e.signature in (INIT_FAILED, GFW_BOOT) for e in faults) and gfw is not None:
            # the card's firmware never finished: the card, its power or its slot, before any driver question
            return Finding(
                CID,
                Status.FAIL,
                f"The GPU's own firmware never finished starting it (GFW_BOOT, {gfw.where}), so the driver could "
                "not initialise it.",
                details=gfw.means,
                evidence=reported_evidence(faults),
                remediation=catalogue_fix(gfw) or gpu_not_initialised(),
            )
        if all(
            e.signature == INIT_FAILED for e in faults
        ):  # found, never brought up: not a GPU that fell off
            return Finding(
                CID,
                Status.FAIL,
                f"The driver could not initialise the GPU ('RmInitAdapter failed', {faults[0].where}).",
                details=faults[0].means,
                evidence=reported_evidence(faults),
                remediation=gpu_not_initialised(),
            )
        lost = any(e.kind == "gpu_lost" for e in faults)
        judged = [  # an Xid 45 cleanup ("caused by previous Xid 145") follows the fault it names
            e
            for e in faults
            if not (
                e.values.get("xid", "").isdigit()
                and xid_meaning(int(e.values["xid"])).severity is XidSeverity.INFO
            )
        ]
        if not lost and judged and all(_on_nvlink(e.values.get("xid"), e.text) for e in judged):
            numbers = ", ".join(dict.fromkeys(e.values["xid"] for e in faults if e.values.get("xid")))
            return Finding(
                CID,
                Status.FAIL,
                f"An NVLink connection of the GPU failed (Xid {numbers}, {faults[0].where}): the link "
                "between GPUs, not the GPU's memory.",
                details=faults[0].means,
                evidence=reported_evidence(faults),
                remediation=_nvlink(),
            )
        if all(e.kind == "ecc" for e in faults):
            return Finding(
                CID,
                Status.FAIL,
                f"A GPU's memory reported an uncorrectable ECC error ({faults[0].where}).",
                details=faults[0].means,
                evidence=reported_evidence(faults),
                remediation=_ecc(),
            )
        return Finding(
            CID,
            Status.FAIL,
            "The GPU "
            + (FELL_OFF_THE_BUS if lost else "reported a hardware memory or driver fault")
            + f" ({faults[0].where}).",
            details=faults[0].means,
            evidence=reported_evidence(faults),
            remediation=gpu_lost() if lost else _reset(),
        )
    if isinstance(log, Unavailable):
        return Finding(CID, Status.UNKNOWN, f"Could not read the kernel log facts: {log}.")
    if isinstance(log.source, Unavailable):
        return _unreadable(log)
    if not log.xid_events:
        return Finding(
            CID,
            Status.PASS,
            f"No Xid errors in the kernel log ({log.lines_read} lines from `{log.source}`).",
            evidence=(Evidence("Xid lines", "0", log.source),),
        )
    groups: dict[int, list[str]] = {}
    counts: Counter[int] = Counter()
    for event in log.xid_events:
        groups.setdefault(event.xid, []).append(_where(event, facts))
        counts[event.xid] += 1
        root = _CAUSED_BY.search(event.detail)
        if root is not None:  # "45 ... caused by previous Xid 149": the earlier error is the one to judge
            cause = int(root.group(1))
            groups.setdefault(cause, []).append(f"{_where(event, facts)} (named by Xid {event.xid})")
            counts[cause] += 1
    weight = {x: xid_meaning(x).severity for x in groups}
    for event in log.xid_events:
        severity = _severity(event)
        if _RANK[severity] > _RANK[weight[event.xid]]:
            weight[event.xid] = severity
    worst = max(weight.values(), key=_RANK.__getitem__)
    ordered = sorted(groups, key=lambda x: (-_RANK[weight[x]], x))
    details = " ".join(_summary_line(x, counts[x], groups[x]) for x in ordered)
    if log.xid_events_total > len(log.xid_events):
        details += (
            f" ({log.xid_events_total} Xid lines in all; the newest {len(log.xid_events)} are counted.)"
        )
    evidence = tuple(Evidence(f"Xid {e.xid}", e.line, log.source) for e in log.xid_events[-SHOWN_LINES:])
    numbers = ", ".join(str(x) for x in ordered)
    gsp = [e for e in faults if e.signature == GSP_TIMEOUT]
    if gsp and all(
        x in FIRMWARE_XIDS or x == RECOVERY_ACTION for x in groups if weight[x] is XidSeverity.FAULT
    ):
        # the firmware hung: the GPU is gone until a reset, and the Xids around it (154's reset, 119/120) say so
        return Finding(
            CID,
            Status.FAIL,
            f"The GPU's GSP firmware stopped answering the driver ({gsp[0].where}): the GPU hangs until it is "
            "reset or the machine rebooted.",
            details=f"{gsp[0].means} {details}",
            evidence=(*reported_evidence(gsp), *evidence),
            remediation=_firmware(facts),
        )
    if worst is XidSeverity.FAULT:
        return Finding(
            CID,
            Status.FAIL,
            f"The NVIDIA driver logged GPU faults since boot (Xid {numbers}).",
            details=details,
            evidence=evidence,
            remediation=gpu_lost()
            if 79 in groups
            else _nvlink()
            if any(_on_nvlink(str(e.xid), e.line) for e in log.xid_events)
            and all(
                _on_nvlink(str(e.xid), e.line)
                for e in log.xid_events
                if xid_meaning(e.xid).severity is XidSeverity.FAULT
            )
            else _firmware(facts)
            if all(x in FIRMWARE_XIDS for x in groups if weight[x] is XidSeverity.FAULT)
            else _reset(),
        )
    if worst is XidSeverity.INFO:
        return Finding(
            CID,
            Status.PASS,
            f"Only informational Xid lines since boot (Xid {numbers}).",
            details=details,
            evidence=evidence,
        )
    programs = sorted(
        {
            _program(p.group(1))
            for e in log.xid_events
            if e.xid in PROGRAM_FAULTS and (p := _PROCESS.search(e.detail)) and "unknown" not in p.group(1)
        }
    )
    if worst is XidSeverity.PROGRAM and len(programs) > 1:
        return Finding(
            CID,
            Status.FAIL,
            f"Xid {numbers} from {len(programs)} different programs ({', '.join(programs)}): {NOT_ONE_PROGRAM}.",
            details=shared_fault_details(ordered),
            evidence=evidence,
            remediation=faults_in_every_program(facts, plan_driver(facts)),
        )
    if worst is XidSeverity.PROGRAM:
        illegal = _illegal_instruction(log.xid_events)
        who = f" from {programs[0]}" if programs else ""
        summary = (
            f"Xid {numbers} since boot{who}: errors raised by programs on the GPU, usually their own bugs."
        )
        return Finding(
            CID,
            Status.WARN,
            summary,
            evidence=evidence,
            # the catalogue's usual program fault is an access out of range; an illegal instruction is not one
            details=details.replace(" (an out-of-range access)", "") if illegal else details,
            remediation=_program_fault(programs, illegal),
        )
    attention = {x for x in groups if xid_meaning(x).severity is XidSeverity.ATTENTION}
    if attention and attention <= DRIVER_TIMEOUT_XIDS:
        summary = (
            f"Xid {numbers} since boot: the GPU did not switch between programs in time, most often the driver's "
            "fault or a program that holds the GPU too long."
        )
        fix = _timeout(facts)
    elif attention and attention <= DRIVER_SIDE_XIDS:  # Xid 38 among them
        summary = (
            f"Xid {numbers} since boot: the GPU's firmware reported errors to the driver, most often the driver "
            "release's fault, not the GPU's or a program's."
        )
        fix = _firmware_error(facts)
    else:
        summary, fix = f"Xid {numbers} since boot: the GPU needs a reset or a closer look.", _reset()
    return Finding(CID, Status.WARN, summary, details=details, evidence=evidence, remediation=fix)


# Xid 109 (context switch timeout): NVIDIA's Xid catalog lists a driver error and a program's first among its
# causes, before hardware; on a desktop GeForce that also drives the display, a reset is not possible at all
# (blind set 27: a plotter's Xid 109 on an RTX card, chia-gigahorse#74)
DRIVER_TIMEOUT_XIDS = frozenset({109})
# and Xid 38 (driver firmware error), which NVIDIA lists as a driver error: another driver release first, too
# (blind set 28: Xid 38 then 109 logged by modprobe at idle, open-gpu-kernel-modules#1045)
DRIVER_SIDE_XIDS = DRIVER_TIMEOUT_XIDS | {38}


def _firmware_error(facts: Facts) -> Remediation:
    return driver_update(
        facts,
        plan_driver(facts),
        "A driver firmware error (Xid 38), with or without context-switch timeouts, is most often the driver "
        "release's: install another one (the newest of its branch, or another branch; where the open kernel "
        "modules run, try the proprietary ones, or the reverse); a reboot brings the GPU back meanwhile. "
        "Errors that come at idle point at power-state changes: update the mainboard's firmware and try the "
        "kernel parameter pcie_aspm=off. If they remain on other drivers, check the GPU's power and seating.",
    )


def _timeout(facts: Facts) -> Remediation:
    return driver_update(
        facts,
        plan_driver(facts),
        "A context-switch timeout is most often the driver's (or a program holding the GPU too long, such as "
        "compute on the GPU that also drives the display): install another driver release (the newest of its "
        "branch, or a newer branch); a reboot brings the GPU back meanwhile. If it returns on the newest "
        "driver with one program only, that program's settings (a lower load, another GPU for the display) are "
        "next; with every program, check the GPU's power and temperature.",
    )


def _illegal_instruction(events: Sequence[XidEvent]) -> bool:
    """Xid 13's "Illegal Instruction Encoding": the kernel's machine code is not valid for this GPU."""
    return any(e.xid == 13 and "illegal instruction" in e.detail.lower() for e in events)


def _program_fault(programs: list[str], illegal_instruction: bool = False) -> Remediation:
    """A program's own fault on the GPU (Xid 13, 31, 43): the driver already ended its context, so the program,
    not the GPU, is what to change (blind set 23: tinygrad's NV backend; set 24: llama-server's Xid 31). The
    cheap isolation first: the run that names the faulting kernel at its launch; compute-sanitizer, many times
    slower, for the report (blind set 30: a 35B model at 30k context, llama.cpp#23811)."""
    name = programs[0] if programs else "the program"
    what = (
        "Xid 13's 'Illegal Instruction Encoding' means the kernel's machine code is not valid for this GPU: code "
        "built for another architecture, or miscompiled (a compiler or driver bug), rather than an access out of "
        "bounds. "
        if illegal_instruction
        else ""
    )
    return Remediation(
        text=f"{what}The driver already ended {name}'s CUDA context: no GPU reset is needed, and the GPU is not at "
        "fault unless every program faults on it (a fault that follows the program to another GPU is the "
        "program's). Run it again on its newest release, or without the option or feature most recently turned "
        "on (a new backend, flash attention, a quantized cache, speculative decoding, a custom kernel); with "
        "CUDA_LAUNCH_BLOCKING=1 the error names the faulting kernel at its launch, for a report to its project "
        "(compute-sanitizer finds the access itself, many times slower).",
        commands=(
            Command(
                ("env", "CUDA_LAUNCH_BLOCKING=1", "PROGRAM"),
                note="PROGRAM: the failing command line; each kernel reports its own error",
                runs_here=False,
            ),
            Command(
                ("compute-sanitizer", "--tool", "memcheck", "PROGRAM"),
                note="for the report: slow, from the CUDA toolkit",
                runs_here=False,
            ),
        ),
        target=Target.SYSTEM,
    )


def _locate_bug() -> Remediation:
    """An illegal address without a hardware Xid: find the program's faulting operation first."""
    return Remediation(
        text="Run the program again with CUDA_LAUNCH_BLOCKING=1: each kernel then reports its own error, and the "
        "traceback names the operation that faults (an index or size out of range, a custom kernel or extension "
        "built for another torch). The CUDA context is lost after the error: restart the program; reset the GPU "
        "only if every new program fails on it too.",
        commands=(
            Command(
                ("env", "CUDA_LAUNCH_BLOCKING=1", "python", "SCRIPT.py"),
                note="the failing program again",
                runs_here=False,
            ),
        ),
        target=Target.SYSTEM,
    )


def _ecc() -> Remediation:
    """Uncorrectable ECC: which GPU, then a reset that retires the page (or remaps the row); restarting the
    program does not clear it."""
    return Remediation(
        text="Find the GPU that counts uncorrectable errors, take it out of use (CUDA_VISIBLE_DEVICES without it, "
        "or drain the node) and reset it with nothing running on it, or reboot: the reset retires the failing "
        "page or remaps the row. Restarting the program alone does not clear the error. If it comes back on the "
        "same GPU, or the remapping failed, run its diagnostics (`dcgmi diag -r 3` where DCGM is installed) and "
        "have it replaced.",
        commands=(
            Command(
                ("nvidia-smi", "-q", "-d", "ECC"),
                note="which GPU counts volatile uncorrectable errors; -d PAGE_RETIREMENT,ROW_REMAPPER shows the rest",
            ),
            Command(("sudo", "nvidia-smi", "-r", "-i", "N"), note="N: that GPU, with nothing running on it"),
        ),
        requires_root=True,
        target=Target.SYSTEM,
    )


# The GPU's own firmware halting or not answering (micro-controller halt, GSP RPC timeout, GSP error): the
# firmware ships inside the driver, so another driver release is the lasting fix (NVIDIA's Xid catalog; blind
# set 18: Xid 62 then 45 on an RTX 5070 Ti with 580.82.07)
FIRMWARE_XIDS = frozenset({62, 119, 120})


def _firmware(facts: Facts) -> Remediation:
    return driver_update(
        facts,
        plan_driver(facts),
        "The GPU's firmware (its micro-controller, the GSP on recent GPUs) halted: a driver or firmware fault, "
        "not the program's. The firmware comes with the driver, so install another driver release (the newest "
        "of its branch, or a newer branch); a reboot brings the GPU back meanwhile (a reset cannot, on the GPU "
        "that drives the display). If it returns on the newest driver, send `sudo nvidia-bug-report.sh`'s "
        "file to NVIDIA.",
    )


_LINK = lazy(r"\b(?:NVLink|link\s+\d+)\b", re.IGNORECASE)


def _on_nvlink(xid: str | None, line: str) -> bool:
    """An Xid of NVLink's own, or a line that names the link it happened on."""
    return (xid is not None and xid.isdigit() and int(xid) in NVLINK_XIDS) or _LINK.search(line) is not None


def _nvlink() -> Remediation:
    """NVLink faults (NVIDIA's Xid catalog: NVLink errors call for the fabric's checks and, if they persist, a
    node drained and a bug report; nccl#2241: NVLS collectives deadlock on a B200 with Xid 145/137 on link 11)."""
    return Remediation(
        text="Check the GPUs' NVLink links: their state (`nvidia-smi nvlink -s`: a link inactive or down) and error "
        "counters (`nvidia-smi nvlink -e`), and on NVSwitch systems the fabric manager (`systemctl status "
        "nvidia-fabricmanager`). Until the link is repaired, NCCL can avoid it: NCCL_NVLS_ENABLE=0 (no NVLink "
        "SHARP) or NCCL_P2P_DISABLE=1 confirms it is the link. A link that keeps failing after a reset of the GPUs "
        "(or a reboot) is hardware: drain the node, collect `sudo nvidia-bug-report.sh` and contact the vendor.",
        commands=(
            Command(("nvidia-smi", "nvlink", "-s"), note="each link's state and speed"),
            Command(
                ("nvidia-smi", "nvlink", "-e"), note="each link's error counters: growing ones are failing"
            ),
            Command(("systemctl", "status", "nvidia-fabricmanager"), note="NVSwitch systems: the fabric"),
        ),
        target=Target.SYSTEM,
    )


def _reset() -> Remediation:
    """A fault on the GPU's side: restarting the programs does not clear it, a reset does (set 19's review)."""
    return Remediation(
        text="Stop what runs on that GPU and reset it, or reboot: a fault on the GPU's side stays until then, "
        "whatever the programs do. If the same Xid returns, run the GPU's diagnostics (`dcgmi diag -r 2` where "
        "DCGM is installed) and contact the vendor.",
        commands=(
            Command(("sudo", "nvidia-smi", "-r", "-i", "N"), note="N: that GPU, with nothing running on it"),
        ),
        requires_root=True,
        target=Target.SYSTEM,
    )
