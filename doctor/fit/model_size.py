"""What `gpu-doctor fit MODEL` is given, as a parameter count and a shape.

MODEL is a count (`7B`, `350M`, `1.3e9`), a Hugging Face `config.json`, or a model folder holding one (and,
when present, `*.safetensors`, whose headers give the exact count and the stored dtype). Everything is read
offline from the local disk; nothing is downloaded.

Counts from a config follow the model classes in transformers: a Llama-style decoder (Llama, Mistral, Qwen2:
embeddings, per layer q/k/v/o with grouped KV heads and a gated MLP, two RMSNorms, a final norm, an untied
lm_head) and GPT-2 (embeddings and positions, per layer 12h^2 + 13h at i = 4h, a final LayerNorm, a tied head). A bare
count has no shape: the shape is assumed from the usual aspect ratio (Kaplan et al. 2020: P = 12 L h^2, with
about 128 hidden units per layer) and said to be an assumption.
"""

from __future__ import annotations

import json
import math
import re
import struct
from pathlib import Path
from typing import Any

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass

ASSUMED_VOCAB = 32000  # Llama and Mistral's; a bare count has none
_COUNT = lazy(r"^\s*(?P<number>\d+(?:\.\d+)?(?:e\d+)?)\s*(?P<unit>[kmbt]?)\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
# safetensors dtype names (https://github.com/huggingface/safetensors, format spec) -> precision names
_SAFETENSORS_NAMES = {
    "F32": "fp32",
    "F16": "fp16",
    "BF16": "bf16",
    "F8_E4M3": "fp8",
    "F8_E5M2": "fp8",
    "I8": "int8",
}
_HEADER_LIMIT = 100 * 1024 * 1024  # the format caps the header at 100 MB


class ModelError(ValueError):
    """MODEL cannot be read: a clear sentence for the person who typed it."""


@dataclass(frozen=True)
class Shape:
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int  # the MLP's inner size
    vocab: int
    gated_mlp: bool  # gate, up and down projections (Llama) rather than two (GPT-2)
    experts: int = 1  # a mixture of experts: MLPs per layer (all in memory)...
    active_experts: int = 1  # ...and how many each token goes through (activations, compute)

    @property
    def active_intermediate(self) -> int:
        """The MLP width one token's activations span: its experts' together."""
        return self.intermediate * self.active_experts


@dataclass(frozen=True)
class ModelSize:
    parameters: int
    shape: Shape
    shape_assumed: bool  # True: from a bare count, not from a config
    source: str  # where the count came from, in words
    stored_dtype: str | None = None  # the checkpoint's dtype (config torch_dtype, safetensors headers)
    max_positions: int | None = None


def read_model(argument: str) -> ModelSize:
    """A count, a config.json, or a folder with config.json (and safetensors files)."""
    path = Path(argument).expanduser()
    if path.is_dir():
        return _folder(path)
    if path.is_file():
        return _config_file(path)
    found = _COUNT.match(argument)
    if found is None:
        raise ModelError(
            f"{argument}: neither a parameter count (7B, 350M, 1.3e9) nor a config.json or model folder here"
        )
    count = float(found["number"]) * _UNITS[found["unit"].lower()]
    if not 1e3 <= count <= 1e14:
        raise ModelError(f"{argument}: {count:.3g} parameters is not a model size this can estimate")
    return ModelSize(int(count), assumed_shape(int(count)), True, f"the count {argument}")


def assumed_shape(parameters: int) -> Shape:
    """A Llama-like shape for a bare count: P = 12 L h^2 with L = h / 128, h a multiple of 128."""
    hidden = max(128, round((128 * parameters / 12) ** (1 / 3) / 128) * 128)
    layers = max(1, round(parameters / (12 * hidden * hidden)))
    heads = hidden // 128
    return Shape(layers, hidden, heads, heads, 128, 4 * hidden, ASSUMED_VOCAB, gated_mlp=False)


def _folder(folder: Path) -> ModelSize:
    config = folder / "config.json"
    counted = _safetensors_count(folder)
    if not config.is_file():
        if counted is None:
            raise ModelError(f"{folder}: no config.json and no .safetensors files in this folder")
        parameters, dtype = counted  # the exact count; the shape only assumed, as for a bare count
        return ModelSize(
            parameters, assumed_shape(parameters), True, f"the safetensors headers in {folder}", dtype
        )
    size = _config_file(config)
    if counted is None:
        return size
    parameters, dtype = counted
    return ModelSize(
        parameters,
        size.shape,
        False,
        f"the safetensors headers in {folder}",
        dtype or size.stored_dtype,
        size.max_positions,
    )


def _config_file(path: Path) -> ModelSize:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"{path}: not a readable JSON config ({exc})") from exc
    if not isinstance(config, dict):
        raise ModelError(f"{path}: not a model config (a JSON object is expected)")
    if "text_config" in config and isinstance(config["text_config"], dict):  # multimodal: the language model
        config = {**config["text_config"], "torch_dtype": config.get("torch_dtype")}
    if config.get("model_type") == "gpt2" or "n_embd" in config:
        shape, parameters = _gpt2(config, path)
    else:
        shape, parameters = _llama_like(config, path)
    dtype = config.get("torch_dtype")
    stored = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}.get(str(dtype))
    positions = config.get("max_position_embeddings") or config.get("n_positions")
    kind = str(config.get("model_type", "a model"))
    if shape.experts > 1:
        idle = (shape.experts - shape.active_experts) * 3 * shape.hidden * shape.intermediate * shape.layers
        kind += (
            f": {shape.experts} experts, {shape.active_experts} per token, {(parameters - idle) / 1e9:.2f} B "
            "active; every expert is in memory"
        )
    return ModelSize(
        parameters, shape, False, f"{path.name} ({kind})", stored,
        int(positions) if isinstance(positions, int) else None,
    )  # fmt: skip


def _int(config: dict[str, Any], key: str, path: Path) -> int:
    value = config.get(key)
    if not isinstance(value, int) or value <= 0:
        raise ModelError(
            f"{path}: no {key} in this config, so its parameters cannot be counted; give the count instead "
            "(`gpu-doctor fit 7B`) or a folder with its .safetensors files"
        )
    return value


def _llama_like(config: dict[str, Any], path: Path) -> tuple[Shape, int]:
    hidden = _int(config, "hidden_size", path)
    layers = _int(config, "num_hidden_layers", path)
    heads = _int(config, "num_attention_heads", path)
    kv_heads = config.get("num_key_value_heads") or heads
    head_dim = config.get("head_dim") or hidden // heads
    inner = _int(config, "intermediate_size", path)
    vocab = _int(config, "vocab_size", path)
    experts, active = _experts(config, path)
    attention = hidden * heads * head_dim * 2 + hidden * kv_heads * head_dim * 2  # q, o; k, v
    if config.get("attention_bias"):  # Llama's option: q, k, v and o
        attention += heads * head_dim + 2 * kv_heads * head_dim + hidden
    elif (
        config.get("model_type") == "qwen2"
    ):  # Qwen2 always has q, k and v biases (transformers' Qwen2Attention)
        attention += heads * head_dim + 2 * kv_heads * head_dim
    router = hidden * experts if experts > 1 else 0  # Mixtral's gate: one logit per expert
    per_layer = attention + experts * 3 * hidden * inner + router + 2 * hidden  # gate, up, down; two RMSNorms
    embeddings = vocab * hidden
    head = 0 if config.get("tie_word_embeddings") else vocab * hidden
    parameters = embeddings + layers * per_layer + hidden + head
    shape = Shape(layers, hidden, heads, kv_heads, head_dim, inner, vocab, True, experts, active)
    return shape, parameters


# keys of expert layouts other than Mixtral's: Qwen-MoE, DeepSeek, OLMoE (num_experts, shared experts, their own
# expert width, dense first layers) and Llama 4 (MoE every other layer, a dense MLP of its own width)
OTHER_EXPERT_KEYS = (
    "num_experts", "n_routed_experts", "moe_intermediate_size", "shared_expert_intermediate_size",
    "n_shared_experts", "first_k_dense_replace", "decoder_sparse_step", "interleave_moe_layer_step",
    "intermediate_size_mlp", "moe_layers",
)  # fmt: skip


def _experts(config: dict[str, Any], path: Path) -> tuple[int, int]:
    """(experts per layer, experts per token): (1, 1) for a dense model. Mixtral's layout is read (every layer
    a mixture of `num_local_experts` MLPs of `intermediate_size`); the other layouts (shared experts,
    `moe_intermediate_size`, dense first layers: Qwen-MoE, DeepSeek, OLMoE) are refused with what to give."""
    experts = config.get("num_local_experts")
    other = any(config.get(k) for k in OTHER_EXPERT_KEYS)
    if other or (experts is not None and not isinstance(experts, int)):
        raise ModelError(
            f"{path}: a mixture-of-experts layout gpu-doctor does not count yet (only Mixtral's); give its "
            "parameter count or its folder with the .safetensors files"
        )
    if not experts or experts <= 1:
        return 1, 1
    active = config.get("num_experts_per_tok")
    return experts, active if isinstance(active, int) and 0 < active <= experts else 2


def _gpt2(config: dict[str, Any], path: Path) -> tuple[Shape, int]:
    hidden = _int(config, "n_embd", path)
    layers = _int(config, "n_layer", path)
    heads = _int(config, "n_head", path)
    vocab = _int(config, "vocab_size", path)
    positions = _int(config, "n_positions", path)
    inner = config.get("n_inner") or 4 * hidden
    # c_attn 3h^2+3h, c_proj h^2+h, c_fc h*i+i, mlp c_proj i*h+h, two LayerNorms 4h
    per_layer = 4 * hidden * hidden + 2 * hidden * inner + inner + 9 * hidden
    parameters = vocab * hidden + positions * hidden + layers * per_layer + 2 * hidden  # tied head
    head_dim = hidden // heads
    return Shape(layers, hidden, heads, heads, head_dim, inner, vocab, gated_mlp=False), parameters


def _safetensors_count(folder: Path) -> tuple[int, str | None] | None:
    """Sum of the tensors' element counts over every *.safetensors header, and the most common dtype."""
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        return None
    total = 0
    by_dtype: dict[str, int] = {}
    for file in files:
        for name, entry in _header(file).items():
            if name == "__metadata__" or not isinstance(entry, dict):
                continue
            shape, dtype = entry.get("shape"), entry.get("dtype")
            if not isinstance(shape, list) or not all(isinstance(d, int) for d in shape):
                raise ModelError(f"{file}: tensor {name} has no readable shape")
            count = math.prod(shape)
            total += count
            by_dtype[str(dtype)] = by_dtype.get(str(dtype), 0) + count
    common = max(by_dtype, key=lambda d: by_dtype[d]) if by_dtype else None
    return total, _SAFETENSORS_NAMES.get(common or "")


def _header(file: Path) -> dict[str, Any]:
    """The JSON header of a safetensors file: 8 bytes of little-endian length, then the JSON."""
    try:
        with file.open("rb") as handle:
            raw = handle.read(8)
            if len(raw) != 8:
                raise ModelError(f"{file}: too short to be a safetensors file")
            (length,) = struct.unpack("<Q", raw)
            if length > _HEADER_LIMIT:
                raise ModelError(f"{file}: a header of {length} bytes is not a safetensors header")
            header = json.loads(handle.read(length).decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"{file}: not a readable safetensors header ({exc})") from exc
    if not isinstance(header, dict):
        raise ModelError(f"{file}: not a safetensors header")
    return header
