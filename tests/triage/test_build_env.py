"""An extension project's environment dump that shows an nvcc torch.utils.cpp_extension would refuse
(triage/build_env.py). Real dumps: open-mmlab/mmdetection#4471 (nvcc 10.0, torch 1.3.1 built for CUDA 9.2),
#4659 (both 10.2), and torch's own collect_env, whose nvcc is only what is installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch_gpu_doctor.triage.build_env import toolkit_mismatch
from torch_gpu_doctor.triage.parse import parse_report
from torch_gpu_doctor.triage.pipeline import diagnose_paste

HERE = Path(__file__).parent


def test_an_mmdet_dump_with_another_cuda_than_torchs_is_the_build_refused() -> None:
    name = "pastes/mmdetection-4471-collectenv-mmdet-cuda92-torch-nvcc100.txt"
    d = diagnose_paste((HERE / name).read_bytes(), name)
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "torch.companions"
    assert "CUDA 10.0's nvcc" in cause.finding.summary and "CUDA 9.2" in cause.finding.summary
    assert cause.lines == (7,)  # "NVCC: Cuda compilation tools, release 10.0, V10.0.130"


@pytest.mark.parametrize(
    "name",
    [
        "pastes/mmdetection-4659-collectenv-mmdet-slurm-v100s-no-cuda-compiler.txt",  # nvcc 10.2, torch 10.2
        "reports/c01_pytorch_collect_env_t4_driver410_conda_cu101.txt",  # torch's own dump: nvcc 10.0, torch 10.1
        "reports/aws-g4dn-torch1131-cu117-shell-prompt-cut-at-gpu.txt",  # torch's own dump: nvcc 11.5, torch 11.7
    ],
)
def test_no_mismatch_where_they_agree_or_nothing_is_built(name: str) -> None:
    text = (HERE / name).read_text(encoding="utf-8")
    assert toolkit_mismatch(parse_report(text), text.split("\n")) is None


@pytest.mark.parametrize(
    ("nvcc", "torch_cuda", "refused"),
    [("11.8", "11.7", False), ("12.4", "11.8", True), ("10.1", "10.2", False), ("10.0", "9.2", True)],
)
def test_which_versions_the_build_refuses(nvcc: str, torch_cuda: str, refused: bool) -> None:
    """Another major is refused by every torch; another minor only by old ones (newer warn), so it is not
    said to be refused."""
    text = (
        "sys.platform: linux\nCUDA available: True\nCUDA_HOME: /usr/local/cuda\n"
        f"NVCC: Cuda compilation tools, release {nvcc}, V{nvcc}.1\nPyTorch: 1.13.1\n"
        f"PyTorch compiling details: PyTorch built with:\n  - CUDA Runtime {torch_cuda}\n"
    )
    found = toolkit_mismatch(parse_report(text), text.split("\n"))
    assert (found is not None) == refused


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("pastes/mmdetection-4659-collectenv-mmdet-slurm-v100s-no-cuda-compiler.txt", "mmcv.ops"),
        ("pastes/vllm-3785-collectenv-vllm-p100-no-kernel-image.txt", None),  # not an extension project's
    ],
)
def test_an_extension_dump_with_nothing_wrong_asks_how_its_operators_were_built(
    name: str, module: str | None
) -> None:
    """mmdetection#4659: 'why the compiler is not available?' with a dump that shows nothing wrong (the row
    was only in the issue's title): the next question is mmcv's own build."""
    import io  # only here: the other tests print nothing

    from torch_gpu_doctor.triage.render import render_text

    d = diagnose_paste((HERE / name).read_bytes(), name)
    out = io.StringIO()
    render_text(d, name, out)
    if module is None:
        assert "compiled operators were built" not in out.getvalue()
    else:
        assert d.result.cause is None
        assert f"from {module} import get_compiling_cuda_version" in out.getvalue()
