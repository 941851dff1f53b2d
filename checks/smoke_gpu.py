"""smoke.gpu_memory, smoke.transfer, smoke.memory_bandwidth, smoke.matmul: each GPU's results and figures.

Wrong results fail; errors fail, except running out of memory, which warns (another process may hold memory);
figures below their expectation warn with the cause (checks/support/smoke_figures.py has the expectations).
"""

from __future__ import annotations

from torch_gpu_doctor.checks.support.smoke import gpu_run_or_finding, step_evidence, step_failure
from torch_gpu_doctor.checks.support.smoke_figures import (
    matmul_figures,
    memory_bandwidth_figures,
    transfer_figures,
)
from torch_gpu_doctor.facts.describe import fact
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.smoke import SmokeStep
from torch_gpu_doctor.model import Evidence, Figure, Finding, Status
from torch_gpu_doctor.registry import check

MEMORY = "smoke.gpu_memory"
TRANSFER = "smoke.transfer"
BANDWIDTH = "smoke.memory_bandwidth"
MATMUL = "smoke.matmul"


def _figures_finding(cid: str, figures: list[Figure], steps: tuple[SmokeStep, ...], what: str) -> Finding:
    evidence: tuple[Evidence, ...] = tuple(
        fact(f.label + (f" (GPU {f.device})" if f.device is not None else ""), f.sentence, f.expectation)
        for f in figures
    ) + tuple(step_evidence(s) for s in steps)
    slow = [f for f in figures if f.status is Status.WARN]
    if not figures:
        return Finding(cid, Status.UNKNOWN, f"No {what} figure was measured.", evidence=evidence)
    if slow:
        more = len(slow) - 1
        return Finding(
            cid,
            Status.WARN,
            _sentence(slow[0]) + (f" ({more} more figure(s) below expectation)" if more else ""),
            details="\n".join(_sentence(f) for f in slow[1:]),
            evidence=evidence,
        )
    return Finding(
        cid,
        Status.PASS,
        "; ".join(_sentence(f) for f in figures[:2]) + ("; …" if len(figures) > 2 else ""),
        evidence=evidence,
    )


def _sentence(figure: Figure) -> str:
    where = f"GPU {figure.device}: " if figure.device is not None else ""
    return where + figure.sentence


@check(MEMORY, "GPU memory holds what is written to it", "smoke")
def smoke_gpu_memory(facts: Facts) -> Finding:
    """
    ## What it checks
    The smoke test allocates a large share of each GPU's free memory (10% quick, 50% standard, 85% deep),
    writes an address pattern and its bitwise complement, and reads both back on the GPU.

    ## Why it matters
    Bad GPU memory shows up as NaN losses and crashes hours into a run. A word that reads back wrong here is
    a hardware fault, not a software one. Failing to allocate memory that the driver says is free means
    another process holds it.

    ## How to fix
    Wrong words: check gpu.memory_errors (ECC counters, retired pages), reseat or replace the card, and run
    the deep mode again. Out of memory: stop the other processes that `nvidia-smi` lists.
    """
    run = gpu_run_or_finding(MEMORY, facts, "memory")
    if isinstance(run, Finding):
        return run
    steps = run.named("memory")
    failure = step_failure(MEMORY, run, steps, "The memory test")
    if failure is not None:
        return failure
    tested = sum(s.numbers.get("tested_bytes", 0) for s in steps)
    return Finding(
        MEMORY,
        Status.PASS,
        f"{tested / 2**30:.1f} GiB of GPU memory read back exactly what was written, on {len(steps)} GPU(s).",
        evidence=tuple(step_evidence(s) for s in steps),
    )


@check(TRANSFER, "Host↔GPU copies run at the speed of the link", "smoke")
def smoke_transfer(facts: Facts) -> Finding:
    """
    ## What it checks
    Copies between host memory and each GPU, both directions, from pinned (page-locked) and pageable
    memory: large buffers, a warm-up, CUDA events around each copy, the median. Pinned copies are set
    against the PCIe link the GPU sits on (pcie.link) or the Thunderbolt tunnel.

    ## Why it matters
    Every batch crosses this link. "It works but it is slow" is often a GPU in an x4 slot, a link stuck at
    Gen1, or an eGPU tunnel: this is where it shows up as a number.

    ## How to fix
    Follow the check named in the verdict: pcie.link (width), pcie.link_under_load (speed), egpu.* (tunnel).
    Pageable copies far below pinned ones: use `pin_memory=True` in your DataLoader.
    """
    run = gpu_run_or_finding(TRANSFER, facts, "transfer")
    if isinstance(run, Finding):
        return run
    steps = run.named("transfer")
    failure = step_failure(TRANSFER, run, steps, "Host↔GPU copies")
    return failure or _figures_finding(TRANSFER, transfer_figures(facts, run), steps, "copy")


@check(BANDWIDTH, "GPU memory bandwidth matches the datasheet", "smoke")
def smoke_memory_bandwidth(facts: Facts) -> Finding:
    """
    ## What it checks
    A large device-to-device copy on each GPU, counted as bytes read plus bytes written (as NVIDIA's
    bandwidthTest does), against the memory bandwidth in the GPU's datasheet.

    ## Why it matters
    Most training and nearly all inference is limited by memory bandwidth. Far below the datasheet means
    lowered memory clocks: power capping, heat, or a power-saving state.

    ## How to fix
    See gpu.throttle for the reason the GPU reports; check cooling and the power cap (`nvidia-smi -q -d
    PERFORMANCE,POWER`).
    """
    run = gpu_run_or_finding(BANDWIDTH, facts, "device_copy")
    if isinstance(run, Finding):
        return run
    steps = run.named("device_copy")
    failure = step_failure(BANDWIDTH, run, steps, "The device memory copy")
    return failure or _figures_finding(BANDWIDTH, memory_bandwidth_figures(run), steps, "memory bandwidth")


@check(MATMUL, "Matrix multiplications are correct and fast in every precision", "smoke")
def smoke_matmul(facts: Facts) -> Finding:
    """
    ## What it checks
    A matmul in fp32, tf32, fp16 and bf16 (where the GPU has them): each result against a float64 CPU
    reference element by element, then the throughput of a large one (CUDA events, median) against the
    GPU's datasheet peak for that precision.

    ## Why it matters
    A wrong matmul is silent corruption: training goes on and learns garbage. A slow one is a GPU that is
    throttled or power-capped, or a torch build that falls back to a slow path.

    ## How to fix
    Wrong results: a hardware fault or an overclock; check gpu.memory_errors and run the deep mode. Slow:
    see gpu.throttle.
    """
    run = gpu_run_or_finding(MATMUL, facts, "matmul")
    if isinstance(run, Finding):
        return run
    steps = run.named("matmul")
    failure = step_failure(MATMUL, run, steps, "Matmul")
    return failure or _figures_finding(MATMUL, matmul_figures(run), steps, "matmul")
