"""The false positives a review of session 21's rules found, each on a paste written to show it (the rules' own
real pastes are in test_blind28_classes.py and test_blind29_classes.py): a rule must not fire on these."""

from __future__ import annotations

from tests.triage.corpus_helpers import PASTES
from tests.triage.test_blind25_classes import headline, said
from torch_gpu_doctor.model import Command, Finding, Remediation, Status
from torch_gpu_doctor.triage.outcome import Kind, Verdict
from torch_gpu_doctor.triage.where import in_the_image

# Ollama's debug log on a bare-metal Linux host names WSL's folder in its search globs
OLLAMA_GLOBS = (
    "Ubuntu 22.04 server (bare metal)\n"
    'level=DEBUG source=gpu.go:468 msg="gpu library search" globs="[/usr/local/lib/ollama/libnvidia-ml.so* '
    '/usr/lib/wsl/lib/libnvidia-ml.so* /usr/lib/x86_64-linux-gnu/libnvidia-ml.so*]"\n'
    'level=DEBUG source=gpu.go:502 msg="discovered GPU libraries" paths=[/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15]\n'
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.64 GiB "
    "of which 3.06 MiB is free. Including non-PyTorch memory, this process has 23.62 GiB memory in use.\n"
)
# the person installs another CUDA build of torch on purpose: pip's log is no accident
TORCH_ON_PURPOSE = (
    "$ pip install torch --index-url https://download.pytorch.org/whl/cu121\n"
    "  Attempting uninstall: torch\n"
    "    Found existing installation: torch 2.0.0+cu118\n"
    "      Successfully uninstalled torch-2.0.0+cu118\n"
    "Successfully installed torch-2.1.0+cu121\n"
    "RuntimeError: CUDA error: an illegal memory access was encountered\n"
)


def test_a_search_glob_naming_wsls_folder_is_no_wsl_machine() -> None:
    d = said(OLLAMA_GLOBS)
    assert not any(v.finding.check_id == "platform.wsl_linux_driver" for v in d.result.verdicts)
    assert "out of GPU memory" in headline(d)


def test_installing_another_torch_on_purpose_or_asking_is_no_replaced_build() -> None:
    assert "replaced torch" not in headline(said(TORCH_ON_PURPOSE))
    question = said(
        "Should I uninstall torch before I install the new version?\nPyTorch version: 2.0.0+cu118\n"
    )
    assert question.pasted.prose.replaced_torch is None


def test_words_about_gpu_memory_or_a_driver_are_no_machine_without_a_gpu() -> None:
    for words in (
        "It crashed as it has no GPU memory left.\n",
        "The container fails because it doesn't have a GPU driver installed.\n",
    ):
        assert said(words).pasted.prose.no_nvidia is None, words


def test_a_rerun_with_launch_blocking_shown_is_not_asked_for_again_in_the_text_either() -> None:
    d = said(
        "export CUDA_LAUNCH_BLOCKING=1\nRuntimeError: CUDA error: an illegal memory access was encountered\n"
    )
    cause = d.result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert "again with CUDA_LAUNCH_BLOCKING" not in cause.finding.remediation.text


def test_comparing_cpu_and_gpu_is_not_work_on_the_cpu() -> None:
    assert (
        said("My model works on the CPU, but on the GPU the loss becomes NaN.\n").pasted.prose.on_the_cpu
        is None
    )
    assert said("Fresh install running only on CPU radically slow\n").pasted.prose.on_the_cpu == 1


def test_cuda_home_beside_a_cuda_build_shown_is_not_called_a_cpu_build() -> None:
    d = said(
        "PyTorch version: 2.1.0+cu121\nCUDA used to build PyTorch: 12.1\n"
        "$ nvcc --version\nCuda compilation tools, release 12.1, V12.1.105\n"
        "$ sudo pip install flash-attn\n"
        "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n"
    )
    assert "CPU build" not in headline(d)


def test_never_worked_is_no_container_that_worked_before() -> None:
    text = (PASTES / "bluefin-3883-docker-nvml-unknown-error.txt").read_text(encoding="utf-8")
    assert headline(said(text + "\nThis has never worked on this machine.\n")).startswith(
        "A container started just now"
    )


def test_a_cuda_base_image_or_a_file_is_not_the_torch_image_to_replace_with_a_newer_tag() -> None:
    """nvidia/cuda ships no torch, and "modules/attention/flash.py:45" is a file and its line; a pinned torch
    image is the one to move to a newer release."""
    fix = Remediation(
        text="Install torch.", commands=(Command(("python", "-m", "pip", "install", "torch==2.5.1")),)
    )
    verdict = Verdict(
        Finding("torch.arch_compat", Status.FAIL, "x", remediation=fix), "t", Kind.PROBLEM, (), None
    )

    def first(image: str) -> str:
        moved = in_the_image(verdict, 1, built=False, image=image).finding.remediation
        assert moved is not None
        return " ".join(moved.commands[0].argv)

    assert first("nvidia/cuda:12.1.0-runtime-ubuntu22.04").startswith("python -m pip install")
    assert first("modules/attention/flash.py:45").startswith("python -m pip install")
    assert (
        first("rocm/pytorch:rocm5.1.1_ubuntu20.04_py3.7_pytorch_1.10.0") == "docker pull rocm/pytorch:latest"
    )
