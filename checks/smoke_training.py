"""smoke.cudnn and smoke.training: the two steps a real training loop depends on beyond matmuls."""

from __future__ import annotations

from torch_gpu_doctor.checks.support.smoke import gpu_run_or_finding, step_evidence, step_failure
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.model import Finding, Status
from torch_gpu_doctor.registry import check

CUDNN = "smoke.cudnn"
TRAINING = "smoke.training"


@check(CUDNN, "A cuDNN convolution runs forward and backward correctly", "smoke")
def smoke_cudnn(facts: Facts) -> Finding:
    """
    ## What it checks
    A 3×3 convolution forward and backward through cuDNN on each GPU, compared with a float64 CPU
    convolution (TF32 tolerance, as PyTorch allows TF32 convolutions by default).

    ## Why it matters
    cuDNN is a separate library with its own version and its own kernels: "CUDNN_STATUS_NOT_INITIALIZED" or
    "no kernel image" errors appear here even when plain CUDA works.

    ## How to fix
    See torch.cudnn (the version torch loaded and where from), and torch.nvidia_wheels for mixed nvidia-*
    wheels; reinstalling torch with the recommended command puts a matching cuDNN in place.
    """
    run = gpu_run_or_finding(CUDNN, facts, "conv")
    if isinstance(run, Finding):
        return run
    steps = run.named("conv")
    evidence = tuple(step_evidence(s) for s in steps)
    failure = step_failure(CUDNN, run, steps, "The cuDNN convolution")
    if failure is not None:
        return failure
    version = next((s.numbers.get("cudnn_version") for s in steps if "cudnn_version" in s.numbers), None)
    worst = max(max(s.numbers.get("forward_error", 0), s.numbers.get("backward_error", 0)) for s in steps)
    return Finding(
        CUDNN,
        Status.PASS,
        f"cuDNN {int(version) if version else ''} ran a convolution forward and backward on {len(steps)} GPU(s); "
        f"the largest relative error against float64 was {worst:.1e}.".replace("cuDNN  ", "cuDNN "),
        evidence=evidence,
    )


@check(TRAINING, "A mixed-precision training step makes the loss go down", "smoke")
def smoke_training(facts: Facts) -> Finding:
    """
    ## What it checks
    A few optimisation steps of a small network on a solvable regression, with `torch.autocast` (bf16 on
    Ampere and newer, fp16 before) and a `GradScaler`: the loss must fall to under half of where it started.

    ## Why it matters
    This is the whole loop a training script runs: autocast kernels, the backward pass, optimizer updates and
    loss scaling. A loss that stays flat or becomes NaN here will do the same in your model.

    ## How to fix
    A NaN or flat loss with correct matmuls points at the mixed-precision kernels: check smoke.matmul for the
    same precision, and gpu.memory_errors.
    """
    run = gpu_run_or_finding(TRAINING, facts, "train")
    if isinstance(run, Finding):
        return run
    steps = run.named("train")
    evidence = tuple(step_evidence(s) for s in steps)
    failure = step_failure(TRAINING, run, steps, "The training step")
    if failure is not None:
        return failure
    step = steps[0]
    return Finding(
        TRAINING,
        Status.PASS,
        f"{int(step.numbers.get('steps', 0))} {step.texts.get('dtype', '')} autocast steps took the loss from "
        f"{step.numbers.get('first_loss', 0):.3g} to {step.numbers.get('last_loss', 0):.3g}"
        + (f" (and likewise on {len(steps) - 1} more GPU(s))" if len(steps) > 1 else "")
        + ".",
        evidence=evidence,
    )
