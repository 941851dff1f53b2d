"""The torch probes run by a real interpreter against fake torch packages on PYTHONPATH, and the real CPU torch.

Fake packages mimic what matters of torch's surface: torch/version.py, torch.cuda.* and the exact warning
texts PyTorch emits (c10/cuda/CUDAFunctions.cpp, quoted in ../shared/reference/compat.md §6).
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.factories import facts, gpu, python_facts
from torch_gpu_doctor.checks.torch_build import torch_arch_compat
from torch_gpu_doctor.facts.torch import (
    TorchPackages,
    TorchRuntime,
    gather_torch_packages,
    gather_torch_runtime,
    parse_runtime,
)
from torch_gpu_doctor.host.real import RealHost
from torch_gpu_doctor.model import Status

DRIVER_TOO_OLD = (
    "CUDA initialization: The NVIDIA driver on your system is too old (found version 11040). Please update your "
    "GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx "
    "Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your "
    "version of the CUDA driver."
)


def fake_torch(site: Path, version: str, cuda: str | None, cuda_module: str, init: str = "") -> Path:
    pkg = site / "torch"
    pkg.mkdir(parents=True)
    (pkg / "version.py").write_text(
        f"__version__ = {version!r}\ndebug = False\ncuda = {cuda!r}\ngit_version = 'abc'\nhip = None\n"
    )
    (pkg / "__init__.py").write_text(
        textwrap.dedent(init)
        + "from torch import version, cuda, backends\n__version__ = version.__version__\n"
    )
    (pkg / "cuda.py").write_text(textwrap.dedent(cuda_module))
    (pkg / "backends.py").write_text(
        "class cudnn:\n    is_available = staticmethod(lambda: False)\n    version = staticmethod(lambda: None)\n"
    )
    return pkg


CU118_OLD_DRIVER = f"""
import warnings
def get_arch_list():
    return ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
def is_available():
    warnings.warn({DRIVER_TOO_OLD!r})
    return False
def init():
    raise RuntimeError({DRIVER_TOO_OLD[len("CUDA initialization: ") :]!r})
def device_count():
    return 0
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    return tmp_path


def test_cu118_build_on_an_old_driver_reports_the_exact_warning(site: Path) -> None:
    fake_torch(site, "2.1.0+cu118", "11.8", CU118_OLD_DRIVER)
    host = RealHost()
    packages = gather_torch_packages(host, sys.executable)
    assert isinstance(packages, TorchPackages)
    assert packages.version == "2.1.0+cu118" and packages.cuda == "11.8"
    assert packages.torch_paths == (str(site / "torch"),)
    runtime = gather_torch_runtime(host, sys.executable, packages)
    assert isinstance(runtime, TorchRuntime)
    assert runtime.outcome == "ok"
    assert runtime.cuda_available is False
    assert runtime.cuda_warnings == (DRIVER_TOO_OLD,)
    assert runtime.cuda_init_error == "RuntimeError: " + DRIVER_TOO_OLD[len("CUDA initialization: ") :]
    assert runtime.arch_list == ("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90")


# torch/cuda/__init__.py _check_cubins warns on the first CUDA init (compat.md §6; RTX 5090 on a cu124 build)
ARCH_WARNING = (
    "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
    "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n"
    "If you want to use the NVIDIA GeForce RTX 5090 GPU with PyTorch, please check the instructions at "
    "https://pytorch.org/get-started/locally/"
)
CU124_ON_BLACKWELL = f"""
import warnings
class _Props:
    name = "NVIDIA GeForce RTX 5090"
    major, minor = 12, 0
    total_memory = 34190917632
def get_arch_list():
    return ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
def is_available():
    warnings.warn({ARCH_WARNING!r})
    return True
def device_count():
    return 1
def get_device_properties(index):
    return _Props()
"""


def test_arch_warning_is_kept_and_the_device_judged_by_the_runtime_arch_list(site: Path) -> None:
    fake_torch(site, "2.5.1+cu124", "12.4", CU124_ON_BLACKWELL)
    host = RealHost()
    packages = gather_torch_packages(host, sys.executable)
    runtime = gather_torch_runtime(host, sys.executable, packages)
    assert isinstance(runtime, TorchRuntime) and runtime.outcome == "ok"
    assert runtime.cuda_available is True
    assert runtime.cuda_warnings == (ARCH_WARNING,)
    assert [(d.name, d.capability) for d in runtime.devices] == [("NVIDIA GeForce RTX 5090", "12.0")]
    rtx5090 = gpu(name="NVIDIA GeForce RTX 5090", cc="12.0")
    f = torch_arch_compat(
        facts(gpus=(rtx5090,), python=python_facts(), torch_packages=packages, torch=runtime)
    )
    assert f.status is Status.FAIL and "no kernels for NVIDIA GeForce RTX 5090" in f.summary
    assert f.evidence[0].source == "torch.cuda.get_arch_list()"


# As torch 2.x does it (torch/cuda/__init__.py, c10/cuda/CUDAFunctions.cpp): get_arch_list() returns [] unless
# is_available(), and the driver's warning comes once per process, from the first CUDA query.
CU121_OLD_DRIVER_2X = f"""
import warnings
_warned = []
def is_available():
    if not _warned:
        _warned.append(1)
        warnings.warn({DRIVER_TOO_OLD!r})
    return False
def get_arch_list():
    if not is_available():
        return []
    return ["sm_80", "sm_90"]
def init():
    raise RuntimeError({DRIVER_TOO_OLD[len("CUDA initialization: ") :]!r})
def device_count():
    return 0
"""


def test_the_one_time_driver_warning_is_kept_when_get_arch_list_initialises_cuda(site: Path) -> None:
    """Issue 22, defect 13: the probe asked get_arch_list() first, which initialised CUDA outside the warning
    recording, so cuda_warnings was always empty on a real 2.x torch with a driver too old."""
    fake_torch(site, "2.1.0+cu121", "12.1", CU121_OLD_DRIVER_2X)
    host = RealHost()
    packages = gather_torch_packages(host, sys.executable)
    runtime = gather_torch_runtime(host, sys.executable, packages)
    assert isinstance(runtime, TorchRuntime) and runtime.outcome == "ok"
    assert runtime.cuda_warnings == (DRIVER_TOO_OLD,)
    assert runtime.arch_list == ()


def test_segfault_on_import_is_reported_with_the_signal_and_stage(site: Path) -> None:
    fake_torch(
        site, "2.4.0+cu124", "12.4", "", init="import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"
    )
    runtime = parse_runtime(RealHost().run_probe(sys.executable, "torch_runtime", 30))
    assert runtime.outcome == "crashed"
    assert runtime.failed_stage == "import"
    assert "SIGSEGV" in runtime.message


def test_hang_is_cut_by_the_timeout(site: Path) -> None:
    fake_torch(site, "2.4.0+cu124", "12.4", "", init="import time\ntime.sleep(600)\n")
    runtime = parse_runtime(RealHost().run_probe(sys.executable, "torch_runtime", 1.5))
    assert runtime.outcome == "timed_out"
    assert runtime.failed_stage == "import"


def test_import_error_keeps_the_message(site: Path) -> None:
    fake_torch(
        site,
        "2.4.0+cu124",
        "12.4",
        "",
        init="raise ImportError('libcudnn.so.9: cannot open shared object file')\n",
    )
    runtime = parse_runtime(RealHost().run_probe(sys.executable, "torch_runtime", 30))
    assert runtime.outcome == "failed"
    assert runtime.message == "ImportError: libcudnn.so.9: cannot open shared object file"


def test_garbage_output_is_not_a_result(site: Path) -> None:
    fake_torch(
        site,
        "2.4.0+cu124",
        "12.4",
        "",
        init="import os, sys\nsys.stdout.write('hello\\n')\nsys.stdout.flush()\nos._exit(0)\n",
    )
    runtime = parse_runtime(RealHost().run_probe(sys.executable, "torch_runtime", 30))
    assert runtime.outcome == "garbage"
    assert "hello" in runtime.message


def test_shadowing_copies_are_listed_in_import_order(
    site: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    second = tmp_path_factory.mktemp("second")
    fake_torch(site, "2.4.0+cu124", "12.4", "")
    fake_torch(second, "2.5.1+cpu", None, "")
    monkeypatch.setenv("PYTHONPATH", f"{site}:{second}")
    packages = gather_torch_packages(RealHost(), sys.executable)
    assert isinstance(packages, TorchPackages)
    assert packages.torch_paths == (str(site / "torch"), str(second / "torch"))
    assert packages.version == "2.4.0+cu124"  # the first copy wins


def test_cpu_build_is_not_imported(site: Path) -> None:
    fake_torch(site, "2.5.1+cpu", None, "", init="raise SystemExit('must not be imported')\n")
    host = RealHost()
    packages = gather_torch_packages(host, sys.executable)
    runtime = gather_torch_runtime(host, sys.executable, packages)
    assert str(runtime) == "not applicable: CPU build 2.5.1+cpu: not imported"


def test_a_silent_interpreter_is_not_asked_to_import_torch() -> None:
    """Issue 21: a --python that never answers took 81 s to report (20 s for the package probe, then 60 more
    for the import). When the package probe timed out, the import is not tried."""
    from torch_gpu_doctor.unavailable import Reason, Unavailable

    class NoProbes(RealHost):
        def run_probe(self, python: str, probe: str, timeout: float) -> Any:
            raise AssertionError(f"{probe} was run")

    silent = Unavailable(Reason.TIMED_OUT, "/venv/bin/python: no answer within 20 s")
    runtime = gather_torch_runtime(NoProbes(), "/venv/bin/python", silent)
    assert isinstance(runtime, Unavailable) and runtime.reason is Reason.TIMED_OUT
    assert "did not answer the package probe" in runtime.detail
