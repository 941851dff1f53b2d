"""The environment variables that change what CUDA and torch do, and nothing else (no secrets)."""

from __future__ import annotations

import re
from collections.abc import Mapping

RELEVANT_PREFIXES = (
    "CUDA_",
    "NVIDIA_",
    "NCCL_",
    "PYTORCH_",
    "TORCH_",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONNOUSERSITE",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "UV_",
    "PATH",
    "container",
    "WSL_DISTRO_NAME",
)
SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|KEY|CREDENTIAL|AUTH|INDEX_URL", re.IGNORECASE)


def relevant_env(env: Mapping[str, str]) -> dict[str, str]:
    """Variables with a relevant prefix; any name that may hold a secret is dropped whatever its prefix."""
    return {
        name: value
        for name, value in sorted(env.items())
        if name.startswith(RELEVANT_PREFIXES) and not SECRET_NAME.search(name)
    }
