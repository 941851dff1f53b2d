"""`gpu-doctor fit` as text and as the `fit` object of its JSON document."""

from __future__ import annotations

import json
from typing import IO, Any

from torch_gpu_doctor.fit.estimate import Estimate, Workload
from torch_gpu_doctor.fit.plan import FitResult, Option

GIB = 1024**3
MODE_WORDS = {
    "infer": "Inference",
    "train": "Full fine-tuning",
    "lora": "LoRA fine-tuning (rank 16)",
    "qlora": "QLoRA fine-tuning (4-bit base, rank 16)",
}
OPTIMIZER_WORDS = {"adamw": "AdamW", "adamw8bit": "8-bit AdamW", "sgd": "SGD with momentum"}


def gib(n: float) -> str:
    return f"{n / GIB:.1f} GiB"


def workload_words(work: Workload) -> str:
    words = [MODE_WORDS[work.mode], f"in {work.precision}", f"batch {work.batch}", f"sequence {work.seq}"]
    if work.mode != "infer":
        words.append(OPTIMIZER_WORDS[work.optimizer])
        if work.checkpointing:
            words.append("activation checkpointing")
    if work.shards > 1:
        words.append(f"sharded over {work.shards} GPUs")
    if work.offload:
        words.append("optimizer in CPU RAM")
    return ", ".join(words)


def verdict_line(result: FitResult) -> str:
    need = result.estimate.per_gpu_bytes
    if result.fits is None:
        return f"Needs {gib(need)} per GPU; no NVIDIA GPU memory to compare it with here."
    smallest = result.smallest_gpu or 0
    if result.fits:
        return f"Fits: needs {gib(need)} per GPU, {gib(smallest - need)} to spare on the smallest GPU."
    return f"Does not fit: needs {gib(need)} per GPU, {gib(need - smallest)} more than the {gib(smallest)} there."


def render_fit_text(result: FitResult, stream: IO[str], notes: tuple[str, ...] = ()) -> None:
    model = result.model
    out = stream.write
    out(f"{model.parameters / 1e9:.2f} B parameters, from {model.source}")
    out(
        " (shape assumed: give config.json for exact activations and KV cache)\n"
        if model.shape_assumed
        else "\n"
    )
    out(workload_words(result.estimate.workload) + "\n")
    for note in notes:
        out(f"  {note}\n")
    out("\n" + verdict_line(result) + "\n")
    _parts(result.estimate, stream)
    groups: dict[tuple[str, int], list[int]] = {}
    for g in result.gpus:  # eight identical GPUs are one line
        groups.setdefault((g.name, g.total_bytes), []).append(g.index)
    for (name, total), indexes in groups.items():
        room = total - result.estimate.per_gpu_bytes
        state = f"fits, {gib(room)} free" if room >= 0 else f"does not fit, {gib(-room)} short"
        which = f"GPU {indexes[0]}" if len(indexes) == 1 else f"GPUs {_indexes(indexes)} ({len(indexes)}x)"
        out(f"  {which}  {name}  {gib(total)}: {state}\n")
    if result.options:
        out("\nWhat makes it fit, each alone (in order of what it costs):\n")
        for option in result.options:
            _option(option, stream)
    if result.together:
        out("\nNone fits alone; together, in that order:\n")
        for option in result.together:
            _option(option, stream)
    host = result.host
    out(f"\nRAM to load the checkpoint: about {gib(host.load_ram_bytes)}")
    if host.offload_ram_bytes:
        out(f"; with offload, {gib(host.offload_ram_bytes)} more for the optimizer")
    out("\n")
    if host.checkpoint_disk_bytes is not None:
        out(
            f"Disk for one training checkpoint with its optimizer states: about {gib(host.checkpoint_disk_bytes)}\n"
        )
    if host.workers_per_gpu is not None:
        out(
            f"Data-loader workers: up to {host.workers_per_gpu} per GPU (num_workers), one core left for the rest\n"
        )


def _indexes(indexes: list[int]) -> str:
    """0-7 for a run, else 0,2,5."""
    if indexes == list(range(indexes[0], indexes[-1] + 1)):
        return f"{indexes[0]}-{indexes[-1]}"
    return ",".join(map(str, indexes))


def _parts(found: Estimate, stream: IO[str]) -> None:
    for part in found.parts:
        if part.bytes:
            stream.write(f"  {part.name:<20} {gib(part.bytes):>10}  {part.formula}\n")


def _option(option: Option, stream: IO[str]) -> None:
    mark = "fits" if option.fits else "still too big"
    stream.write(f"  {option.title}: {gib(option.estimate.per_gpu_bytes)} per GPU, {mark}\n")
    stream.write(f"      {option.how}\n")


def _estimate_json(found: Estimate) -> dict[str, Any]:
    return {
        "workload": {k: getattr(found.workload, k) for k in found.workload.__dataclass_fields__},
        "total_bytes": found.per_gpu_bytes,
        "breakdown": [
            {"name": p.name, "bytes": p.bytes, "formula": p.formula, "source": p.source} for p in found.parts
        ],
    }


def fit_json(result: FitResult, exit_code: int) -> str:
    model = result.model
    need = result.estimate.per_gpu_bytes

    def option(o: Option) -> dict[str, Any]:
        return {"title": o.title, "how": o.how, "fits": o.fits, **_estimate_json(o.estimate)}

    document = {
        "schema_version": 1,
        "command": "fit",
        "exit_code": exit_code,
        "fit": {
            "parameters": model.parameters,
            "model_source": model.source,
            "shape_assumed": model.shape_assumed,
            "fits": result.fits,
            **_estimate_json(result.estimate),
            "per_gpu": [
                {
                    "index": g.index,
                    "name": g.name,
                    "total_bytes": g.total_bytes,
                    "fits": need <= g.total_bytes,
                    "headroom_bytes": g.total_bytes - need,
                }
                for g in result.gpus
            ],
            "options": [option(o) for o in result.options],
            "together": [option(o) for o in result.together],
            "host": {
                "load_ram_bytes": result.host.load_ram_bytes,
                "offload_ram_bytes": result.host.offload_ram_bytes,
                "checkpoint_disk_bytes": result.host.checkpoint_disk_bytes,
                "workers_per_gpu": result.host.workers_per_gpu,
            },
        },
    }
    return json.dumps(document, indent=2) + "\n"
