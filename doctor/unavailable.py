"""Why a fact could not be read: every fact may be unavailable, and always says why."""

from __future__ import annotations

from enum import Enum
from typing import TypeVar, Union

from torch_gpu_doctor.records import dataclass


class Reason(str, Enum):
    NOT_FOUND = "not_found"  # the file, command or library does not exist here
    PERMISSION_DENIED = "permission_denied"
    TIMED_OUT = "timed_out"
    NOT_SUPPORTED = "not_supported"  # this GPU / driver / OS does not offer it
    NOT_APPLICABLE = "not_applicable"  # the question makes no sense here (no GPU, no driver)
    FAILED = "failed"  # it ran and answered with an error
    UNPARSEABLE = "unparseable"  # it answered, but not in a format we understand
    NOT_RECORDED = "not_recorded"  # a captured machine did not record it


@dataclass(frozen=True)
class Unavailable:
    reason: Reason
    detail: str = ""

    def __str__(self) -> str:
        words = self.reason.value.replace("_", " ")
        return f"{words}: {self.detail}" if self.detail else words


T = TypeVar("T")
# A fact that may be missing, always with its reason.
Maybe = Union[T, Unavailable]  # noqa: UP007 - a generic alias needs Union
