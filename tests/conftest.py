from __future__ import annotations

import fcntl
import functools
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest


@functools.cache
def nvml_answers() -> bool:
    from torch_gpu_doctor.host.nvml import NvmlError, RealNvml

    nvml = RealNvml()
    try:
        nvml.init()
        nvml.shutdown()
    except NvmlError:
        return False
    return True


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # the slow tests (mypy, wheels, venvs) start first: with -n auto a long one that starts last keeps one core
    # busy alone at the end
    items.sort(key=lambda item: "slow" not in item.keywords)
    if any("gpu" in item.keywords for item in items) and not nvml_answers():
        skip = pytest.mark.skip(reason="needs an NVIDIA GPU with a working NVML")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _pattern_cache_outside_home(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Iterator[None]:
    """The console script keeps compiled patterns in the user's cache folder (pattern_cache); the many tests
    that start it share one in the run's temporary folder instead, and leave the home folder alone."""
    shared = (
        tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent
    )
    before = os.environ.get("GPU_DOCTOR_CACHE_DIR")
    os.environ["GPU_DOCTOR_CACHE_DIR"] = str(shared / "pattern-cache")
    yield
    if before is None:
        os.environ.pop("GPU_DOCTOR_CACHE_DIR", None)
    else:
        os.environ["GPU_DOCTOR_CACHE_DIR"] = before


TORCH = "torch==2.13.0"  # a CPU build is available locally on the development and CI machines


@pytest.fixture(scope="session")
def torch_python(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> str:
    """A venv with the CPU build of torch, made once per test run: with pytest-xdist the workers share it
    (the first one builds it under a lock in the run's common temporary folder; the others wait, then use it)."""
    shared = (
        tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent
    )
    env_dir = shared / "torch-env"
    with (shared / "torch-env.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        python = env_dir / "bin" / "python"
        failed = shared / "torch-env.failed"
        if failed.exists():
            pytest.skip(failed.read_text())
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True, timeout=120)
            proc = subprocess.run(
                [str(python), "-m", "pip", "install", "-q", TORCH],
                capture_output=True,
                text=True,
                timeout=900,
                check=False,
            )
            if proc.returncode != 0:
                if os.environ.get("CI"):
                    pytest.fail(f"could not install {TORCH} in CI: {proc.stderr[-2000:]}")
                failed.write_text(f"{TORCH} is not installable here")
                pytest.skip(f"{TORCH} is not installable here")
    return str(python)


@pytest.fixture(autouse=True)
def _children_allowed() -> None:
    """An interrupted in-process main() stops every child and lets nothing start after it (the process is
    about to end): each test begins with children allowed again."""
    process = sys.modules.get("torch_gpu_doctor.host.process")
    if process is not None:
        process.allow_children()
