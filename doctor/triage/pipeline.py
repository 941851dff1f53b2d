"""Pasted bytes → a diagnosis: decode, read every part, make the facts, run the checks."""

from __future__ import annotations

from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.triage.decode import decode_paste
from torch_gpu_doctor.triage.outcome import Triage
from torch_gpu_doctor.triage.paste import PastedText, read_paste
from torch_gpu_doctor.triage.paste_facts import paste_facts
from torch_gpu_doctor.triage.verdict import triage

NOTHING_KNOWN = (
    "gpu-doctor found nothing it knows in this text: no collect_env report, no nvidia-smi output, no package "
    "list, no kernel-log line and no known error message. Paste the output of "
    "`python -m torch.utils.collect_env` and the full error."
)


@dataclass(frozen=True)
class PasteDiagnosis:
    pasted: PastedText
    facts: Facts
    result: Triage


def diagnose_paste(data: bytes, name: str) -> PasteDiagnosis:
    """Raises triage.decode.UnreadablePaste for what is not text (binary, empty)."""
    pasted = read_paste(decode_paste(data, name))
    facts = paste_facts(pasted)
    return PasteDiagnosis(pasted, facts, triage(pasted, facts))
