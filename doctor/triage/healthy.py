"""A healthy GPU stack beside what the paste still asks about: words that say the work runs on the CPU or slowly
("Fresh install running only on CPU radically slow", "GPU usage is 0%"), where the next step is to see whether
the program's process uses the GPU at all (blind set 27: text-generation-webui with a GPTQ loader without CUDA
kernels at 0.76 tokens/s beside a working torch 2.0.1+cu117), or a GPU the driver calls "NVIDIA Graphics Device"
(blind set 30: a driver older than the card)."""

from __future__ import annotations

import re

from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.driver_plan import plan_driver
from torch_gpu_doctor.fixes.driver_update import driver_update
from torch_gpu_doctor.fixes.out_of_memory import HOLDER_QUERY
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Remediation, Status, Target
from torch_gpu_doctor.triage.outcome import Triage
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS, line_number
from torch_gpu_doctor.unavailable import Unavailable

_WHILE_IT_RUNS = Command(
    HOLDER_QUERY, note="while the program runs: its process must be listed, with memory on the GPU"
)


# the name a driver gives a GPU whose device id its name table lacks (pytorch/pytorch#75198: an RTX 3090 Ti on
# driver 510.47.03, "NVIDIA Graphics Device"; nvidia-smi and torch.cuda.get_device_name print the same)
_UNNAMED = lazy(r"\bNVIDIA[ \t]+Graphics[ \t]+Device\b", re.IGNORECASE)


def healthy_next_step(result: Triage, pasted: PastedText, facts: Facts) -> tuple[int, Remediation] | None:
    """Where nothing failed and torch's CUDA works, what the paste still asks about: the line, and what to do."""
    if result.cause is not None or not any(
        v.finding.check_id == "torch.cuda_init" and v.finding.status is Status.PASS for v in result.verdicts
    ):
        return None
    return on_the_cpu_while_healthy(pasted) or unnamed_gpu(pasted, facts)


def unnamed_gpu(pasted: PastedText, facts: Facts) -> tuple[int, Remediation] | None:
    """A working GPU the driver calls "NVIDIA Graphics Device": the driver is older than the GPU's model, whose
    name its table lacks; CUDA works, so only a newer driver's name (and its fixes for that model) is missing."""
    unnamed = _UNNAMED.search(pasted.paste.text, 0, MAX_CHARS)
    if unnamed is None:
        return None
    version = facts.driver.version if not isinstance(facts.driver, Unavailable) else None
    driver = f"driver {version}" if isinstance(version, str) else "the driver"
    # the driver update itself, the distribution's way (the paste shows the name and the driver already)
    fix = driver_update(
        facts,
        plan_driver(facts),
        f"CUDA works on it: the name is all that is missing. A GPU shows as 'NVIDIA Graphics Device' when {driver} "
        "is older than its model and has no name for its device id (a card released after that driver). Update "
        "the NVIDIA driver to a release newer than the card: it names the GPU and carries the fixes for it.",
    )
    return line_number(pasted.paste.text, unnamed), fix


def on_the_cpu_while_healthy(pasted: PastedText) -> tuple[int, Remediation] | None:
    """The line that says the work runs on the CPU or slowly, and what to do, beside a stack that works."""
    line = pasted.prose.on_the_cpu or pasted.prose.slow
    if line is None:
        return None
    return line, Remediation(
        text=f"The GPU stack works, so what line {line} says (slow, or on the CPU) is the program's own choice: its "
        "device setting left at the CPU, a model loader without CUDA kernels ('CUDA extension not installed'), "
        "no layers offloaded to the GPU (llama.cpp's and text-generation-webui's n-gpu-layers at 0), or a GPU "
        "waiting for data. See whether its process uses the GPU while it runs; if it is not listed, set the "
        "program's device, GPU layers or loader; if it is listed but idle, the input pipeline is the bottleneck.",
        commands=(_WHILE_IT_RUNS,),
        target=Target.SYSTEM,
    )
