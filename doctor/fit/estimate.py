"""GPU memory for running or training a model: each part with its formula and its source.

All figures are bytes per GPU. The parts and where their arithmetic comes from:

- weights: parameters x bytes per value of the precision (compat/precision.json; 4-bit NF4 with its
  double-quantized constants is 0.516 bytes, QLoRA, Dettmers et al. 2023).
- gradients and optimizer states, for what is trained: mixed-precision AdamW keeps 16 bytes per parameter,
  2 (weights) + 2 (gradients) + 12 (fp32 master weights, momentum, variance) (ZeRO, Rajbhandari et al. 2020,
  section 3.1); fp32 AdamW 4 + 4 + 8; 8-bit AdamW keeps each moment in one byte (bitsandbytes, Dettmers et al.
  2022); SGD with momentum one fp32 value.
- activations kept for the backward pass, per layer, at 16 bits: s b (15 h + MLP) bytes, the MLP 2h + 4i + h
  (GPT-2's 19 h at i = 4h) or, gated (Llama), 2h + 6i; this is Korthikanti et al. 2022's 34 s b h without the
  attention-score term 5 a s^2 b, which memory-efficient attention (PyTorch's SDPA, flash attention) does not
  keep. Activation checkpointing keeps each layer's input (2 s b h) and one layer's activations. The loss's
  fp32 logits and their gradient: 8 s b V.
- KV cache for inference: 2 (keys, values) x layers x KV heads x head size x s x b x bytes per value.
- per GPU: the CUDA context (about 0.5 GiB with lazy module loading, PyTorch's default since CUDA 11.7) and
  10 % for the caching allocator's rounding and fragmentation.

Sharding (FSDP, ZeRO-3) divides weights, gradients and optimizer states by the GPUs; each GPU keeps the
activations of its own micro-batch. CPU offload (ZeRO-Offload, Ren et al. 2021) moves the fp32 master weights
and optimizer states to RAM.
"""

from __future__ import annotations

import dataclasses

from torch_gpu_doctor.compat.precision import bytes_per_value
from torch_gpu_doctor.fit.model_size import ModelSize, Shape
from torch_gpu_doctor.records import dataclass

MODES = ("infer", "train", "lora", "qlora")
OPTIMIZERS = ("adamw", "adamw8bit", "sgd")
GIB = 1024**3
CONTEXT_BYTES = GIB // 2
ALLOCATOR_OVERHEAD = 0.10
LORA_RANK = 16  # on every linear layer of attention and the MLP (the QLoRA paper's setting)
FULL_PRECISION = ("fp32", "tf32")
QUANTIZED = ("int8", "int4", "fp4")
KORTHIKANTI = (
    "Korthikanti et al. 2022 (arXiv:2205.05198), without the attention scores (SDPA/flash attention)"
)
ZERO = "ZeRO, Rajbhandari et al. 2020 (arXiv:1910.02054) section 3.1"


class WorkloadError(ValueError):
    """A combination that is not a thing (full training in int4): a sentence with what to do instead."""


@dataclass(frozen=True)
class Workload:
    mode: str  # infer | train | lora | qlora
    precision: str  # compute precision (weights too, except qlora's 4-bit base)
    batch: int
    seq: int
    optimizer: str = "adamw"
    checkpointing: bool = False  # activation checkpointing
    shards: int = 1  # GPUs the weights and states are sharded over (FSDP / ZeRO-3)
    offload: bool = False  # optimizer states and master weights in CPU RAM (ZeRO-Offload)


@dataclass(frozen=True)
class Part:
    name: str
    bytes: int
    formula: str
    source: str


@dataclass(frozen=True)
class Estimate:
    workload: Workload
    parts: tuple[Part, ...]

    @property
    def per_gpu_bytes(self) -> int:
        return sum(p.bytes for p in self.parts)

    def part(self, name: str) -> int:
        return sum(p.bytes for p in self.parts if p.name == name)


def lora_parameters(shape: Shape, rank: int = LORA_RANK) -> int:
    """A rank-r adapter (A: in x r, B: r x out) on q, k, v, o and every MLP projection of each layer."""
    q_out, kv_out = shape.heads * shape.head_dim, shape.kv_heads * shape.head_dim
    attention = (shape.hidden + q_out) * 2 + (shape.hidden + kv_out) * 2
    mlp = (shape.hidden + shape.intermediate) * (3 if shape.gated_mlp else 2) * shape.experts  # every expert
    return shape.layers * rank * (attention + mlp)


def _g(n: float) -> str:
    """A count in words for a formula: 6.74 B, 40.0 M."""
    for unit, size in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f}"


def estimate(model: ModelSize, work: Workload) -> Estimate:
    if work.mode not in MODES or work.optimizer not in OPTIMIZERS:
        raise WorkloadError(f"unknown mode {work.mode!r} or optimizer {work.optimizer!r}")
    if work.mode in ("train", "lora") and work.precision in QUANTIZED:
        raise WorkloadError(
            f"{work.precision} weights cannot be trained directly: use --qlora (a 4-bit base with bf16 "
            "adapters) or a 16-bit precision"
        )
    if work.mode == "infer":
        return Estimate(work, _inference(model, work))
    return Estimate(work, _training(model, work))


def _weights(model: ModelSize, precision: str, shards: int) -> Part:
    size = bytes_per_value(precision)
    return Part(
        "weights",
        round(model.parameters * size / shards),
        f"{_g(model.parameters)} parameters x {size:g} bytes ({precision})" + (f" / {shards} GPUs" if shards > 1 else ""),
        "compat/precision.json",
    )  # fmt: skip


def _per_gpu(parts: list[Part]) -> tuple[Part, ...]:
    tensors = sum(p.bytes for p in parts)
    return (
        *parts,
        Part(
            "cuda_context",
            CONTEXT_BYTES,
            "0.5 GiB per GPU",
            "CUDA context with lazy module loading (CUDA 11.7+)",
        ),
        Part(
            "allocator_overhead",
            round(tensors * ALLOCATOR_OVERHEAD),
            f"{ALLOCATOR_OVERHEAD:.0%} of the tensors",
            "PyTorch's caching allocator: block rounding and fragmentation (an allowance, not a measurement)",
        ),
    )


def _inference(model: ModelSize, work: Workload) -> tuple[Part, ...]:
    shape = model.shape
    value = 2 if work.precision not in FULL_PRECISION else 4  # activations and KV in 16 bits unless fp32
    kv = 2 * shape.layers * shape.kv_heads * shape.head_dim * work.seq * work.batch * value
    working = work.batch * work.seq * (shape.hidden + shape.active_intermediate) * 2 * value
    logits = work.batch * shape.vocab * 4
    return _per_gpu(
        [
            _weights(model, work.precision, work.shards),
            Part(
                "kv_cache",
                round(kv / work.shards),
                f"2 x {shape.layers} layers x {shape.kv_heads} KV heads x {shape.head_dim} x seq {work.seq} x "
                f"batch {work.batch} x {value} bytes" + (f" / {work.shards} GPUs" if work.shards > 1 else ""),
                "the attention's cached keys and values (transformers' DynamicCache)",
            ),
            Part(
                "activations",
                working + logits,
                f"batch x seq x (h + ffn) x 2 x {value} bytes, one layer at a time; the last position's fp32 logits",
                "prefill working buffers (an estimate)",
            ),
        ]
    )


def _training(model: ModelSize, work: Workload) -> tuple[Part, ...]:
    shape = model.shape
    mixed = work.precision not in FULL_PRECISION
    compute = (
        "bf16" if work.precision in ("fp8", "fp4") else work.precision
    )  # fp8 training keeps bf16 weights
    if work.mode == "train":
        weights = _weights(model, compute, work.shards)
        trained = model.parameters
    else:
        base = "int4" if work.mode == "qlora" else compute
        trained = lora_parameters(shape)
        frozen = _weights(model, base, work.shards)
        adapters = trained * (2 if mixed else 4)
        weights = dataclasses.replace(
            frozen,
            bytes=frozen.bytes + adapters,
            formula=frozen.formula + f" (frozen) + {_g(trained)} adapter parameters (rank {LORA_RANK})",
        )
    gradient = trained * (2 if mixed else 4) / work.shards
    state_bytes = {"adamw": 8, "adamw8bit": 2, "sgd": 4}[work.optimizer] + (4 if mixed else 0)
    states = trained * state_bytes / work.shards
    on_gpu_states = 0.0 if work.offload else states
    act = 2 if mixed else 4
    mlp = 2 * shape.hidden + (
        6 * shape.active_intermediate if shape.gated_mlp else 4 * shape.active_intermediate + shape.hidden
    )
    layer = work.seq * work.batch * (15 * shape.hidden + mlp) * act / 2
    if work.checkpointing:
        kept = shape.layers * work.seq * work.batch * shape.hidden * act + layer
        how = f"{shape.layers} layer inputs (s b h x {act} bytes) + one layer recomputed"
    else:
        kept = shape.layers * layer
        how = f"{shape.layers} layers x s b (15h + MLP) x {act}/2 bytes, s={work.seq} b={work.batch}"
    logits = 8 * work.seq * work.batch * shape.vocab
    optimizer_name = {"adamw": "AdamW", "adamw8bit": "8-bit AdamW", "sgd": "SGD with momentum"}[
        work.optimizer
    ]
    return _per_gpu(
        [
            weights,
            Part("gradients", round(gradient), f"{_g(trained)} trained x {2 if mixed else 4} bytes", ZERO),
            Part(
                "optimizer_states",
                round(on_gpu_states),
                f"{_g(trained)} x {state_bytes} bytes ({optimizer_name}"
                + (", fp32 master weights" if mixed else "")
                + ")"
                + (": in CPU RAM (offload)" if work.offload else ""),
                ZERO + ("; 8-bit states: Dettmers et al. 2022 (arXiv:2110.02861)" if work.optimizer == "adamw8bit" else ""),
            ),
            Part("activations", round(kept), how, KORTHIKANTI),
            Part("logits", logits, f"8 x seq {work.seq} x batch {work.batch} x vocab {shape.vocab}", "fp32 logits and their gradient for the loss"),
        ]
    )  # fmt: skip


def offloaded_bytes(model: ModelSize, work: Workload) -> int:
    """RAM that CPU offload needs for the optimizer states and master weights."""
    if not work.offload or work.mode == "infer":
        return 0
    trained = model.parameters if work.mode == "train" else lora_parameters(model.shape)
    mixed = work.precision not in FULL_PRECISION
    return trained * ({"adamw": 8, "adamw8bit": 2, "sgd": 4}[work.optimizer] + (4 if mixed else 0))
