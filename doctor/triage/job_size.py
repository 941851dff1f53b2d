"""Whether the job the words describe can fit on the GPU at all: a model fully fine-tuned or run in 16-bit, by
its size, an out-of-memory error at a batch size already 1, and one raised in the program's own evaluation code,
where autograd may still be on. Each replaces advice no setting can satisfy, or that misses the cause."""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

from torch_gpu_doctor.checks.torch_out_of_memory import sized, stated_most
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.out_of_memory import (
    half_precision,
    offers_a_smaller_job,
    too_big_at_batch_one,
    too_big_to_run,
    too_big_to_train,
)
from torch_gpu_doctor.fixes.target import gpu_capabilities
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.triage.outcome import Kind, Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS, line_number
from torch_gpu_doctor.unavailable import Unavailable

if TYPE_CHECKING:
    from torch_gpu_doctor.triage.sizing import RunSize, TrainingSize


OOM = "torch.out_of_memory"


_NO_SETTING_FITS = (
    "A smaller batch, bf16 and gradient checkpointing shrink only the activations: the weights, gradients and "
    "optimizer states of full training stay, and alone they outgrow this GPU."
)


def too_big_to_train_here(
    verdicts: tuple[Verdict, ...], pasted: PastedText, job: TrainingSize, titles: dict[str, str]
) -> tuple[Verdict, ...]:
    """Full fine-tuning of a model whose weights, gradients and AdamW states alone outgrow the GPU (blind set
    15: a 7B model on a 12 GiB RTX 3060 was told to use bf16, which its command already set). An out-of-memory
    verdict gets that arithmetic as its cause; a paste that only asks how much memory it needs gets it as the
    answer. A GPU large enough (or not said, beside an error) leaves the verdicts as they are."""
    fits = job.gpu_gib is not None and job.full_gib <= job.gpu_gib
    oom = next((v for v in verdicts if v.finding.check_id == OOM and v.finding.status is Status.FAIL), None)
    if fits or (oom is not None and job.gpu_gib is None):
        return verdicts
    failed = any(v.kind == Kind.PROBLEM and v.finding.status is Status.FAIL for v in verdicts)
    if oom is None and (not pasted.prose.memory_asked or failed):  # an answer, not beside another failure
        return verdicts
    gpu = f"; this GPU has {job.gpu_gib:.1f} GiB" if job.gpu_gib is not None else ""
    summary = (
        f"Full fine-tuning of a {job.model} model needs about {job.full_gib:.0f} GiB of GPU memory"
        + (f" on each of its {job.gpus} GPUs" if job.gpus > 1 else "")
        + " even at batch size 1 with gradient checkpointing (weights, gradients and AdamW states: 16 bytes a "
        f"parameter){gpu}."
    )
    fix = too_big_to_train(job.model, job.lora_gib, job.qlora_gib)
    evidence = (Evidence("model", job.model, f"line {job.line} of the paste"),)
    if oom is not None:
        finding = dataclasses.replace(oom.finding, summary=summary, details=_NO_SETTING_FITS, remediation=fix)
        # the arithmetic decides it: no process list to ask for
        return tuple(
            dataclasses.replace(v, finding=finding, find_out=None) if v is oom else v for v in verdicts
        )
    finding = Finding(OOM, Status.WARN, summary, evidence=evidence, remediation=fix)
    return (*verdicts, Verdict(finding, titles.get(OOM, OOM), Kind.PROBLEM, (), None, (job.line,)))


def too_big_to_run_here(verdicts: tuple[Verdict, ...], job: RunSize) -> tuple[Verdict, ...]:
    """An out-of-memory error running a model whose 16-bit weights alone fill the GPU (blind set 16: an 8B
    model on a 16 GiB card was told to lower max_model_len, which the weights leave no room for): the
    arithmetic is the cause, and a smaller form of the model the fix."""
    oom = next((v for v in verdicts if v.finding.check_id == OOM and v.finding.status is Status.FAIL), None)
    if oom is None:
        return verdicts
    split = f" on each of its {job.gpus} GPUs" if job.gpus > 1 else ""
    summary = (
        f"The {job.model} model's weights alone take about {job.weights_gib:.1f} GiB in 16-bit precision{split}, "
        f"of this GPU's {job.gpu_gib:.1f} GiB: nothing is left for the KV cache and activations."
    )
    fix = too_big_to_run(job.model, job.weights_gib, job.gpu_gib, job.int4_gib)
    details = "A smaller batch or context shrinks only the KV cache and activations, never the weights."
    finding = dataclasses.replace(oom.finding, summary=summary, details=details, remediation=fix)
    return tuple(
        dataclasses.replace(v, finding=finding, find_out=None, lines=tuple(sorted({*v.lines, job.line})))
        if v is oom
        else v
        for v in verdicts
    )


# a traceback frame in the program's own evaluation code: `File "train.py", line 282, in validate`
_EVAL_FRAME = lazy(
    r'^[ \t]*File "(?P<file>[^"\n]+)", line \d+, in (?P<function>_?(?:validat|valid_|val_|evaluat|eval_?|test_?|infer|'
    r"predict)\w*)[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_NO_AUTOGRAD = lazy(r"\bno_grad\b|\binference_mode\b|\bset_grad_enabled\(\s*False")
_LIBRARY_FILE = lazy(r"[/\\](?:site|dist)-packages[/\\]")


def while_evaluating(verdict: Verdict, pasted: PastedText, facts: Facts) -> Verdict:
    """Out of memory in the program's own evaluation function (validate, evaluate, test...; not a library's, whose
    loops turn autograd off) with no word of no_grad: autograd still records the whole evaluation there, so a
    batch that trains fits and the same batch in validation does not (blind set 23 #19: `in validate`,
    a-PyTorch-Tutorial-to-Image-Captioning#57, solved by torch.no_grad())."""
    finding = verdict.finding
    if finding.check_id != OOM or not offers_a_smaller_job(finding.remediation):
        return verdict
    text = pasted.paste.text[:MAX_CHARS]
    frame = next((f for f in _EVAL_FRAME.finditer(text) if _LIBRARY_FILE.search(f["file"]) is None), None)
    if frame is None or _NO_AUTOGRAD.search(text) is not None:
        return verdict
    reported = facts.reported_errors
    error = stated_most(reported) if not isinstance(reported, Unavailable) else None
    if error is not None and sized(error):
        return verdict  # its figures say whose memory it is
    line = line_number(text, frame)
    finding = dataclasses.replace(
        finding,
        summary=f"The program ran out of GPU memory in its own evaluation code ({frame['function']}, line {line} of "
        "the paste), where autograd still records every operation unless it is turned off.",
        details="",
        remediation=Remediation(
            text=f"Run {frame['function']}() under `with torch.no_grad():` (or torch.inference_mode()) and call "
            "model.eval() before it: without the graph autograd keeps for a backward pass that never comes, the "
            "batch that fits in training fits in evaluation too. A smaller evaluation batch is the other way.",
            target=Target.PYTHON_ENV,
        ),
    )
    return dataclasses.replace(verdict, finding=finding, lines=tuple(sorted({*verdict.lines, line})))


def at_batch_one(verdict: Verdict, line: int, facts: Facts) -> Verdict:
    """Out of memory at batch size 1, said in words: no smaller batch exists. Without figures, what holds the
    memory comes first (blind set 13: 6 GB held before the run started); with them, the model or one input."""
    finding = verdict.finding
    reported = facts.reported_errors
    error = stated_most(reported) if not isinstance(reported, Unavailable) else None
    if (
        finding.check_id != "torch.out_of_memory"
        or not offers_a_smaller_job(finding.remediation)
        or error is None
    ):
        return verdict
    finding = dataclasses.replace(
        finding,
        summary=f"{finding.summary.removesuffix('.')}, with the batch size already 1 (line {line}).",
        remediation=too_big_at_batch_one(sized(error), half_precision(gpu_capabilities(facts))),
    )
    return dataclasses.replace(verdict, finding=finding, lines=tuple(sorted({*verdict.lines, line})))
