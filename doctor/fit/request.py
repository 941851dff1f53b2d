"""What the fit options ask for on this machine: its GPUs, and the workload with each default said out loud."""

from __future__ import annotations

import argparse

from torch_gpu_doctor.compat.jetson import load_jetson
from torch_gpu_doctor.compat.precision import capability
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fit.arguments import FitWordsError
from torch_gpu_doctor.fit.estimate import Workload
from torch_gpu_doctor.fit.model_size import ModelSize
from torch_gpu_doctor.fit.plan import GpuMemory, default_precision
from torch_gpu_doctor.unavailable import Unavailable

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
    if not found:
        shared = jetson_gpu(facts)
        return (shared,) if shared is not None else ()
    return tuple(sorted(found, key=lambda g: g.index))


def jetson_gpu(facts: Facts) -> GpuMemory | None:
    """A Jetson's integrated GPU, which has no memory of its own: it allocates from the board's RAM (unified
    memory), so the RAM is what a model must fit in. None elsewhere, or without the RAM size."""
    board = facts.jetson_board
    memory = facts.memory
    if board is None or isinstance(memory, Unavailable) or not isinstance(memory.total_bytes, int):
        return None
    soc = load_jetson().soc(board.soc)
    cc = capability(soc.capability) if soc is not None else None
    return GpuMemory(0, board.integrated_gpu(), memory.total_bytes, cc)


def machine_notes(facts: Facts, gpus: tuple[GpuMemory, ...]) -> tuple[str, ...]:
    """What the reader must know about the GPUs compared with (a Jetson shares its RAM with the CPU)."""
    if gpus and facts.jetson_board is not None and jetson_gpu(facts) == gpus[0]:
        return (
            "a Jetson's GPU shares the board's RAM with the CPU: the comparison uses all of it, and the "
            "system and your program's CPU side take a part (see `free -h` while it runs)",
        )
    return ()


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
