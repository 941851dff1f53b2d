"""What a collect_env report says, typed: every field may be missing (truncated paste, older torch), and each
keeps the line(s) it came from."""

from __future__ import annotations

import re
from dataclasses import field

from torch_gpu_doctor.records import dataclass


@dataclass(frozen=True)
class ReportLine:
    key: str  # canonical key, e.g. "torch_version" (see parse.LABELS)
    value: str  # text after the colon; continuation lines (GPU list, cuDNN paths) joined with "\n"
    raw: str  # the line(s) as pasted
    line: int  # 1-based line number in the input


@dataclass(frozen=True)
class GpuLine:
    index: int | None  # "GPU 0: ..." (nvidia-smi -L); None for the one name torch gives on ROCm and macOS
    name: str
    raw: str
    capability: str | None = None  # detectron2's "(arch=7.5)": what torch.cuda.get_device_capability() said


def distribution_name(name: str) -> str:
    """A package's name as PEP 503 compares it: flash_attn, Flash-Attn and flash.attn are one distribution."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Library:
    manager: str  # "pip" | "conda"
    name: str  # normalised: lower case, dashes
    version: str
    build: str | None  # conda build string, e.g. "py3.7_cuda10.1.243_cudnn7.6.3_0"
    raw: str


@dataclass(frozen=True)
class TorchWarnings:
    """Warnings torch printed while collect_env imported it; people paste them with the report."""

    driver_cuda: str | None = (
        None  # "The NVIDIA driver on your system is too old (found version 11040)" → "11.4"
    )
    arch_list: tuple[str, ...] = ()  # "The current PyTorch install supports CUDA capabilities sm_50 ..."
    cuda_init: tuple[str, ...] = ()  # the text of each "CUDA initialization: ..." warning


# `transformers-cli env`, `accelerate env`, `diffusers-cli env`: a few libraries named, never the whole list
HUGGINGFACE_ENV = "huggingface env"


@dataclass(frozen=True)
class CollectEnvReport:
    lines: dict[str, ReportLine]  # every recognised key line, by canonical key
    torch_version: str | None  # None: no line, or "N/A" (see torch_missing)
    torch_missing: bool  # "PyTorch version: N/A": collect_env could not import torch
    cuda_build: str | None  # "CUDA used to build PyTorch": "12.1"; None for CPU/ROCm builds or no line
    rocm_build: str | None  # "ROCM used to build PyTorch": "6.3.42131-fa1d09cbd"
    debug_build: bool | None
    os_name: str | None
    python_version: str | None  # "3.11.6"
    python_platform: str | None  # "Linux-5.15.107+-x86_64-with-glibc2.31"
    cuda_available: bool | None
    cuda_runtime: str | None  # the CUDA toolkit (nvcc) found on the machine, not torch's nor the driver's
    gpus: tuple[GpuLine, ...] | None  # None: not collected ("Could not collect", "No CUDA", no line)
    driver_version: str | None
    hip_runtime: str | None
    libraries: tuple[Library, ...] | None  # None: the "Versions of relevant libraries" section is missing
    warnings: TorchWarnings = field(default_factory=TorchWarnings)
    truncated: bool = False  # the paste ends before the library list (or cuts a line)
    arch_flags: tuple[
        str, ...
    ] = ()  # torch.__config__.show()'s "NVCC architecture flags": sm_50, ..., compute_90
    wrapper: str | None = (
        None  # "detectron2", "huggingface env", "sglang check_env" or "mmengine": the tool that printed them
    )
    cut_line: ReportLine | None = None  # the paste's last line, cut mid-value: read as missing

    def has(self, key: str) -> bool:
        return key in self.lines

    def said_nothing(self, key: str) -> bool:
        """The line is there with collect_env's words for a failed query ("No CUDA", "Could not collect"): for the
        GPU list and the driver that is nvidia-smi failing, which is information, not a missing line."""
        line = self.lines.get(key)
        return line is not None and line.value.strip().lower() in (
            "no cuda",
            "could not collect",
            "n/a",
            "none",
        )

    @property
    def gpus_unlisted(self) -> bool:
        return self.said_nothing("gpu_models")

    @property
    def smi_failed(self) -> bool:
        """collect_env ran nvidia-smi (Linux, Windows) and it listed no GPU and no driver."""
        return self.gpus_unlisted and (self.said_nothing("driver_version") or not self.has("driver_version"))


@dataclass(frozen=True)
class Part:
    """One stretch of a paste that triage read, and as what."""

    kind: str  # "collect_env", "nvidia_smi", "pip_list", "conda_list", "pip_freeze", "kernel_log", "error",
    # "unknown_error" (a failure no signature knows: triage/shown_error.py), or "words": a GPU or a driver
    # named in the person's own words (triage/prose.py)
    first_line: int  # 1-based, inclusive
    last_line: int
