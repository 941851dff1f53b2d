"""smoke.run and smoke.previous_run: did the smoke test run to the end, and did the last one ever finish?

A hang is the watchdog stopping a step that overran its budget; a crash is the child dying (a signal, an exit);
both name the step they stopped in. No usable GPU is a failure with the CPU's matmul figure beside it, and no
torch is a skip with the install command (2/6).
"""

from __future__ import annotations

from torch_gpu_doctor.checks.support.smoke import SOURCE, run_or_finding
from torch_gpu_doctor.facts.describe import fact
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.smoke import SmokeDevice, SmokeOutcome, SmokeRun, StepStatus
from torch_gpu_doctor.fixes.torch_wheel import fix_for_torch
from torch_gpu_doctor.model import Command, Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Reason, Unavailable

RUN = "smoke.run"
PREVIOUS = "smoke.previous_run"


def _quick_mode() -> Remediation:
    return Remediation(
        text="Run the quick mode first: it touches less memory and runs shorter kernels. If the machine locks "
        "up again, look at driver.xid_errors and the kernel log (sudo dmesg) for Xid errors.",
        commands=(Command(("gpu-doctor", "smoke", "--mode", "quick")),),
        target=Target.SYSTEM,
    )


@check(RUN, "The GPU smoke test runs to the end", "smoke", required=True)
def smoke_run(facts: Facts) -> Finding:
    """
    ## What it checks
    That the smoke test (`gpu-doctor smoke`, or `--smoke`) ran every step to the end in a child process of
    your interpreter: CUDA initialisation, a memory test, copies, matmuls, a cuDNN convolution, a training
    step and, with several GPUs, peer copies and an NCCL all-reduce. The other `smoke.*` checks judge each
    step's result.

    ## Why it matters
    Every check before it reads the machine; only running real work on the GPU proves it works. A step that
    never returns (a wedged kernel, a GPU that fell off the bus) or a crash (a segfault in a CUDA library)
    is what "my training hangs" looks like, caught here in seconds with the step named.

    ## How to fix
    A hang or crash in the first CUDA call points at the driver (see driver.* and driver.xid_errors); in a
    later step at the GPU, its power or its cooling. No usable GPU: follow torch.cuda_available. torch not
    installed: the install command below.
    """
    missing = facts.smoke
    if isinstance(missing, Unavailable) and missing.reason is Reason.NOT_FOUND:
        # asked for and impossible: a failure, so that `gpu-doctor smoke && train` stops here
        return Finding(
            RUN,
            Status.FAIL,
            f"The smoke test could not run: {missing.detail}. Install torch first, then run it again.",
            remediation=fix_for_torch(facts),
        )
    if isinstance(missing, Unavailable) and missing.reason is Reason.NOT_RECORDED:
        # asked of a capture that has none: nothing says whether its GPU works (exit 3, not a success)
        return Finding(
            RUN,
            Status.UNKNOWN,
            "This captured machine has no smoke-test run, so nothing says whether its GPU works.",
            remediation=Remediation(
                text="Record the machine again with the smoke test, on the machine itself.",
                commands=(Command(("gpu-doctor", "capture", "DIR", "--smoke")),),
                target=Target.SYSTEM,
            ),
        )
    run = run_or_finding(RUN, facts)
    if isinstance(run, Finding):
        return run
    evidence = (
        fact("mode", run.mode.value, SOURCE),
        fact("outcome", run.outcome.value, SOURCE),
        fact("torch", f"{run.torch_version} (CUDA {run.torch_cuda})", SOURCE),
        fact("duration", f"{run.duration_ms / 1000:.1f} s", SOURCE),
    ) + ((fact("stderr (last lines)", run.stderr_tail, SOURCE),) if run.stderr_tail else ())
    if run.outcome is SmokeOutcome.FAILED_TO_START:
        return Finding(RUN, Status.FAIL, f"The smoke test did not start: {run.message}", evidence=evidence)
    if run.outcome is SmokeOutcome.HUNG:
        return Finding(
            RUN,
            Status.FAIL,
            f"The GPU stopped answering during {run.stopped_in or 'the smoke test'}: {run.message}, so the "
            "watchdog ended the test.",
            details="A kernel that never returns usually means a driver or hardware fault: look for Xid errors "
            "(driver.xid_errors) and check power and cooling. The quick mode runs shorter steps.",
            evidence=evidence,
            remediation=_quick_mode(),
        )
    if run.outcome is SmokeOutcome.CRASHED:
        where = f" during {run.stopped_in}" if run.stopped_in else ""
        return Finding(
            RUN,
            Status.FAIL,
            f"The smoke test crashed{where}: {run.message}.",
            details="A crash inside torch or a CUDA library: the last lines it printed are in the evidence "
            "(`gpu-doctor -v` shows them).",
            evidence=evidence,
        )
    return _completed(run, evidence)


def _completed(run: SmokeRun, evidence: tuple[Evidence, ...]) -> Finding:
    init = run.find("cuda_init")
    if init is not None and init.status is not StepStatus.OK:
        cpu = run.find("cpu_matmul")
        gflops = cpu.numbers.get("gflops") if cpu is not None else None
        figure = f" The CPU ran a float32 matmul at {gflops:g} GFLOPS instead." if gflops else ""
        return Finding(
            RUN,
            Status.FAIL,
            f"No usable GPU: {init.message}.{figure}",
            details="torch could not use a GPU here, so only the CPU was tested: see torch.cuda_available "
            "and torch.cpu_build for why and what to install.",
            evidence=evidence,
        )
    done = [s for s in run.steps if s.status is StepStatus.OK]
    bad = [s for s in run.steps if s.status in (StepStatus.WRONG, StepStatus.ERROR)]
    gpus = len(run.devices)
    head = (
        f"The smoke test ran {len(run.steps)} steps on {gpus} GPU{'s' if gpus != 1 else ''} in "
        f"{run.duration_ms / 1000:.1f} s ({run.mode.value} mode)"
    )
    lost = [d for d in run.devices if d.error]
    if lost:
        first = lost[0]
        return Finding(
            RUN,
            Status.FAIL,
            f"{gpus - len(lost)} of {gpus} GPUs could be used: "
            + "; ".join(f"GPU {d.index} ({_where(d)}) failed: {d.error}" for d in lost)
            + ". The others were tested (see the smoke checks below).",
            details="torch could not create a context or read the free memory on that GPU. It is usually taken "
            "in exclusive-process mode by another program, full, or in an error state after an Xid "
            "(driver.xid_errors); nvidia-smi shows its compute mode, its processes and its memory.",
            evidence=evidence,
            remediation=Remediation(
                text=f"See what holds GPU {first.index}: its compute mode, its processes and its memory.",
                commands=(
                    Command(("nvidia-smi", "-i", str(first.index), "-q", "-d", "COMPUTE,MEMORY,PIDS")),
                ),
                target=Target.SYSTEM,
            ),
        )
    if bad:
        failed = sorted({s.device for s in bad if s.device is not None})
        per_gpu = f"{gpus - len(failed)} of {gpus} GPUs passed every step; " if failed and gpus > 1 else ""
        return Finding(
            RUN,
            Status.PASS,
            f"{head}; {per_gpu}{len(bad)} step(s) gave wrong results or errors (see the smoke checks below).",
            evidence=evidence,
        )
    return Finding(RUN, Status.PASS, f"{head}; all {len(done)} that apply passed.", evidence=evidence)


def _where(device: SmokeDevice) -> str:
    return f"{device.name} at {device.pci_bus_id}" if device.pci_bus_id else device.name


@check(PREVIOUS, "The previous smoke test finished", "smoke")
def smoke_previous_run(facts: Facts) -> Finding:
    """
    ## What it checks
    Whether the smoke test before this one finished. Each run leaves a small file (in
    `~/.local/state/gpu-doctor/`) naming the step it is in, written to disk before the GPU is touched, and
    removes it at the end; a file that is still there means the last run never got to its end.

    ## Why it matters
    A smoke test cannot report a hard lock or a reboot that it causes: the machine is gone. This file is how
    the next run knows, and which step it was in.

    ## How to fix
    Run the quick mode (`gpu-doctor smoke --mode quick`): smaller buffers, shorter kernels. If it locks up
    again, the step named here is where to look: Xid errors in the kernel log, the power supply for
    full-load steps, the PCIe link for copies.
    """
    run = run_or_finding(PREVIOUS, facts)
    if isinstance(run, Finding):
        return run
    previous = run.previous
    if previous is None:
        return Finding(PREVIOUS, Status.PASS, "The previous smoke test, if any, finished.")
    where = f" in {previous.step}" if previous.step else " before its first step"
    since = {
        True: " The machine has rebooted since: it most likely locked up or reset.",
        False: " The machine has not rebooted: gpu-doctor itself was killed or the session ended.",
        None: "",
    }[previous.rebooted]
    return Finding(
        PREVIOUS,
        Status.WARN,
        f"The previous smoke test ({previous.mode} mode, started {previous.started_at}) never finished: it "
        f"stopped{where}.{since}",
        evidence=(
            fact("interpreter", previous.python, "breadcrumb"),
            fact("rebooted since", previous.rebooted, "boot id in /proc/sys/kernel/random/boot_id"),
        ),
        remediation=_quick_mode(),
    )
