"""MODEL as a person gives it: a count, a real published config.json, a folder with safetensors headers."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from torch_gpu_doctor.fit.model_size import ModelError, read_model

MODELS = Path(__file__).parent / "models"


@pytest.mark.parametrize(
    ("model", "published"),
    [
        ("llama-2-7b-hf", 6_738_415_616),  # the model card's 6.74B
        ("gpt2", 124_439_808),  # "124M"
    ],
)
def test_a_real_config_gives_the_published_count_exactly(model: str, published: int) -> None:
    size = read_model(str(MODELS / model))
    assert size.parameters == published
    assert not size.shape_assumed


def test_grouped_kv_heads_and_qwen2_biases_count_as_published() -> None:
    size = read_model(str(MODELS / "deepseek-r1-distill-qwen-7b" / "config.json"))
    assert size.parameters == pytest.approx(7.62e9, rel=0.002)  # the model page's 7.62B
    assert (size.shape.heads, size.shape.kv_heads, size.stored_dtype) == (28, 4, "bf16")


@pytest.mark.parametrize(("text", "count"), [("7B", 7e9), ("350M", 350e6), ("1.3e9", 1.3e9), ("70b", 70e9)])
def test_a_count_is_read_and_its_shape_is_an_assumption(text: str, count: float) -> None:
    size = read_model(text)
    assert size.parameters == int(count) and size.shape_assumed
    s = size.shape
    assert 12 * s.layers * s.hidden**2 == pytest.approx(count, rel=0.15)  # P = 12 L h^2


def test_safetensors_headers_give_the_exact_count_and_dtype(tmp_path: Path) -> None:
    """The safetensors format: 8 bytes of little-endian header length, the JSON header, then the data."""
    (tmp_path / "config.json").write_text((MODELS / "gpt2" / "config.json").read_text())
    for name, tensors in (
        ("model-00001-of-00002.safetensors", {"a": [1000, 768], "b": [768]}),
        ("model-00002-of-00002.safetensors", {"c": [10, 10, 10]}),
    ):
        header = {k: {"dtype": "BF16", "shape": v, "data_offsets": [0, 0]} for k, v in tensors.items()}
        header["__metadata__"] = {"format": "pt"}
        raw = json.dumps(header).encode()
        (tmp_path / name).write_bytes(struct.pack("<Q", len(raw)) + raw)
    size = read_model(str(tmp_path))
    assert size.parameters == 1000 * 768 + 768 + 1000
    assert size.stored_dtype == "bf16" and "safetensors" in size.source


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("seven billion", "neither a parameter count"),
        ("0.5", "not a model size"),
    ],
)
def test_what_is_not_a_model_says_so(text: str, says: str) -> None:
    with pytest.raises(ModelError, match=says):
        read_model(text)


def test_a_config_it_cannot_count_says_what_to_give_instead(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "mamba", "d_model": 768}))
    with pytest.raises(ModelError, match="give the count instead"):
        read_model(str(config))
    config.write_text("{not json")
    with pytest.raises(ModelError, match="not a readable JSON config"):
        read_model(str(config))
    broken = tmp_path / "x.safetensors"
    broken.write_bytes(struct.pack("<Q", 2**40))
    (tmp_path / "config.json").write_text((MODELS / "gpt2" / "config.json").read_text())
    with pytest.raises(ModelError, match="not a safetensors header"):
        read_model(str(tmp_path))


def test_a_folder_of_safetensors_without_a_config_is_counted_with_an_assumed_shape(tmp_path: Path) -> None:
    header = json.dumps({"w": {"dtype": "F16", "shape": [4096, 4096], "data_offsets": [0, 0]}}).encode()
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header)
    size = read_model(str(tmp_path))
    assert (size.parameters, size.stored_dtype, size.shape_assumed) == (4096 * 4096, "fp16", True)
    (tmp_path / "model.safetensors").unlink()
    with pytest.raises(ModelError, match=r"no config\.json and no \.safetensors"):
        read_model(str(tmp_path))


def test_mixtral_counts_every_expert_and_says_how_many_a_token_uses() -> None:
    """Mixtral-8x7B: 46.7 B parameters, 12.9 B of them used per token (Mistral AI's announcement); every
    expert sits in GPU memory, each token's activations span two of them."""
    model = read_model(str(MODELS / "mixtral-8x7b-v0.1"))
    assert model.parameters == 46_702_792_704
    assert (model.shape.experts, model.shape.active_experts) == (8, 2)
    assert "12.88 B active" in model.source
    assert model.shape.active_intermediate == 2 * 14336


def test_other_expert_layouts_are_refused_with_what_to_give(tmp_path: Path) -> None:
    # Qwen-MoE's keys (num_experts, moe_intermediate_size, shared experts): not counted as if it were Mixtral
    config = json.loads((MODELS / "mixtral-8x7b-v0.1" / "config.json").read_text())
    del config["num_local_experts"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**config, "num_experts": 60, "moe_intermediate_size": 1408}))
    with pytest.raises(ModelError, match="only Mixtral's"):
        read_model(str(path))
    # Llama 4 (review finding): num_local_experts as Mixtral, but MoE every other layer and a dense MLP of its
    # own width; counted as Mixtral it gave 778 B for Maverick's 400 B
    path.write_text(json.dumps({**config, "interleave_moe_layer_step": 2, "intermediate_size_mlp": 16384}))
    with pytest.raises(ModelError, match="only Mixtral's"):
        read_model(str(path))
