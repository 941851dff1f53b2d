"""The estimate's parts against the published arithmetic they come from."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch_gpu_doctor.compat.precision import best_precision, precision_table, runs_fast
from torch_gpu_doctor.fit.estimate import GIB, Workload, WorkloadError, estimate, lora_parameters
from torch_gpu_doctor.fit.model_size import read_model
from torch_gpu_doctor.fit.plan import GpuMemory, plan

MODELS = Path(__file__).parent / "models"
LLAMA = read_model(str(MODELS / "llama-2-7b-hf"))


def test_mixed_precision_adamw_keeps_16_bytes_per_parameter() -> None:
    """ZeRO (Rajbhandari et al. 2020): 2 + 2 + 12 bytes per parameter; their 7.5B example needs 120 GB."""
    found = estimate(read_model("7.5B"), Workload("train", "bf16", 1, 512))
    states = found.part("weights") + found.part("gradients") + found.part("optimizer_states")
    assert states == 7.5e9 * 16 == 120e9


def test_the_kv_cache_of_llama_2_7b_is_half_a_mib_per_token() -> None:
    """2 x 32 layers x 32 heads x 128 x 2 bytes = 512 KiB per token: 2 GiB for 4096 tokens."""
    found = estimate(LLAMA, Workload("infer", "fp16", 1, 4096))
    assert found.part("kv_cache") == 2 * GIB


def test_weights_in_16_bits_are_what_accelerate_lists() -> None:
    """accelerate estimate-memory lists Llama-2-7b-hf's float16 size as 12.55 (GiB): parameters x 2 bytes."""
    assert estimate(LLAMA, Workload("infer", "fp16", 1, 1)).part("weights") / GIB == pytest.approx(
        12.55, abs=0.01
    )


def test_lora_trains_a_fraction_and_qlora_stores_the_base_in_4_bits() -> None:
    adapters = lora_parameters(LLAMA.shape)
    assert adapters == 32 * 16 * (4096 * 2 * 4 + (4096 + 11008) * 3)  # about 40 M: 0.6 % of the model
    qlora = estimate(LLAMA, Workload("qlora", "bf16", 1, 2048))
    assert qlora.part("weights") == pytest.approx(LLAMA.parameters * 0.516 + adapters * 2, rel=1e-6)
    assert qlora.part("optimizer_states") == adapters * 12


def test_checkpointing_keeps_the_layer_inputs_only() -> None:
    full = estimate(LLAMA, Workload("train", "bf16", 1, 2048)).part("activations")
    kept = estimate(LLAMA, Workload("train", "bf16", 1, 2048, checkpointing=True)).part("activations")
    assert kept < full / 10
    assert kept >= 32 * 2048 * 4096 * 2  # each layer's input, in 16 bits


def test_sharding_divides_the_states_and_offload_moves_them() -> None:
    one = estimate(LLAMA, Workload("train", "bf16", 1, 2048))
    eight = estimate(LLAMA, Workload("train", "bf16", 1, 2048, shards=8))
    assert eight.part("optimizer_states") == pytest.approx(one.part("optimizer_states") / 8, rel=1e-6)
    assert eight.part("activations") == one.part("activations")
    assert estimate(LLAMA, Workload("train", "bf16", 1, 2048, offload=True)).part("optimizer_states") == 0


def test_quantized_weights_cannot_be_fully_trained() -> None:
    with pytest.raises(WorkloadError, match="--qlora"):
        estimate(LLAMA, Workload("train", "int4", 1, 2048))


@pytest.mark.parametrize(
    ("cc", "best"),
    [((9, 0), "bf16"), ((8, 6), "bf16"), ((7, 5), "fp16"), ((7, 0), "fp16"), ((6, 1), "fp32"), ((6, 0), "fp16"),
     ((3, 7), "fp32"), (None, "bf16")],
)  # fmt: skip
def test_the_precision_each_gpu_runs_fast(cc: tuple[int, int] | None, best: str) -> None:
    """bf16 needs Ampere (8.0); Volta and Turing run fp16 on tensor cores; Pascal GeForce (6.1) fp16 at 1/64."""
    assert best_precision(cc) == best


def test_every_precision_row_has_a_source() -> None:
    table = precision_table()
    assert all(row.source for row in table.values())
    assert not runs_fast("fp8", (8, 6)) and runs_fast("fp8", (8, 9)) and runs_fast("fp4", (12, 0))


def test_what_makes_7b_training_fit_on_24_gib() -> None:
    rtx4090 = (GpuMemory(0, "NVIDIA GeForce RTX 4090", 24 * GIB, (8, 9)),)
    result = plan(LLAMA, Workload("train", "bf16", 1, 2048), rtx4090)
    assert result.fits is False
    fitting = [o.title for o in result.options if o.fits]
    assert any(t.startswith("QLoRA") for t in fitting)
    assert not any(t.startswith("activation checkpointing") for t in fitting)  # 16 bytes/param stay
    assert plan(LLAMA, Workload("infer", "bf16", 1, 2048), rtx4090).fits is True
