from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from tests.factories import facts, gpu, python_facts, torch_packages
from torch_gpu_doctor.checks.env import library_path
from torch_gpu_doctor.checks.torch_stack import (
    _cudnn_text,
    torch_companions,
    torch_cudnn,
    torch_nvidia_wheels,
)
from torch_gpu_doctor.facts.torch import (
    CompanionPackage,
    Distribution,
    TorchPackages,
    TorchRuntime,
    parse_packages,
    parse_runtime,
)
from torch_gpu_doctor.host.base import CommandResult, CommandStatus
from torch_gpu_doctor.model import Status


def _with(**fields: Any) -> TorchPackages:
    return replace(torch_packages("2.5.1+cu124", "12.4"), **fields)


def test_companions_from_the_release_pass_and_others_fail() -> None:
    # compat data: torch 2.5.1 goes with torchvision 0.20.1 and torchaudio 2.5.1
    good = (
        CompanionPackage("torchaudio", (), "2.5.1+cu124", "12.4"),
        CompanionPackage("torchvision", (), "0.20.1+cu124", "12.4"),
    )
    assert torch_companions(facts(torch_packages=_with(companions=good))).status is Status.PASS
    old = (CompanionPackage("torchvision", (), "0.15.2+cu118", "11.8"),)
    f = torch_companions(facts(python=python_facts(), torch_packages=_with(companions=old)))
    assert f.status is Status.FAIL
    assert "torch 2.5.1 goes with 0.20.1" in f.summary
    assert f.remediation is not None and "torchvision==0.20.1" in f.remediation.commands[0].display()


def test_companion_built_for_another_cuda_major_fails() -> None:
    """torchvision/extension.py raises "compiled with different CUDA major versions" at import."""
    other = (CompanionPackage("torchvision", (), "0.20.1+cu118", "11.8"),)
    f = torch_companions(facts(python=python_facts(), torch_packages=_with(companions=other)))
    assert f.status is Status.FAIL
    assert "built for CUDA 11.8, torch for CUDA 12.4" in f.summary
    assert f.remediation is not None and "torchvision==0.20.1" in f.remediation.commands[0].display()


def test_a_companion_for_another_gpu_platform_fails_even_for_a_release_the_data_lacks() -> None:
    """`torchvision==0.11.3+rocm4.2` beside `torch==1.10.2+cu113` (microsoft/WSL#8102): the tags say it."""
    rocm = (CompanionPackage("torchvision", (), "0.11.3+rocm4.2", None),)
    f = torch_companions(
        facts(torch_packages=replace(torch_packages("1.10.2+cu113", "11.3"), companions=rocm))
    )
    assert f.status is Status.FAIL
    assert "torchvision 0.11.3+rocm4.2 is built for ROCm, torch 1.10.2+cu113 for CUDA" in f.summary
    cuda = (CompanionPackage("torchvision", (), "0.20.1+cu124", "12.4"),)
    hip = replace(torch_packages("2.5.1+rocm6.2", None), hip="6.2", companions=cuda)
    assert (
        "built for CUDA, torch 2.5.1+rocm6.2 for ROCm" in torch_companions(facts(torch_packages=hip)).summary
    )
    cpu = (CompanionPackage("torchvision", (), "0.20.1+cpu", None),)  # a CPU companion is judged apart (WARN)
    assert torch_companions(facts(torch_packages=_with(companions=cpu))).status is Status.WARN


def test_companion_built_for_another_cuda_minor_warns() -> None:
    """Current torchvision compares the CUDA major only; older releases refused another minor too."""
    other = (CompanionPackage("torchvision", (), "0.20.1+cu121", "12.1"),)
    f = torch_companions(facts(torch_packages=_with(companions=other)))
    assert f.status is Status.WARN
    assert f.summary.startswith("torchvision 0.20.1+cu121 is built for CUDA 12.1, torch for CUDA 12.4")


def test_a_cpu_torchvision_beside_a_cuda_torch_warns_about_its_gpu_operators() -> None:
    """`+cpu` says it; so does an untagged version on Windows, where PyPI's default torchvision is the CPU
    build: it imports, and nms fails on CUDA tensors."""
    tagged = (CompanionPackage("torchvision", (), "0.20.1+cpu", None),)
    f = torch_companions(facts(torch_packages=_with(companions=tagged)))
    assert f.status is Status.WARN
    assert f.summary.startswith("torchvision 0.20.1+cpu is a CPU build, beside torch 2.5.1+cu124")
    assert "nms" in f.summary
    windows = replace(python_facts(), system="Windows", machine="AMD64")
    untagged = (CompanionPackage("torchvision", (), "0.20.1", None),)
    f = torch_companions(facts(python=windows, torch_packages=_with(companions=untagged)))
    assert f.status is Status.WARN
    assert f.summary.startswith(
        "torchvision 0.20.1 is a CPU build (no local tag: PyPI's default build for Windows)"
    )


def test_an_untagged_torchvision_on_linux_is_pypis_cuda_build_of_its_release() -> None:
    """torch 2.5's PyPI default on Linux x86_64 is cu124 (compat data): beside +cu124 it matches, beside +cu118
    it is another CUDA major."""
    untagged = (CompanionPackage("torchvision", (), "0.20.1", None),)
    same = torch_companions(facts(python=python_facts(), torch_packages=_with(companions=untagged)))
    assert same.status is Status.PASS, same.summary
    cu118 = replace(torch_packages("2.5.1+cu118", "11.8"), companions=untagged)
    f = torch_companions(facts(python=python_facts(), torch_packages=cu118))
    assert f.status is Status.FAIL
    assert (
        "torchvision 0.20.1 is built for CUDA 12.4 (no local tag: PyPI's default build for Linux x86_64), "
        "torch for CUDA 11.8" in f.summary
    )


def test_a_companion_whose_build_is_not_said_is_not_judged() -> None:
    """A source build's tag (`+git…`) and a release the compat data lacks say nothing about the CUDA."""
    for version in ("0.20.1+git5a3c0f2", "0.99.0"):
        comps = (CompanionPackage("torchvision", (), version, None),)
        f = torch_companions(facts(python=python_facts(), torch_packages=_with(companions=comps)))
        assert "CPU build" not in f.summary and "built for CUDA" not in f.summary, (version, f.summary)


def test_the_companions_cuda_comes_from_the_local_tag_of_a_real_version_py() -> None:
    """What the torch_packages probe read on a real torch 2.11.0+cu130 machine (an H200, 2026-11-26): the
    companions' version.py holds `__version__` and `git_version` only, no `cuda`. That is a CUDA 13.0 build,
    not a CPU build."""
    probe = {
        "torch_paths": ["/opt/torch/.venv/lib/python3.12/site-packages/torch"],
        "torch_version_py": {"__version__": "2.11.0+cu130", "debug": False, "cuda": "13.0", "hip": None},
        "companions": {
            "torchvision": {
                "paths": ["/opt/torch/.venv/lib/python3.12/site-packages/torchvision"],
                "version_py": {
                    "__version__": "0.26.0+cu130",
                    "git_version": "336d36e8db990a905498c73933e35231876e28bc",
                },
            },
            "torchaudio": {
                "paths": ["/opt/torch/.venv/lib/python3.12/site-packages/torchaudio"],
                "version_py": {
                    "__version__": "2.11.0+cu130",
                    "git_version": "34c52a67e8941bbd8e6adaca0eb0b9eabec11d78",
                },
            },
        },
    }
    packages = parse_packages(json.dumps(probe) + "\n")
    assert isinstance(packages, TorchPackages)
    assert [(c.name, c.cuda) for c in packages.companions] == [
        ("torchaudio", "13.0"),
        ("torchvision", "13.0"),
    ]
    f = torch_companions(facts(python=python_facts(), torch_packages=packages))
    assert f.status is Status.PASS, f.summary
    assert f.summary == "torchaudio 2.11.0+cu130, torchvision 0.26.0+cu130 match torch 2.11.0+cu130."


def test_cudnn_version_encodings() -> None:
    assert _cudnn_text(90100) == "9.1.0"
    assert _cudnn_text(8902) == "8.9.2"


def _runtime(cudnn: int | None, libs: list[dict[str, str]] | None = None) -> TorchRuntime:
    result = {
        "version": "2.5.1+cu124",
        "cuda": "12.4",
        "cuda_available": True,
        "cudnn_available": cudnn is not None,
        "cudnn_version": cudnn,
        "mapped_libraries": libs or [],
    }
    return parse_runtime(
        CommandResult(("python",), CommandStatus.OK, 0, json.dumps({"result": result}) + "\n")
    )


def test_cudnn_missing_fails_and_present_passes() -> None:
    base = facts(torch_packages=_with())
    assert torch_cudnn(replace(base, torch=_runtime(None))).status is Status.FAIL
    assert (
        torch_cudnn(replace(base, torch=_runtime(90100))).status is Status.PASS
    )  # 2.5 cu124 ships cuDNN 9.1.0.70


def test_nvidia_wheels_missing_wrong_and_mixed() -> None:
    torch_dist = Distribution(
        "torch", "2.5.1+cu124", "/site", ("nvidia-cudnn-cu12==9.1.0.70; platform_system == 'Linux'",)
    )
    ok = (torch_dist, Distribution("nvidia-cudnn-cu12", "9.1.0.70", "/site", ()))
    assert torch_nvidia_wheels(facts(torch_packages=_with(distributions=ok))).status is Status.PASS
    missing = torch_nvidia_wheels(facts(torch_packages=_with(distributions=(torch_dist,))))
    assert missing.status is Status.FAIL and "nvidia-cudnn-cu12 is missing" in missing.summary
    mixed = (*ok, Distribution("nvidia-cublas-cu11", "11.11.3.6", "/site", ()))
    f = torch_nvidia_wheels(facts(torch_packages=_with(distributions=mixed)))
    assert f.status is Status.FAIL and "CUDA families mixed: cu11, cu12" in f.summary


def test_library_from_a_system_toolkit_warns() -> None:
    own = {
        "name": "libcublas",
        "path": "/v/lib/python3.11/site-packages/nvidia/cublas/lib/libcublas.so.12",
        "realpath": "/v/lib/python3.11/site-packages/nvidia/cublas/lib/libcublas.so.12",
    }
    driver = {
        "name": "libcuda",
        "path": "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
        "realpath": "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15",
    }
    foreign = {
        "name": "libcudnn",
        "path": "/usr/local/cuda/lib64/libcudnn.so.8",
        "realpath": "/usr/local/cuda/lib64/libcudnn.so.8.9.7",
    }
    base = replace(facts(), env={"LD_LIBRARY_PATH": "/usr/local/cuda/lib64"})
    assert library_path(replace(base, torch=_runtime(90100, [own, driver]))).status is Status.PASS
    f = library_path(replace(base, torch=_runtime(90100, [own, driver, foreign])))
    assert f.status is Status.WARN
    assert "libcudnn from /usr/local/cuda/lib64/libcudnn.so.8.9.7" in f.summary
    assert "LD_LIBRARY_PATH='/usr/local/cuda/lib64'" in f.details


def test_cublas_before_12_3_on_an_h20_is_its_known_sigfpe() -> None:
    """compat/library_bugs.json: torch's cu121 builds bring cuBLAS 12.1, which dies of SIGFPE on the H20
    (vllm-project/vllm#4392); decided from the build where no pip list is known, from the list where it is."""
    h20 = gpu(name="NVIDIA H20", cc="9.0")
    cu121 = torch_packages("2.4.0+cu121", "12.1")
    finding = torch_nvidia_wheels(facts(gpus=(h20,), torch_packages=cu121))
    assert finding.status is Status.WARN and "has a known bug on the NVIDIA H20" in finding.summary
    assert finding.remediation is not None
    assert finding.remediation.commands[0].argv[-1] == "nvidia-cublas-cu12==12.4.5.8"
    listed = replace(cu121, distributions=(Distribution("nvidia-cublas-cu12", "12.1.3.1", None, ()),))
    assert torch_nvidia_wheels(facts(gpus=(h20,), torch_packages=listed)).status is Status.WARN
    fixed = replace(cu121, distributions=(Distribution("nvidia-cublas-cu12", "12.4.5.8", None, ()),))
    assert torch_nvidia_wheels(facts(gpus=(h20,), torch_packages=fixed)).status is Status.PASS
    h200 = gpu(name="NVIDIA H200", cc="9.0")
    assert torch_nvidia_wheels(facts(gpus=(h200,), torch_packages=cu121)).status is Status.PASS
    cu124 = torch_packages("2.5.1+cu124", "12.4")
    assert torch_nvidia_wheels(facts(gpus=(h20,), torch_packages=cu124)).status is Status.PASS
