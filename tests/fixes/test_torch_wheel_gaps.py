"""fix_for_torch when no wheel can be chosen: an unknown or unsupported platform or Python is named as such,
and the driver is blamed only when no wheel for these GPUs runs on it whatever the platform."""

from __future__ import annotations

from dataclasses import replace

from tests.factories import driver, facts, python_facts, torch_packages
from torch_gpu_doctor.fixes.torch_wheel import fix_for_torch
from torch_gpu_doctor.model import Target
from torch_gpu_doctor.unavailable import Reason, Unavailable


def test_unknown_machine_names_the_fact_not_the_driver() -> None:
    py = replace(python_facts(), machine=Unavailable(Reason.PERMISSION_DENIED, "platform.machine() raised"))
    fix = fix_for_torch(facts(python=py))
    assert fix.text == (
        "gpu-doctor cannot choose a torch wheel: the machine architecture of /venv/bin/python is unknown "
        "(permission denied: platform.machine() raised)."
    )
    assert fix.target is Target.PYTHON_ENV and not fix.commands and not fix.requires_root


def test_unknown_python_names_it() -> None:
    fix = fix_for_torch(facts(python=Unavailable(Reason.TIMED_OUT, "python -c ... after 10 s")))
    assert fix.text.startswith("gpu-doctor cannot choose a torch wheel: the diagnosed Python is unknown")
    assert "timed out" in fix.text and "driver" not in fix.text


def test_unsupported_platform_is_named() -> None:
    fix = fix_for_torch(facts(python=replace(python_facts(machine="ppc64le"))))
    assert "runs on Linux ppc64le, for which PyTorch publishes no CUDA wheels" in fix.text
    assert "driver" not in fix.text and not fix.commands


def test_an_old_python_gets_the_newest_old_torch_built_for_it() -> None:
    """Python 3.6, which no release from 1.13 on has wheels for: torch 1.10 (the last with 3.6 wheels) with
    kernels for the GPU, from pytorch.org's own command for it (compat/cuda_matrix.json legacy_torch_releases)."""
    fix = fix_for_torch(facts(python=python_facts(version="3.6.9")))
    assert fix.text.startswith("Install torch 1.10.1 (cu111): the newest torch with wheels for Python 3.6")
    assert fix.commands[0].argv[-2:] == ("-f", "https://download.pytorch.org/whl/cu111/torch_stable.html")


def test_python_no_release_supports_is_named() -> None:
    """Python 3.4: no release old or new has wheels for it."""
    fix = fix_for_torch(facts(python=python_facts(version="3.4.10")))
    assert "no torch release in its data (" in fix.text and "is built for Python 3.4." in fix.text
    assert "driver" not in fix.text


def test_driver_too_old_for_any_wheel_is_still_the_driver() -> None:
    """Driver CUDA 9.0: no wheel in the data runs on it on any platform, so the driver stays the fix."""
    py = replace(python_facts(), machine=Unavailable(Reason.NOT_RECORDED, "not captured"))
    old = driver("390.157", cuda_version="9.1")
    fix = fix_for_torch(facts(python=py, driver=old))
    assert fix.text.startswith("No torch release from 1.13.0 on") and fix.target is Target.SYSTEM
    assert "older releases may" in fix.text  # the data starts at 1.13: never "no wheel at all"


def test_known_platform_still_gets_the_wheel() -> None:
    fix = fix_for_torch(facts(python=python_facts()))
    assert fix.text.startswith("Install torch ") and fix.commands


def test_a_torch_older_than_the_data_names_its_own_drivers_minimum() -> None:
    """torch 1.6.0+cu102 on driver 418 (CUDA 10.1): NVIDIA's toolkit table says CUDA 10.2 needs 440.33, and the
    torch's other builds are on pytorch.org; never 'no release from 1.13.0 on supports this GPU'."""
    old_torch = torch_packages("1.6.0+cu102", "10.2")
    fix = fix_for_torch(facts(torch_packages=old_torch, driver=driver("418.67", cuda_version="10.1")))
    assert fix.text.startswith(
        "torch 1.6.0 was built for CUDA 10.2, which needs NVIDIA driver ≥ 440.33; the installed driver runs "
        "CUDA ≤ 10.1."
    )
    assert "No torch release from" not in fix.text
    assert (
        "torch 1.6.0's build for CUDA ≤ 10.1, from https://pytorch.org/get-started/previous-versions/"
        in fix.text
    )
    assert [c.argv for c in fix.commands] == [("sudo", "ubuntu-drivers", "install")]


def test_an_old_torch_whose_driver_runs_it_is_not_this_case() -> None:
    fine = fix_for_torch(
        facts(
            torch_packages=torch_packages("1.6.0+cu102", "10.2"),
            driver=driver("450.80.02", cuda_version="11.0"),
        )
    )
    assert "was built for CUDA 10.2, which needs" not in fine.text
