"""What the all-reduce worker reports of an NCCL failure: PyTorch puts NCCL's real cause after "Last error:"
on the next line, and the worker used to keep only the first line, "unhandled system error"."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import cast

from torch_gpu_doctor.probes import smoke_worker

# the probe runs in the diagnosed interpreter (Python 3.7+, no annotations): typed here for the tests
first_line = cast(Callable[[BaseException], str], smoke_worker.first_line)

PASTES = Path(__file__).parents[1] / "triage" / "pastes"


def _error_in(paste: str) -> str:
    """The DistBackendError's message as the exception carries it: the pasted lines from its first one."""
    lines = (PASTES / paste).read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if "DistBackendError: " in line)
    text = "\n".join(line.strip() for line in lines[start : start + 5])
    return text.split("DistBackendError: ", 1)[1]


def test_the_shared_memory_cause_survives() -> None:
    said = first_line(RuntimeError(_error_in("torchtitan-853-nccl-shm.txt")))
    assert said.startswith(
        "NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, unhandled system"
    )
    assert said.endswith(
        "; last error: Error while creating shared memory segment /dev/shm/nccl-1YsMbG (size 7340384)"
    )


def test_a_cause_on_the_same_line_and_an_error_without_one() -> None:
    assert first_line(RuntimeError("NCCL error\nLast error: socket timed out")) == (
        "NCCL error; last error: socket timed out"
    )
    assert first_line(RuntimeError("CUDA out of memory.\nTried to allocate 2 GiB")) == "CUDA out of memory."
    assert first_line(RuntimeError("")) == "RuntimeError"
