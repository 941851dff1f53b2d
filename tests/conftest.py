from __future__ import annotations

import functools
import os
import subprocess
import sys

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
    if any("gpu" in item.keywords for item in items) and not nvml_answers():
        skip = pytest.mark.skip(reason="needs an NVIDIA GPU with a working NVML")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


TORCH = "torch==2.13.0"  # a CPU build is available locally on the development and CI machines


@pytest.fixture(scope="session")
def torch_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    env_dir = tmp_path_factory.mktemp("torch-env")
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True, timeout=120)
    python = str(env_dir / "bin" / "python")
    proc = subprocess.run(
        [python, "-m", "pip", "install", "-q", TORCH],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if proc.returncode != 0:
        if os.environ.get("CI"):
            pytest.fail(f"could not install {TORCH} in CI: {proc.stderr[-2000:]}")
        pytest.skip(f"{TORCH} is not installable here")
    return python
