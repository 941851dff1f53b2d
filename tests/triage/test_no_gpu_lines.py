"""collect_env's "No CUDA" / "Could not collect" GPU and driver lines say only that nvidia-smi printed nothing.
They mean "no NVIDIA driver answers" only where nothing else in the report contradicts it: not when torch
reached the GPU anyway (a Jetson, which has no nvidia-smi; Is CUDA available: True), not when torch did not
import, and a CPU or XPU build with no NVIDIA GPU named is a machine without one. Built on real reports, or
real reports with lines cut."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch_gpu_doctor.facts.driver import DriverFacts
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.triage.outcome import Kind
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste
from torch_gpu_doctor.unavailable import Reason, Unavailable

HERE = Path(__file__).parent
JETSON_CUDA = (
    "reports/jetson-l4t35-nv22-torch112-pypi-torchaudio-mismatch.txt",
    "reports/vllm-jetson-agx-orin-nv2302-torch20-python2-syntaxerror-first.txt",
)
TORCH_DID_NOT_IMPORT = (
    "pastes/pytorch-133397-winerror126-fbgemm-py312.txt",
    "reports/windows11-torch-na-fbgemm-dll-winerror126.txt",
)
NO_NVIDIA_GPU = (
    "reports/amd-apu-cpu-build.txt",
    "reports/windows-cpu-nightly-no-gpu.txt",
    "reports/windows11-zh-torch271-xpu-cuda-toolkit-present-mismatched-torchaudio.txt",
)
XPU = "reports/windows11-zh-torch271-xpu-cuda-toolkit-present-mismatched-torchaudio.txt"
CPU = "reports/windows-cpu-nightly-no-gpu.txt"
# a real error line about CUDA (chatglm-webui-1): alone it makes a paste "about an NVIDIA GPU"
NOT_COMPILED = "AssertionError: Torch not compiled with CUDA enabled"


def diagnosed(name: str, text: str | None = None) -> PasteDiagnosis:
    data = (HERE / name).read_bytes() if text is None else text.encode()
    return diagnose_paste(data, name)


def without(name: str, *starts: str) -> str:
    lines = (HERE / name).read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.startswith(starts))


def driver(facts: Facts) -> DriverFacts:
    assert not isinstance(facts.driver, Unavailable), facts.driver
    return facts.driver


def verdict_kind(d: PasteDiagnosis, check_id: str) -> str:
    """The check's kind of verdict; a check left out for this machine (a Jetson's desktop-driver checks) is
    not applicable."""
    return next((v.kind for v in d.result.verdicts if v.finding.check_id == check_id), Kind.NOT_APPLICABLE)


def cause_id(d: PasteDiagnosis) -> str | None:
    return d.result.cause.finding.check_id if d.result.cause is not None else None


@pytest.mark.parametrize("name", JETSON_CUDA)
def test_jetson_with_cuda_available_has_an_l4t_driver_not_none(name: str) -> None:
    """Linux-5.10.104-tegra, torch 1.12.0a0+2c916ef.nv22.3, Is CUDA available: True, GPU and driver "Could not
    collect": a Jetson, whose driver comes with L4T and has no nvidia-smi."""
    d = diagnosed(name)
    found = driver(d.facts)
    assert found.is_jetson
    assert isinstance(found.version, Unavailable) and found.version.reason is Reason.NOT_RECORDED
    assert "Jetson" in (found.version.detail or "")
    assert verdict_kind(d, "driver.installed") != Kind.PROBLEM
    assert cause_id(d) != "driver.installed"
    assert verdict_kind(d, "torch.cuda_init") == Kind.FINE


def test_jetson_is_known_by_its_torch_on_aarch64_without_the_platform_line() -> None:
    d = diagnosed(JETSON_CUDA[0], without(JETSON_CUDA[0], "Python platform:"))  # "OS: ... (aarch64)" stays
    assert driver(d.facts).is_jetson


def test_jetson_whose_nvidia_smi_lists_the_gpu_is_marked_jetson() -> None:
    """JetPack 6 has nvidia-smi: "GPU 0: Orin (nvgpu)", "Nvidia driver version: N/A"."""
    d = diagnosed("reports/jetson-orin-l4t36-container-cuda-false-driver-na-midreport.txt")
    assert driver(d.facts).is_jetson
    assert verdict_kind(d, "driver.installed") != Kind.PROBLEM


def test_cuda_available_with_no_nvidia_smi_answer_is_a_driver_that_answers() -> None:
    """The same Jetson report without what shows it is a Jetson: torch still reached a driver."""
    name = JETSON_CUDA[0]
    d = diagnosed(name, without(name, "Python platform:", "OS:", "PyTorch version:", "[pip3] torch=="))
    found = driver(d.facts)
    assert not found.is_jetson
    assert isinstance(found.version, Unavailable) and found.version.reason is Reason.NOT_RECORDED
    assert "Is CUDA available: True" in (found.version.detail or "")
    assert verdict_kind(d, "driver.installed") != Kind.PROBLEM


@pytest.mark.parametrize("name", TORCH_DID_NOT_IMPORT)
def test_torch_that_did_not_import_still_shows_what_nvidia_smi_answered(name: str) -> None:
    """collect_env asks nvidia-smi for the GPUs and the driver without torch: its 'Could not collect' is
    nvidia-smi's silence there too. Nothing shows an NVIDIA GPU, so that is no driver problem; the import is."""
    d = diagnosed(name)
    version = driver(d.facts).version
    assert isinstance(version, Unavailable) and version.reason is Reason.NOT_FOUND
    assert "nvidia-smi listed nothing" in (version.detail or "")
    assert verdict_kind(d, "driver.installed") != Kind.PROBLEM
    # torch's N/A, or the import error the paste shows beside it (a DLL that does not load says why)
    assert cause_id(d) in ("torch.installed", "env.library_path")


@pytest.mark.parametrize("name", NO_NVIDIA_GPU)
def test_cpu_or_xpu_build_without_an_nvidia_gpu_named_has_no_nvidia_gpu(name: str) -> None:
    d = diagnosed(name)
    assert d.facts.gpus == ()
    assert verdict_kind(d, "driver.installed") == Kind.NOT_APPLICABLE  # "No NVIDIA GPU here ..."
    assert cause_id(d) not in ("driver.installed", "torch.cpu_build")


def test_xpu_build_is_intels_not_a_cpu_build_for_an_nvidia_gpu() -> None:
    """A CUDA error message in a paste makes a CPU build's missing GPU an NVIDIA one; an XPU build's, never.
    Both reports cut before their GPU lines, with the same error line after them."""
    cut = ("GPU models and configuration:", "Nvidia driver version:")
    xpu = diagnosed(XPU, f"{without(XPU, *cut)}\n{NOT_COMPILED}\n")
    torch = xpu.facts.torch_packages
    assert not isinstance(torch, Unavailable) and (torch.version, torch.cuda, torch.hip) == (
        "2.7.1+xpu",
        None,
        None,
    )
    assert xpu.facts.gpus == ()
    cpu = diagnosed(CPU, f"{without(CPU, *cut)}\n{NOT_COMPILED}\n")
    assert len(cpu.facts.gpus) == 1 and cpu.facts.gpus[0].vendor == "nvidia"


def test_a_cuda_build_that_finds_no_driver_still_says_so() -> None:
    """The rules above are narrow: a CUDA build, CUDA not available, nvidia-smi silent is no driver answering."""
    d = diagnosed("reports/ubuntu2004-conda-cu113-driver-could-not-collect.txt")
    found = driver(d.facts)
    assert isinstance(found.version, Unavailable) and found.version.reason is Reason.NOT_FOUND
    assert cause_id(d) == "driver.installed"
