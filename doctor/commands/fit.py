"""`gpu-doctor fit MODEL [--infer|--train|--lora|--qlora] ...`: will it fit on this machine's GPUs?

The machine is read as the report reads it (this one, or `--root`/`--replay`), then doctor/fit estimates and
compares. Exit 0: it fits on every GPU; 1: it does not; 3: there is no NVIDIA GPU memory to compare with.
"""

from __future__ import annotations

import argparse
import sys

from torch_gpu_doctor.commands.common import open_machine
from torch_gpu_doctor.compat.precision import capability
from torch_gpu_doctor.exit_codes import ExitCode, UsageError
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fit.estimate import Workload, WorkloadError
from torch_gpu_doctor.fit.model_size import ModelError, read_model
from torch_gpu_doctor.fit.plan import GpuMemory, default_precision, plan
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
        found.append(
            GpuMemory(index, gpu.name if isinstance(gpu.name, str) else "GPU", gpu.memory_total_bytes, cc)
        )
    return tuple(sorted(found, key=lambda g: g.index))


def run(args: argparse.Namespace) -> int:
    try:
        model = read_model(args.model)
    except ModelError as exc:
        raise UsageError(str(exc)) from exc
    if args.batch < 1 or (args.seq is not None and args.seq < 1) or (args.gpus is not None and args.gpus < 1):
        raise UsageError("fit: --batch, --seq and --gpus take a positive number")
    machine = open_machine(args)
    from torch_gpu_doctor.runner import diagnose  # the engine, only once the arguments are good

    facts = diagnose(machine.host, machine.python, only=["gpu.present"], plugins=False).facts
    gpus = gpus_of(facts)
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
    cpus = None if isinstance(facts.cpu, Unavailable) else facts.cpu.logical_cpus
    try:
        result = plan(model, work, gpus, cpus if isinstance(cpus, int) else None)
    except WorkloadError as exc:
        raise UsageError(f"fit: {exc}") from exc
    code = ExitCode.INCOMPLETE if result.fits is None else ExitCode.OK if result.fits else ExitCode.FINDINGS
    if args.json:
        from torch_gpu_doctor.render.fit import fit_json  # only the renderer asked for

        sys.stdout.write(fit_json(result, int(code)))
    else:
        from torch_gpu_doctor.render.fit import render_fit_text  # only the renderer asked for

        render_fit_text(result, sys.stdout, tuple(notes))
    return code
