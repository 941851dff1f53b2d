"""Does it fit on this machine's GPUs, and if not, what does: the options in order of what they cost.

The order is the issue's and the guides': a precision this GPU runs fast, LoRA, QLoRA, activation
checkpointing, a smaller batch, sharding over the machine's GPUs, CPU offload. Each option is estimated alone
from the request; when none fits alone they are stacked in that order until the estimate fits.
"""

from __future__ import annotations

import dataclasses

from torch_gpu_doctor.compat.precision import best_precision, bytes_per_value, runs_fast
from torch_gpu_doctor.fit.estimate import (
    FULL_PRECISION,
    Estimate,
    Workload,
    estimate,
    lora_parameters,
    offloaded_bytes,
)
from torch_gpu_doctor.fit.model_size import ModelSize
from torch_gpu_doctor.records import dataclass


@dataclass(frozen=True)
class GpuMemory:
    index: int
    name: str
    total_bytes: int
    capability: tuple[int, int] | None


@dataclass(frozen=True)
class Option:
    title: str  # "LoRA (rank 16) instead of full fine-tuning"
    how: str  # what to change in the training script
    estimate: Estimate
    fits: bool


@dataclass(frozen=True)
class HostNeeds:
    load_ram_bytes: int  # RAM to load the checkpoint
    offload_ram_bytes: int
    checkpoint_disk_bytes: int | None  # one training checkpoint with its optimizer states; None: inference
    workers_per_gpu: int | None  # data-loader workers per GPU the CPU cores allow


@dataclass(frozen=True)
class FitResult:
    model: ModelSize
    estimate: Estimate
    gpus: tuple[GpuMemory, ...]
    options: tuple[Option, ...]  # each alone; empty when it fits
    together: tuple[Option, ...]  # stacked until it fits (empty when one option alone fits or it fits)
    host: HostNeeds

    @property
    def smallest_gpu(self) -> int | None:
        return min((g.total_bytes for g in self.gpus), default=None)

    @property
    def fits(self) -> bool | None:
        """None: no GPU memory to compare with (no GPU, or NVML did not say)."""
        smallest = self.smallest_gpu
        return None if smallest is None else self.estimate.per_gpu_bytes <= smallest


def default_precision(gpus: tuple[GpuMemory, ...]) -> str:
    """The best precision every GPU of the machine runs fast (the slowest GPU decides)."""
    known = [g.capability for g in gpus if g.capability is not None]
    return best_precision(min(known)) if known else best_precision(None)


def _alternatives(work: Workload, gpus: tuple[GpuMemory, ...]) -> list[tuple[str, str, Workload]]:
    known = [g.capability for g in gpus if g.capability is not None]
    slowest = min(known) if known else None
    best = best_precision(slowest)
    found: list[tuple[str, str, Workload]] = []
    if work.precision in FULL_PRECISION and best not in FULL_PRECISION:
        found.append(
            (f"{best} instead of {work.precision}", f"torch.autocast(dtype=torch.{_torch(best)}) or "
             f"torch_dtype=torch.{_torch(best)} when loading", dataclasses.replace(work, precision=best))
        )  # fmt: skip
    if work.mode == "infer":
        for lower in ("int8", "int4"):
            if bytes_per_value(lower) < bytes_per_value(work.precision) and (
                slowest is None or lower == "int4" or runs_fast(lower, slowest)
            ):
                found.append(
                    (f"{lower} weights", "load with bitsandbytes: BitsAndBytesConfig("
                     + ("load_in_8bit=True)" if lower == "int8" else "load_in_4bit=True, bnb_4bit_quant_type='nf4')"),
                     dataclasses.replace(work, precision=lower))
                )  # fmt: skip
        if work.seq > 512:
            found.append(
                (f"a context of {work.seq // 4} tokens", "a smaller max_new_tokens + prompt (the KV cache grows "
                 "with it)", dataclasses.replace(work, seq=work.seq // 4))
            )  # fmt: skip
    else:
        if work.mode == "train":
            found.append(("LoRA (rank 16) instead of full fine-tuning", "peft.LoraConfig(r=16, "
                          "target_modules='all-linear')", dataclasses.replace(work, mode="lora")))  # fmt: skip
        if work.mode in ("train", "lora"):
            found.append(("QLoRA: a 4-bit base with LoRA adapters", "BitsAndBytesConfig(load_in_4bit=True, "
                          "bnb_4bit_quant_type='nf4') + peft", dataclasses.replace(work, mode="qlora")))  # fmt: skip
        if not work.checkpointing:
            found.append(("activation checkpointing", "model.gradient_checkpointing_enable()",
                          dataclasses.replace(work, checkpointing=True)))  # fmt: skip
        if work.batch > 1:
            found.append((f"batch 1 (gradient accumulation {work.batch})", f"per_device_train_batch_size=1, "
                          f"gradient_accumulation_steps={work.batch}", dataclasses.replace(work, batch=1)))  # fmt: skip
        if work.optimizer == "adamw":
            found.append(("8-bit AdamW", "optim='adamw_bnb_8bit' (bitsandbytes)",
                          dataclasses.replace(work, optimizer="adamw8bit")))  # fmt: skip
    if len(gpus) > 1 and work.shards == 1:
        how = (
            "FSDP (FULL_SHARD) or DeepSpeed ZeRO-3"
            if work.mode != "infer"
            else "device_map='auto' or tensor parallel"
        )
        found.append(
            (f"sharding over the {len(gpus)} GPUs", how, dataclasses.replace(work, shards=len(gpus)))
        )
    if work.mode != "infer" and not work.offload:
        found.append(("CPU offload of the optimizer", "DeepSpeed ZeRO-Offload (offload_optimizer: cpu)",
                      dataclasses.replace(work, offload=True)))  # fmt: skip
    return found


def _torch(precision: str) -> str:
    return {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}.get(precision, precision)


def plan(
    model: ModelSize,
    work: Workload,
    gpus: tuple[GpuMemory, ...],
    cpus: int | None = None,
) -> FitResult:
    first = estimate(model, work)
    smallest = min((g.total_bytes for g in gpus), default=None)
    options: list[Option] = []
    together: list[Option] = []
    if smallest is not None and first.per_gpu_bytes > smallest:
        for title, how, changed in _alternatives(work, gpus):
            found = estimate(model, changed)
            options.append(Option(title, how, found, found.per_gpu_bytes <= smallest))
        if not any(o.fits for o in options):
            stacked = work
            for title, how, _ in _alternatives(work, gpus):
                stacked = _merge(stacked, title, work, gpus)
                found = estimate(model, stacked)
                together.append(Option(title, how, found, found.per_gpu_bytes <= smallest))
                if together[-1].fits:
                    break
    return FitResult(model, first, gpus, tuple(options), tuple(together), _host(model, work, len(gpus), cpus))


def _merge(stacked: Workload, title: str, base: Workload, gpus: tuple[GpuMemory, ...]) -> Workload:
    """Apply the change behind `title` (an alternative of `base`) on top of what is already stacked."""
    for other_title, _, changed in _alternatives(base, gpus):
        if other_title == title:
            diff = {f.name: getattr(changed, f.name) for f in dataclasses.fields(changed)
                    if getattr(changed, f.name) != getattr(base, f.name)}  # fmt: skip
            if diff.get("mode") == "lora" and stacked.mode == "qlora":
                diff.pop("mode")
            return dataclasses.replace(stacked, **diff)
    return stacked


def _host(model: ModelSize, work: Workload, gpus: int, cpus: int | None) -> HostNeeds:
    stored = model.stored_dtype or ("bf16" if work.precision not in FULL_PRECISION else "fp32")
    load = round(model.parameters * bytes_per_value(stored))
    checkpoint = None
    if work.mode != "infer":
        trained = model.parameters if work.mode == "train" else lora_parameters(model.shape)
        states = {"adamw": 8, "adamw8bit": 2, "sgd": 4}[work.optimizer]
        checkpoint = round(trained * (bytes_per_value(stored) + states))
    workers = max(1, (cpus - 1) // max(1, gpus)) if cpus else None
    return HostNeeds(load, offloaded_bytes(model, work), checkpoint, workers)
