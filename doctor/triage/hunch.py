"""What a failure the person reports without its error most likely is, from the machine the paste does show.

A paste that says "can't start" and holds only an environment report has no error to read; the report can
still narrow it. Each rule here names a failure that machines like the one shown commonly hit, with the cheap
test that settles it; triage offers it beside its request for the error, never as the cause.
"""

from __future__ import annotations

import re

from torch_gpu_doctor.compat.precision import capability
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.target import on_windows
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.triage.interpreter import interpreter_shown
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import GPU_NOT_FOUND, MAX_CHARS
from torch_gpu_doctor.triage.whose import mentions_torch, serving_engine
from torch_gpu_doctor.unavailable import Unavailable


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


def hunch(facts: Facts, pasted: PastedText, failing: str) -> Hunch | None:
    """The first of the rules below that fits the machine shown and the failure said (`failing`: its line)."""
    return (
        _serving_before_ampere(facts, pasted)
        or _more_gpus_than_work(failing)
        or _distributed_on_windows(facts, pasted)
        or _after_a_driver_change(facts, pasted, failing)
        or _cpu_torch(facts, pasted, failing)
    )


_COUNT = r"(?:\d{1,2}|two|three|four|six|eight|multiple|several|more)"
# "accelerate Fails with 3 GPUs but Works with 2 GPUs", "works on one GPU but hangs on four"
_FAILS_ON_MORE = lazy(
    rf"\b(?:fails?|failed|crash(?:es|ed)?|hangs?|stuck|errors?)\b[^\n]{{0,40}}?\b{_COUNT}[ \t]+gpus?\b",
    re.IGNORECASE,
)
_WORKS_ON_FEWER = lazy(
    r"\bworks?\b[^\n]{0,40}?\b(?:\d{1,2}|one|two|three|single|a[ \t]+single)[ \t]+gpus?\b", re.IGNORECASE
)


# a launch across GPUs: LLaMA-Factory's "Initializing distributed tasks at: 127.0.0.1:..." (it runs torchrun when it
# sees several GPUs), torchrun or the old launcher, accelerate's multi-GPU launch
_DISTRIBUTED_LAUNCH = lazy(
    r"Initializing distributed tasks|\btorchrun\b|torch\.distributed\.(?:run|launch)\b|--nproc[_-]per[_-]node"
    r"|accelerate[ \t]+launch[ \t][^\n]*--multi_gpu|distributed_type:[ \t]*MULTI_GPU",
    re.IGNORECASE,
)
_WINDOWS_PATH = lazy(r"(?<![\w/])[A-Za-z]:\\")


def _distributed_on_windows(facts: Facts, pasted: PastedText) -> Hunch | None:
    """A launch across several GPUs on Windows that fails with no error shown: torch.distributed there has no
    NCCL (gloo only) and, from torch 2.4, no libuv for torchrun's rendezvous, whose default it became
    (pytorch/pytorch#139990; LlamaFactory#7124, blind set 22 #14: 'llamafactory-cli train' on Windows)."""
    text = pasted.paste.text[:MAX_CHARS]
    if not (on_windows(facts) or _WINDOWS_PATH.search(text)) or _DISTRIBUTED_LAUNCH.search(text) is None:
        return None
    return Hunch(
        "On Windows a launch across several GPUs (LLaMA-Factory starts torchrun whenever it sees more than one "
        "GPU) most often fails in torch.distributed itself: Windows builds of torch have no NCCL, only gloo, and "
        "from torch 2.4 no libuv for torchrun's rendezvous ('use_libuv was requested but PyTorch was built "
        "without libuv support'). Run on one GPU, or set USE_LIBUV=0 for the rendezvous; training across GPUs "
        "with NCCL needs Linux or WSL2.",
        "set CUDA_VISIBLE_DEVICES=0",
    )


def _more_gpus_than_work(failing: str) -> Hunch | None:
    """A job that runs on fewer GPUs and fails on more: what the added GPUs add is the traffic between them,
    peer-to-peer between a pair that cannot do it (another PCIe root or CPU socket, ACS or the IOMMU in the
    way, consumer cards without P2P); blind set 22 #40: "Fails with 3 GPUs but Works with 2"."""
    if _FAILS_ON_MORE.search(failing) is None or _WORKS_ON_FEWER.search(failing) is None:
        return None
    return Hunch(
        "A job that runs on fewer GPUs and fails on more most often fails in the traffic between the GPUs: "
        "peer-to-peer between the added GPU and the others (on another PCIe root or CPU socket, blocked by ACS "
        "or the IOMMU, or cards without P2P). `nvidia-smi topo -m` shows how each pair is connected; if the "
        "job runs with NCCL_P2P_DISABLE=1 in its environment, P2P is the cause.",
        "nvidia-smi topo -m",
    )


def _after_a_driver_change(facts: Facts, pasted: PastedText, failing: str) -> Hunch | None:
    """The GPU not used since the driver was reinstalled or updated, while nvidia-smi answers: nvidia-smi needs
    only the nvidia module and NVML, CUDA also nvidia_uvm and user-space libraries of the loaded driver's very
    version, which a reinstall without a reboot leaves mismatched or unloaded (blind set 22 #21: Ollama on an RTX
    6000 Ada after a driver reinstall)."""
    driver = facts.driver
    if (
        pasted.prose.updated is None
        or not GPU_NOT_FOUND.search(failing)
        or isinstance(driver, Unavailable)
        or not isinstance(driver.version, str)
    ):
        return None
    if on_windows(
        facts
    ):  # no kernel modules to load there: the restart Windows asks for after a driver install
        return Hunch(
            f"Since the driver was reinstalled or updated, nvidia-smi answers (driver {driver.version}) but "
            "programs get no GPU: a driver install on Windows takes full effect after a restart, and until then "
            "programs can still load the previous driver's files. Restart Windows, then start the program again.",
            None,
        )
    return Hunch(
        f"Since the driver was reinstalled or updated, nvidia-smi answers (driver {driver.version}) but programs "
        "get no GPU: CUDA also needs the nvidia_uvm module and the loaded driver's own user-space libraries, "
        "which a driver change leaves unloaded or mismatched until a reboot (`lsmod | grep nvidia_uvm` shows "
        "whether the module is loaded). Reboot, then start the program again.",
        "sudo reboot",
    )


def _cpu_torch(facts: Facts, pasted: PastedText, failing: str) -> Hunch | None:
    """A torch program that does not use the GPU, where the paste never shows torch's build: a CPU build is the
    commonest reason (PyPI's default torch on Windows is one, and a project's requirements file that names torch
    installs it over a CUDA build; blind set 22 #33)."""
    packages, runtime = facts.torch_packages, facts.torch
    if not GPU_NOT_FOUND.search(failing):
        return None
    if not isinstance(packages, Unavailable) and (packages.cuda or packages.hip):
        return None  # its build is shown: the checks judged it
    if not isinstance(runtime, Unavailable) and runtime.cuda_available is True:
        return None  # torch itself reached the GPU
    text = pasted.paste.text[:MAX_CHARS]
    if not (mentions_torch(text) or pasted.packages):
        return None  # another runtime's program (Ollama, llama.cpp): torch's build says nothing of it
    windows = on_windows(facts)
    python = interpreter_shown(facts) or ("python.exe" if windows else "python")
    check = Command(
        (
            python,
            "-c",
            "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())",
        )
    )
    return Hunch(
        "The paste does not show which torch build that environment has; the commonest reason a torch program "
        "does not use the GPU is a CPU-only build (+cpu, torch.version.cuda None): PyPI's default torch on "
        "Windows is one, and a requirements file that names torch installs it over a CUDA build. If this prints "
        "+cpu or None, install the CUDA build from download.pytorch.org's index for your CUDA (cu126, cu128) "
        "with that same Python.",
        check.display(windows),
    )


def _serving_before_ampere(facts: Facts, pasted: PastedText) -> Hunch | None:
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
