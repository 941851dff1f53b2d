"""What every smoke check needs first: the run, or the finding that says why there is none."""

from __future__ import annotations

from torch_gpu_doctor.facts.describe import fact
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.smoke import SmokeOutcome, SmokeRun, SmokeStep, StepStatus
from torch_gpu_doctor.model import Evidence, Finding, Status
from torch_gpu_doctor.unavailable import Reason, Unavailable

SOURCE = "gpu-doctor smoke test (child process of the diagnosed interpreter)"


def run_or_finding(cid: str, facts: Facts) -> SmokeRun | Finding:
    run = facts.smoke
    if isinstance(run, Unavailable):
        if run.reason is Reason.NOT_FOUND:
            return Finding(
                cid, Status.SKIP, "torch is not installed, so there is nothing to smoke-test (see smoke.run)."
            )
        if run.reason is Reason.NOT_RECORDED:
            return Finding(cid, Status.SKIP, "This captured machine has no smoke-test run (capture --smoke).")
        return Finding(
            cid, Status.SKIP, "The smoke test was not run (`gpu-doctor --smoke`, or `gpu-doctor smoke`)."
        )
    return run


def gpu_run_or_finding(cid: str, facts: Facts, step_name: str) -> SmokeRun | Finding:
    """The run, when it reached `step_name` on a GPU; else a skip or unknown that points at smoke.run."""
    run = run_or_finding(cid, facts)
    if isinstance(run, Finding):
        return run
    init = run.find("cuda_init")
    if init is not None and init.status is not StepStatus.OK:
        return Finding(cid, Status.SKIP, "No usable GPU, so the GPU steps did not run (see smoke.run).")
    if not run.named(step_name):
        if run.outcome is not SmokeOutcome.COMPLETED:
            return Finding(
                cid,
                Status.UNKNOWN,
                f"The smoke test stopped before this step ({run.message}; see smoke.run).",
            )
        return Finding(
            cid, Status.SKIP, f"The {run.mode.value} mode does not run this step (try --smoke standard)."
        )
    return run


def step_evidence(step: SmokeStep) -> Evidence:
    numbers = ", ".join(f"{k}={v:g}" for k, v in sorted(step.numbers.items()))
    texts = ", ".join(f"{k}={v}" for k, v in sorted(step.texts.items()))
    flags = ", ".join(f"{k}={v}" for k, v in sorted(step.flags.items()))
    value = "; ".join(x for x in (step.status.value, step.message or "", numbers, texts, flags) if x)
    return fact(step.label, value, SOURCE)


def gpu_words(run: SmokeRun, index: int | None) -> str:
    device = next((d for d in run.devices if d.index == index), None)
    return f"GPU {index} ({device.name})" if device else f"GPU {index}"


def failed_steps(steps: tuple[SmokeStep, ...]) -> list[SmokeStep]:
    return [s for s in steps if s.status in (StepStatus.WRONG, StepStatus.ERROR, StepStatus.UNFINISHED)]


def step_failure(cid: str, run: SmokeRun, steps: tuple[SmokeStep, ...], what: str) -> Finding | None:
    """FAIL naming the GPUs whose `what` failed (WARN when all that failed ran out of memory); None if none."""
    bad = failed_steps(steps)
    if not bad:
        return None
    worst = next((s for s in bad if not s.oom), bad[0])
    names = sorted({gpu_words(run, s.device) for s in bad})
    status = Status.WARN if all(s.oom for s in bad) else Status.FAIL
    healthy = {s.device for s in steps if s.status is StepStatus.OK} - {s.device for s in bad}
    others = f" It worked on the other {len(healthy)} GPU(s)." if healthy else ""
    return Finding(
        cid,
        status,
        f"{what} failed on {', '.join(names)}: {worst.message or worst.status.value}.{others}",
        details="Out of memory: another process holds GPU memory (nvidia-smi lists it), or free memory is "
        "fragmented."
        if status is Status.WARN
        else "",
        evidence=tuple(step_evidence(s) for s in steps),
    )
