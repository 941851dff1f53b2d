"""torch.out_of_memory: a program ran out of GPU memory; whose memory it was decides the fix."""

from __future__ import annotations

import re

from torch_gpu_doctor.checks.support.signatures import reported_evidence
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.reported_errors import ReportedError
from torch_gpu_doctor.fixes.out_of_memory import (
    first_allocation,
    fragmented,
    half_precision,
    holder,
    kv_cache,
    larger_than_the_gpu,
    memory_fraction,
    one_large_input,
    too_big,
    too_big_beside_a_share,
)
from torch_gpu_doctor.fixes.target import gpu_capabilities
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Finding, Remediation, Status
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Unavailable

CID = "torch.out_of_memory"
_UNITS = {
    "b": 1,
    "bytes": 1,
    "kib": 1 << 10,
    "mib": 1 << 20,
    "gib": 1 << 30,
    "tib": 1 << 40,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
}
_SIZE = r"(?P<{0}>\d+(?:\.\d+)?)\s*(?P<{0}_unit>[KMGT]i?B|B|bytes)"
# torch < 2.1: "Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; 6.87 GiB already allocated;
#   13.69 MiB free; 6.91 GiB reserved in total by PyTorch)"
# torch >= 2.1: "Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 10.06 MiB is
#   free. Including non-PyTorch memory, this process has 23.62 GiB memory in use. Of the allocated memory
#   22.99 GiB is allocated by PyTorch, and 197.37 MiB is reserved by PyTorch but unallocated."
# The allocator's report when a memory fraction or the cudaMallocAsync backend limits it ("Allocation on device 0
# would exceed allowed memory"): "Currently allocated : 21.55 GiB", "Requested : 952.00 MiB", "Device limit :
# 24.00 GiB", "Free (according to CUDA): 0 bytes"
_FIELDS = {
    "tried": r"(?:Tried to allocate |Requested\s*:\s*)" + _SIZE.format("tried"),
    "total": r"(?:"
    + _SIZE.format("total")
    + r" total capacity|total capac(?:i)?ty of "  # torch 2.1 printed "capacty"
    + _SIZE.format("total2")
    + r"|Device limit\s*:\s*"
    + _SIZE.format("total3")
    + ")",
    "free": r"(?:"
    + _SIZE.format("free")
    + r" (?-i:free)\b|of which "  # lower case: never the next line's "Free (according to CUDA)"
    + _SIZE.format("free2")
    + r" is free|Free \(according to CUDA\)\s*:\s*"
    + _SIZE.format("free3")
    + ")",
    "allocated": r"(?:"
    + _SIZE.format("allocated")
    + r" already allocated|"
    + _SIZE.format("allocated2")
    + r" is allocated by PyTorch|Currently allocated\s*:\s*"
    + _SIZE.format("allocated3")
    + ")",
    "reserved": r"(?:" + _SIZE.format("reserved") + r" reserved in total by PyTorch)",
    "cached": r"(?:" + _SIZE.format("cached") + r" cached\))",  # torch <= 1.4: reserved minus allocated
    "unallocated": r"(?:" + _SIZE.format("unallocated") + r" is reserved by PyTorch but unallocated)",
    "process": r"this process has " + _SIZE.format("process") + r" memory in use",
    # the allocator's own limit, when the program set one (torch.cuda.set_per_process_memory_fraction)
    "limit": r"PyTorch limit \(set by user-supplied memory fraction\)\s*:\s*" + _SIZE.format("limit"),
}
_PATTERNS = {name: lazy(pattern, re.IGNORECASE) for name, pattern in _FIELDS.items()}
# torch >= 2.1 lists every process on the GPU (NVML): "this process" for itself, "Process <pid>" for the
# others, and for itself too when it runs in a container, whose PID NVML does not know
_PROCESS = lazy(r"Process \d+ has " + _SIZE.format("others") + r" memory in use", re.IGNORECASE)
FREE_ENOUGH = 256 << 20  # free memory above this and 4x the request: the request did not fail for lack of it
CONTEXT_SLACK = 1 << 30  # what a process holds beyond PyTorch's reservation: its CUDA context, cuBLAS, NCCL


@dataclass(frozen=True)
class OomNumbers:
    """The sizes an out-of-memory message states, in bytes (None: not in the message)."""

    tried: int | None = None
    total: int | None = None
    limit: int | None = None  # the memory fraction the program set, as bytes, where the message states it
    free: int | None = None
    allocated: int | None = None  # by PyTorch's tensors
    reserved: int | None = None  # by PyTorch's caching allocator (allocated + cached)
    process: int | None = None  # all memory of the process, PyTorch or not (torch >= 2.1)
    others: int | None = None  # memory of another process the message names


def _bytes(match: re.Match[str], name: str) -> int | None:
    for key in (name, f"{name}2", f"{name}3"):
        value = match.groupdict().get(key)
        if value is not None:
            unit = match.group(f"{key}_unit").lower()
            return int(float(value) * _UNITS.get(unit, 1))
    return None


def oom_numbers(text: str) -> OomNumbers:
    """Every size the message states; the rest None."""
    found: dict[str, int | None] = {}
    for name, pattern in _PATTERNS.items():
        match = pattern.search(text)
        found[name] = _bytes(match, name) if match is not None else None
    unallocated = found.pop("unallocated")
    cached = found.pop("cached")
    if found["reserved"] is None and found["allocated"] is not None:
        spare = unallocated if unallocated is not None else cached
        found["reserved"] = found["allocated"] + spare if spare is not None else None
    found["others"] = _others(text, found["process"], found["reserved"])
    return OomNumbers(**found)


def _others(text: str, this_process: int | None, reserved: int | None) -> int | None:
    """What other processes hold. Without a "this process" line, the one process whose use is PyTorch's
    reservation plus a CUDA context is this program in a container, not another one."""
    sizes = [_bytes(m, "others") or 0 for m in _PROCESS.finditer(text)]
    if not sizes:
        return None
    if this_process is None and reserved is not None:
        own = next((n for n in sizes if reserved <= n <= reserved + CONTEXT_SLACK), None)
        if own is not None:
            sizes.remove(own)
    return sum(sizes) if sizes else None


# What the CUDA context and a desktop on the same GPU take, unseen by torch's counters: about 0.3-0.6 GiB of
# context, and up to about 1.5 GiB for a desktop at high resolution (Windows' WDDM more). Beyond it, on a small
# card too, memory used outside the program is another program's (blind set 11: 1.55 of 6 GiB was the desktop).
DESKTOP_AND_CONTEXT = 2 << 30
# one request above this is larger than the whole memory of nearly every GPU (B200: 180 GiB; a few newer boards
# have more): without the GPU's total in the message it is still an input far too large (blind set 27: 218.96 GiB
# for one image, comfyui_controlnet_aux#50)
LARGER_THAN_GPUS = 200 << 30
# one request this share of the whole GPU: a job at the card's limit, not only a fragmented cache
AT_THE_LIMIT = 0.2


def _gib(n: int) -> str:
    return f"{n / (1 << 30):.2f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.0f} MiB"


def stated_most(reported: tuple[ReportedError, ...]) -> ReportedError | None:
    """Of the out-of-memory errors reported, the one whose message states the most (its figures decide)."""
    errors = [e for e in reported if e.kind == "oom"]
    return max(errors, key=lambda e: len(e.text) + len(e.context)) if errors else None


def sized(error: ReportedError) -> bool:
    """The message states the GPU's total: its figures say whose memory it was."""
    return oom_numbers(f"{error.text} {error.context}").total is not None


def _over_own_limit(n: OomNumbers) -> bool:
    """The allocator's report names a memory fraction below the GPU's memory, and the request crosses it."""
    if n.limit is None or n.total is None or n.allocated is None or n.tried is None:
        return False
    return n.limit < n.total and n.allocated + n.tried > n.limit


def _judge(error: ReportedError, half: str) -> tuple[str, Remediation]:
    if error.signature == "oom_vllm_no_memory_for_cache_blocks":
        return "vLLM has no memory left for its KV cache after loading the model", kv_cache()
    if error.signature == "oom_vllm_free_memory_on_startup":
        free, total = error.values.get("free"), error.values.get("total")
        held = f" (only {free} of {total} GiB was free)" if free and total else ""
        return f"other processes held the GPU's memory when vLLM started{held}", holder()
    n = oom_numbers(f"{error.text} {error.context}")
    if _over_own_limit(n):  # the program's own cap, not the GPU, ran out
        return (
            f"the program capped itself at {_gib(n.limit or 0)} of the GPU's {_gib(n.total or 0)} (a memory "
            f"fraction it set), and {_gib(n.allocated or 0)} allocated plus {_gib(n.tried or 0)} asked for exceed it"
        ), memory_fraction()
    # what the program holds: all its memory (torch >= 2.1), else PyTorch's reservation, else (the allocator's
    # limit report) what PyTorch allocated, a lower bound. Never less than PyTorch's own figures: where torch
    # cannot ask the driver (Windows, WSL) it prints "this process has 0 bytes memory in use" beside 23 GiB
    # "allocated by PyTorch" (blind set 32: a full card read as another program's)
    stated = [x for x in (n.process, n.reserved, n.allocated) if x is not None]
    used_by_torch = max(stated) if stated else None
    if n.tried and n.total and n.tried > n.total:  # no process to stop, no cache to defragment helps
        return (
            f"one allocation of {_gib(n.tried)} is larger than the GPU's whole {_gib(n.total)} (an input or "
            "batch far too large for it)"
        ), larger_than_the_gpu(_gib(n.tried), _gib(n.total))
    if n.tried and n.total is None and n.tried > LARGER_THAN_GPUS:  # the message without the GPU's total
        return (
            f"one allocation of {_gib(n.tried)} is larger than nearly every GPU's whole memory (an input or batch "
            "far too large)"
        ), larger_than_the_gpu(_gib(n.tried), "any common size")
    if n.others is not None and n.total and n.others > 0.25 * n.total:
        return f"another process holds {_gib(n.others)} of the GPU's {_gib(n.total)}", holder()
    if n.total and n.free is not None and used_by_torch is not None:
        elsewhere = n.total - n.free - used_by_torch
        if elsewhere > max(0.25 * n.total, DESKTOP_AND_CONTEXT):
            return (
                f"{_gib(elsewhere)} of the GPU's {_gib(n.total)} is used outside this program "
                f"(it holds {_gib(used_by_torch)}, {_gib(n.free)} is free)"
            ), holder()
    if n.reserved and n.allocated is not None and n.tried:
        cached = n.reserved - n.allocated
        if cached > n.tried and cached > 0.2 * n.reserved:
            share = (  # one request a large share of the card: the job is at its limit too
                f"{_gib(n.tried)} of its {_gib(n.total)}"
                if n.total and n.tried >= AT_THE_LIMIT * n.total
                else None
            )
            return (
                f"{_gib(cached)} is reserved by PyTorch but unused, more than the {_gib(n.tried)} asked for: "
                "the cache is fragmented"
            ), fragmented(share)
    if n.tried and n.free is not None and n.free > max(4 * n.tried, FREE_ENOUGH):
        # the memory was there, just not in one piece the allocator could take (PyTorch's own hint)
        return (
            f"{_gib(n.free)} was free, far more than the {_gib(n.tried)} asked for: the memory is there, not in "
            "one piece"
        ), fragmented()
    if n.total and n.free is not None and used_by_torch == 0:  # nothing allocated yet: the first step failed
        outside = n.total - n.free
        return (
            f"its first allocation failed: the program holds nothing yet, and {_gib(n.free)} of the GPU's "
            f"{_gib(n.total)} was free ({_gib(outside)} held outside it)"
        ), first_allocation(_gib(n.free), _gib(outside))
    if (
        n.total and n.tried and n.free is not None and n.tried > 0.25 * n.total
    ):  # one request a large part of it
        held = f"; it holds {_gib(used_by_torch)}" if used_by_torch is not None else ""
        return (
            f"it asked for {_gib(n.tried)} at once, with {_gib(n.free)} of the GPU's {_gib(n.total)} free{held}"
        ), one_large_input(_gib(n.tried), half)
    if n.total and used_by_torch is not None and n.free is not None:  # the rest is its context, a desktop
        outside = n.total - n.free - used_by_torch
        held = (
            f"; {_gib(outside)} is held outside it (its CUDA context, the desktop, a browser or another program)"
            if outside >= 1 << 30
            else ""
        )
        return (
            f"it holds {_gib(used_by_torch)} of the GPU's {_gib(n.total)}, and {_gib(n.free)} was left{held}"
        ), too_big_beside_a_share(_gib(outside)) if outside >= 1 << 30 else too_big(half)
    if n.total:
        return f"this program uses the GPU's whole {_gib(n.total)}", too_big(half)
    return "the program asked for more GPU memory than was free", too_big(half)


@check(CID, "The program's GPU memory suffices", "torch")
def torch_out_of_memory(facts: Facts) -> Finding:
    """
    ## What it checks
    Out-of-memory errors a program reported ("CUDA out of memory. Tried to allocate ..."), read from output
    the doctor was given (a paste in `gpu-doctor triage`), and the sizes the message states: the GPU's total,
    what is free, what PyTorch allocated and reserved, what other processes hold.

    ## Why it matters
    The same error has three different fixes. When another process holds the memory, no batch size helps;
    when PyTorch's cache is fragmented, one environment variable does; only when the job itself is too big
    do batch size, precision, checkpointing or sharding matter.

    ## How to fix
    Another process: find it with `nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv`
    and stop it. Fragmentation: `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`. A job too big: smaller
    batches with gradient accumulation, bf16/fp16, activation checkpointing, FSDP, or a larger GPU.
    """
    reported = facts.reported_errors
    if isinstance(reported, Unavailable):
        return Finding(
            CID, Status.SKIP, "No program output was read (`gpu-doctor triage FILE` reads a pasted error)."
        )
    error = stated_most(reported)
    if error is None:
        return Finding(CID, Status.PASS, "No out-of-memory error was reported.")
    why, fix = _judge(error, half_precision(gpu_capabilities(facts)))
    return Finding(
        CID,
        Status.FAIL,
        f"The program ran out of GPU memory: {why}.",
        details=error.means,
        evidence=reported_evidence([e for e in reported if e.kind == "oom"]),
        remediation=fix,
    )
