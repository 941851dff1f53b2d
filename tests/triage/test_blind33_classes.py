"""Blind set 33's classes, each on its real paste (tests/triage/pastes, MANIFEST.json), with what must stay as it
was beside it: torch.load's GPU checkpoint where CUDA is unavailable, whose own advice for "a CPU-only machine"
is torch's words and never the person's wish to run on the CPU."""

from __future__ import annotations

from tests.triage.corpus_helpers import cause_of, diagnosed
from torch_gpu_doctor.checks.support.signatures import match_line
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste


def said(text: str) -> PasteDiagnosis:
    return diagnose_paste(text.encode(), "said.txt")


def _ids(line: str) -> set[str]:
    return {h.signature.id for h in match_line(line, 1)}


def test_torch_loads_gpu_checkpoint_without_cuda_is_cuda_unavailable_not_a_cpu_wish() -> None:
    """TTS-WebUI#192: 'Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is
    False. If you are running on a CPU-only machine, ...' was answered as a person asking to run on the CPU."""
    _check, summary, first = cause_of(diagnosed("TTS-WebUI-192-deserialize-cuda-unavailable.txt"))
    assert summary.startswith("torch.cuda.is_available() is False") and "the paste asks" not in summary
    assert first is not None and first.startswith("python -c 'import torch; print(torch.__version__")
    assert "no_visible_gpu_deserialize_on_cuda" in _ids(
        "RuntimeError: Attempting to deserialize object on CUDA device 2 but torch.cuda.is_available() is False."
    )
    # the person's own CPU-only machine is still the CPU wish
    wish = said("I'm on a CPU-only machine.\nAssertionError: Torch not compiled with CUDA enabled\n")
    assert "the paste asks to run it on the CPU" in cause_of(wish)[1]


def test_nvml_failures_said_by_other_programs_are_read() -> None:
    """WhisperJAV#200 ('NVML detection failed: Driver Not Loaded', an installer's words) and gpustat#134
    (pynvml's 'libnvidia-ml.so.1: cannot open shared object file') read as 'no error message' and 'a cut
    traceback'."""
    check, summary, _first = cause_of(diagnosed("WhisperJAV-200-nvml-driver-not-loaded-optimus.txt"))
    assert check == "driver.installed" and "No NVIDIA driver answers" in summary
    check, summary, first = cause_of(diagnosed("gpustat-134-libnvidia-ml-not-found-linuxbrew.txt"))
    assert "libnvidia-ml.so.1" in summary and first == "nvidia-smi"
    assert "nvml_driver_not_loaded_said" in _ids("pynvml.NVMLError_DriverNotLoaded: NVML Driver Not Loaded")
    assert "nvml_driver_not_loaded_said" not in _ids("Driver Not Loaded")  # NVML not named: not its answer
    # the container toolkit's own words keep their signature
    toolkit = "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file"
    assert "nvml_library_not_found" not in _ids(toolkit)


def test_torch_and_cuda_said_in_words_are_read() -> None:
    """VoxCPM#60: "every time torch shows 2.8.0+cpu and CUDA unavailable" was 'no problem found', exit 0."""
    d = diagnosed("VoxCPM-60-torch-cpu-reinstalled-by-deps.txt")
    _check, summary, first = cause_of(d)
    assert d.result.exit_problem() and summary.startswith("torch 2.8.0+cpu is a CPU-only build")
    assert first is not None and "torch==2.8.0+cu" in first
    # a verb reads a version only when it is one: never a memory figure
    assert said("torch reports 2.5 GB allocated, and CUDA unavailable\n").pasted.prose.torch is None
    assert said("Still torch shows 2.8.0+cpu\n").pasted.prose.torch is not None
