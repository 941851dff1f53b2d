"""Error 35 ("CUDA driver version is insufficient for CUDA runtime version") raised by a library that is not
torch (blind set 11: CTranslate2 behind faster-whisper, NVIDIA DALI in an NGC image) was told "torch says so"
and answered with another torch. Its CUDA runtime is the library's build: the driver is the fix, and the first
line names the library."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch_gpu_doctor.triage.pipeline import diagnose_paste

PASTES = Path(__file__).parent / "pastes"


@pytest.mark.parametrize(
    ("name", "owner"),
    [
        ("gptsovits-1048-ctranslate2-cuda12-driver515.txt", "CTranslate2"),  # its own message format
        ("dle-251-dali-error35-ngc-traceback.txt", "nvidia.dali"),  # the last traceback frame's package
    ],
)
def test_the_library_whose_runtime_raised_it_is_named_and_the_driver_is_the_fix(
    name: str, owner: str
) -> None:
    d = diagnose_paste((PASTES / name).read_bytes(), name)
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "torch.driver_compat"
    assert cause.finding.summary.startswith(f"The NVIDIA driver is older than the CUDA runtime of {owner}")
    assert "torch says so" not in cause.finding.summary
    fix = cause.finding.remediation
    assert fix is not None and "Install the NVIDIA driver" in fix.text
    assert not any("torch==" in part for c in fix.commands for part in c.argv)  # no other torch


def test_torchs_own_error_35_stays_torchs() -> None:
    text = (
        'Traceback (most recent call last):\n  File "/srv/.venv/lib/python3.10/site-packages/torch/cuda/__init__.py"'
        ", line 302, in _lazy_init\n    torch._C._cuda_init()\nRuntimeError: CUDA driver version is insufficient "
        "for CUDA runtime version\n"
    )
    cause = diagnose_paste(text.encode(), "t.txt").result.cause
    assert cause is not None and "CUDA runtime of" not in cause.finding.summary


def test_a_library_that_calls_cuda_on_a_tensor_is_not_the_owner() -> None:
    """basicsr's `net.cuda()` is the last frame, but the CUDA runtime that raised is torch's (the review's case)."""
    text = (
        'Traceback (most recent call last):\n  File "train.py", line 10, in <module>\n    model = init_model()\n'
        '  File "/usr/local/lib/python3.8/dist-packages/basicsr/models/base_model.py", line 20, in init_model\n'
        "    net = net.cuda()\nRuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n"
    )
    cause = diagnose_paste(text.encode(), "t.txt").result.cause
    assert cause is not None and "CUDA runtime of" not in cause.finding.summary
