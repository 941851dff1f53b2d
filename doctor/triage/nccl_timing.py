"""An NCCL watchdog timeout where the paste says when it came: at a step some ranks take alone (an epoch's end,
evaluation, saving a checkpoint), the ranks fell out of step, and that is checked before a GPU's fault (blind set
25: two GPUs, the timeout right after the first epoch, "感觉是不是评估的时候" - was it during evaluation). A
timeout hours into training with no such step said keeps the stalled rank's checks (dmesg) first."""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS

TIMEOUTS = frozenset({"nccl_watchdog_collective_timeout", "nccl_watchdog_timeout_named"})
# the person's words placing it at such a step: "after the first epoch", "at the end of each epoch", "during
# evaluation", "when saving the checkpoint", "训练完第一个epoch", "评估的时候", "保存模型时"
_AT_A_STEP = lazy(
    r"\b(?:after|at|end[ \t]+of|finish(?:es|ed|ing)?|during|when|while|before)\b[^\n.]{0,40}?"
    r"\b(?:epochs?|eval(?:uat\w*)?|validat\w*|checkpoints?|sav(?:e|es|ed|ing)[ \t]+(?:the[ \t]+)?(?:model|checkpoint))\b"
    r"|\bepochs?\b[^\n.]{0,20}?\b(?:ends?|ended|finish(?:es|ed)?|is[ \t]+(?:done|over))\b"
    r"|训练完|(?:第[一二三四五六七八九十\d]+个?\s*)?epoch\s*(?:结束|完)|评估|验证的?时|保存(?:模型|检查点)",
    re.IGNORECASE,
)
DESYNC_CHECK = Command(
    ("env", "TORCH_DISTRIBUTED_DEBUG=DETAIL", "PROGRAM"),
    note="PROGRAM: the failing run; it reports a collective the ranks call out of step (one rank evaluating, "
    "saving or with a batch more)",
    runs_here=False,
)


def at_a_step_some_ranks_take_alone(verdict: Verdict, pasted: PastedText) -> Verdict:
    """The out-of-step check first, where the paste places the timeout at an epoch's end, evaluation or saving."""
    fix = verdict.finding.remediation
    if (
        fix is None
        or verdict.finding.check_id != "nccl.communication"
        or not any(h.signature.id in TIMEOUTS and h.line in verdict.lines for h in pasted.hits)
        or _AT_A_STEP.search(pasted.paste.text, 0, MAX_CHARS) is None
    ):
        return verdict
    text = (
        "The paste places the timeout at a step some ranks may take alone (an epoch's end, evaluation, saving): "
        "most often a collective only some ranks call there (evaluation, a gather or a save on rank 0 alone), or "
        "a rank with one batch more. Make every rank run the same collectives (evaluation on all ranks; "
        "accelerate: accelerator.wait_for_everyone() around rank-0-only work; even batches, drop_last=True). "
    )
    remediation = dataclasses.replace(fix, text=text + fix.text, commands=(DESYNC_CHECK, *fix.commands))
    return dataclasses.replace(verdict, finding=dataclasses.replace(verdict.finding, remediation=remediation))
