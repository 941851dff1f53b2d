"""What a failure the person reports without its error most likely is, from the machine the paste does show.

A paste that says "can't start" and holds only an environment report has no error to read; the report can
still narrow it. Each rule here names a failure that machines like the one shown commonly hit, with the cheap
test that settles it; triage offers it beside its request for the error, never as the cause.
"""

from __future__ import annotations

from torch_gpu_doctor.compat.precision import capability
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS
from torch_gpu_doctor.triage.whose import serving_engine


@dataclass(frozen=True)
class Hunch:
    text: str  # the failure, in one sentence, and why this machine is prone to it
    command: str | None  # the test that settles it, where the paste gives enough to write it whole


# the model a serving command starts: `vllm serve org/model`, `--model org/model`, `--model-path org/model`
_SERVED = lazy(
    r"\b(?P<engine>vllm|sglang)\b[^\n`]*?(?:\bserve|--model(?:-path)?)[ \t=]+(?P<model>[\w./-]+[\w])"
)


def _capability(text: str) -> tuple[int, int] | None:
    try:
        return capability(text)
    except ValueError:  # a paste's garbled capability decides nothing
        return None


def hunch(facts: Facts, pasted: PastedText) -> Hunch | None:
    """A serving engine (vLLM, SGLang) on a GPU older than Ampere: a model whose config asks for bfloat16
    stops at start, and some models' attention kernels (flash-attention, blocksparse) need 8.0 (blind set 21 #02:
    Phi-3-small on a V100, vLLM#9791)."""
    engine = serving_engine(pasted)
    if engine is None:
        return None
    older = sorted(
        {
            (g.compute_capability, g.name)
            for g in facts.gpus
            if isinstance(g.compute_capability, str)
            and isinstance(g.name, str)
            and g.vendor == "nvidia"
            and (_capability(g.compute_capability) or (8, 0)) < (8, 0)
        }
    )
    if not older or len(older) != len({g.name for g in facts.gpus if isinstance(g.name, str)}):
        return None  # an Ampere or newer GPU beside it runs what the older one cannot
    cc, name = older[0]
    served = _SERVED.search(pasted.paste.text, 0, MAX_CHARS)
    command = None
    if served is not None and served["engine"].lower() == "vllm":
        command = f"vllm serve {served['model']} --dtype half"
    elif served is not None:
        command = f"python -m sglang.launch_server --model-path {served['model']} --dtype half"
    shown = "vLLM" if engine == "vllm" else "SGLang"
    return Hunch(
        f"{shown} on a {name} (compute capability {cc}, older than Ampere) most often fails to start a model "
        "because the model's config asks for bfloat16, which it refuses on this GPU, or because the model's "
        "attention kernels (flash-attention, blocksparse attention) need compute capability 8.0; run it in "
        "float16, or serve it from an Ampere or newer GPU.",
        command,
    )
