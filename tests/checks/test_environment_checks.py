from __future__ import annotations

from dataclasses import replace

import pytest

from tests.factories import facts, gpu, python_facts, torch_packages
from torch_gpu_doctor.checks.compat_data import data_age
from torch_gpu_doctor.checks.env import cuda_visible_devices, visible_devices
from torch_gpu_doctor.checks.python_env import env_kind
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.unavailable import Reason, Unavailable

UUIDS = ["GPU-aaaa-1", "GPU-bbbb-2", "GPU-cccc-3"]


@pytest.mark.parametrize(
    ("value", "shown", "problem"),
    [
        ("0,1,2", [0, 1, 2], None),
        ("2,0", [2, 0], None),
        ("1,7,0", [1], "'7' is not a GPU index"),  # CUDA stops at the first invalid entry
        ("", [], "'' is neither an index nor a GPU UUID"),
        ("-1", [], "'-1' is not a GPU index"),
        ("GPU-bbbb", [1], None),  # a unique UUID prefix is accepted
        ("GPU-", [], "matches 3 GPUs"),
        ("0,0", [0], "listed twice"),
        ("gpu0", [], "neither an index nor a GPU UUID"),
    ],
)
def test_visible_devices_follows_cuda(value: str, shown: list[int], problem: str | None) -> None:
    got, why = visible_devices(value, 3, UUIDS)
    assert got == shown
    assert (why is None) if problem is None else (why is not None and problem in why)


def test_empty_value_hides_every_gpu() -> None:
    f = cuda_visible_devices(replace(facts(), env={"CUDA_VISIBLE_DEVICES": ""}))
    assert f.status is Status.FAIL
    assert "hides every GPU" in f.summary


def test_partial_list_warns_and_unset_passes() -> None:
    two = (gpu(nvml_index=0), gpu(bdf="0000:02:00.0", nvml_index=1))
    assert (
        cuda_visible_devices(replace(facts(gpus=two), env={"CUDA_VISIBLE_DEVICES": "1,5"})).status
        is Status.WARN
    )
    assert cuda_visible_devices(facts()).status is Status.PASS


def test_externally_managed_system_python_warns() -> None:
    system = replace(python_facts(), in_virtualenv=False, prefix="/usr")
    managed = replace(torch_packages(), externally_managed=True)
    assert env_kind(facts(python=system, torch_packages=managed)).status is Status.WARN
    assert env_kind(facts(python=python_facts(), torch_packages=managed)).status is Status.PASS


def test_torch_newer_than_the_data_warns() -> None:
    assert data_age(facts(torch_packages=torch_packages("2.99.0+cu130", "13.0"))).status is Status.WARN
    assert data_age(facts(torch_packages=torch_packages("2.13.0+cu130", "13.0"))).status is Status.PASS


def test_a_python_that_did_not_describe_itself_is_not_called_a_system_python() -> None:
    unrecorded = Unavailable(Reason.NOT_RECORDED, "probe python_env")
    f = env_kind(facts(python=replace(python_facts(), prefix=unrecorded)))
    assert f.status is Status.SKIP and "did not describe itself" in f.summary
    failed = env_kind(facts(python=replace(python_facts(), prefix=Unavailable(Reason.TIMED_OUT, "60 s"))))
    assert failed.status is Status.UNKNOWN
