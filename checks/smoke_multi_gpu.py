"""smoke.multi_gpu: with two or more GPUs, can they reach each other, how fast, and does NCCL all-reduce?"""

from __future__ import annotations

from torch_gpu_doctor.checks.support.smoke import failed_steps, gpu_run_or_finding, step_evidence
from torch_gpu_doctor.checks.support.smoke_figures import multi_gpu_figures
from torch_gpu_doctor.facts.describe import fact
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.smoke import SmokeStep, StepStatus
from torch_gpu_doctor.model import Finding, Status
from torch_gpu_doctor.registry import check

CID = "smoke.multi_gpu"


@check(CID, "GPUs reach each other and NCCL all-reduce works", "smoke")
def smoke_multi_gpu(facts: Facts) -> Finding:
    """
    ## What it checks
    With two or more GPUs: the peer-access matrix (`torch.cuda.can_device_access_peer`), copy bandwidth
    between GPU pairs (neighbours; every pair in deep mode), and a short NCCL all-reduce over one local
    process per GPU, checked for the right sum, with its bus bandwidth (as nccl-tests reports it).

    ## Why it matters
    Data-parallel training is an all-reduce every step. Without peer access GPU-to-GPU copies bounce through
    host memory; a broken NCCL set-up hangs or crashes the first `DistributedDataParallel` step.

    ## How to fix
    No peer access or slow copies: see platform.iommu_p2p (ACS and the IOMMU route P2P traffic through the
    CPU). NCCL errors: run with `NCCL_DEBUG=INFO` for the reason; in containers, give the container more
    shared memory (memory.shm).
    """
    run = gpu_run_or_finding(CID, facts, "memory")
    if isinstance(run, Finding):
        return run
    if len(run.devices) < 2:
        return Finding(CID, Status.SKIP, "Only one GPU: nothing to test between GPUs.")
    steps = run.named("peer_access") + run.named("peer_copy") + run.named("all_reduce")
    if not steps:
        return Finding(
            CID, Status.UNKNOWN, f"The smoke test stopped before the multi-GPU steps ({run.message})."
        )
    evidence = tuple(step_evidence(s) for s in steps)
    bad = failed_steps(steps)
    if bad:
        return Finding(
            CID,
            Status.FAIL,
            f"{bad[0].label} failed: {bad[0].message or bad[0].status.value}.",
            details="\n".join(f"{s.label}: {s.message}" for s in bad) + _corrupt_hint(bad),
            evidence=evidence,
        )
    access = run.find("peer_access")
    denied = sorted(k for k, v in (access.flags if access else {}).items() if not v)
    figures = multi_gpu_figures(facts, run)
    evidence += tuple(fact(f.label, f.sentence, f.expectation) for f in figures)
    slow = [f for f in figures if f.status is Status.WARN]
    lines = "\n".join(f.sentence for f in figures)
    if denied:
        return Finding(
            CID,
            Status.WARN,
            f"Peer access is off between GPU pairs {', '.join(denied)}: their copies go through host memory.",
            details=lines + "\nSee platform.iommu_p2p.",
            evidence=evidence,
        )
    if slow:
        return Finding(CID, Status.WARN, slow[0].sentence + ".", details=lines, evidence=evidence)
    reduce = run.find("all_reduce")
    busbw = reduce.numbers.get("busbw_gbytes_per_s") if reduce else None
    tail = f"; all-reduce bus bandwidth {busbw:g} GB/s" if busbw is not None else ""
    return Finding(
        CID,
        Status.PASS,
        f"All {len(run.devices)} GPUs reach each other directly{tail}.",
        details=lines,
        evidence=evidence,
    )


def _corrupt_hint(bad: list[SmokeStep]) -> str:
    """Data that arrives wrong between GPUs: the peer path itself (PCIe ACS or the IOMMU redirecting it)."""
    if not any(s.name == "peer_copy" and s.status is StepStatus.WRONG for s in bad):
        return ""
    return (
        "\nData copied directly between GPUs arrived changed: the peer-to-peer path is broken, most often by "
        "PCIe ACS or the IOMMU between the GPUs (see platform.iommu_p2p). Until it is fixed, "
        "NCCL_P2P_DISABLE=1 makes NCCL copy through host memory instead."
    )
