"""A CUDA library that cannot be found is torch's own import failing when the traceback runs through
torch/__init__.py, or the person says it happened importing torch; only then is torch's build the suspect
(blind set 17: two Jetson pastes were told "torch's import is not what failed"). Real pastes."""

from __future__ import annotations

from pathlib import Path

from torch_gpu_doctor.facts.torch import TorchRuntime
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste

HERE = Path(__file__).parent
CUDSS = "pastes/isaac-gr00t-343-jetson-missing-lib.txt"  # "try to import torch, i get ... libcudss.so.0"
L4T_CONTAINER = (
    "pastes/jetson-containers-126-jetson-l4t-container-mismatch.txt"  # frames in torch/__init__.py
)


def diagnosed(name: str, text: str | None = None) -> PasteDiagnosis:
    data = (HERE / name).read_bytes() if text is None else text.encode()
    return diagnose_paste(data, name)


def _import_failed(d: PasteDiagnosis) -> bool:
    runtime = d.facts.torch
    return (
        isinstance(runtime, TorchRuntime) and runtime.outcome == "failed" and runtime.failed_stage == "import"
    )


def test_frames_or_words_put_torch_import_on_the_stack() -> None:
    assert _import_failed(diagnosed(L4T_CONTAINER))
    assert _import_failed(diagnosed(CUDSS))


def test_words_that_say_torch_imports_do_not() -> None:
    text = (HERE / CUDSS).read_text().replace("try to import torch", "import torch works, but run the policy")
    d = diagnosed(CUDSS, text)
    assert not _import_failed(d)
    cause = d.result.cause
    assert cause is not None and "torch's import is not what failed" in cause.finding.summary


def test_torch_for_jetpack_6_without_cudss_gets_nvidias_cudss_package() -> None:
    cause = diagnosed(CUDSS).result.cause
    assert cause is not None and cause.finding.check_id == "platform.jetson"
    assert "libcudss.so.0, which JetPack does not install" in cause.finding.summary
    fix = cause.finding.remediation
    assert fix is not None
    assert fix.commands[0].argv[1].endswith("/ubuntu2204/arm64/cuda-keyring_1.1-1_all.deb")
    assert fix.commands[-1].argv == ("sudo", "apt-get", "-y", "install", "cudss")
    # no line of the answer asks for another torch: the build is NVIDIA's, its library is what is missing
    assert all(
        "--index-url" not in " ".join(c.argv)
        for v in diagnosed(CUDSS).result.verdicts
        if v.finding.remediation
        for c in v.finding.remediation.commands
    )


def test_the_cause_is_not_said_again_under_also_found() -> None:
    """The same missing library read by the library check and as an import failure of torch's is the cause
    again, not another problem: the answer says it once (blind set 17's second review)."""
    import io

    from torch_gpu_doctor.triage.render import render_text

    d = diagnosed(CUDSS)
    problems = [v.finding.check_id for v in d.result.verdicts if v.kind == "problem"]
    assert {"platform.jetson", "env.library_path", "torch.cuda_init"} <= set(problems)
    out = io.StringIO()
    render_text(d, "paste", out)
    text = out.getvalue()
    assert "Also found" not in text and text.count("apt-get -y install cudss") == 1


def test_another_cuda_releases_runtime_is_an_extensions_build() -> None:
    """libcudart.so.10.1 missing beside a CUDA 10.2 torch (mmdetection3d#651, blind set 17): an extension built
    for CUDA 10.1 (mmcv-full there) asked for it; its build for torch's CUDA is the fix, not CUDA 10.1."""
    cause = diagnosed("pastes/mmdetection3d-651-mmcv-cuda-mismatch.txt").result.cause
    assert cause is not None and cause.finding.summary.startswith(
        "libcudart.so.10.1 is CUDA 10.1's runtime, and torch is a CUDA 10.2 build"
    )
    assert cause.finding.remediation is not None and "mim install mmcv-full" in cause.finding.remediation.text
    from torch_gpu_doctor.checks.env import _other_cuda_runtime
    from torch_gpu_doctor.facts.model import Facts

    facts = diagnosed("pastes/mmdetection3d-651-mmcv-cuda-mismatch.txt").facts
    assert isinstance(facts, Facts)
    assert _other_cuda_runtime("libcudart.so.10.2", facts) is None  # torch's own release: not another's
