"""The labels the person says the data has, against the class count a loss kernel's assertion tested: labels 0
and 1 fail `t >= 0 && t < n_classes` only where the model was built with a single class, the commonest binary
classification mistake (blind set 23: Pointnet2_PyTorch#89, "My labels are all either 0 or 1")."""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Remediation, Status, Target
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS, line_number

ASSERTION = "other_cuda_kernel_assertion_condition"
# "my labels are all either 0 or 1", "labels are 0/1", "binary classification", "binary classifier"
_BINARY = lazy(
    r"\blabels?\b[^\n.]{0,40}?\b0[ \t]*(?:or|and|/|,)[ \t]*1\b|\bbinary[ \t]+(?:classif\w*|segmentation|labels?)\b",
    re.IGNORECASE,
)


def binary_labels_one_class(verdict: Verdict, pasted: PastedText) -> Verdict:
    """A loss kernel's `t < n_classes` assertion where the person says the task is binary (labels 0 and 1): the
    model or loss was built for one class, so label 1 is out of range."""
    hits = [h for h in pasted.hits if h.signature.id == ASSERTION and "n_classes" in h.text]
    finding = verdict.finding
    if (
        finding.status is not Status.FAIL
        or not hits
        or not {h.line for h in hits}.intersection(verdict.lines)
    ):
        return verdict
    text = pasted.paste.text[:MAX_CHARS]
    said = _BINARY.search(text)
    if said is None:
        return verdict
    line = line_number(text, said)
    finding = dataclasses.replace(
        finding,
        summary=f"The model is built for one class while the labels are 0 and 1 (line {line} of the paste): label 1 "
        "is out of range for the loss, whose kernel tests `t < n_classes`. A bug in the model's set-up, not in the "
        "GPU.",
        remediation=Remediation(
            text="For two classes, give the model two outputs (num_classes=2) and keep CrossEntropyLoss or NLLLoss, "
            "whose targets are class indices 0..num_classes-1; or keep one output and train it with "
            "BCEWithLogitsLoss on float targets.",
            target=Target.PYTHON_ENV,
        ),
    )
    return dataclasses.replace(verdict, finding=finding, lines=tuple(sorted({*verdict.lines, line})))
