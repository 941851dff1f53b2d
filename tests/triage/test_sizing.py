"""Full fine-tuning of a model its GPU cannot hold at any batch size (blind set 15: 7B on a 12 GiB RTX 3060 was
told to use the bf16 its command already set): the arithmetic of torch_gpu_doctor.fit is the cause, and adapters
are the fix. Real pastes of tatsu-lab/stanford_alpaca#218 and lm-sys/FastChat#1110."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch_gpu_doctor.model import Status
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.pipeline import diagnose_paste
from torch_gpu_doctor.triage.prose import read_prose

PASTES = Path(__file__).parent / "pastes"
ALPACA = "stanford_alpaca-218-oom-model-too-big-for-the-gpu.txt"  # OOM, llama-7b-hf, --bf16 True, RTX 3060
FASTCHAT = "fastchat-1110-oom-model-too-big-for-full-fine-tune.txt"  # "how much GPU memory ... llama-7b ?"


def cause(name: str, text: str | None = None) -> Verdict | None:
    data = (PASTES / name).read_bytes() if text is None else text.encode()
    return diagnose_paste(data, name).result.cause


def test_an_oom_of_a_model_too_big_to_train_here_says_so_and_gives_adapters() -> None:
    found = cause(ALPACA)
    assert found is not None and found.finding.check_id == "torch.out_of_memory"
    summary = found.finding.summary
    assert summary.startswith("Full fine-tuning of a 7B model needs about 116 GiB")
    assert summary.endswith("this GPU has 11.8 GiB.")  # the message's total capacity
    fix = found.finding.remediation
    assert fix is not None and "QLoRA" in fix.text and "bf16" not in fix.text.split("Fine-tune")[1]
    assert fix.commands[0].argv[:3] == ("gpu-doctor", "fit", "7B")
    assert found.find_out is None  # the arithmetic decides it: no process list asked for


def test_a_question_of_how_much_memory_full_fine_tuning_needs_is_answered() -> None:
    found = cause(FASTCHAT)
    assert found is not None and found.finding.status is Status.WARN
    assert found.finding.summary.startswith("Full fine-tuning of a 7B model needs about")


def test_adapters_named_leave_the_verdicts_as_they_are() -> None:
    text = (PASTES / ALPACA).read_text(encoding="utf-8").replace("train.py", "train.py --use_lora True")
    found = cause(ALPACA, text)
    assert found is not None and not found.finding.summary.startswith("Full fine-tuning")


def test_a_gpu_that_holds_the_model_leaves_the_verdicts_as_they_are() -> None:
    text = (PASTES / ALPACA).read_text(encoding="utf-8").replace("llama-7b-hf", "pythia-0.4b")
    found = cause(ALPACA, text)
    assert found is not None and not found.finding.summary.startswith("Full fine-tuning")


@pytest.mark.parametrize(
    ("words", "size"),
    [
        ("fine-tune /var/llama/llama-7b-hf on one GPU", "7"),
        ("finetuning Llama-2-13b-chat-hf", "13"),
        ("微调 Qwen2.5-14B-Instruct 显存不够", "14"),
        ("full fine-tuning of a 7B model", "7"),
        ("fine tuning a 1.5 billion parameter model", "1.5"),
    ],
)
def test_a_model_fine_tuned_by_its_size(words: str, size: str) -> None:
    said = read_prose([words]).trains_model
    assert said is not None and said.value == size


@pytest.mark.parametrize(
    "words",
    [
        "fine-tune with --bf16 True on sm_80",  # no model size
        "fine-tune ggml-model-q4_0.bin",  # a file's quantization, not a size
        "fine-tune llama-7b-hf with LoRA",  # adapters: not full training
        "serve llama-7b-hf with vLLM",  # not training
    ],
)
def test_other_words_name_no_model_fine_tuned(words: str) -> None:
    assert read_prose([words]).trains_model is None


@pytest.mark.parametrize(
    "change",
    [
        # full training sharded with its states in CPU RAM: the estimate on one GPU is not the job
        ('--fsdp "full_shard auto_wrap"', "--deepspeed ds_z3_offload.json"),
        # inference of a model trained before
        ("train.py", "train.py for inference"),
    ],
)
def test_offloaded_or_inference_jobs_are_not_sized_as_full_training(change: tuple[str, str]) -> None:
    text = (PASTES / ALPACA).read_text(encoding="utf-8").replace(*change)
    found = cause(ALPACA, text)
    assert found is not None and not found.finding.summary.startswith("Full fine-tuning")


def test_full_training_over_several_gpus_is_sized_per_gpu() -> None:
    """--nproc_per_node=8: the states are sharded eight ways (about 15 GiB each for 7B), which a 12 GiB GPU
    still cannot hold, but a 24 GiB one could."""
    text = (PASTES / ALPACA).read_text(encoding="utf-8").replace("--nproc_per_node=1", "--nproc_per_node=8")
    found = cause(ALPACA, text)
    assert found is not None and found.finding.summary.startswith(
        "Full fine-tuning of a 7B model needs about 1"
    )
    assert "GiB of GPU memory" in found.finding.summary and "116 GiB" not in found.finding.summary


def test_a_16_bit_model_whose_weights_fill_the_gpu_is_the_cause_not_max_model_len() -> None:
    """vllm-project/vllm#8372: Llama-3.1-8B in bf16 on a 16 GiB card; the weights alone leave no room."""
    found = cause("vllm-8372-oom-model-too-big.txt")
    assert found is not None and found.finding.check_id == "torch.out_of_memory"
    assert found.finding.summary.startswith("The 8B model's weights alone take about 14.9 GiB")
    fix = found.finding.remediation
    assert fix is not None and "quantized" in fix.text and "max_model_len" not in fix.text.split(":")[0]
    assert fix.commands[0].argv == ("gpu-doctor", "fit", "8B", "--infer", "--precision", "int4")


@pytest.mark.parametrize(
    "text",
    [
        # the same paste with a 4-bit checkpoint, or a GPU with room, is not "too big"
        "LLM(model='TheBloke/Llama-2-13B-AWQ') fails: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a "
        "total capacity of 15.59 GiB of which 9.12 MiB is free.",
        "LLM(model='meta-llama/Llama-2-7b-hf') fails: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a "
        "total capacity of 79.15 GiB of which 9.12 MiB is free.",
    ],
)
def test_a_quantized_model_or_a_gpu_with_room_is_not_too_big_to_run(text: str) -> None:
    found = cause("inline.txt", text)
    assert found is None or "weights alone" not in found.finding.summary


def test_collect_envs_64_bit_runtime_is_not_a_4_bit_model() -> None:
    """collect_env prints "(64-bit runtime)": no quantized model in that, the weights still fill the GPU."""
    text = (PASTES / "vllm-8372-oom-model-too-big.txt").read_text() + (
        "\nPython version: 3.10.14 (main, Mar 21 2024, 16:24:04) [GCC 11.2.0] (64-bit runtime)\n"
    )
    found = cause("vllm-8372-oom-model-too-big.txt", text)
    assert found is not None and "weights alone" in found.finding.summary


def test_tensor_parallel_in_vllm_serves_space_form_shares_the_weights() -> None:
    from torch_gpu_doctor.triage.sizing import _TENSOR_PARALLEL

    found = _TENSOR_PARALLEL.search("vllm serve meta-llama/Llama-3.1-70B --tensor-parallel-size 4")
    assert found is not None and found["a"] == "4"
