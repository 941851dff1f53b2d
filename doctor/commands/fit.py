"""`gpu-doctor fit MODEL [--infer|--train|--lora|--qlora] ...`: will it fit on this machine's GPUs?

The machine is read as the report reads it (this one, or `--root`/`--replay`), then doctor/fit estimates and
compares. Exit 0: it fits on every GPU; 1: it does not; 3: there is no NVIDIA GPU memory to compare with.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from torch_gpu_doctor.commands.common import open_machine
from torch_gpu_doctor.exit_codes import ExitCode, UsageError
from torch_gpu_doctor.fit.arguments import FitWordsError
from torch_gpu_doctor.fit.estimate import WorkloadError
from torch_gpu_doctor.fit.model_size import ModelError, read_model
from torch_gpu_doctor.fit.plan import plan
from torch_gpu_doctor.fit.request import gpus_of, machine_notes, request
from torch_gpu_doctor.render.files import write_atomically
from torch_gpu_doctor.unavailable import Unavailable


def run(args: argparse.Namespace) -> int:
    try:
        model = read_model(args.model)
    except ModelError as exc:
        raise UsageError(str(exc)) from exc
    machine = open_machine(args)
    from torch_gpu_doctor.runner import diagnose  # the engine, only once the arguments are good

    facts = diagnose(machine.host, machine.python, only=["gpu.present"], plugins=False).facts
    gpus = gpus_of(facts)
    cpus = None if isinstance(facts.cpu, Unavailable) else facts.cpu.logical_cpus
    try:
        work, notes = request(args, model, gpus)
        notes = (*machine_notes(facts, gpus), *notes)
        result = plan(model, work, gpus, cpus if isinstance(cpus, int) else None)
    except (FitWordsError, WorkloadError) as exc:
        raise UsageError(str(exc) if str(exc).startswith("fit:") else f"fit: {exc}") from exc
    code = ExitCode.INCOMPLETE if result.fits is None else ExitCode.OK if result.fits else ExitCode.FINDINGS
    out = io.StringIO()
    if args.json:
        from torch_gpu_doctor.render.fit import fit_json  # only the renderer asked for

        out.write(fit_json(result, int(code)))
    else:
        from torch_gpu_doctor.render.fit import render_fit_text  # only the renderer asked for

        render_fit_text(result, out, notes)
    if args.output:  # --output FILE, as for the report: atomically
        write_atomically(Path(args.output), out.getvalue())
    else:
        sys.stdout.write(out.getvalue())
    return code
