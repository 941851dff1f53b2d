"""'I have CUDA 11.4; PyTorch has no build for it' (triage/asked.py): no build per CUDA release is needed, the
wheel brings its runtime and the driver decides. Real pastes from tests/triage/pastes (MANIFEST.json), and what
must stay quiet: a build's CUDA, a CUDA said without a question, and a paste whose error or report decides."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch_gpu_doctor.triage.asked import NO_BUILD_NEEDED
from torch_gpu_doctor.triage.outcome import Confidence
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste
from torch_gpu_doctor.triage.prose import read_prose

PASTES = Path(__file__).parent / "pastes"


def diagnosed(text: str | bytes, name: str = "paste") -> PasteDiagnosis:
    return diagnose_paste(text if isinstance(text, bytes) else text.encode(), name)


@pytest.mark.parametrize(
    "name",
    [
        "pytorch-75992-cuda-114-no-build-asked.txt",  # "my PC has CUDA 11.4 ... PyTorch just seems compatible with 11.3"
        "pyg-5464-cuda-114-no-install-doc.txt",  # "I am using cuda11.4 which you do not provide install doc on"
        "pytorch-manylinux-binaries-13-kepler-k80-no-wheel.txt",  # "drivers for that is cuda 11.4 ... build one"
    ],
)
def test_a_cuda_without_a_build_of_its_own_gets_the_build_its_driver_runs(name: str) -> None:
    d = diagnosed((PASTES / name).read_bytes(), name)
    cause = d.result.cause
    assert cause is not None, name
    assert cause.finding.check_id == "torch.driver_compat"
    assert cause.finding.summary.startswith(f"{NO_BUILD_NEEDED} 11.4 is needed")
    assert d.result.confidence == Confidence.INFERRED  # the data's answer to words, not a message shown
    fix = cause.finding.remediation
    assert fix is not None and fix.commands
    first = fix.commands[0].display()
    # a CUDA 11 build: 11.4's driver runs 11.x builds through minor-version compatibility, never a CUDA 12 one
    assert "--index-url https://download.pytorch.org/whl/cu11" in first, first
    assert any(c.argv == ("nvidia-smi",) for c in fix.commands)  # settles whether 11.4 is the driver's CUDA


@pytest.mark.parametrize(
    "words",
    [
        "Presently on the official site the PyTorch just seems compatible with CUDA 11.3.",  # a build's CUDA
        "I installed torch 2.1 built with CUDA 12.1",
        "my torch is 2.0.1+cu118",
    ],
)
def test_a_builds_cuda_is_not_the_machines(words: str) -> None:
    assert read_prose([words]).cuda is None


def test_a_cuda_said_without_asking_for_a_build_is_no_answer() -> None:
    prose = read_prose(["I have CUDA 12.1 installed and torch works fine."])
    assert prose.cuda is not None and prose.cuda.value == "12.1"
    assert prose.asks_build is None
    d = diagnosed("I have CUDA 12.1 installed and torch works fine.\n")
    assert d.pasted.empty  # nothing to answer: "found nothing it knows"


def test_an_error_the_paste_shows_decides_over_the_question() -> None:
    """The driver's own CUDA in torch's message (11.0) wins over the CUDA the person names (11.4)."""
    text = (
        "I have CUDA 11.4 installed, which torch version should I install?\n"
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11000). Please update your "
        "GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/"
        "index.aspx Alternatively, go to: https://pytorch.org to install a PyTorch version that has been "
        "compiled with your version of the CUDA driver.\n"
    )
    cause = diagnosed(text).result.cause
    assert cause is not None and not cause.finding.summary.startswith(NO_BUILD_NEEDED)
    assert "CUDA ≤ 11.0" in cause.finding.summary
