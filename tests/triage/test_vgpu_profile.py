"""CUDA's "operation not supported" beside a vGPU profile the paste names: the profile's series decides
(tests/triage/pastes/comfyui-6843-vgpu-profile-without-cuda.txt, "NVidia A16-8A")."""

from __future__ import annotations

from pathlib import Path

from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste

PASTE = Path(__file__).parent / "pastes" / "comfyui-6843-vgpu-profile-without-cuda.txt"


def diagnosed(text: bytes) -> PasteDiagnosis:
    return diagnose_paste(text, PASTE.name)


def test_an_a_series_profile_is_the_answer_without_asking_its_name_again() -> None:
    d = diagnosed(PASTE.read_bytes())
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "torch.cuda_init"
    assert "vGPU profile A16-8A (line 8)" in cause.finding.summary
    assert "run no CUDA" in cause.finding.summary
    fix = cause.finding.remediation
    assert fix is not None and fix.commands == () and "A16-8Q" in fix.text


def test_a_compute_profile_runs_cuda_so_the_operation_is_the_allocator() -> None:
    """The same paste with a C-series profile (an edit of the real paste, for the other branch)."""
    d = diagnosed(PASTE.read_bytes().replace(b"A16-8A", b"A16-8C"))
    cause = d.result.cause
    assert cause is not None and "runs CUDA" in cause.finding.summary
    fix = cause.finding.remediation
    assert fix is not None and "--disable-cuda-malloc" in fix.text and "A16-8Q" not in fix.text


def test_a_model_name_shaped_like_a_profile_is_not_one() -> None:
    """Model names like "T5-3B" and "Qwen2-7B" are models, not vGPU profiles: the catalogue's general answer stays."""
    d = diagnosed(PASTE.read_bytes().replace(b"NVidia A16-8A", b"model T5-3B, Qwen2-7B"))
    cause = d.result.cause
    assert cause is not None and "vGPU profile" not in cause.finding.summary


def test_a_vmm_call_named_on_a_compute_profile_is_that_api_not_the_allocator() -> None:
    """XGBoost#12217: 'cuMemGetAllocationGranularity' refused with CUDA_ERROR_NOT_SUPPORTED on an A40-48C: the
    program's VMM allocator, so the fix is a plain cudaMalloc one, never --disable-cuda-malloc."""
    real = Path(__file__).parent / "pastes" / "xgboost-12217-vgpu-vmm-not-supported.txt"
    cause = diagnosed(real.read_bytes()).result.cause
    assert cause is not None and "CUDA refused cuMemGetAllocationGranularity" in cause.finding.summary
    fix = cause.finding.remediation
    assert fix is not None and "expandable_segments" in fix.text and "disable-cuda-malloc" not in fix.text
    # ComfyUI's C-series edit names no VMM call: still the asynchronous allocator
    other = diagnosed(PASTE.read_bytes().replace(b"A16-8A", b"A16-8C")).result.cause
    assert other is not None and "cuMem" not in other.finding.summary
