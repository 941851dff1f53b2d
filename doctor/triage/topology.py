"""A pasted `nvidia-smi topo -m` beside words that say multi-GPU work is slow: the GPUs it pairs across CPU
sockets are the likely cause (blind set 17: an 8x RTX 4090 server whose two NUMA nodes are joined only by the
socket link, a T4 node whose all-reduce between GPU 0 and GPU 1 crossed sockets), and one socket's GPUs per job
the fix. gpu.topology states such a path as the hardware's, never as a fault; the person's words make it the
answer to their question."""

from __future__ import annotations

import dataclasses

from torch_gpu_doctor.fixes.gpu_topology import gpus_named, one_socket
from torch_gpu_doctor.model import Finding, Status
from torch_gpu_doctor.triage.paste import PastedText


def slow_across_sockets(finding: Finding, pasted: PastedText) -> Finding | None:
    """gpu.topology's finding as the cause, when the words say slow and the matrix crosses sockets."""
    shown, slow = pasted.topology, pasted.prose.slow
    if shown is None or slow is None or not shown.complete or "SYS" not in shown.cells.values():
        return None
    sockets: dict[str, list[int]] = {}
    for gpu in shown.gpus:
        if gpu in shown.numa:
            sockets.setdefault(f"NUMA node {shown.numa[gpu]}", []).append(gpu)
        elif gpu in shown.cpus:
            sockets.setdefault(f"CPUs {shown.cpus[gpu]}", []).append(gpu)
    if len(sockets) < 2 or sum(len(g) for g in sockets.values()) < len(shown.gpus):
        return None  # no affinity columns to tell the sockets apart
    groups = sorted(((where, tuple(g)) for where, g in sockets.items()), key=lambda s: (-len(s[1]), s[1]))
    named = " and ".join(gpus_named(g) for _, g in groups)  # "GPUs 0-3 and GPUs 4-7"
    return dataclasses.replace(
        finding,
        status=Status.WARN,
        summary=(
            f"{named} sit on different CPU sockets ({', '.join(where for where, _ in groups)}): between them "
            f"NCCL copies through host memory across the socket link (SYS in the matrix), so a job that spans "
            f"them is slower than one inside a socket (line {slow})."
        ),
        details="",  # the check's lines on sockets say what the summary and the fix say now
        remediation=one_socket(groups),
    )
