"""Sizing advice the checks add to what they find (issue 20, item 5): how many DataLoader workers the CPUs
allow per GPU and what /dev/shm then holds per batch, and what the PCIe links mean for multi-GPU training.
Advice with its arithmetic and its reason, never a verdict by itself.

DataLoader: each worker loads `prefetch_factor` batches ahead (default 2: "there will be a total of 2 *
num_workers batches prefetched across all workers", torch.utils.data.DataLoader's documentation), and hands
them to the training process through shared memory (/dev/shm). One logical CPU per training process is left
for the process itself (it launches the GPU's work).
"""

from __future__ import annotations

from torch_gpu_doctor.facts.describe import gib
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.unavailable import Unavailable

PREFETCH_FACTOR = 2  # DataLoader's default
# 256 ImageNet images at 224x224, 3 channels, float32: a common training batch, for scale
IMAGENET_BATCH_BYTES = 256 * 3 * 224 * 224 * 4


def workers_per_gpu(facts: Facts) -> tuple[int, int, int] | None:
    """(NVIDIA GPUs, logical CPUs, DataLoader workers per GPU that leave a CPU to each training process)."""
    gpus = len(facts.nvidia_gpus)
    cpus = facts.cpu.logical_cpus if not isinstance(facts.cpu, Unavailable) else None
    if gpus == 0 or not isinstance(cpus, int) or cpus <= 0:
        return None
    return gpus, cpus, max(0, (cpus - gpus) // gpus)


def _size(n: float) -> str:
    return gib(int(n)) if n >= 1 << 30 else f"{n / 2**20:.0f} MiB"


def worker_advice(facts: Facts, shm_bytes: int | None, warned: bool = False) -> str:
    """How many workers per GPU the CPUs allow, and the batch size /dev/shm (of `shm_bytes`; None: no limit)
    then holds; "" without GPUs or a CPU count. `warned`: beside a warning that workers will die, where a
    machine with no CPU to spare for workers says nothing more (its workers are the lesser problem)."""
    sizing = workers_per_gpu(facts)
    if sizing is None:
        return ""
    gpus, cpus, workers = sizing
    if warned and workers == 0:
        return ""
    per = "GPU" if gpus == 1 else f"each of {gpus} GPUs"
    if workers == 0:
        return (
            f"{cpus} logical CPUs for {gpus} GPU{'s' if gpus > 1 else ''}: no CPU is left for DataLoader "
            "workers beside the training processes, so loading and augmenting data runs in the training loop "
            "and the GPUs wait for it. Preprocess the data ahead of time, decode on the GPU (NVIDIA DALI, "
            "torchvision.io.decode_jpeg on cuda), or use a machine with more CPUs per GPU."
        )
    lines = [
        f"{cpus} logical CPUs: up to {workers} DataLoader workers for {per} (num_workers={workers}), one CPU "
        "left to each training process."
    ]
    if shm_bytes is not None:
        batches = gpus * workers * PREFETCH_FACTOR
        budget = shm_bytes / batches
        lines.append(
            f"They hold up to {batches} batches in /dev/shm at once (prefetch_factor={PREFETCH_FACTOR}), so its "
            f"{_size(shm_bytes)} allow batches of up to {_size(budget)} each; 256 ImageNet images at 224x224 "
            f"in float32 take {_size(IMAGENET_BATCH_BYTES)}."
        )
    return " ".join(lines)


def multi_gpu_link_advice(rates: list[tuple[str, float]], all_nvlink: bool) -> str:
    """For two or more GPUs: what the PCIe links (GB/s per direction under load, per GPU) mean for training
    on all of them; "" for fewer than two."""
    if len(rates) < 2:
        return ""
    bdf, slowest = min(rates, key=lambda r: r[1])
    fastest = max(r[1] for r in rates)
    spread = f"{slowest:.1f} GB/s" if fastest - slowest < 0.05 else f"{slowest:.1f} to {fastest:.1f} GB/s"
    head = f"Multi-GPU training: each GPU's link gives {spread} per direction under load"
    if all_nvlink:
        return f"{head}; NVLink joins every pair, so PCIe carries only the data loading."
    return (
        f"{head} (the narrowest: {bdf}). Without NVLink the GPUs exchange gradients over these links, "
        "through host memory when peer-to-peer is off, so the narrowest link paces every all-reduce: "
        "x16 links on the CPU's own lanes suit multi-GPU training best."
    )
