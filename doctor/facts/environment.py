"""The environment variables that change what CUDA and torch do, and nothing else (no secrets)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from torch_gpu_doctor.lazy_re import lazy

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
    "container",
    "WSL_DISTRO_NAME",
)
# PATH, and the variables container runtimes set that the container facts read (facts/container.py): kept
# so that a capture or a bundle made in a pod or an Apptainer container replays as one
RELEVANT_NAMES = (
    "PATH",
    "KUBERNETES_SERVICE_HOST",
    "APPTAINER_CONTAINER",
    "APPTAINER_NAME",
    "SINGULARITY_CONTAINER",
    "SINGULARITY_NAME",
)
# Names that may hold a secret or an index with credentials are dropped whatever their prefix. The one rule:
# environment variables drop a name containing any of these words anywhere; bundle redaction
# (torch_gpu_doctor.bundle.secrets) finds `NAME=value` in text where a word is a whole part of NAME.
SECRET_NAME_WORDS = (
    "TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|PASS|APIKEY|KEY|CREDENTIALS?|AUTHORIZATION|AUTH|INDEX|USER|"
    "COOKIE|SESSION"
)
SECRET_NAME = lazy(SECRET_NAME_WORDS, re.IGNORECASE)
URL_CREDENTIALS = lazy(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@")


def scrub(value: str) -> str:
    """`https://me:token@host/x` → `https://***@host/x`: credentials in URLs never leave the machine."""
    return URL_CREDENTIALS.sub(r"\g<scheme>***@", value)


def relevant_env(env: Mapping[str, str]) -> dict[str, str]:
    return {
        name: scrub(value)
        for name, value in sorted(env.items())
        if (name in RELEVANT_NAMES or name.startswith(RELEVANT_PREFIXES)) and not SECRET_NAME.search(name)
    }
