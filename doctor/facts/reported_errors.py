"""Errors that a program reported, as facts: the known error messages (the signature catalogue of
checks/support/error_signatures.json) found in text the doctor read, with the values they carry.

Triage reads them in a paste (a traceback, a log); checks such as torch.out_of_memory and nccl.communication
judge them. A live diagnosis has none to read: the section is `not_applicable` there.
"""

from __future__ import annotations

from dataclasses import field

from torch_gpu_doctor.records import dataclass


@dataclass(frozen=True)
class ReportedError:
    kind: str  # "oom", "nccl_shm", "gpu_lost", ... (signatures.ERRORS)
    signature: str  # the catalogue entry that recognised it
    means: str  # what it means, in the catalogue's words
    text: str  # the line as it was reported
    where: str  # "line 12 of the paste"
    values: dict[str, str] = field(default_factory=dict)  # what the message said: "tried": "2.00 GiB", ...
    context: str = ""  # the lines after it in the same paragraph, joined: where a long message goes on
