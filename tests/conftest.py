from __future__ import annotations

import functools

import pytest


@functools.cache
def nvml_answers() -> bool:
    from gpu_doctor.host.nvml import NvmlError, RealNvml

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
