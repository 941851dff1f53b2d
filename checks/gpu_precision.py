"""gpu.precision: which number formats each GPU runs fast, the one to train in, and TF32 left off.

From the compute capability alone (compat/precision.json, a source per row); the smoke test's matmul figures,
when it ran, confirm the table or contradict it.
"""

from __future__ import annotations

from torch_gpu_doctor.compat.precision import best_precision, capability, precision_table, runs_fast
from torch_gpu_doctor.facts.gpus import Gpu
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.smoke import SmokeRun, StepStatus
from torch_gpu_doctor.model import Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.registry import check

ID = "gpu.precision"
TENSOR_FORMATS = ("tf32", "fp16", "bf16", "fp8", "fp4")
TF32_LINE = "torch.set_float32_matmul_precision('high')"
SOURCE = "compat/precision.json"
# a tensor-core format should beat FP32 by far (2x or more on every datasheet in compat-errata.md §4); a
# measurement below this ratio contradicts the table
LEAST_SPEEDUP = 1.3


def _groups(facts: Facts) -> list[tuple[str, tuple[int, int], list[Gpu]]]:
    groups: dict[tuple[str, tuple[int, int]], list[Gpu]] = {}
    for gpu in facts.gpus:
        if gpu.vendor != "nvidia" or not isinstance(gpu.compute_capability, str):
            continue
        try:
            cc = capability(gpu.compute_capability)
        except ValueError:
            continue
        name = gpu.name if isinstance(gpu.name, str) else "NVIDIA GPU"
        groups.setdefault((name, cc), []).append(gpu)
    return [(name, cc, gpus) for (name, cc), gpus in groups.items()]


def _fast(cc: tuple[int, int]) -> list[str]:
    return [
        p for p in TENSOR_FORMATS if precision_table()[p].tensor_cores_from is not None and runs_fast(p, cc)
    ]


def _measured(run: SmokeRun, device: int | None) -> dict[str, float]:
    found = {}
    for step in run.steps:
        if step.name == "matmul" and step.device == device and step.status is StepStatus.OK and step.variant:
            tflops = step.numbers.get("tflops")
            if tflops:
                found[step.variant] = tflops
    return found


@check(ID, "Each GPU trains in a number format it runs fast", "gpu")
def gpu_precision(facts: Facts) -> Finding:
    """
    ## What it checks
    For each NVIDIA GPU, from its compute capability: which of fp32, tf32, fp16, bf16, fp8 and fp4 run on
    tensor cores at full rate, which precision to train in, and whether TF32 applies to fp32 models. When the
    smoke test ran, its measured matmul figures for each precision confirm this or contradict it.

    ## Why it matters
    The same training runs several times faster in a format the GPU has tensor cores for, and much slower in
    one it emulates: bf16 needs Ampere (compute capability 8.0); Volta and Turing run fp16 mixed precision;
    GeForce Pascal cards run fp16 at 1/64 of fp32, so mixed precision there is a slowdown. PyTorch leaves TF32
    matmuls off by default (since 1.12), so an fp32 model on Ampere or newer leaves its tensor cores idle.

    ## How to fix
    Train in the precision named (`torch.autocast(device_type="cuda", dtype=torch.bfloat16)`, or the
    framework's `bf16=True`); for fp32 models on Ampere or newer, turn TF32 on with
    `torch.set_float32_matmul_precision('high')`. A measurement that contradicts the table points at a GPU
    held at low clocks (see gpu.throttle) or a torch build without kernels for the GPU (torch.arch_compat).
    """
    groups = _groups(facts)
    if not groups:
        return Finding(
            ID, Status.SKIP, "No NVIDIA GPU with a known compute capability to judge (see gpu.present)."
        )
    sentences, evidence = [], []
    for name, cc, gpus in groups:
        best = best_precision(cc)
        fast = _fast(cc)
        count = f"{len(gpus)}x " if len(gpus) > 1 else ""
        on = f"tensor cores run {', '.join(fast)}" if fast else "no tensor cores: fp32 is the fast format"
        sentences.append(f"train in {best} on {count}{name} (compute capability {cc[0]}.{cc[1]}: {on})")
        evidence.append(
            Evidence(f"{name} (sm_{cc[0]}{cc[1]})", f"fast: fp32, {', '.join(fast) or '-'}", SOURCE)
        )
    slowest = min(cc for _, cc, _ in groups)
    details = []
    if slowest >= (8, 0):
        details.append(
            f"torch leaves TF32 matmuls off by default: for fp32 models, {TF32_LINE} runs them on tensor cores."
        )
    if (6, 1) <= slowest < (7, 0) and not runs_fast("fp16", slowest):
        details.append(
            "fp16 runs at 1/64 of fp32's rate here: mixed precision would be slower; train in fp32."
        )
    if len(groups) > 1:
        details.append(f"With these GPUs together, the slowest decides: {best_precision(slowest)}.")
    contradiction = _contradiction(facts, groups)
    if contradiction is not None:
        return Finding(
            ID,
            Status.WARN,
            contradiction,
            details=" ".join(details),
            evidence=tuple(evidence),
            remediation=Remediation(
                text="Look for a GPU held at low clocks (gpu.throttle: power, temperature) or a torch without "
                "kernels for this GPU (torch.arch_compat), then run the smoke test again.",
                commands=(),
                target=Target.SYSTEM,
            ),
        )
    summary = "; ".join(sentences)
    return Finding(ID, Status.PASS, summary[0].upper() + summary[1:] + ".", details=" ".join(details),
                   evidence=tuple(evidence))  # fmt: skip


def _contradiction(facts: Facts, groups: list[tuple[str, tuple[int, int], list[Gpu]]]) -> str | None:
    """The first GPU whose measured tensor-core format was no faster than its measured fp32."""
    run = facts.smoke
    if not isinstance(run, SmokeRun):
        return None
    for name, cc, gpus in groups:
        for gpu in gpus:
            measured = _measured(run, gpu.nvml_index)
            fp32 = measured.get("fp32")
            for precision in _fast(cc):
                got = measured.get(precision)
                if fp32 and got and got < fp32 * LEAST_SPEEDUP:
                    return (
                        f"GPU {gpu.nvml_index} ({name}) ran {precision} matmuls at {got:.1f} TFLOPS, no faster than "
                        f"fp32's {fp32:.1f}, though it has {precision} tensor cores."
                    )
    return None
