"""What the fit options ask for on this machine: its GPUs, and the workload with each default said out loud."""

from __future__ import annotations

import argparse

from torch_gpu_doctor.compat.precision import capability
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fit.arguments import FitWordsError
from torch_gpu_doctor.fit.estimate import Workload
from torch_gpu_doctor.fit.model_size import ModelSize
from torch_gpu_doctor.fit.plan import GpuMemory, default_precision

DEFAULT_SEQ = 2048


def gpus_of(facts: Facts) -> tuple[GpuMemory, ...]:
    """The NVIDIA GPUs whose memory the driver reports, in NVML order."""
    found: list[GpuMemory] = []
    for gpu in facts.gpus:
        if gpu.vendor != "nvidia" or not isinstance(gpu.memory_total_bytes, int):
            continue
        try:
            cc = capability(gpu.compute_capability) if isinstance(gpu.compute_capability, str) else None
        except ValueError:
            cc = None
        index = gpu.nvml_index if gpu.nvml_index is not None else len(found)
        name = gpu.name if isinstance(gpu.name, str) else "GPU"
        found.append(GpuMemory(index, name, gpu.memory_total_bytes, cc))
    return tuple(sorted(found, key=lambda g: g.index))


def request(
    args: argparse.Namespace, model: ModelSize, gpus: tuple[GpuMemory, ...]
) -> tuple[Workload, tuple[str, ...]]:
    """The workload the options ask for, and a sentence for each default that was chosen for them.
    Raises FitWordsError for numbers that are not positive."""
    if args.batch < 1 or (args.seq is not None and args.seq < 1) or (args.gpus is not None and args.gpus < 1):
        raise FitWordsError("fit: --batch, --seq and --gpus take a positive number")
    notes = []
    precision = args.precision or default_precision(gpus)
    if args.precision is None:
        notes.append(f"{precision}: the best precision every GPU here runs fast (--precision to choose)")
    seq = args.seq or min(DEFAULT_SEQ, model.max_positions or DEFAULT_SEQ)
    if args.seq is None:
        notes.append(f"sequence {seq}, batch {args.batch}: the defaults (--seq, --batch)")
    work = Workload(
        mode=args.fit_mode or "infer",
        precision=precision,
        batch=args.batch,
        seq=seq,
        optimizer=args.optimizer,
        checkpointing=args.checkpointing,
        shards=args.gpus or 1,
    )
    return work, tuple(notes)
