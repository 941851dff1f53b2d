"""Which part of a job ran out of GPU memory, where the error's figures alone cannot tell: the weights moving onto
the GPU (a traceback through `.to(device)`, `from_pretrained`, `load_state_dict`), or a model being run with no
sign of training. Each replaces the general advice, whose batch size and gradient settings are training's levers
(blind sets 27 and 28: web UIs and diffusers pipelines told to use gradient accumulation and FSDP)."""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.fixes.out_of_memory import (
    offers_a_smaller_job,
    too_big_for_inference,
    weights_do_not_fit,
)
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.triage.job_size import OOM
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS, line_number

# a traceback's source line that moves or loads weights: `pipe.to(device)`, `model.cuda()`,
# `AutoModel.from_pretrained(...)`, `model.load_state_dict(...)`; and the frames under them
_LOADING_CALL = lazy(
    r"^[ \t]*(?P<call>(?!File\b)[^\n]*?\.(?:to|cuda|from_pretrained|from_single_file|load_state_dict)\([^\n]*?)[ \t]*$",
    re.MULTILINE,
)
# frames only a move of a module's weights passes through: nn.Module.to and its _apply/convert, and the loaders
_LOADING_FRAME = lazy(
    r'^[ \t]*File "[^"\n]+", line \d+, in (?:_apply|convert|_load_pretrained_model|load_state_dict|'
    r"_load_state_dict_into_meta_model|set_module_tensor_to_device|load_checkpoint_in_model|from_pretrained)[ \t]*$|"
    r'^[ \t]*File "[^"\n]*[/\\]torch[/\\]nn[/\\]modules[/\\]module\.py", line \d+, in (?:to|cuda)[ \t]*$',
    re.MULTILINE,
)
_TRAINING = lazy(
    r"\bbackward\b|\boptimi[sz]er\b|\.step\(\)|\btrain(?:ing|er|_\w+)?\b|\bepochs?\b|\bfine-?tun|\blora\b|"
    r"\bgradient_accumulation|\bloss\b|\bdeepspeed\b|\bfsdp\b",
    re.IGNORECASE,
)
_RUNNING = lazy(
    r"\bgenerate\(|\bpipe(?:line)?\b|\bgradio\b|\binference\b|\binfer\b|\bpredict\w*|\bsampl(?:e|er|ing)\b|"
    r"\bdiffusers\b|\bcomfy\w*|\bwebui\b|\bstable.diffusion\b|\btxt2img\b|\bimg2img\b|\bapp\.py\b|"
    r"--model_path\b",
    re.IGNORECASE,
)
_LOW_MEMORY_ON = lazy(
    r"--(?:low_?vram\w*|medvram|lowvram|always-low-vram|novram)\b|\blow_vram_mode\b", re.IGNORECASE
)


def loading_call(text: str) -> re.Match[str] | None:
    """The traceback's line that moved the weights onto the GPU, where the frames show the move failing."""
    if _LOADING_FRAME.search(text) is None:
        return None
    return _LOADING_CALL.search(text)


def by_phase(verdict: Verdict, pasted: PastedText) -> Verdict:
    """The general advice (a smaller batch, training settings) replaced where the paste shows the phase."""
    finding = verdict.finding
    if finding.check_id != OOM or not offers_a_smaller_job(finding.remediation):
        return verdict
    text = pasted.paste.text[:MAX_CHARS]
    call = loading_call(text)
    if call is not None:
        line = line_number(text, call)
        fix = weights_do_not_fit(f"`{call['call']}`", line)
        details = (  # the signature's general words (fragmentation, a smaller batch) do not fit this phase
            "The traceback runs through the move of the model's weights (nn.Module.to and its _apply, or a "
            "loader): the allocation that failed is a weight tensor, so the model itself fills the GPU."
        )
        return dataclasses.replace(
            verdict,
            finding=dataclasses.replace(finding, details=details, remediation=fix),
            lines=tuple(sorted({*verdict.lines, line})),
        )
    if _TRAINING.search(text) is not None or _RUNNING.search(text) is None:
        return verdict
    low = _LOW_MEMORY_ON.search(text)
    fix = too_big_for_inference(line_number(text, low) if low is not None else None)
    return dataclasses.replace(verdict, finding=dataclasses.replace(finding, remediation=fix))
