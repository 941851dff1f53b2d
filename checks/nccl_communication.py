"""nccl.communication: NCCL errors a program reported, and the setting or fix each one points to."""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.checks.support.signatures import catalogue_fix, reported_evidence
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.reported_errors import ReportedError
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Finding, Remediation, Status, Target
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Unavailable

CID = "nccl.communication"
CUSTOM_ALL_REDUCE = "vLLM's custom all-reduce failed"  # not NCCL's: NCCL_DEBUG tells nothing of it
UNHANDLED_CUDA = "nccl_unhandled_cuda_error"  # the catalogue's "unhandled cuda error"
UNHANDLED_SYSTEM = "nccl_unhandled_system_error"  # ... and "unhandled system error"
# most specific first: the first found decides
KINDS = (
    "custom_all_reduce",  # vLLM's and sglang's own kernel, not NCCL: its own switch, never NCCL's settings
    "nccl_nvml",  # NCCL's 'Last error:' says it could not load NVML: the driver's library, not the network
    "nccl_shm_permission",
    "nccl_shm_attach",
    "nccl_shm",
    "nccl_p2p",
    "nccl_ib",
    "nccl_wsl",
    "nccl_timeout_sync",  # a one-element collective: ranks waiting at a barrier, not gradient traffic
    "nccl_timeout",
    "nccl_system",
    "nccl",
)
SHM_SIZE = Command(
    ("df", "-h", "/dev/shm"),  # noqa: S108 - a path shown to the person, never written here
    note="how large /dev/shm is where the program runs",
)
P2P_OFF = Command(
    ("env", "NCCL_P2P_DISABLE=1", "PROGRAM"),
    note="PROGRAM: the failing command; or export the variable in the job's environment",
    runs_here=False,
)
DEBUG = (
    "Run it again with NCCL_DEBUG=INFO (and NCCL_DEBUG_SUBSYS=INIT,NET) in its environment: NCCL then prints "
    "the real cause (a 'Last error:' or 'NCCL WARN' line) before it fails."
)
DEBUG_RUN = Command(
    ("env", "NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,NET", "PROGRAM"),
    note="PROGRAM: the failing command; NCCL prints its reason ('NCCL WARN', 'Last error:') before it fails",
    runs_here=False,
)


# verbs calls that create resources: they fail when the locked-memory limit is too low, not when a port is down
MEMLOCK_CALLS = frozenset(
    {"ibv_create_qp", "ibv_reg_mr", "ibv_create_cq", "ibv_reg_mr_iova2", "ibv_reg_dmabuf_mr"}
)


def _memlock() -> tuple[str, Remediation]:
    return "InfiniBand resources could not be created: the locked-memory limit is too low", Remediation(
        text="InfiniBand pins (locks) memory for its queues; a low memlock limit (often 64 KB) makes "
        "ibv_create_qp and ibv_reg_mr fail. Raise it to unlimited where the job starts: `--ulimit memlock=-1` "
        "for Docker, `* - memlock unlimited` in /etc/security/limits.conf, LimitMEMLOCK=infinity for the Slurm "
        "daemon (slurmd) and the container runtime. NCCL_IB_DISABLE=1 confirms it (TCP, slower).",
        commands=(
            Command(("prlimit", "--memlock"), note="the limit where the job runs: unlimited is right"),
        ),
        target=Target.SYSTEM,
    )


CURED_BY_P2P_OFF = "nccl_p2p_disable_cures_it_words"  # the person already ran it with P2P off, and it worked
CURED_BY_IB_OFF = "nccl_ib_disable_cures_it_words"  # ... with InfiniBand off (TCP sockets), and it worked
# a pasted p2pBandwidthLatencyTest whose peer-to-peer copies are slower than through the host (triage reads it)
P2P_TEST_SLOW = "p2p_bandwidth_test_slower_with_p2p"
_ACS_CHECK = Command(
    ("sudo", "lspci", "-vvv"),
    note="'ACSCtl: SrcValid+' on a PCIe bridge above the GPUs: ACS redirects their peer traffic",
)
# GeForce generations without peer-to-peer over PCIe (NVIDIA turned it off for the RTX 40 series; the RTX 50
# series has none either): nothing to repair, P2P stays off
_NO_P2P = lazy(r"GeForce RTX [45]0\d0", re.IGNORECASE)


def _geforce_without_p2p(facts: Facts) -> bool:
    names = [g.name for g in facts.nvidia_gpus if isinstance(g.name, str)]
    return bool(names) and all(_NO_P2P.search(n) for n in names)


def _no_p2p_geforce() -> tuple[str, Remediation]:
    return "these GeForce GPUs have no peer-to-peer, and NCCL tried it", Remediation(
        text="GeForce RTX 40 and 50 series cards do not do peer-to-peer transfers over PCIe, although some "
        "drivers report that they can: NCCL then hangs or fails. Run with NCCL_P2P_DISABLE=1 for good (it is what "
        "accelerate sets on these cards); NCCL_IB_DISABLE=1 too on a machine without InfiniBand. Nothing in the "
        "machine needs repair.",
        commands=(P2P_OFF,),
        target=Target.PYTHON_ENV,
    )


def _fix(kind: str) -> tuple[str, Remediation]:
    if kind == "nccl_shm_permission":
        return "its shared-memory segment could not be created: /dev/shm is not writable", Remediation(
            text="/dev/shm must be writable by every user, with the sticky bit (drwxrwxrwt, mode 1777); a "  # noqa: S108 - words
            "mount or a hardening script that changed it breaks NCCL's shm_open. Restore the mode (and fix "
            "whatever set it, e.g. /etc/fstab's options for /dev/shm).",
            commands=(
                Command(("ls", "-ld", "/dev/shm"), note="drwxrwxrwt is right"),  # noqa: S108 - shown, not written
                Command(("sudo", "chmod", "1777", "/dev/shm")),  # noqa: S108 - shown, run only if asked
            ),
            requires_root=True,
            target=Target.SYSTEM,
        )
    if kind == "nccl_shm_attach":
        return "one rank could not attach to another's shared memory in /dev/shm", Remediation(
            text="The ranks must share one /dev/shm: run them in one container or pod, or with the host's IPC "
            "namespace (docker --ipc=host). NCCL_SHM_DISABLE=1 confirms it (slower, over P2P or sockets). If they "
            "already share it, try another NCCL release (NVIDIA/nccl#1589: 2.21.5 worked where a newer one "
            "failed) and report it with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ALLOC.",
            commands=(
                Command(
                    (
                        "env",
                        "NCCL_SHM_DISABLE=1",
                        "NCCL_DEBUG=INFO",
                        "NCCL_DEBUG_SUBSYS=INIT,ALLOC",
                        "PROGRAM",
                    ),
                    note="PROGRAM: the failing command; it runs without NCCL's shared memory if that is the cause, "
                    "and the log says which transport each pair of ranks uses",
                    runs_here=False,
                ),
                Command(
                    ("docker", "run", "--gpus", "all", "--ipc=host", "IMAGE"),
                    note="in containers, replaces your `docker run`: every rank sees the host's /dev/shm",
                    runs_here=False,
                ),
            ),
            target=Target.SYSTEM,
        )
    if kind == "nccl_shm":
        return "NCCL could not create its shared-memory segment in /dev/shm, which is too small", Remediation(
            text="Give the container a larger /dev/shm (Docker's default is 64 MB; NCCL needs hundreds of MB "
            "with several GPUs): `--shm-size=16g` or `--ipc=host`; in Kubernetes mount an emptyDir with "
            "medium: Memory at /dev/shm. Outside a container, check `df -h /dev/shm`.",
            commands=(
                Command(
                    ("docker", "run", "--gpus", "all", "--shm-size=16g", "IMAGE"),
                    note="replaces your `docker run`",
                    runs_here=False,
                ),
                SHM_SIZE,
            ),
            target=Target.SYSTEM,
        )
    if kind == "nccl_p2p":
        return "the GPUs' peer-to-peer path failed or hung", Remediation(
            text="Confirm with NCCL_P2P_DISABLE=1 in the program's environment (slower, but it should then "
            "work). The lasting fix: PCIe ACS or an IOMMU in the way of peer traffic (turn ACS off in the BIOS "
            "or boot with iommu=pt; `gpu-doctor --check platform.iommu_p2p` looks at it), or a driver or "
            "platform that does not support P2P between these GPUs.",
            commands=(
                Command(
                    ("env", "NCCL_P2P_DISABLE=1", "PROGRAM"),
                    note="PROGRAM: the failing command; it runs with P2P off if the P2P path is the cause",
                    runs_here=False,
                ),
                Command(("nvidia-smi", "topo", "-m"), note="how each pair of GPUs is connected"),
                Command(
                    ("nvidia-smi", "topo", "-p2p", "r"),
                    note="whether the driver allows peer reads between each pair (OK, or why not: CNS, NS)",
                ),
            ),
            target=Target.SYSTEM,
        )
    if kind == "nccl_ib":
        return "NCCL's InfiniBand/RoCE transport failed", Remediation(
            text="Confirm with NCCL_IB_DISABLE=1 (NCCL falls back to TCP sockets). Then check the HCA's state "
            "(`ibstat`: State Active, Physical state LinkUp), that the containers see /dev/infiniband, and "
            "NCCL_SOCKET_IFNAME / NCCL_IB_HCA if several interfaces exist.",
            commands=(Command(("ibstat",), note="each InfiniBand port's state"),),
            target=Target.SYSTEM,
        )
    if kind == "nccl_wsl":
        return "NCCL cannot find the GPU's PCI path in WSL2, which older NCCL releases need", Remediation(
            text="NCCL before 2.10 does not support WSL2: it looks for the GPU in /sys/class/pci_bus, which WSL "
            "does not have. Install a current torch wheel (it brings a current NCCL in nvidia-nccl-cu*), or use "
            "the gloo backend or a single GPU under WSL.",
            commands=(
                Command(
                    ("python", "-c", "import torch; print(torch.__version__, torch.cuda.nccl.version())"),
                    note="the NCCL torch loads",
                ),
            ),
            target=Target.PYTHON_ENV,
        )
    if kind == "nccl_timeout_sync":
        return (
            "the ranks waited at a synchronisation point (a one-element collective) longer than the timeout: "
            "one rank was still busy with work of its own, or had failed",
            Remediation(
                text="Look at what the log shows just before the timeout lines. If one rank was doing a long step "
                "of its own (preprocessing, clustering, tokenising or mapping a dataset, evaluating, saving a "
                "checkpoint), the process-group timeout is simply shorter than that step: raise it where the "
                'group is created, `torch.distributed.init_process_group(backend="nccl", '
                "timeout=datetime.timedelta(hours=2))` (Hugging Face Trainer: `--ddp_timeout 7200`; accelerate: "
                "`InitProcessGroupKwargs(timeout=...)`), or let every rank share that work or cache its result. "
                "If no such step was running, that rank crashed or hung: its own log, then `dmesg` for an Xid or "
                "ECC error on its GPU.",
                commands=(
                    Command(
                        ("py-spy", "dump", "--pid", "PID"),
                        note="next time, for each rank's PID while the others wait: what the busy rank is doing",
                        runs_here=False,
                    ),
                ),
                target=Target.SYSTEM,
            ),
        )
    if kind == "nccl_timeout":
        return (
            "a collective waited for the whole timeout: one rank stalled or took another path",
            Remediation(
                text="One rank never reached the collective: find which (the ranks missing from the timeout lines, "
                "or py-spy dump on the stuck processes), then why: a branch or an evaluation only some ranks run, "
                "uneven batches, a data loader that stalled, or an Xid or ECC error on its GPU (`dmesg`). "
                "TORCH_DISTRIBUTED_DEBUG=DETAIL reports collectives the ranks called out of step, and NCCL_DEBUG=INFO "
                "with TORCH_NCCL_TRACE_BUFFER_SIZE=1000 keeps the flight recorder. Raise the timeout only when a "
                "step is legitimately that slow.",
                commands=(
                    # after the watchdog the processes are gone: the kernel log still has a GPU's fault
                    Command(("sudo", "dmesg", "--level=err,warn"), note="Xid or ECC errors on the stuck GPU"),
                    Command(
                        ("py-spy", "dump", "--pid", "PID"),
                        note="next time it hangs, for each rank's PID: the one not inside the collective is stuck",
                        runs_here=False,
                    ),
                ),
                target=Target.SYSTEM,
            ),
        )
    if kind == "nccl_system":
        return 'a system call inside NCCL failed ("unhandled system error")', Remediation(
            text=DEBUG
            + " In a container the usual cause is a /dev/shm too small (Docker's default is 64 MB): "
            "run it with `--ipc=host` or `--shm-size=16g`. Otherwise look at the 'NCCL WARN' line: a socket or "
            "network interface (NCCL_SOCKET_IFNAME), or P2P (NCCL_P2P_DISABLE=1 to confirm).",
            commands=(DEBUG_RUN, SHM_SIZE),  # NCCL's own reason first; a container's /dev/shm is one of many
            target=Target.SYSTEM,
        )
    return "NCCL failed without saying why in this output", Remediation(text=DEBUG, target=Target.SYSTEM)


BETWEEN_MACHINES = "NCCL could not connect the machines"


def between_machines() -> tuple[str, Remediation]:
    """NCCL's generic failure in a job that spans machines while one machine alone works: the network between
    them (the interface NCCL picked, InfiniBand that does not work there), not /dev/shm (pytorch/pytorch#20313:
    two nodes failed, one node with the same code worked)."""
    return BETWEEN_MACHINES, Remediation(
        text="Across machines NCCL also needs a path between them, and that is what fails when one machine "
        "alone runs the same job: NCCL picked an interface the other node cannot reach (docker0, a VPN, a second "
        "network card), or InfiniBand that does not work between them. Set NCCL_SOCKET_IFNAME to the interface the nodes reach each other on (the one "
        "holding the address MASTER_ADDR points to) on every node, and NCCL_IB_DISABLE=1 where InfiniBand is "
        "absent or down; NCCL_DEBUG=INFO prints the interface and transport each rank chose (its NET lines).",
        commands=(
            Command(("ip", "-brief", "address"), note="each interface and its address, on every node"),
            Command(
                (
                    "env",
                    "NCCL_SOCKET_IFNAME=IFACE",
                    "NCCL_DEBUG=INFO",
                    "NCCL_DEBUG_SUBSYS=INIT,NET",
                    "PROGRAM",
                ),
                note="IFACE: that interface (eth0, ens5, ib0); PROGRAM: the failing launch, on every node",
                runs_here=False,
            ),
        ),
        target=Target.SYSTEM,
    )


def _under_wsl(facts: Facts) -> bool:
    return not isinstance(facts.os, Unavailable) and facts.os.is_wsl


# NCCL's "Last error:" line names the CUDA failure: "Cuda failure 'out of memory'"
_CUDA_FAILURE = lazy(r"Cuda failure '(?P<what>[^']+)'")
_PEER_FAILURES = ("peer access", "invalid argument", "not supported", "operation not permitted")


def _other_cuda_failure(errors: list[ReportedError]) -> bool:
    """NCCL's own log names a CUDA failure that is not about reaching another GPU (out of memory): that, not
    WSL2's peer-to-peer, is the cause."""
    for error in errors:
        named = _CUDA_FAILURE.search(f"{error.text}\n{error.context}")
        if named is not None and not any(p in named["what"].lower() for p in _PEER_FAILURES):
            return True
    return False


def _wsl_cuda_call() -> tuple[str, Remediation]:
    """A CUDA call inside NCCL failed under WSL2: a virtual machine, whose paravirtualized GPUs often refuse the
    direct peer-to-peer access NCCL tries first (NCCL's troubleshooting guide: P2P "can fail ... [with] a bad
    configuration of a virtual machine"). Turning P2P off makes NCCL copy through host shared memory."""
    return (
        "a CUDA call inside NCCL failed under WSL2, where peer-to-peer between GPUs often does not work",
        Remediation(
            text="WSL2 runs Linux in a virtual machine whose GPUs often cannot reach each other directly, and NCCL "
            "tries that first. Run with NCCL_P2P_DISABLE=1 (NCCL then copies through host shared memory; slower, "
            "and right under WSL); if it still fails, add NCCL_SHM_DISABLE=1. Native Linux runs multi-GPU jobs at "
            "full speed.",
            commands=(P2P_OFF,),
            target=Target.PYTHON_ENV,
        ),
    )


@check(CID, "NCCL can communicate between the GPUs", "nccl")
def nccl_communication(facts: Facts) -> Finding:
    """
    ## What it checks
    NCCL errors a program reported (torch.distributed's "NCCL error ... unhandled system error", a
    shared-memory segment it could not create, peer-to-peer or InfiniBand failures, watchdog timeouts), read
    from output the doctor was given (a paste in `gpu-doctor triage`).

    ## Why it matters
    NCCL's first error line rarely names the cause: "unhandled system error" covers a /dev/shm too small in
    a container, a P2P path blocked by ACS or an IOMMU, and a broken InfiniBand port alike. Each has its own
    fix, and the wrong one wastes a day.

    ## How to fix
    /dev/shm too small: `--shm-size=16g` or `--ipc=host` for the container. P2P: confirm with
    NCCL_P2P_DISABLE=1, then fix ACS/IOMMU. InfiniBand: confirm with NCCL_IB_DISABLE=1, then `ibstat`.
    Anything else: rerun with NCCL_DEBUG=INFO to see NCCL's own reason.
    """
    reported = facts.reported_errors
    if isinstance(reported, Unavailable):
        return Finding(
            CID, Status.SKIP, "No program output was read (`gpu-doctor triage FILE` reads a pasted error)."
        )
    errors: list[ReportedError] = [e for e in reported if e.kind in KINDS]
    if not errors:
        return Finding(CID, Status.PASS, "No NCCL error was reported.")
    kind = next(k for k in KINDS if any(e.kind == k for e in errors))
    decisive = next(e for e in errors if e.kind == kind)
    memlock = kind == "nccl_ib" and any(e.values.get("call") in MEMLOCK_CALLS for e in errors)
    own = catalogue_fix(decisive)
    if kind == "nccl_nvml" and own is not None:
        return Finding(
            CID,
            Status.FAIL,
            "NCCL failed: it could not load NVML (libnvidia-ml.so.1), the driver's library, where the program runs.",
            details=decisive.means,
            evidence=reported_evidence(errors),
            remediation=own,
        )
    if kind == "custom_all_reduce" and own is not None:
        return Finding(
            CID,
            Status.FAIL,
            f"{CUSTOM_ALL_REDUCE}: it needs peer-to-peer access between the GPUs, which this "
            "machine does not give (NCCL is not involved).",
            details=decisive.means,
            evidence=reported_evidence(errors),
            remediation=own,
        )
    # InfiniBand off already cured it, and NCCL said a system call failed: pinning memory for IB (the memlock limit)
    cured_system_call = (
        kind == "nccl_ib"
        and decisive.signature == CURED_BY_IB_OFF
        and any(e.kind == "nccl_system" or e.signature == UNHANDLED_SYSTEM for e in errors)
    )
    why, fix = _memlock() if memlock or cured_system_call else _fix(kind)
    if cured_system_call:
        why = (
            "its InfiniBand transport fails where TCP works (NCCL_IB_DISABLE=1), with a failed system call: most "
            "likely the locked-memory limit where the job starts is too low for InfiniBand"
        )
    if kind == "nccl_p2p" and _geforce_without_p2p(facts):
        why, fix = _no_p2p_geforce()
    elif (
        kind == "nccl"
        and decisive.signature == UNHANDLED_CUDA
        and _under_wsl(facts)
        and not _other_cuda_failure(errors)
    ):
        why, fix = _wsl_cuda_call()
    elif kind == "nccl_p2p" and decisive.signature == P2P_TEST_SLOW:  # measured: the path, not NCCL
        return Finding(
            CID,
            Status.FAIL,
            f"Peer-to-peer copies between the GPUs are slower than copies through the host ({decisive.text}): "
            "their P2P traffic is redirected or blocked on the way (PCIe ACS, the IOMMU).",
            details=decisive.means,
            evidence=reported_evidence(errors),
            remediation=Remediation(
                text="Look at the PCIe bridges between the GPUs: ACS that redirects peer traffic to the root complex "
                "('ACSCtl: SrcValid+') must be off (in the BIOS, or per bridge with setpci after each boot), and an "
                "IOMMU must be in passthrough (iommu=pt; on AMD hosts amd_iommu=off or pt on the kernel command "
                "line). Meanwhile NCCL_P2P_DISABLE=1 makes NCCL copy through the host, at the speed the test "
                "measured without P2P. Run the test again after the change: with P2P on it should be the faster.",
                commands=(_ACS_CHECK, P2P_OFF),
                requires_root=True,
                target=Target.SYSTEM,
            ),
        )
    elif kind == "nccl_p2p" and decisive.signature == CURED_BY_P2P_OFF:  # already confirmed: the lasting fix
        fix = dataclasses.replace(
            fix,
            text="Running with NCCL_P2P_DISABLE=1 already confirmed it: keep it set meanwhile (slower). The lasting "
            "fix is what stands in the way of peer traffic: PCIe ACS on a bridge between the GPUs (turn it off in "
            "the BIOS, or per bridge with setpci), an IOMMU that is not in passthrough (boot with iommu=pt), or a "
            "driver or platform that does not support P2P between these GPUs.",
            commands=(_ACS_CHECK, *fix.commands[1:2]),
        )
    fix = own or fix  # a message that names its own remedy (accelerate's RTX 40xx stop)
    return Finding(
        CID,
        Status.FAIL,
        f"NCCL failed: {why}.",
        details=decisive.means + ("" if kind in ("nccl", "nccl_system") else " " + DEBUG),
        evidence=reported_evidence(errors),
        remediation=fix,
    )
