"""A conda environment the paste shows: the fix names its interpreter, and conda's own torch (not a pip wheel
in a conda env) is changed through conda. Built on real pastes of the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch_gpu_doctor.triage.decode import decode_paste
from torch_gpu_doctor.triage.paste import read_paste
from torch_gpu_doctor.triage.pipeline import diagnose_paste
from torch_gpu_doctor.triage.tool_output import parse_conda_env

HERE = Path(__file__).resolve().parent


def _cause_commands(name: str) -> list[tuple[str, ...]]:
    d = diagnose_paste((HERE / name).read_bytes(), name)
    cause = d.result.cause
    assert cause is not None and cause.finding.remediation is not None
    return [c.argv for c in cause.finding.remediation.commands]


@pytest.mark.parametrize(
    ("name", "prefix", "owns"),
    [
        # a traceback through torch in a named env, with conda's `_pytorch_select cpu_0` listed
        (
            "pastes/lightning-899-requested-gpus-but-machine-has-none.txt",
            "/home/bruce/anaconda3/envs/ln2",
            True,
        ),
        # Windows: the env under AppData, no list
        (
            "pastes/e08_notcompiled_conda_windows.txt",
            "C:\\Users\\user\\AppData\\Local\\anaconda3\\envs\\edm",
            None,
        ),
        # a pip wheel (+cu126) in a conda env, seen only in torch's warning path
        ("reports/rtx5090d-cu126-sm120.txt", "/home/mm/anaconda3/envs/py312", None),
        # `conda list` with pytorch's own CPU build and no path: conda owns torch, the folder is not shown
        ("pastes/bioimageio-307-conda-pytorch-cpu.txt", "", True),
    ],
)
def test_the_environment_and_torchs_owner(name: str, prefix: str, owns: bool | None) -> None:
    pasted = read_paste(decode_paste((HERE / name).read_bytes(), name))
    assert pasted.conda is not None
    assert (pasted.conda.prefix, pasted.conda.owns_torch) == (prefix, owns)


def test_a_path_that_only_ends_in_conda_is_no_environment() -> None:
    assert parse_conda_env(["see /home/x/myconda/lib/python3.9/site-packages/torch/a.py"], ()) is None
    assert parse_conda_env(["x" * 5000 + " /opt/conda/lib/python3.10/site-packages/torch/x.py"], ()) is None


def test_condas_own_torch_is_changed_through_conda() -> None:
    argv = _cause_commands("pastes/lightning-899-requested-gpus-but-machine-has-none.txt")
    env = "/home/bruce/anaconda3/envs/ln2"
    assert argv[1] == ("conda", "install", "--prefix", env, "--channel", "conda-forge", "pytorch-gpu")
    assert argv[2][0] == f"{env}/bin/python" and argv[2][1:4] == ("-m", "pip", "install")


def test_a_conda_list_without_a_path_acts_on_the_activated_env() -> None:
    argv = _cause_commands("pastes/bioimageio-307-conda-pytorch-cpu.txt")
    assert argv[:2] == [
        ("conda", "remove", "cpuonly"),
        ("conda", "install", "--channel", "conda-forge", "pytorch-gpu"),
    ]


@pytest.mark.parametrize(
    ("name", "python"),
    [
        (
            "pastes/e08_notcompiled_conda_windows.txt",
            "C:\\Users\\user\\AppData\\Local\\anaconda3\\envs\\edm\\python.exe",
        ),
        ("reports/rtx5090d-cu126-sm120.txt", "/home/mm/anaconda3/envs/py312/bin/python"),
    ],
)
def test_a_pip_or_unknown_torch_goes_through_the_envs_own_pip(name: str, python: str) -> None:
    argv = _cause_commands(name)
    assert argv[0][:4] == (python, "-m", "pip", "install")
    assert not any(a[0] == "conda" for a in argv)


def test_condas_own_old_torch_gets_pytorch_orgs_conda_command_for_its_cuda_build() -> None:
    """espnet/espnet#2626: collect_env lists `[pip3] torch==1.4.0` (pip sees conda's package) beside `[conda]
    pytorch 1.4.0 py3.8_cpu_0 [cpuonly]`: conda owns it, and the 1.4.0 CUDA build comes through conda."""
    argv = _cause_commands("pastes/espnet-2626-cpu-wheel.txt")
    assert argv[:2] == [
        ("conda", "remove", "cpuonly"),
        ("conda", "install", "pytorch==1.4.0", "torchvision==0.5.0", "cudatoolkit=10.1", "-c", "pytorch"),
    ]
