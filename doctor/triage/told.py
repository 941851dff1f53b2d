"""What the paste tells beyond the facts the checks read: what the person already tried (a reboot, a reinstall, a
setting), what they say happens (again, across nodes, after an update, fine elsewhere), what the program already
printed. Each moves a verdict's next step so it never asks for what the paste already answers. What the paste shows
of the GPUs is triage.gpus_shown's, whether the job fits is triage.job_size's, and which lines are words, warnings
or exceptions is triage.line_kinds'."""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.checks.driver_installed import INSTALLED_NOT_LOADED
from torch_gpu_doctor.checks.driver_nvml import MISSED_REBOOT
from torch_gpu_doctor.checks.driver_xid_errors import (
    FELL_OFF_THE_BUS,
    PROGRAM_FAULTS,
    shared_fault_details,
)
from torch_gpu_doctor.checks.nccl_communication import DEBUG as NCCL_DEBUG
from torch_gpu_doctor.checks.nccl_communication import between_machines
from torch_gpu_doctor.checks.support.xid_catalog import XidSeverity, xid_meaning
from torch_gpu_doctor.compat import load_matrix
from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.compat.torch_releases import version_key
from torch_gpu_doctor.facts.container import ContainerRuntime
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.container_gpus import pass_gpus
from torch_gpu_doctor.fixes.cuda_init import reload_uvm, uvm_lost_again
from torch_gpu_doctor.fixes.driver_plan import plan_driver
from torch_gpu_doctor.fixes.gpu_state import NOT_ONE_PROGRAM, faults_in_every_program
from torch_gpu_doctor.fixes.hidden_gpu import one_gpu_per_task_fix
from torch_gpu_doctor.fixes.kernel_modules import (
    gpu_lost_again,
    mismatch_after_reboot,
    mismatch_comes_back,
    reload_after_upgrade,
    stray_nvml,
)
from torch_gpu_doctor.fixes.module_build import load_or_build
from torch_gpu_doctor.fixes.out_of_memory import (
    watermark_not_reached,
)
from torch_gpu_doctor.fixes.recommendation import reinstall_argv
from torch_gpu_doctor.fixes.target import on_windows
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Finding, Remediation, Status, Target, escape_controls
from torch_gpu_doctor.triage.asked import DRIVER_COMPAT
from torch_gpu_doctor.triage.outcome import FIND_OUT, TORCH_VERSION, UNEXPLAINED_FALSE, Kind, Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import GPU_NOT_FOUND, MAX_CHARS, line_number
from torch_gpu_doctor.triage.where import in_container
from torch_gpu_doctor.unavailable import Unavailable

# Questions to torch whose answers a paste can show (collect_env, a pip list, torch's version line)
_TORCH_PROBES = frozenset(
    {
        "import torch; print(torch.version.cuda)",
        "import torch; print(torch.__version__, torch.version.cuda, torch.version.hip)",
    }
)


def answered_probes(verdict: Verdict, facts: Facts) -> Verdict:
    """A fix that asks torch what the paste already shows (its version, the CUDA it was built with) says the
    answer instead, so the first command is the fix (blind set 11: 'print(torch.version.cuda)' under a paste
    that says torch 1.13.0+cu117). Windows gets the toolkit's own folder."""
    fix = verdict.finding.remediation
    packages = facts.torch_packages
    if fix is None or isinstance(packages, Unavailable) or not packages.version or not packages.cuda:
        return verdict
    asked = [c for c in fix.commands if len(c.argv) == 3 and c.argv[1] == "-c" and c.argv[2] in _TORCH_PROBES]
    if not asked:
        return verdict
    windows = on_windows(facts)
    where = (
        f" On Windows NVIDIA's installer puts it in C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v{packages.cuda}."
        if windows
        else ""
    )
    fix = dataclasses.replace(
        fix,
        text=f"The paste shows torch {packages.version}, built with CUDA {packages.cuda}. {fix.text}{where}",
        commands=tuple(c for c in fix.commands if c not in asked),
    )
    return dataclasses.replace(verdict, finding=dataclasses.replace(verdict.finding, remediation=fix))


TOPOLOGY_MATRIX = ("nvidia-smi", "topo", "-m")
GPU_LIST = ("nvidia-smi", "-L")
# `nvidia-smi -L`'s own lines: "GPU 0: NVIDIA A100 80GB PCIe (UUID: GPU-932bfb2c-...)"
_GPU_LIST_LINE = lazy(
    r"^[ \t#>]*(?:GPU[ \t]+\d+:[^\n]*\(UUID:[ \t]*GPU-|MIG[ \t]+\S+[ \t]+Device[ \t]+\d+:[ \t]*\(UUID:[ \t]*MIG-)",
    re.MULTILINE,
)


def shown_outputs_not_asked_again(verdict: Verdict, pasted: PastedText) -> Verdict:
    """A fix command whose output the paste already holds is left out, so the step after it comes first: the
    GPUs' connection matrix beside `nvidia-smi topo -m`'s own (blind set 18: NCCL's P2P hang), the GPU list
    with UUIDs beside `nvidia-smi -L`'s own (the MIG device names two pastes got wrong)."""
    fix = verdict.finding.remediation
    if fix is None:
        return verdict
    shown: set[tuple[str, ...]] = set()
    if pasted.topology is not None:
        shown.add(TOPOLOGY_MATRIX)
    if any(c.argv == GPU_LIST for c in fix.commands) and _GPU_LIST_LINE.search(
        pasted.paste.text, 0, MAX_CHARS
    ):
        shown.add(GPU_LIST)
    commands = tuple(c for c in fix.commands if c.argv not in shown)
    if len(commands) == len(fix.commands) or (not commands and TOPOLOGY_MATRIX in shown):
        return verdict  # nothing shown; or the matrix, the only step: kept rather than a fix without one
    fix = dataclasses.replace(fix, commands=commands)
    return dataclasses.replace(verdict, finding=dataclasses.replace(verdict.finding, remediation=fix))


GREP_VISIBLE = ("grep", "-rn", "CUDA_VISIBLE_DEVICES", ".")


# The program's own "no GPU" errors, by the catalogue's entry: torch's, and CUDA's error 100 (38 in old torch)
_NO_GPU_IN_PROGRAM = {
    "no_visible_gpu_no_cuda_gpus_available": "No CUDA GPUs are available",
    "no_driver_no_cuda_capable_device": "no CUDA-capable device is detected",
}


def hidden_by_the_program(verdict: Verdict, pasted: PastedText) -> Verdict:
    """'No CUDA GPUs are available' from a program, in a paste that says is_available() is True elsewhere (a
    plain shell, another repository): the program itself hides the GPU, most often a CUDA_VISIBLE_DEVICES set
    in its code or config to a GPU that does not exist here (blind set 11's e11; set 7's thread of a hard-coded
    '3' on a one-GPU machine)."""
    finding = verdict.finding
    works = pasted.prose.torch_works
    if works is None or finding.check_id != "torch.cuda_init" or finding.status is not Status.FAIL:
        return verdict
    said = next(
        (_NO_GPU_IN_PROGRAM[h.signature.id] for h in pasted.hits if h.signature.id in _NO_GPU_IN_PROGRAM),
        None,
    )
    if said is None:
        return verdict
    fix = Remediation(
        text="torch sees the GPU outside this program, so the program hides it: find where it sets "
        "CUDA_VISIBLE_DEVICES (its code, a config file, a launcher script) and set it to a GPU this machine has "
        "(`0` on a machine with one), or remove it. A job scheduler or container that gives the program no GPU "
        "does the same: run `nvidia-smi -L` where the program runs.",
        commands=(
            Command(GREP_VISIBLE, note="in the program's folder: where it sets the variable"),
            Command(("nvidia-smi", "-L"), note="the GPUs there, numbered from 0"),
        ),
        target=Target.PYTHON_ENV,
    )
    summary = (
        f"The program hides the GPU: it finds none ({said}), while torch sees one outside it "
        f"(line {works} of the paste says is_available() is True)."
    )
    return dataclasses.replace(
        verdict, finding=dataclasses.replace(finding, summary=summary, remediation=fix), find_out=None
    )


# NCCL's own log lines (NCCL_DEBUG=INFO was set): "host:1354:1354 [0] NCCL INFO Bootstrap : Using eth0"
_NCCL_LOG = lazy(r"\] NCCL (?:INFO|WARN) ")


def nccl_log_shown(verdict: Verdict, pasted: PastedText) -> Verdict:
    """NCCL's INFO log is already in the paste: asking to rerun with NCCL_DEBUG=INFO asks for what is there.
    Its WARN lines are what to read; where the fix was only that request, it says so."""
    finding = verdict.finding
    if finding.check_id != "nccl.communication" or _NCCL_LOG.search(pasted.paste.text, 0, MAX_CHARS) is None:
        return verdict
    details = finding.details.replace(" " + NCCL_DEBUG, "").replace(NCCL_DEBUG, "")
    fix = finding.remediation
    if fix is not None and fix.text == NCCL_DEBUG:
        fix = dataclasses.replace(
            fix,
            text="The paste holds NCCL's INFO log already: the 'NCCL WARN' lines just before the error (and a "
            "'Last error:' line) name the cause. Paste the log from the first 'NCCL WARN' to the error.",
        )
    finding = dataclasses.replace(finding, details=details, remediation=fix)
    asked = verdict.find_out is not None and verdict.find_out.startswith("NCCL_DEBUG=INFO")
    return dataclasses.replace(verdict, finding=finding, find_out=None if asked else verdict.find_out)


# NCCL's bootstrap: ncclGetUniqueId (the root rank's socket) or its "bootstrap" lines, where it failed
_BOOTSTRAP = lazy(r"\bncclGetUniqueId\b|\bbootstrap(?:Net|Create|Init)?\b")


def nccl_bootstrap(verdict: Verdict, pasted: PastedText) -> Verdict:
    """NCCL's "unhandled system error" where the paste shows it failing in its bootstrap (ncclGetUniqueId): that
    step opens a socket on a network interface and touches no shared memory, so the interface comes before
    /dev/shm (blind set 19: nccl-tests in an NGC container; the thread's WARN was 'Address family not supported
    by protocol')."""
    finding = verdict.finding
    if finding.check_id != "nccl.communication" or not any(
        h.implies.get("error") == "nccl_system" and h.line in verdict.lines for h in pasted.hits
    ):  # the verdict reads NCCL's "unhandled system error" (the catalogue's nccl_system kind)
        return verdict
    found = _BOOTSTRAP.search(pasted.paste.text, 0, MAX_CHARS)
    if found is None or "Bus error" in pasted.paste.text[:MAX_CHARS]:  # a bus error there is /dev/shm's
        return verdict
    line = line_number(pasted.paste.text, found)
    fix = Remediation(
        text="NCCL failed in its bootstrap, which opens a socket on a network interface for the ranks to find "
        "each other: the interface it picked, or sockets in the container, not /dev/shm. NCCL_DEBUG=INFO prints "
        "the interface and the failing call ('NCCL WARN'). In a container, run it with --net=host (and --ipc=host, "
        "which NCCL's shared memory wants next) or set NCCL_SOCKET_IFNAME to an interface that exists there "
        "(eth0); 'Address family not supported by protocol' "
        "means IPv6 is off there: NCCL_SOCKET_FAMILY=AF_INET.",
        commands=(
            Command(
                ("env", "NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,NET", "PROGRAM"),
                note="PROGRAM: the failing command; its NET lines name the interface, its WARN line the failure",
                runs_here=False,
            ),
            Command(("ip", "-brief", "address"), note="the interfaces where it runs"),
        ),
        target=Target.SYSTEM,
    )
    summary = (
        f"NCCL failed in its bootstrap (line {line}: {found[0]}), which opens a socket on a network interface: "
        "the interface or the container's network, not /dev/shm."
    )
    # the catalogue's "in containers /dev/shm size is the usual culprit" is not this step's
    finding = dataclasses.replace(finding, summary=summary, details="", remediation=fix)
    return dataclasses.replace(
        verdict, finding=finding, find_out=None, lines=tuple(sorted({*verdict.lines, line}))
    )


def not_asked_again(verdict: Verdict, pasted: PastedText, facts: Facts) -> Verdict:
    """A problem's "to be sure" that asks what the paste already shows is left out (nvidia-smi beside
    nvidia-smi's own output, torch's version and build beside a report that shows them, the arch list beside
    torch's warning that lists it): the person's turn is not spent on an answer they gave."""
    ask = verdict.find_out
    if verdict.kind != Kind.PROBLEM or ask is None:
        return verdict
    packages, runtime = facts.torch_packages, facts.torch
    shown = (
        (ask == "nvidia-smi" and pasted.smi is not None)
        or (
            ask.endswith(TORCH_VERSION.removeprefix("python "))
            and not isinstance(packages, Unavailable)
            and packages.version is not None
            and (packages.cuda is not None or packages.hip is not None)
        )
        or (
            "get_arch_list()" in ask
            and "get_device_capability()" in ask
            and not isinstance(runtime, Unavailable)
            and bool(runtime.arch_list)
            and all(isinstance(g.compute_capability, str) for g in facts.nvidia_gpus)
        )
    )
    if ask == "nvidia-smi" and any(h.signature.id == SMI_NOT_FOUND for h in pasted.hits):
        # the paste shows this shell has no nvidia-smi: ask where it would answer, or whether a GPU is there
        where = "on the host (the container's shell has none)" if pasted.container_line else None
        return dataclasses.replace(
            verdict,
            find_out=f"nvidia-smi   # {where}"
            if where
            else "lspci -nn | grep -i nvidia   # is an NVIDIA GPU there",
        )
    return dataclasses.replace(verdict, find_out=None) if shown else verdict


SMI_NOT_FOUND = "no_driver_nvidia_smi_command_not_found"


# The person says the kernel changed, or that another kernel works: the module was not built for this one.
_KERNEL_CHANGED = lazy(
    r"\bkernel\b[^.\n]{0,40}\b(?:update|upgrade)|\b(?:update|upgrade)\w*\b[^.\n]{0,40}\bkernel\b"
    r"|\b(?:new|newer|updated|another|other|different|previous|older|old)\s+kernel\b"
    r"|(?<!n't )(?<!not )\bwork(?:s|ed|ing)?\b[^.\n]{0,60}\bkernel\b(?![ \t]*modules?\b)",
    re.IGNORECASE,
)


NOT_LOADED_FIND_OUT = "dkms status; uname -r   # the kernels the module is built for, and the running one"


def module_not_loaded(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """nvidia-smi's own failure is in the paste, so asking for nvidia-smi again settles nothing: DKMS's list
    against the running kernel does. Where the person says the kernel changed, building comes first."""
    finding = verdict.finding
    if finding.check_id != "driver.installed" or not finding.summary.startswith(INSTALLED_NOT_LOADED):
        return verdict
    if in_container(pasted):  # an image's own nvidia-smi: the kernel module is the host's business
        finding = dataclasses.replace(
            finding,
            summary="nvidia-smi inside the container reaches no NVIDIA driver: the container has no GPU passed "
            "in, or the host's driver does not answer.",
            details="A container uses the host's kernel module and driver, passed in with the GPUs by the NVIDIA "
            "Container Toolkit (`docker run --gpus all`); an nvidia-smi the image brings cannot reach a driver "
            "on its own. If `nvidia-smi` fails on the host too, the host's driver is the problem.",
            remediation=pass_gpus(ContainerRuntime.DOCKER),
        )
        return dataclasses.replace(verdict, finding=finding, find_out="nvidia-smi   # on the host")
    if _KERNEL_CHANGED.search(pasted.paste.text, 0, MAX_CHARS) is not None:
        finding = dataclasses.replace(finding, remediation=load_or_build(facts.os, kernel_changed=True))
    return dataclasses.replace(verdict, finding=finding, find_out=NOT_LOADED_FIND_OUT)


# NVRM's own mismatch lines, and the kernel log's timestamp before them ("[   12.014918] NVRM: API mismatch")
_NVRM_MISMATCH = frozenset({"driver_library_nvrm_api_mismatch", "driver_library_nvrm_loaded_module_version"})
_UPTIME = lazy(r"^\s*\[\s*(?P<seconds>\d{1,9})\.\d+\]")
# a line logged this soon after the kernel started: the module loaded at boot already mismatched
AT_BOOT_S = 120


def booted_with_the_mismatch(pasted: PastedText) -> int | None:
    """The line where the kernel log shows NVRM's mismatch within AT_BOOT_S of boot: the machine was restarted
    and the module that loads at boot is the mismatched one, so another reboot changes nothing (blind set 26:
    570.153.02 libraries over a 570.144 module twelve seconds after boot, ublue-os/bazzite#2668)."""
    hits = [h for h in pasted.hits if h.signature.id in _NVRM_MISMATCH]
    if not hits:
        return None  # most pastes: no split of the whole text
    lines = pasted.paste.text[:MAX_CHARS].splitlines()
    for hit in hits:
        if 0 < hit.line <= len(lines):
            stamp = _UPTIME.match(lines[hit.line - 1])
            if stamp is not None and int(stamp["seconds"]) < AT_BOOT_S:
                return hit.line
    return None


def rebooted_already(verdict: Verdict, pasted: PastedText) -> Verdict:
    """A library/module mismatch the person says a reboot did not clear: find the module that loads (not asking
    again for the running module's version where the paste shows /proc/driver/nvidia/version)."""
    finding = verdict.finding
    if finding.remediation != reload_after_upgrade():
        return verdict
    fix = mismatch_after_reboot()
    text = pasted.paste.text[:MAX_CHARS]
    if "NVRM version:" in text or "this kernel module has the version" in text:  # the running module's, shown
        asked = tuple(c for c in fix.commands if c.argv != ("cat", "/proc/driver/nvidia/version"))
        fix = dataclasses.replace(fix, commands=asked)
    details = finding.details.removesuffix(MISSED_REBOOT)  # "...and was not rebooted": it was
    finding = dataclasses.replace(finding, remediation=fix, details=details)
    return dataclasses.replace(verdict, finding=finding, find_out=None)


def cured_by_a_restart(verdict: Verdict, line: int) -> Verdict:
    """A library/module mismatch or CUDA's unknown error the person says a reboot, a restart or a module reload
    clears: they have that step already, and it comes back; what makes it come back is the next step (blind set
    31: a node's first boot, a laptop's nvidia_uvm)."""
    finding = verdict.finding
    if finding.remediation == reload_after_upgrade():
        fix = mismatch_comes_back()
    elif finding.remediation == reload_uvm():
        fix = uvm_lost_again()
    else:
        return verdict
    details = finding.details.removesuffix(MISSED_REBOOT)  # "...and was not rebooted": it was, and it helped
    finding = dataclasses.replace(finding, remediation=fix, details=details)
    return dataclasses.replace(
        verdict, finding=finding, find_out=None, lines=tuple(sorted({*verdict.lines, line}))
    )


# the words say GPU work runs and only nvidia-smi fails ("GPU training works correctly but the tool nvidia-smi fails
# to run"), in either order
_CUDA_WORKS_SMI_FAILS = lazy(
    r"\b(?:training|inference|torch|pytorch|cuda|gpu|models?)\b[^.\n]{0,80}?\b(?:works?|working|runs?|running)\b"
    r"[^\n]{0,80}?\bbut\b[^.\n]{0,60}?\bnvidia-smi\b"
    r"|\bnvidia-smi\b[^.\n]{0,60}?\b(?:fails?|errors?)\b[^\n]{0,80}?\bbut\b[^.\n]{0,60}?"
    r"\b(?:training|inference|torch|pytorch|cuda|gpu)\b[^.\n]{0,40}?\b(?:works?|working|runs?|fine)\b",
    re.IGNORECASE,
)
_NOT = lazy(r"\b(?:not|never|neither)\b|n't\b", re.IGNORECASE)
_BUT = lazy(r"\bbut\b", re.IGNORECASE)


def cuda_works_nvml_mismatched(verdict: Verdict, pasted: PastedText) -> Verdict:
    """NVML's driver/library mismatch where the words say CUDA work runs: the kernel module and libcuda agree
    (a missed reboot would stop CUDA too), so only the libnvidia-ml nvidia-smi loads is another version."""
    finding = verdict.finding
    if finding.remediation not in (reload_after_upgrade(), mismatch_after_reboot()):
        return verdict
    said = next(
        (
            f
            for f in _CUDA_WORKS_SMI_FAILS.finditer(pasted.paste.text, 0, MAX_CHARS)
            if not _NOT.search(_BUT.split(f[0], 1)[0])  # "training does not work, but nvidia-smi ..."
        ),
        None,
    )
    if said is None:
        return verdict
    line = line_number(pasted.paste.text, said)
    finding = dataclasses.replace(
        finding,
        summary="Driver/library version mismatch in nvidia-smi's NVML only: CUDA works (line "
        f"{line} of the paste), so the module and libcuda agree.",
        details="The NVML library nvidia-smi loads and the loaded kernel module come from different driver "
        "versions; CUDA, which works, loads a libcuda of the module's own version, so the driver was not updated "
        "under a running module (that would stop CUDA too).",
        remediation=stray_nvml(),
    )
    return dataclasses.replace(
        verdict, finding=finding, find_out=None, lines=tuple(sorted({*verdict.lines, line}))
    )


def lost_again(verdict: Verdict, line: int) -> Verdict:
    finding = verdict.finding
    if finding.check_id != "driver.xid_errors" or FELL_OFF_THE_BUS not in finding.summary:
        return verdict
    finding = dataclasses.replace(finding, remediation=gpu_lost_again(line))
    return dataclasses.replace(verdict, finding=finding, lines=tuple(sorted({*verdict.lines, line})))


def across_machines(verdict: Verdict, facts: Facts, line: int) -> Verdict:
    """NCCL's unexplained failure ("unhandled system error") in a job said to span machines: the connection
    between them comes before /dev/shm, which one machine alone would have hit too (blind set 17)."""
    errors = facts.reported_errors
    kinds = {e.kind for e in errors} if not isinstance(errors, Unavailable) else set()
    if verdict.finding.check_id != "nccl.communication" or verdict.kind != Kind.PROBLEM:
        return verdict
    if not kinds & {"nccl_system", "nccl"} or kinds & {"nccl_shm", "nccl_shm_permission", "nccl_shm_attach"}:
        return verdict
    cause, fix = between_machines()
    finding = dataclasses.replace(
        verdict.finding, summary=f"{cause}: the job spans several machines (line {line}).", remediation=fix
    )
    return dataclasses.replace(
        verdict, finding=finding, find_out=None, lines=tuple(sorted({*verdict.lines, line}))
    )


def program_fault_below_the_programs(verdict: Verdict, facts: Facts, line: int) -> Verdict:
    """A program's memory fault (Xid 13, 31) where the words say the same work runs under Windows or another
    driver, or that every program fails alike: the driver release (with this kernel) or the GPU, not each
    program's bug (blind set 20: an RTX 5090's Xid 31 in llama.cpp and ollama, fine under Windows)."""
    finding = verdict.finding
    log = facts.kernel_log
    if (
        finding.check_id != "driver.xid_errors"
        or finding.status is not Status.WARN
        or isinstance(log, Unavailable)
    ):
        return verdict
    xids = {e.xid for e in log.xid_events}
    if not xids & PROGRAM_FAULTS or any(
        xid_meaning(x).severity not in (XidSeverity.PROGRAM, XidSeverity.INFO) for x in xids
    ):
        return verdict
    numbers = ", ".join(str(x) for x in sorted(xids))
    return dataclasses.replace(
        verdict,
        finding=dataclasses.replace(
            finding,
            status=Status.FAIL,
            summary=f"Xid {numbers}, where the words say the same work runs elsewhere or every program fails "
            f"(line {line} of the paste): most likely {NOT_ONE_PROGRAM}.",
            details=shared_fault_details(sorted(xids)),
            remediation=faults_in_every_program(facts, plan_driver(facts)),
        ),
        find_out="nvidia-smi; uname -r   # the driver release and kernel the fault comes with",
    )


def updated_then_804(verdict: Verdict, pasted: PastedText, line: int) -> Verdict:
    """Error 804 right after the system was updated, outside a container: the driver's packages moved on while
    the old kernel module still runs (blind set 17: "after recent ubuntu update"); a reboot loads the new one."""
    if verdict.finding.check_id != "torch.cuda_init" or not any(
        h.signature.id.startswith("forward_compat_804") for h in pasted.hits
    ):
        return verdict
    finding = dataclasses.replace(
        verdict.finding,
        summary=(
            f"CUDA fails with error 804 since the system was updated (line {line}): the driver's libraries were "
            "upgraded while the old kernel module still runs."
        ),
        remediation=reload_after_upgrade(),
    )
    return dataclasses.replace(
        verdict,
        finding=finding,
        find_out="cat /proc/driver/nvidia/version   # the module that runs, against the driver installed",
        lines=tuple(sorted({*verdict.lines, line})),
    )


def without_importing_torch(verdict: Verdict) -> Verdict:
    """torch's import fails in the paste: a question that imports torch gets that error again (blind set 17's
    second review), so pip says which torch is installed, and what needs torch running waits for the fix."""
    ask = verdict.find_out
    if verdict.kind != Kind.UNKNOWN or not ask or "import torch" not in ask:
        return verdict
    python = ask.split(" -c ", 1)[0]
    if verdict.finding.check_id in ("torch.installed", "torch.cpu_build", "compat.data_age"):
        return dataclasses.replace(verdict, find_out=f"{python} -m pip show torch")
    return dataclasses.replace(verdict, kind=Kind.NOT_APPLICABLE, missing=(), find_out=None)


# the library errors whose cause is two packages' versions, which `pip check` compares
_VERSION_CONFLICTS = frozenset({"undefined_symbol", "cudnn", "cublas"})


def no_pip_check_for_the_loader(verdict: Verdict, pasted: PastedText) -> Verdict:
    """`pip check` compares the versions packages declare: it says nothing of a library the loader cannot
    find, a Windows DLL that does not load or a compiler too old (blind set 17), so it is no question to ask."""
    if verdict.finding.check_id != "env.library_path" or verdict.find_out != FIND_OUT["env.library_path"]:
        return verdict
    kinds = {h.implies.get("error") for h in pasted.hits if h.signature.check == "env.library_path"}
    return verdict if not kinds or kinds & _VERSION_CONFLICTS else dataclasses.replace(verdict, find_out=None)


CUDA_INIT = "torch.cuda_init"


def works_where_tested(
    verdicts: tuple[Verdict, ...], pasted: PastedText, titles: dict[str, str]
) -> tuple[Verdict, ...]:
    """The program says it has no GPU while the paste shows torch seeing it (`is_available()` True, printed in
    the person's own test): the program runs another Python than the one tested (its own venv, conda env or
    bundled interpreter), or hides the GPU itself. Only where nothing else was found (blind set 21: "GPU not
    recognized by torch" from an app, True from the user's shell)."""
    works, failing = pasted.prose.torch_works, pasted.prose.fails
    # the only problem found being "is_available() is False, the paste does not say why" is this same story
    # told without the working test (blind set 29: tortoise-tts-fast#88, True printed, the app saying no CUDA)
    found = [
        v for v in verdicts if v.kind == Kind.PROBLEM and not v.finding.summary.startswith(UNEXPLAINED_FALSE)
    ]
    if works is None or failing is None or found:
        return verdicts
    lines = pasted.paste.text.split("\n")
    said = "\n".join(
        lines[failing.line - 1 : failing.line + 2]
    )  # "getting the following error" and the error
    if failing.line == works or not GPU_NOT_FOUND.search(said):
        return verdicts
    verdicts = tuple(v for v in verdicts if not v.finding.summary.startswith(UNEXPLAINED_FALSE))
    finding = Finding(
        CUDA_INIT,
        Status.WARN,
        f"The program finds no GPU (line {failing.line} of the paste) while torch in the Python that was tested "
        f"sees one (line {works}): the program most likely runs another Python environment than the one tested.",
        details="A CUDA check in one shell says nothing of the environment a program starts in: its own venv or "
        "conda env, an installer's bundled Python, a service's interpreter. There torch may be a CPU build or "
        "missing, or the program hides the GPU (CUDA_VISIBLE_DEVICES in its configuration).",
        remediation=Remediation(
            text="Run the same check with the program's own interpreter (the python its launcher, script or "
            "shortcut starts). A CPU build (+cpu) or False there: install the CUDA build of torch into that "
            "environment with that interpreter's pip. True there too: the program hides the GPU; look for "
            "CUDA_VISIBLE_DEVICES in its configuration.",
            commands=(
                Command(
                    (
                        "PYTHON",
                        "-c",
                        "import sys, torch; print(sys.executable, torch.__version__, torch.cuda.is_available())",
                    ),
                    note="PYTHON: the program's own interpreter, not the shell's",
                    runs_here=False,
                ),
            ),
            target=Target.PYTHON_ENV,
        ),
    )
    added = Verdict(
        finding,
        titles.get(CUDA_INIT, CUDA_INIT),
        Kind.PROBLEM,
        (),
        None,
        tuple(sorted({failing.line, works})),
    )
    return (added, *verdicts)


_WATERMARK_SET = lazy(r"PYTORCH_MPS_HIGH_WATERMARK_RATIO[ \t]*=[ \t]*0(?:\.0)?\b")


def watermark_already_set(verdict: Verdict, pasted: PastedText) -> Verdict:
    """The Mac's out-of-memory error, with its limit still in the message, where the paste says the limit was
    lifted (`export PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0` on another line): the variable never reached the
    process, and lifting it is no longer the step to repeat (blind set 18, pytorch#130112)."""
    finding = verdict.finding
    mps = [h for h in pasted.hits if h.signature.id == "oom_mps_backend_out_of_memory"]
    if finding.check_id != "torch.out_of_memory" or not mps:
        return verdict
    error_lines = {h.line for h in mps}
    text = pasted.paste.text[:MAX_CHARS].split("\n")
    said = next(
        (n for n, line in enumerate(text, 1) if n not in error_lines and _WATERMARK_SET.search(line)), None
    )
    if said is None:
        return verdict
    remediation = watermark_not_reached(said)
    finding = dataclasses.replace(finding, remediation=remediation)
    return dataclasses.replace(verdict, finding=finding, lines=tuple(sorted({*verdict.lines, said})))


# pip's answer when the installed version already satisfies the requirement: it keeps that build, whatever index
# was named ("Requirement already satisfied: torch in /home/u/env/lib/python3.8/site-packages (2.0.1)")
_KEPT = lazy(
    r"^[ \t]*Requirement already satisfied: (?P<name>torch|torchvision|torchaudio) in \S+ \((?P<version>[^)\s]+)\)",
    re.MULTILINE,
)
# the install that asked for another build: `pip install torch ... --index-url https://download.pytorch.org/whl/cu118`
# (the index found first, then its own line checked: one pattern over both backtracks on a long line)
_FROM_INDEX = lazy(
    r"--(?:extra-)?index-url[ \t=]+https://download\.pytorch\.org/whl/(?P<variant>cu\d{2,3}|cpu|rocm\d+(?:\.\d+){1,2})\b"
)
_PIP_INSTALL_TORCH = lazy(r"\bpip3?[ \t]+install\b.*?\btorch\b")
_MAX_INSTALL_LINE = 2000
INSTALLED = "torch.installed"


def _installs_torch(text: str, found: re.Match[str]) -> bool:
    """The index URL's own line is a `pip install` of torch (a short line only: a notebook's JSON is one)."""
    start = text.rfind("\n", 0, found.start()) + 1
    if found.start() - start > _MAX_INSTALL_LINE:
        return False
    return _PIP_INSTALL_TORCH.search(text, start, found.start()) is not None


def pip_kept_torch(
    verdicts: tuple[Verdict, ...], pasted: PastedText, facts: Facts, titles: dict[str, str]
) -> tuple[Verdict, ...]:
    """An install from a variant's index that pip answered with 'Requirement already satisfied: torch ... (2.0.1)':
    pip keeps an installed version that satisfies the requirement, so the build asked for never came (blind set
    20: pytorch#103246, cu118 asked for, torch 2.0.1 from PyPI (cu117) kept). Only where nothing else was found
    and the kept build is not the one asked for."""
    text = pasted.paste.text
    if "already satisfied" not in text or any(v.kind == Kind.PROBLEM for v in verdicts):
        return verdicts
    asked = next((m for m in _FROM_INDEX.finditer(text, 0, MAX_CHARS) if _installs_torch(text, m)), None)
    kept = {m["name"]: (m["version"], m) for m in _KEPT.finditer(text, 0, MAX_CHARS)}
    if asked is None or "torch" not in kept:
        return verdicts
    variant = asked["variant"]
    version, found = kept["torch"]
    base = version.split("+")[0]
    release = load_torch_releases().release(base)
    default = release.pypi_default.get("linux_x86_64") if release is not None and "+" not in version else None
    packages = facts.torch_packages
    shown = None if isinstance(packages, Unavailable) else packages.version  # a report's or a list's own word
    if version.endswith(f"+{variant}") or default == variant or (shown or "").endswith(f"+{variant}"):
        return (
            verdicts  # the build asked for is the one there (PyPI's own build of that version, or as shown)
        )
    bases = {name: v.split("+")[0] for name, (v, _) in kept.items()}
    pins = tuple(
        f"{name}=={bases[name]}+{variant}" for name in ("torch", "torchvision", "torchaudio") if name in bases
    )
    line = line_number(text, found)
    finding = Finding(
        INSTALLED,
        Status.FAIL,
        f"pip kept the torch already installed ({version}, line {line}): an install from the {variant} index does "
        f"not replace a torch whose version already satisfies the requirement, so the {variant} build never came.",
        details=f"pip compares versions, not builds: the installed {version} satisfies 'torch' as well as "
        f"{base}+{variant} would, so it answers 'Requirement already satisfied' and installs nothing. Pinning the "
        "local version and forcing the reinstall replaces the build.",
        remediation=Remediation(
            text=f"Reinstall the {variant} builds by their exact local versions, in the same environment.",
            commands=(Command(reinstall_argv(pins, variant)),),
            needs_network=True,
            target=Target.PYTHON_ENV,
        ),
    )
    lines = tuple(sorted({line, line_number(text, asked)}))
    added = Verdict(finding, titles.get(INSTALLED, INSTALLED), Kind.PROBLEM, (), None, lines)
    return (added, *verdicts)


def driver_for_the_toolkit(verdict: Verdict, pasted: PastedText, driver: str | None) -> Verdict:
    """A driver too old for the program's CUDA, where a pasted conda list names the environment's cudatoolkit and
    no driver version is shown: the cause says which driver that CUDA needs, from NVIDIA's toolkit table
    (blind set 20: mmaction#105, error 35 beside cudatoolkit 10.0.130, which needs 410.48 or newer)."""
    finding = verdict.finding
    if finding.check_id not in (DRIVER_COMPAT, CUDA_INIT) or finding.status is not Status.FAIL:
        return verdict
    if "driver" not in finding.summary.lower() or "older" not in finding.summary.lower():
        return verdict
    toolkit = next(
        (lib.version for listing in pasted.packages for lib in listing.packages if lib.name == "cudatoolkit"),
        None,
    )
    needs = load_matrix().min_driver_for(toolkit) if toolkit else None
    if toolkit is None or needs is None or "needs driver" in finding.summary:
        return verdict
    if isinstance(driver, str) and version_key(driver) >= version_key(needs):
        return verdict  # the driver shown runs that CUDA: the program's own CUDA is another
    cuda = ".".join(toolkit.split(".")[:2])
    summary = finding.summary.rstrip(".") + (
        f": the environment's cudatoolkit {toolkit} (CUDA {cuda}) needs driver {needs} or newer on Linux."
    )
    fix = finding.remediation
    if fix is not None:
        fix = dataclasses.replace(
            fix, text=f"nvidia-smi shows the driver's version: below {needs}, update it. " + fix.text
        )
    return dataclasses.replace(
        verdict, finding=dataclasses.replace(finding, summary=summary, remediation=fix)
    )


# NCCL_P2P_DISABLE=1 shown set, as a line of its own: an export, an env prefix, a YAML env map
# ('  NCCL_P2P_DISABLE: "1"'), os.environ; never a message that asks for it ('Please set `NCCL_P2P_DISABLE="1"`')
_P2P_OFF_SET = lazy(
    r"""^[ \t>*-]*(?:export[ \t]+|env[ \t]+)?["']?NCCL_P2P_DISABLE["']?[ \t]*[:=][ \t]*["']?1\b"""
    r"""|os\.environ\[["']NCCL_P2P_DISABLE["']\][ \t]*=[ \t]*["']1""",
    re.MULTILINE,
)
_RAY = lazy(r"\bray\b|\bruntime_env\b", re.IGNORECASE)


# Slurm binding one GPU to each task (its cgroup and CUDA_VISIBLE_DEVICES then hold that GPU alone)
_ONE_GPU_PER_TASK = lazy(r"--gpus-per-task[= ]\S|--gpu-bind[= ](?:single|closest|map_gpu)\b")
# NCCL's own failure, in its peer-to-peer or shared-memory transport ("transport/p2p.cc:275 NCCL WARN Cuda failure
# 101 'invalid device ordinal'"): not the program's torch.cuda.set_device
_NCCL_TRANSPORT = lazy(r"\btransport/(?:p2p|shm)\.cc\b|\bNCCL WARN\b")
ORDINAL = "no_visible_gpu_invalid_device_ordinal"
NEAR = 3  # lines either side of the ordinal's that hold NCCL's own words for it


def one_gpu_per_task(verdict: Verdict, pasted: PastedText) -> Verdict:
    """NCCL's own 'invalid device ordinal' in a Slurm job that binds one GPU to each task (`--gpus-per-task=1`):
    each rank sees only its own GPU, and NCCL's peer-to-peer path between ranks on one node opens the other's by
    its ordinal, which that rank cannot see. Not a wrong index in the program (blind set 31, nccl#1948)."""
    finding = verdict.finding
    if finding.check_id != "env.cuda_visible_devices" or finding.status is not Status.FAIL:
        return verdict
    bound = _ONE_GPU_PER_TASK.search(pasted.paste.text, 0, MAX_CHARS)
    if bound is None:
        return verdict
    lines = pasted.paste.text.split("\n")
    if not any(
        _NCCL_TRANSPORT.search("\n".join(lines[max(0, h.line - 1 - NEAR) : h.line + NEAR]))
        for h in pasted.hits
        if h.signature.id == ORDINAL
    ):
        return verdict
    line = line_number(pasted.paste.text, bound)
    summary = (
        f"Slurm binds one GPU to each task (line {line} of the paste), so NCCL's peer-to-peer path cannot open "
        "another rank's GPU: 'invalid device ordinal'."
    )
    details = (
        "CUDA numbers the GPUs a process may see from 0: with one GPU bound to each task every rank sees one "
        "device, and a peer GPU's ordinal on the node is 'invalid' in the rank that opens it. The program's own "
        "index is not the question."
    )
    finding = dataclasses.replace(
        finding, summary=summary, details=details, remediation=one_gpu_per_task_fix()
    )
    return dataclasses.replace(verdict, finding=finding, lines=tuple(sorted({*verdict.lines, line})))


# the person says how many GPUs the machine has: "I only have 1 GPU", "on a single GPU machine", "my one 4090"
_GPUS_SAID = lazy(
    r"\b(?:i|we)[ \t]+(?:only[ \t]+)?ha(?:ve|s)[ \t]+(?:only[ \t]+)?(?:(?P<n>1|one|a[ \t]+single|2|two|4|four|8|eight)"
    r"[ \t]+(?:\w+[ \t]+)?gpus?\b|(?P<a>a)[ \t]+(?!(?:few|couple|bunch|lot|number|pair)\b)(?:\w+[ \t]+)?gpu\b)"
    r"|\b(?:on[ \t]+)?(?:a[ \t]+)?(?P<n2>single|one|1)[ \t-]*gpu[ \t]+(?:machine|server|box|node|computer|pc)\b",
    re.IGNORECASE,
)
_COUNTS = {
    "1": 1,
    "one": 1,
    "a single": 1,
    "a": 1,
    "single": 1,
    "2": 2,
    "two": 2,
    "4": 4,
    "four": 4,
    "8": 8,
    "eight": 8,
}
DUPLICATE_GPU = "nccl_duplicate_gpu_ranks"
# the launcher in the paste, for the command that starts one process per GPU
_ACCELERATE = lazy(
    r"\baccelerate[ \t]+(?:launch|config)\b|--num_processes\b|\bnum_processes:"
    r"|\bDistributed environment: (?:MULTI_GPU|DistributedType\.)",  # accelerate's state, as scripts log it
    re.IGNORECASE,
)
_TORCHRUN = lazy(r"\btorchrun\b|torch\.distributed\.(?:run|launch)\b|--nproc[_-]per[_-]node\b")


def gpus_said_for_duplicate_ranks(verdict: Verdict, pasted: PastedText) -> Verdict:
    """NCCL's 'Duplicate GPU detected' where the person says how many GPUs there are: the count to compare is
    known, so the first step starts that many processes with the paste's launcher, not `nvidia-smi -L` (blind
    set 32: ViewDiff#24, accelerate starting 4 processes on a machine with one GPU)."""
    finding = verdict.finding
    if not any(h.signature.id == DUPLICATE_GPU and h.line in verdict.lines for h in pasted.hits):
        return verdict
    text = pasted.paste.text[:MAX_CHARS]
    said = _GPUS_SAID.search(text)
    if said is None:
        return verdict
    count = _COUNTS[" ".join((said["n"] or said["a"] or said["n2"]).lower().split())]
    launcher = (
        ("accelerate", "launch", "--num_processes", str(count), "SCRIPT")
        if _ACCELERATE.search(text)
        else ("torchrun", f"--nproc_per_node={count}", "SCRIPT")
        if _TORCHRUN.search(text)
        else None
    )
    plural = "GPU" if count == 1 else "GPUs"
    line = line_number(text, said)
    summary = (
        f"More processes were started than the machine has GPUs: it has {count} {plural} (line {line} of the "
        "paste), so two ranks share one."
    )
    fix = Remediation(
        text=f"Start {count} process{'' if count == 1 else 'es'}, one per GPU: the launcher's process count (its "
        "--num_processes or --nproc_per_node, or num_processes in accelerate's config file, which `accelerate "
        f"config` rewrites; a training script's own GPU list) must be {count}. "
        + ("With one GPU no process group is needed at all: running the script with plain python works too."
           if count == 1 else ""),
        commands=(Command(launcher, note="SCRIPT: the training script and its arguments", runs_here=False),)
        if launcher
        else (),
        target=Target.PYTHON_ENV,
    )  # fmt: skip
    return dataclasses.replace(
        verdict,
        finding=dataclasses.replace(finding, summary=summary, remediation=fix),
        lines=tuple(sorted({*verdict.lines, line})),
    )


def p2p_off_not_inherited(verdict: Verdict, pasted: PastedText) -> Verdict:
    """NCCL's peer-to-peer failure where the paste already sets NCCL_P2P_DISABLE=1: the setting did not reach the
    processes that run NCCL, so telling them to set it again is no answer (blind set 20: EasyR1#579, the variable
    in Ray's runtime_env.yaml and 'peer access is not supported' in the workers)."""
    finding = verdict.finding
    if finding.check_id != "nccl.communication" or finding.status is not Status.FAIL:
        return verdict
    fix = finding.remediation
    if fix is None or not any("NCCL_P2P_DISABLE=1" in c.argv for c in fix.commands):
        return verdict
    found = _P2P_OFF_SET.search(pasted.paste.text, 0, MAX_CHARS)
    if found is None:
        return verdict
    line = line_number(pasted.paste.text, found)
    ray = _RAY.search(pasted.paste.text, 0, MAX_CHARS) is not None
    summary = (
        f"NCCL failed at peer-to-peer although the paste sets NCCL_P2P_DISABLE=1 (line {line}): the setting did not "
        "reach the processes that run NCCL."
    )
    text = (
        "Set it where the processes that run NCCL inherit it, and check it there: "
        + (
            "with Ray, export it before `ray start` on every node (or in the container's environment, docker run "
            "-e NCCL_P2P_DISABLE=1): workers a framework starts itself, or ones already running, do not take a "
            "job's runtime_env;"
            if ray
            else "export it in the shell that starts the launcher, or pass it to the container (docker run -e "
            "NCCL_P2P_DISABLE=1);"
        )
        + " then print it from inside a worker: it must be 1 there."
    )
    command = (
        Command(
            ("env", "NCCL_P2P_DISABLE=1", "ray", "start", "--head"), note="and the same on every worker node"
        )
        if ray
        else Command(
            ("env", "NCCL_P2P_DISABLE=1", "PROGRAM"), note="PROGRAM: the failing command", runs_here=False
        )
    )
    remediation = dataclasses.replace(fix, text=text, commands=(command,))
    details = finding.details.split(" Set NCCL_P2P_DISABLE=1")[0]  # set already: the details say what failed
    lines = tuple(sorted({*verdict.lines, line}))
    finding = dataclasses.replace(finding, summary=summary, details=details, remediation=remediation)
    return dataclasses.replace(verdict, finding=finding, lines=lines)


BNB_CPU_LIBRARY = "other_bitsandbytes_cpu_library"
# bitsandbytes 0.37-0.42's welcome banner; after it, each step of its CUDA search logs a "CUDA SETUP:" line
_BNB_BANNER = "Welcome to bitsandbytes"
_BNB_SEARCHED = lazy(
    r"CUDA SETUP: (?:PyTorch settings found|CUDA runtime path found|Detected CUDA version|Highest compute"
    r"|Required library version not found|Problem: The main issue)|libcudart\.so|cudart64",
    re.IGNORECASE,
)


def bnb_saw_no_gpu(verdict: Verdict, pasted: PastedText) -> Verdict:
    """bitsandbytes 0.37-0.42 asks torch.cuda.is_available() right after its banner and loads its CPU library
    when it is False, before any search for a CUDA runtime (cuda_setup/main.py): the banner, then the CPU
    library with no "CUDA SETUP:" step between, on Linux, says torch saw no GPU (blind set 21 #07: a Studio Lab
    CPU session). The check comes first; the upgrade helps only once torch sees the GPU."""
    text = pasted.paste.text[:MAX_CHARS]
    fix = verdict.finding.remediation
    windows = "libbitsandbytes_cpu.dll" in text or "\\site-packages\\" in text
    if fix is None or not verdict.lines or windows:
        return verdict  # Windows: before 0.43 the CPU library whatever torch sees, the entry's own answer
    ids = {h.signature.id for h in pasted.hits if h.line in verdict.lines}
    if BNB_CPU_LIBRARY not in ids:
        return verdict
    if (
        _BNB_SEARCHED.search(text) is not None
    ):  # on Linux its own search ran and found no CUDA runtime it knows
        return dataclasses.replace(
            verdict,
            finding=dataclasses.replace(
                verdict.finding,
                summary="bitsandbytes (before 0.43) searched for a CUDA runtime of its own, found none it was built "
                "for, and loaded its CPU library.",
                details="Its log shows the search: it looked for libcudart in the environment and the folders it "
                "knows and found none its build was made for, so 8-bit optimizers and 4/8-bit quantization have no "
                "GPU code. 0.43 and later take CUDA from torch and search for nothing.",
            ),
        )
    if _BNB_BANNER not in text:
        return verdict
    python = fix.commands[0].argv[0] if fix.commands and "pip" in fix.commands[0].argv else "python"
    check = Command(
        (python, "-c", "import torch; print(torch.__version__, torch.cuda.is_available())"),
        note="+cpu or False: torch is the problem, not bitsandbytes",
    )
    finding = dataclasses.replace(
        verdict.finding,
        summary="bitsandbytes loaded its CPU library because torch saw no CUDA GPU: this release asks "
        "torch.cuda.is_available() first and takes the CPU library when it is False.",
        details="Its log shows its banner, then the CPU library, with no CUDA SETUP step between: the search for "
        "a CUDA runtime never ran, which this release skips only when torch says it has no GPU. 8-bit optimizers "
        "and 4/8-bit quantization then have no GPU code.",
        remediation=Remediation(
            text="Check torch in the program's environment first. A +cpu build or False: the machine or session "
            "has no GPU (a hosted notebook's CPU runtime: switch it to a GPU runtime) or torch is a CPU build "
            "(install the CUDA build); bitsandbytes follows. True there: upgrade bitsandbytes "
            "(pip install -U 'bitsandbytes>=0.43', which takes CUDA from torch).",
            commands=(check, *fix.commands),
            needs_network=fix.needs_network,
            target=fix.target,
        ),
    )
    return dataclasses.replace(verdict, finding=finding)


# accelerate's config as `accelerate env` prints it: "        - gpu_ids: '[1,2,3,4]'"
_GPU_IDS = lazy(r"^[ \t]*-?[ \t]*gpu_ids:[ \t]*(?P<value>[^\n]*?)[ \t]*$", re.MULTILINE)
_READABLE_IDS = lazy(r"(?:all|\d+(?:[ \t]*,[ \t]*\d+)*|GPU-[\w-]+(?:,GPU-[\w-]+)*)?")


def launcher_hides_the_gpus(
    verdicts: tuple[Verdict, ...], pasted: PastedText, titles: dict[str, str]
) -> tuple[Verdict, ...]:
    """accelerate launch passes its config's gpu_ids to the processes it starts as CUDA_VISIBLE_DEVICES, as
    written (accelerate/utils/launch.py, prepare_multi_gpu_env); a value CUDA cannot read ('[1,2,3,4]': brackets
    or quotes) hides every GPU, so torch there finds none while `accelerate env` in the shell found one (blind set
    22 #09). Only where the paste says the GPU is not found and nothing else was."""
    failing = pasted.prose.fails
    text = pasted.paste.text[:MAX_CHARS]
    if failing is None or "gpu_ids" not in text or not GPU_NOT_FOUND.search(failing.value):
        return verdicts
    if any(v.kind == Kind.PROBLEM for v in verdicts):
        return verdicts
    found = _GPU_IDS.search(text)
    if found is None or _READABLE_IDS.fullmatch(found["value"].strip("'\"")) is not None:
        return verdicts
    numbers = [int(n) for n in re.findall(r"\d+", found["value"])]
    # "[1,2,3,4]" for four processes counts from 1: CUDA counts from 0, so four GPUs are 0,1,2,3
    if numbers and max(numbers) >= len(numbers):
        numbers = list(range(len(numbers)))
    ids = ",".join(map(str, numbers)) or "0"
    line = line_number(text, found)
    finding = Finding(
        CUDA_INIT,
        Status.FAIL,
        f"accelerate's config sets gpu_ids to {escape_controls(found['value'].strip()[:80])} (line {line} of the paste), and accelerate "
        "launch passes it to its processes as CUDA_VISIBLE_DEVICES: CUDA cannot read that list, so they see no GPU.",
        details="CUDA_VISIBLE_DEVICES takes GPU indices counted from 0 (or UUIDs) separated by commas; brackets or "
        "quotes make the whole value unreadable and every GPU hidden. torch in the shell, without that "
        "variable, still sees the GPUs.",
        remediation=Remediation(
            text="Give gpu_ids as plain indices counted from 0 (0,1,2,3 on a machine with four GPUs) or all: run "
            "`accelerate config` again, or edit gpu_ids in accelerate's default_config.yaml, or pass it on the "
            "command line, which overrides the config.",
            commands=(
                Command(
                    ("accelerate", "launch", f"--gpu_ids={ids}", "SCRIPT.py"),
                    note="SCRIPT.py and its arguments: the failing launch; the ids nvidia-smi lists, from 0",
                    runs_here=False,
                ),
            ),
            target=Target.PYTHON_ENV,
        ),
    )
    added = Verdict(finding, titles.get(CUDA_INIT, CUDA_INIT), Kind.PROBLEM, (), None, (failing.line, line))
    return (added, *verdicts)


MEMORY_HELD = "gpu_memory_held_after_exit"
_EMPTY_CACHE = lazy(r"\bempty_cache\(\)")
# the program ended, so what holds the memory is another process: "after the script exits", "killed", "退出"
_PROGRAM_ENDED = lazy(
    r"\b(?:exit(?:s|ed)?|killed|terminat(?:es|ed)|crash(?:es|ed)|interrupted|finish(?:es|ed)|ended|stopped|"
    r"closed|ctrl\+c)\b|退出|结束|中断|终止",
    re.IGNORECASE,
)


def context_of_a_running_process(verdict: Verdict, pasted: PastedText) -> Verdict:
    """'The memory is not freed' where the program itself deletes its tensors and calls empty_cache() and goes on
    running: what nvidia-smi still shows for it is its CUDA context (the driver's state, loaded kernels, cuBLAS
    and cuDNN workspaces), which lives as long as the process; empty_cache() returns only torch's cached blocks.
    Expected, no process to kill (blind set 22 #07: 1105 MiB left after `del temp; torch.cuda.empty_cache()`)."""
    text = pasted.paste.text[:MAX_CHARS]
    lines = {h.line for h in pasted.hits if h.signature.id == MEMORY_HELD}
    if not lines.intersection(verdict.lines) or _EMPTY_CACHE.search(text) is None:
        return verdict
    if _PROGRAM_ENDED.search(text) is not None:
        return verdict  # it ended: another process holds the memory, the entry's own answer
    finding = Finding(
        verdict.finding.check_id,
        Status.WARN,
        "Not a fault: the GPU memory nvidia-smi still shows for the running program after `del` and "
        "empty_cache() is its CUDA context, which stays until the process ends.",
        details="A process that uses CUDA holds a context on each GPU it touched: the driver's state, the loaded "
        "kernels and the cuBLAS and cuDNN workspaces, typically 300 MB to over 1 GB. torch.cuda.empty_cache() "
        "returns only the blocks torch's caching allocator keeps for tensors; the context is freed when the "
        "process exits. nvidia-smi counts both.",
        remediation=Remediation(
            text="Nothing to repair. To see what torch's tensors take, ask torch rather than nvidia-smi: "
            "torch.cuda.memory_allocated() (live tensors) and torch.cuda.memory_reserved() (with the cache) drop "
            "to 0 after `del` and empty_cache(). End the process to free the context; lazy loading of CUDA "
            "modules (CUDA_MODULE_LOADING=LAZY, the default from torch 2.0 on CUDA 11.7+) makes it smaller.",
        ),
    )
    return dataclasses.replace(verdict, finding=finding, find_out=None)


# the same WSL distribution works when started another way: "when i launch the same dist in MobaXterm ... it
# working fine", "works in the Ubuntu app from the Start menu but not in Windows Terminal", "as admin it fails"
_OTHER_SESSION = lazy(
    r"\b(?:mobaxterm|windows[ \t]+terminal|vs[ \t]?code|visual[ \t]+studio[ \t]+code|distro\.exe|start[ \t]+menu"
    r"|(?:another|other|a[ \t]+different)[ \t]+(?:terminal|shell|window|session)|as[ \t]+admin\w*|administrator"
    r"|elevated)\b[^\n]{0,80}?\b(?:works?|working|worked|fine|ok)\b"
    r"|\b(?:works?|working|worked|fine)\b[^\n]{0,60}?\b(?:in|from|with)[ \t]+(?:mobaxterm|windows[ \t]+terminal"
    r"|vs[ \t]?code|the[ \t]+start[ \t]+menu|another[ \t]+(?:terminal|shell|window))\b",
    re.IGNORECASE,
)
_WSL_UNREACHED = frozenset({"driver.nvml", "driver.installed", "platform.wsl_gpu", "torch.cuda_init"})


def wsl_session(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """WSL's GPU not reached in one session while the same distribution reaches it when started another way
    (MobaXterm, the Start menu's app, VS Code, a non-elevated terminal): the Windows driver and the distribution's
    files are fine, which rules out both a driver update and a Linux package; WSL 1.0 to 2.0 give the GPU to
    either elevated or normal sessions, not both at once (microsoft/WSL#9099, microsoft/wslg#918; blind set 22
    #01)."""
    finding = verdict.finding
    if (
        finding.check_id not in _WSL_UNREACHED
        or finding.status is not Status.FAIL
        or isinstance(facts.os, Unavailable)
        or not facts.os.is_wsl
    ):
        return verdict
    found = _OTHER_SESSION.search(pasted.paste.text, 0, MAX_CHARS)
    if found is None:
        return verdict
    line = line_number(pasted.paste.text, found)
    finding = dataclasses.replace(
        finding,
        summary=f"The same WSL distribution reaches the GPU when started another way (line {line} of the paste): "
        "the Windows driver and the distribution are fine; this session is the one that cannot reach it.",
        details="WSL 1.0 to 2.0 give the GPU to elevated (Run as administrator) WSL sessions or to normal ones, not "
        "to both at once: whichever started first keeps it (microsoft/WSL#9099, microsoft/wslg#918). A terminal "
        "that starts elevated, such as an administrator PowerShell, then gets no GPU while MobaXterm or the "
        "Start menu's app does.",
        remediation=Remediation(
            text="Close every WSL window, shut WSL down, and start it again only from non-elevated terminals (not "
            "'Run as administrator'); update WSL so that both kinds of session can use the GPU.",
            commands=(
                Command(("wsl.exe", "--shutdown"), note="in PowerShell, then open WSL without elevation"),
                Command(("wsl.exe", "--update"), note="in PowerShell"),
            ),
            target=Target.SYSTEM,
        ),
    )
    return dataclasses.replace(
        verdict, finding=finding, lines=tuple(sorted({*verdict.lines, line})), find_out=None
    )
