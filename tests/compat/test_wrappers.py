"""Frameworks that run vLLM under their own setting names (compat/wrappers.json): every row sourced, its
options vLLM's own, a malformed row refused, and a fix in vLLM's words told in the framework's (blind set 17:
LLaMA-Factory's vllm_maxlen, verl's actor_rollout_ref.rollout.dtype)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from torch_gpu_doctor.compat import CompatDataError
from torch_gpu_doctor.compat.wrappers import load_wrappers, parse_wrappers, wrapper_in
from torch_gpu_doctor.triage.pipeline import diagnose_paste
from torch_gpu_doctor.triage.whose import VLLM_OPTIONS

PASTES = Path(__file__).resolve().parents[1] / "triage" / "pastes"


def test_every_row_is_sourced_and_names_only_options_vllm_has() -> None:
    wrappers = load_wrappers()
    assert {w.name for w in wrappers} >= {"LLaMA-Factory", "verl"}
    for w in wrappers:
        assert w.source and w.how
        assert set(w.options) <= set(VLLM_OPTIONS), w.name


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("llamafactory-cli train examples/train_lora/llama3_lora_sft.yaml", "LLaMA-Factory"),
        ("python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=vllm", "verl"),
        ("vllm==0.6.3, verl 0.4.1", "verl"),
        ("vllm serve Qwen/Qwen2.5-7B --max-model-len 8192", None),
        ("the vertical-verlet integrator", None),
    ],
)
def test_the_words_name_the_framework(text: str, name: str | None) -> None:
    found = wrapper_in(text)
    assert (found.name if found else None) == name


@pytest.mark.parametrize(
    "bad",
    [
        {"wrappers": [{"name": "x", "words": "(", "options": {"dtype": "d"}, "how": "h", "source": "s"}]},
        {"wrappers": [{"name": "x", "words": "x", "options": {}, "how": "h", "source": "s"}]},
        {"wrappers": []},
    ],
)
def test_a_malformed_row_is_refused(bad: Any) -> None:
    with pytest.raises(CompatDataError):
        parse_wrappers(bad)


def _fix(name: str) -> str:
    cause = diagnose_paste((PASTES / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.remediation is not None
    return cause.finding.remediation.text


def test_a_fix_in_vllms_words_is_told_in_the_frameworks() -> None:
    kv = _fix("llamafactory-7234-healthy-env-kv-cache.txt")
    assert kv.startswith("LLaMA-Factory sets vLLM's options under its own names")
    assert "vllm_maxlen for vLLM's max_model_len" in kv and "max_model_len at most 78336" in kv
    bf16 = _fix("verl-2594-bf16-unsupported.txt")
    assert "actor_rollout_ref.rollout.dtype for vLLM's dtype" in bf16
    assert not _fix("vllm-19018-no-kernel-image-sm120.txt").startswith("LLaMA-Factory")
