"""Why no NVIDIA GPU is visible although one is plausibly there: then the installed GPU build of torch stays.

Replacing a CUDA build with the CPU wheel is the right advice for a machine without a GPU, and the wrong one
when the GPU is only hidden: an eGPU enclosure that is not authorized (or whose firmware forbids PCIe
tunnels) shows no PCI device at all; WSL2 and containers reach the GPU through the driver, not the PCI bus.
The fix there is the enclosure, the Windows driver or the run flag (see egpu.*, platform.*), not torch.
Likewise a program that asks for a GPU index it does not see needs its index or its visible list changed.
"""

from __future__ import annotations

from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.model import Command, Remediation, Target
from torch_gpu_doctor.unavailable import Unavailable


def hidden_gpu_reason(facts: Facts) -> str | None:
    """A short reason when an NVIDIA GPU may exist but is not visible here; None when none is expected."""
    tb = facts.thunderbolt
    if not isinstance(tb, Unavailable):
        from torch_gpu_doctor.facts.thunderbolt import PCIE_BLOCKING_SECURITY  # loaded where Thunderbolt is

        blocked = [d.name for d in tb.domains if d.security in PCIE_BLOCKING_SECURITY]
        waiting = [d.name for d in tb.devices if not d.is_host_router and d.authorized == 0]
        if blocked:
            return "the Thunderbolt firmware setting blocks PCIe tunnels, so an eGPU cannot appear"
        if waiting:
            return "a Thunderbolt device is not authorized yet, so a GPU behind it cannot appear"
    os_facts = facts.os
    if not isinstance(os_facts, Unavailable):
        if os_facts.is_wsl and os_facts.has_dxg:
            return "WSL2 reaches the GPU through the Windows driver"
        if os_facts.container is not None:
            return f"a {os_facts.container} container sees a GPU only when it is passed in"
    return None


def asked_for_a_missing_gpu() -> Remediation:
    """A program that asked CUDA for a device index it does not see ("invalid device ordinal")."""
    return Remediation(
        text="Compare the GPU index the program uses (or CUDA_VISIBLE_DEVICES, a `--gpus` or `device=` setting, "
        "a launcher's GPUs-per-node count) with the GPUs that exist: indices count from 0 within "
        "CUDA_VISIBLE_DEVICES, and a MIG instance is addressed by its MIG-... UUID. Unset CUDA_VISIBLE_DEVICES "
        "or list existing ones, and start as many processes per node as GPUs are visible.",
        commands=(
            Command(("nvidia-smi", "-L"), note="the GPUs (and MIG instances) that exist, with their UUIDs"),
        ),
        target=Target.SYSTEM,
    )


def run_on_a_free_gpu(busy: int, free: list[int]) -> Remediation:
    """Out of memory on a GPU another job fills, beside GPUs nothing uses: move this job to a free one, by its
    nvidia-smi index (with PCI_BUS_ID order, CUDA numbers them the same way)."""
    choice = free[0]
    return Remediation(
        text=f"Run the job on a GPU nothing uses ({', '.join(map(str, free))} in the table): start it with "
        f"CUDA_VISIBLE_DEVICES={choice} and CUDA_DEVICE_ORDER=PCI_BUS_ID (so CUDA numbers the GPUs as nvidia-smi "
        "does), leaving its own device option at 0, the one GPU it then sees. A program's --device option alone "
        f"may come too late (CUDA already started on GPU 0). GPU {busy} belongs to the other job; a smaller batch "
        "there cannot make room it does not have.",
        commands=(
            Command(
                ("env", "CUDA_DEVICE_ORDER=PCI_BUS_ID", f"CUDA_VISIBLE_DEVICES={choice}", "PROGRAM"),
                note="PROGRAM: the failing command, with its own device option left at 0 (the one GPU it sees)",
                runs_here=False,
            ),
        ),
        target=Target.PYTHON_ENV,
    )


def run_on_the_larger_gpu(larger: str, smaller: str) -> Remediation:
    """Two different GPUs in one machine, and the job failing as it would on the smaller one (out of memory,
    a capability warning): pin it to the larger by its nvidia-smi index. CUDA numbers GPUs fastest first unless
    CUDA_DEVICE_ORDER=PCI_BUS_ID, so an index from nvidia-smi needs that order too."""
    return Remediation(
        text=f"Run the program on the {larger} only: set CUDA_DEVICE_ORDER=PCI_BUS_ID (so CUDA numbers the GPUs as "
        f"nvidia-smi does) and CUDA_VISIBLE_DEVICES to the {larger}'s index in `nvidia-smi -L`, and check that "
        f"nothing in the program or its launcher sets another device. The {smaller} cannot hold what the {larger} "
        "can, and a library that reads the first visible GPU (bitsandbytes' capability check, a device_map) "
        "takes it for the machine's.",
        commands=(
            Command(("nvidia-smi", "-L"), note=f"the {larger}'s index"),
            Command(
                ("env", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=N", "PROGRAM"),
                note="N: that index; PROGRAM: the failing command",
                runs_here=False,
            ),
        ),
        target=Target.PYTHON_ENV,
    )


def one_gpu_per_task_fix() -> Remediation:
    """A Slurm job that binds one GPU to each task, where NCCL's peer-to-peer path opens another rank's GPU."""
    return Remediation(
        text="The job binds one GPU to each task, so each rank sees only its own GPU, and NCCL's peer-to-peer "
        "path between the ranks on a node cannot open the other rank's GPU. Let every task see the node's GPUs "
        "(`--gpus-per-node=N` with `--gpu-bind=none`, or no per-task binding) and pick each rank's GPU by its "
        "local rank (SLURM_LOCALID) in the program. NCCL_P2P_DISABLE=1 is the stopgap: it copies through the "
        "host instead, slower.",
        commands=(
            Command(
                ("srun", "--gpus-per-node=N", "--gpu-bind=none", "PROGRAM"),
                note="N: the GPUs of a node; PROGRAM then uses cuda:$SLURM_LOCALID",
                runs_here=False,
            ),
            Command(
                ("env", "NCCL_P2P_DISABLE=1", "PROGRAM"),
                note="the stopgap, through the host",
                runs_here=False,
            ),
        ),
        target=Target.SYSTEM,
    )
