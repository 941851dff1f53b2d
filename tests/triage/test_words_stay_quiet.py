"""The catalogue's entries for what a person says, and the prose facts beside them, stay quiet on ordinary
sentences that only look like them (the review of session 13's diff found each of these answered wrongly)."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch_gpu_doctor.checks.support.signatures import match_line
from torch_gpu_doctor.triage.pipeline import diagnose_paste
from torch_gpu_doctor.triage.prose import read_prose

PASTES = Path(__file__).parent / "pastes"


def ids(line: str) -> set[str]:
    """What triage reads in a one-line paste: the catalogue's matches, less a person's words that ask, plan or
    deny (triage/paste.py)."""
    return {h.signature.id for h in diagnose_paste(line.encode(), "line").pasted.hits}


def test_a_question_after_the_account_in_one_line_keeps_the_account() -> None:
    """hivemind#509: 'one gpu is lost during the training. ... Have ever encountered that issue?': the question
    is another sentence of the same line."""
    line = "I face the situation where one gpu is lost during the training. Have ever encountered that issue?"
    assert "gpu_lost_in_words" in ids(line)
    assert "gpu_lost_in_words" in {h.signature.id for h in match_line(line, 1)}


@pytest.mark.parametrize(
    ("line", "quiet"),
    [
        (
            "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal() const + 0x52",
            "nccl_watchdog_timeout_named",
        ),
        ("I trained on one GPU OK, now I would like to try 2 gpus", "nccl_multi_gpu_only_in_words"),
        (
            "How do I run training on 2 nodes? Are errors handled on multiple nodes",
            "nccl_multi_node_failure_in_words",
        ),
        ("multinode training works, no errors", "nccl_multi_node_failure_in_words"),
        (
            "accelerate test works, nccl-tests all_reduce_perf runs fine, no timeouts",
            "nccl_test_hang_in_words",
        ),
        (
            "I built the image with docker and pushed it; kubernetes can't pull the image from our registry",
            "container_k8s_pods_without_gpus_in_words",
        ),
        ("setup.py FAILED", "launcher_child_failed"),
        ("tests/test_cuda.py FAILED", "launcher_child_failed"),
        ("CUDA_VISIBLE_DEVICES should be set to an index, not a UUID", "no_visible_gpu_uuid_in_words"),
        ("RuntimeError: CUDA error: invalid device function", "arch_invalid_device_function_cuda"),
    ],
)
def test_a_sentence_that_only_looks_like_a_symptom_is_not_one(line: str, quiet: str) -> None:
    assert quiet not in ids(line)


@pytest.mark.parametrize(
    ("line", "loud"),
    [
        ("# WorkNCCL", "nccl_watchdog_timeout_named"),
        ("Training on one GPU works fine, but on 4 GPUs it fails with:", "nccl_multi_gpu_only_in_words"),
        ("/root/LLaMA-Factory/src/llamafactory/launcher.py FAILED", "launcher_child_failed"),
        (
            "cuda runtime error (8) : invalid device function at THCReduceAll.cuh:339",
            "arch_invalid_device_function_cuda",
        ),
    ],
)
def test_the_symptoms_themselves_still_read(line: str, loud: str) -> None:
    assert loud in ids(line)


@pytest.mark.parametrize(
    "sentence",
    [
        "The server has no GPU driver installed yet",
        "faster-whisper says there is no NVIDIA GPU, but I have a GTX 1660",
        "My laptop has no GPU drivers found by the installer",
    ],
)
def test_no_driver_or_a_program_saying_no_gpu_is_not_a_machine_without_one(sentence: str) -> None:
    assert read_prose([sentence]).no_nvidia is None


@pytest.mark.parametrize(
    "sentence",
    [
        "Your GPU should have compute capability 7.0 or above",
        "GPUs with compute capability 7.0+ only",
        "compute capability 3.5 and up",
        "vLLM requires compute capability 7.0",
    ],
)
def test_a_capability_a_program_needs_is_not_the_gpus(sentence: str) -> None:
    assert read_prose([sentence]).gpu_cc is None


def test_blackwells_two_digit_capability_is_read() -> None:
    said = read_prose(["the RTX 5090 reports compute capability 12.0"]).gpu_cc
    assert said is not None and said.value == "12.0"


def test_zluda_named_but_not_in_use_beside_an_nvidia_card_is_not_zluda() -> None:
    """ComfyUI-Zluda#9's paste with its ZLUDA folder replaced and an RTX 3090 named (an edit of the real paste):
    the DLL answer, not the HIP SDK's."""
    text = (PASTES / "comfyui-zluda-9-winerror126-rocm-zluda.txt").read_bytes()
    text = text.replace(b"E:\\ComfyUI-Zluda\\", b"E:\\ComfyUI\\").replace(
        b"7900 XTX", b"RTX 3090, not using zluda"
    )
    cause = diagnose_paste(text, "edited").result.cause
    assert cause is not None and "ZLUDA" not in cause.finding.summary


def test_an_exception_the_paste_shows_wins_over_a_symptom_said_in_words() -> None:
    """LlamaFactory#4322's words ('单卡...正常，多卡...报错') with a real exception appended (an edit): the
    exception is what to read first, not the words' P2P reading."""
    text = (PASTES / "llamafactory-4322-multi-gpu-fails-single-ok.txt").read_bytes()
    text += b"\nTraceback (most recent call last):\n  File \"train.py\", line 3, in <module>\nKeyError: 'input_ids'\n"
    result = diagnose_paste(text, "edited").result
    assert result.cause is None and result.unrecognised is not None
    assert "KeyError" in result.unrecognised.text


def test_a_gpu_holding_a_jobs_memory_at_0_percent_is_not_idle() -> None:
    """3D-Deepbox#44's table with the TITAN V holding 11 GB (an edit): a loaded job waiting is not 'not on the
    GPU'."""
    text = (
        (PASTES / "3d-deepbox-44-gpu-idle-healthy-env.txt")
        .read_bytes()
        .replace(b"  320MiB / 12066MiB", b"11000MiB / 12066MiB")
    )
    cause = diagnose_paste(text, "edited").result.cause
    assert cause is None or "idle" not in cause.finding.summary


def test_pods_without_gpus_are_settled_by_the_node_not_by_docker() -> None:
    cause = diagnose_paste(
        (PASTES / "k8s-device-plugin-250-k8s-device-plugin-vgpu.txt").read_bytes(), "k8s"
    ).result.cause
    assert (
        cause is not None
        and cause.find_out is not None
        and cause.find_out.startswith("kubectl describe node")
    )


def test_a_jetpack_5_host_is_not_told_its_container_takes_cuda_from_it() -> None:
    """jetson-inference#1400's words with the host said to be JetPack 5.1.2 (an edit): from JetPack 5 an image
    brings its own CUDA, so the pre-R34 container story does not apply."""
    text = (
        (PASTES / "jetson-inference-1400-jetson-container-after-update.txt")
        .read_bytes()
        .replace(b"My Jetson Xavier", b"My Jetson Xavier (JetPack 5.1.2)")
    )
    cause = diagnose_paste(text, "edited").result.cause
    assert cause is not None and "before JetPack 5" not in cause.finding.summary


def test_a_known_error_whose_check_does_not_run_is_still_an_error_shown() -> None:
    """An NVIDIA-only catalogue entry on an AMD paste (its check does not run there): the error line is not
    'known', so the answer is the error it shows (exit 1), never 'No problem found' (the review's B7 class)."""
    text = (
        b"torch 1.13.1+rocm5.2 on an RX 6700 XT\n"
        b"Traceback (most recent call last):\n"
        b'  File "a.py", line 1, in <module>\n'
        b"RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    )
    result = diagnose_paste(text, "amd").result
    assert result.cause is None and result.unrecognised is not None
    assert "no kernel image" in result.unrecognised.text
