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
