"""Remedies for how GPUs reach each other: keep the GPUs of one job on one CPU socket."""

from __future__ import annotations

from collections.abc import Sequence

from torch_gpu_doctor.model import Command, Remediation


def gpu_range(indices: Sequence[int]) -> str:
    """ "0-3", "1,3", "4-7": GPU indices as a person writes them."""
    ordered = sorted(indices)
    runs: list[list[int]] = []
    for i in ordered:
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ",".join(f"{r[0]}-{r[-1]}" if len(r) > 2 else ",".join(map(str, r)) for r in runs)


def one_socket(groups: Sequence[tuple[str, tuple[int, ...]]]) -> Remediation:
    """`groups`: each CPU socket's GPUs with the words that name it ("NUMA node 0"), the largest first."""
    label, largest = groups[0]
    others = "; ".join(f"{gpus_named(g)} ({where})" for where, g in groups[1:])
    return Remediation(
        text=(
            f"Give each job GPUs of one socket: {gpus_named(largest)} ({label}), or {others}. Between sockets "
            "NCCL copies through host memory over the link between the CPUs, which no setting makes fast; "
            "with NCCL_DEBUG=INFO it prints the transport it chose for each pair of ranks (P2P or SHM). A job "
            "that needs more GPUs than one socket holds pays for the crossing: then larger batches per step "
            "(data parallel) cross it less often than tensor parallelism, which crosses it in every layer."
        ),
        commands=(
            Command(
                (
                    "env",
                    f"CUDA_VISIBLE_DEVICES={','.join(map(str, sorted(largest)))}",
                    "NCCL_DEBUG=INFO",
                    "PROGRAM",
                ),
                note=f"PROGRAM: your command; {gpus_named(largest)} share {label}",
                runs_here=False,
            ),
        ),
    )


def gpus_named(indices: Sequence[int]) -> str:
    return f"GPU{'s' if len(indices) > 1 else ''} {gpu_range(indices)}"
