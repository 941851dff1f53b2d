"""Blind set 29's classes, each on its real paste (tests/triage/pastes, MANIFEST.json), with what must stay as it
was beside it: an old torch release said in words, the platform a paste shows (a Mac's venv, WSL without a GPU,
an AMD machine under a CUDA-only runtime), pip's report that torch's CUDA wheels were replaced, and nvidia-smi's
'No devices were found'."""

from __future__ import annotations

from tests.triage.corpus_helpers import cause_of, diagnosed


def test_a_torch_release_said_in_words_gets_its_own_build_with_the_gpus_kernels() -> None:
    """WPFS#3: 'torch 1.10.1' on an A100; the thread's fix was 1.10.1+cu111, not today's newest torch."""
    _, _, first = cause_of(diagnosed("WPFS-3-a100-sm80-not-compatible.txt"))
    assert first.startswith("python -m pip install torch==1.10.1+cu111 ")


def test_a_venv_under_users_is_a_mac_and_bitsandbytes_cuda_code_is_answered_there() -> None:
    """bitsandbytes#853: its report names /usr/local beside the venv under /Users; a Linux bitsandbytes paste keeps
    its own reading."""
    check, summary, first = cause_of(diagnosed("bitsandbytes-853-macos-compiled-without-gpu.txt"))
    assert (
        check == "gpu.present"
        and summary.startswith("This is a Mac")
        and "bitsandbytes' CUDA code" in summary
    )
    assert first == ""  # nothing to uninstall: its 8-bit features are left out
    _, summary, _ = cause_of(diagnosed("bnb-1651-source-build-no-lib.txt"))
    assert summary.startswith("bitsandbytes has no compiled library")


def test_wsl_without_a_gpu_adapter_and_the_words_that_say_no_nvidia_card() -> None:
    d = diagnosed("grounded-sam-506-wsl-no-adapters-no-nvidia-gpu.txt")
    _, summary, first = cause_of(d)
    assert summary.startswith("WSL has no NVIDIA GPU for the container") and first == "nvidia-smi"
    assert d.pasted.prose.no_nvidia is not None and "NVIDIA graphics card" in d.pasted.prose.no_nvidia.value


def test_a_cuda_only_runtime_on_an_amd_machine_is_no_rocm_question() -> None:
    """VideoCaptioner#796: Faster-Whisper-XXL with `-d cuda` on an RX 6750 XT; a ROCm paste keeps its gfx reading."""
    check, summary, _ = cause_of(diagnosed("VideoCaptioner-796-amd-rx6750xt-faster-whisper-cuda.txt"))
    assert check == "gpu.present" and "was built for NVIDIA's CUDA here" in summary
    check, _, _ = cause_of(diagnosed("rocmdocker-89-nobinaryforgpu-gfx1030.txt"))
    assert check == "amd.gfx_target"


def test_pips_report_of_torchs_replaced_cuda_wheels_is_the_cause() -> None:
    _, summary, first = cause_of(diagnosed("paddle-71867-pip-conflict-torch-vs-paddle-nvidia-libs.txt"))
    assert summary.startswith("Another package's install replaced the NVIDIA CUDA wheels torch 2.3.0 pins")
    assert first == "python -m pip install nvidia-cublas-cu12==12.1.3.1"


def test_a_program_without_a_gpu_beside_a_test_that_prints_true_is_another_python() -> None:
    _, summary, _ = cause_of(diagnosed("tortoise-tts-fast-88-healthy-torch-app-says-no-cuda.txt"))
    assert summary.startswith("The program finds no GPU (line 6 of the paste) while torch")


def test_nvidia_smis_no_devices_found_reads_the_kernel_log_first() -> None:
    _, summary, first = cause_of(diagnosed("qubes-10036-rtx5070-passthrough-no-devices-found.txt"))
    assert summary.startswith("nvidia-smi found no GPU") and first == "sudo dmesg"
