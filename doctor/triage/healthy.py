"""A healthy GPU stack beside words that say the work runs on the CPU or slowly ("Fresh install running only on
CPU radically slow", "GPU usage is 0%"): no fault to fix in the driver or torch, so the next step is to see
whether the program's process uses the GPU at all (blind set 27: text-generation-webui with a GPTQ loader
without CUDA kernels at 0.76 tokens/s beside a working torch 2.0.1+cu117)."""

from __future__ import annotations

from torch_gpu_doctor.fixes.out_of_memory import HOLDER_QUERY
from torch_gpu_doctor.model import Command, Remediation, Status, Target
from torch_gpu_doctor.triage.outcome import Triage
from torch_gpu_doctor.triage.paste import PastedText

_WHILE_IT_RUNS = Command(
    HOLDER_QUERY, note="while the program runs: its process must be listed, with memory on the GPU"
)


def on_the_cpu_while_healthy(result: Triage, pasted: PastedText) -> tuple[int, Remediation] | None:
    """The line that says it, and what to do, where nothing failed and torch's CUDA works."""
    line = pasted.prose.on_the_cpu or pasted.prose.slow
    if line is None or result.cause is not None:
        return None
    if not any(
        v.finding.check_id == "torch.cuda_init" and v.finding.status is Status.PASS for v in result.verdicts
    ):
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
