"""Whether the model a paste trains can fit its GPU at all: the model's size as its name says it ("llama-7b-hf",
"Qwen2.5-14B-Instruct", "a 7B model"), full training said in words or by a training script's flags, and the
GPU's memory from the out-of-memory message's figures, the GPU a tool listed, or the words ("12GB VRAM").

Full training keeps 16 bytes a parameter for weights, gradients and mixed-precision AdamW states (ZeRO, section
3.1) before a single activation: a 7B model needs more than 100 GiB, so on a 12 GiB or 24 GiB GPU no batch size,
precision flag or checkpointing makes it fit, and "lower the batch size" is the wrong first step. The same
estimate (torch_gpu_doctor.fit, which `gpu-doctor fit` uses) gives what LoRA and QLoRA of that model need.
"""

from __future__ import annotations

import re

from torch_gpu_doctor.checks.torch_out_of_memory import oom_numbers, stated_most
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fit.estimate import GIB, Workload, estimate
from torch_gpu_doctor.fit.model_size import ModelSize, assumed_shape
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.triage.prose import MAX_CHARS, ProseFacts
from torch_gpu_doctor.unavailable import Unavailable

# The GPUs training is spread over: "--nproc_per_node=8", "--num_gpus 8", "on 8x RTX 3090", "4 x A100"
_GPU_COUNT = lazy(
    r"--nproc[_-]per[_-]node[= ](?P<a>\d+)|--num[_-]gpus[= ](?P<b>\d+)"
    r"|(?<![\w.])(?P<c>\d{1,2})[ \t]?[x×][ \t]?(?:NVIDIA[ \t]+)?(?:GeForce[ \t]+)?(?:RTX|GTX|Tesla|A\d|H\d|V100|L4|L40|T4|GPU)",
    re.IGNORECASE,
)
# Optimizer states and weights moved to CPU RAM, which the estimate leaves on the GPU
_OFFLOAD = lazy(r"offload", re.IGNORECASE)
# The GPU's memory in words: "GeForce RTX 3060 12go VRAM", "a 24GB GPU", "16 GB of VRAM"
_VRAM_SAID = lazy(
    r"(?<![\w.])(?P<gb>\d{1,3})[ \t]?(?:GB|GiB|Go|G)\b[ \t]*(?:of[ \t]+)?(?:VRAM|GPU|显存|graphics memory|memory GPU)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class TrainingSize:
    model: str  # the size as the paste writes it: "7B"
    line: int
    gpu_gib: float | None  # None: the paste does not say
    gpus: int  # the GPUs full training is sharded over
    full_gib: float  # full fine-tuning at batch 1 with activation checkpointing, per GPU
    lora_gib: float
    qlora_gib: float


def training_size(text: str, facts: Facts, prose: ProseFacts) -> TrainingSize | None:
    """The model a paste fully fine-tunes (prose.trains_model) and what it needs, or None."""
    said = prose.trains_model
    if said is None or _OFFLOAD.search(text, 0, MAX_CHARS) is not None:
        return None
    parameters = int(float(said.value) * 1e9)
    if not 0.1e9 <= parameters <= 1000e9:
        return None
    model = ModelSize(parameters, assumed_shape(parameters), True, f"{said.value}B in the paste")
    counted = _GPU_COUNT.search(text, 0, MAX_CHARS)
    gpus = max(1, int(next(v for v in counted.groups() if v is not None))) if counted is not None else 1
    need = {  # full training sharded over the GPUs it runs on (FSDP / ZeRO-3); adapters on one
        mode: estimate(
            model, Workload(mode, "bf16", 1, 512, checkpointing=True, shards=gpus if mode == "train" else 1)
        ).per_gpu_bytes
        / GIB
        for mode in ("train", "lora", "qlora")
    }
    return TrainingSize(
        f"{said.value}B",
        said.line,
        _gpu_gib(text[:MAX_CHARS], facts),
        gpus,
        need["train"],
        need["lora"],
        need["qlora"],
    )


def _gpu_gib(text: str, facts: Facts) -> float | None:
    """The GPU's memory: the message's total, a listed GPU's, or the words'; the smallest where several."""
    reported = facts.reported_errors
    oom = stated_most(reported) if not isinstance(reported, Unavailable) else None
    total = oom_numbers(f"{oom.text} {oom.context}").total if oom is not None else None
    if total is not None:  # "GPU 0; 11.76 GiB total capacity", "has a total capacity of 23.64 GiB"
        return total / GIB
    listed = [g.memory_total_bytes for g in facts.nvidia_gpus if isinstance(g.memory_total_bytes, int)]
    if listed:
        return min(listed) / GIB
    words = _VRAM_SAID.search(text)
    return float(words["gb"]) if words is not None else None  # a GPU's "24GB" is 24 GiB (24576 MiB)


# The GPUs a model is split over to run it: vLLM's tensor_parallel_size / --tensor-parallel-size / -tp
_TENSOR_PARALLEL = lazy(
    r"tensor[_-]parallel[_-]size[\"']?(?:\s*[=:]\s*|[ \t]+)(?P<a>\d+)|(?:^|\s)(?:-tp|--tp)[= ](?P<b>\d+)"
)


@dataclass(frozen=True)
class RunSize:
    model: str  # "8B"
    line: int
    gpu_gib: float
    gpus: int  # tensor parallel
    weights_gib: float  # 16-bit weights on each GPU
    int4_gib: float  # what a 4-bit quantized build of it needs to run at batch 1 (fit's estimate)


def run_size(text: str, facts: Facts, prose: ProseFacts) -> RunSize | None:
    """A model run in 16-bit (prose.runs_model) whose weights alone leave no room on the GPU: above 90% of it
    with the CUDA context, what vLLM's default gpu_memory_utilization allows; None where it may fit."""
    said = prose.runs_model
    if said is None:
        return None
    parameters = int(float(said.value) * 1e9)
    gpu_gib = _gpu_gib(text[:MAX_CHARS], facts)
    if gpu_gib is None or not 0.1e9 <= parameters <= 1000e9:
        return None
    split = _TENSOR_PARALLEL.search(text, 0, MAX_CHARS)
    gpus = max(1, int(next(v for v in split.groups() if v is not None))) if split is not None else 1
    model = ModelSize(parameters, assumed_shape(parameters), True, f"{said.value}B in the paste")
    bf16 = estimate(model, Workload("infer", "bf16", 1, 2048))
    weights = bf16.part("weights") / gpus / GIB
    if weights + bf16.part("cuda_context") / GIB <= 0.9 * gpu_gib:
        return None
    int4 = estimate(model, Workload("infer", "int4", 1, 2048)).per_gpu_bytes / GIB
    return RunSize(f"{said.value}B", said.line, gpu_gib, gpus, weights, int4)
