"""Blind set 23's classes, each on its real paste (tests/triage/pastes, MANIFEST.json), with what must stay as it
was: a bug of the program's that fails the same on the CPU (tensor sizes that do not fit) is the cause, also after
torch's driver warning that the program went on from."""

from __future__ import annotations

import pytest

from tests.triage.corpus_helpers import cause_of, diagnosed
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste


def said(text: str) -> PasteDiagnosis:
    return diagnose_paste(text.encode(), "paste")


# SafetyRL_HighwayEnv#1: torch's driver warning, the program's own fallback to the CPU, then its shape mismatch
_DRIVER_WARNING = (
    "/home/baykarai/.local/lib/python3.6/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: "
    "The NVIDIA driver on your system is too old (found version 9010). Please update your GPU driver by downloading "
    "and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: "
    "https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver. "
    "(Triggered internally at  /pytorch/c10/cuda/CUDAFunctions.cpp:100.)\n"
    "  return torch._C._cuda_getDeviceCount() > 0\n"
    "[WARNING] Preferred device cuda:best unavailable, switching to default cpu \n"
)


@pytest.mark.parametrize(
    "error",
    [
        "mat1 and mat2 shapes cannot be multiplied (1x5 and 7x64)",
        "RuntimeError: Error(s) in loading state_dict for Net:\n\tsize mismatch for fc.weight: copying a param with "
        "shape torch.Size([10, 512]) from checkpoint, the shape in current model is torch.Size([2, 512]).",
        "RuntimeError: The size of tensor a (77) must match the size of tensor b (154) at non-singleton dimension 1",
    ],
)
def test_a_shape_bug_after_the_driver_warning_is_the_cause(error: str) -> None:
    """The program went on from torch's warning (on the CPU) and stopped on its own shape bug: that bug is the
    cause, with no command to run; the driver stays a problem beside it."""
    d = said(_DRIVER_WARNING + error + "\n")
    _, summary, first = cause_of(d)
    assert summary.startswith("Tensor sizes do not fit together in the model")
    assert first == ""
    others = {v.finding.check_id for v in d.result.verdicts if v is not d.result.cause}
    assert "torch.driver_compat" in others


def test_a_real_shape_mismatch_traceback_is_a_program_bug() -> None:
    """MTPSL#3: the project's own code multiplies tensors that do not fit (the maintainer fixed the code)."""
    check, summary, first = cause_of(diagnosed("mtpsl-3-mat1-mat2-shapes-program-bug.txt"))
    assert summary.startswith("Tensor sizes do not fit together in the model") and first == ""
    assert check == "torch.cuda_init"


def test_a_device_mismatch_after_the_driver_warning_keeps_the_driver_first() -> None:
    """Tensors on two devices after the CPU fallback is the driver's doing (the program meant the GPU): only bugs
    that fail the same on the CPU take the lead from the warning."""
    d = said(
        _DRIVER_WARNING
        + "RuntimeError: Expected all tensors to be on the same device, but found at least two "
        "devices, cuda:0 and cpu!\n"
    )
    _, summary, _ = cause_of(d)
    assert "Tensor sizes" not in summary and "driver" in summary.lower()
