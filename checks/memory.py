"""memory.ram, memory.shm, memory.locked_limit, memory.bandwidth: the host memory a PyTorch job leans on."""

from __future__ import annotations

from torch_gpu_doctor.checks.pcie_link import loaded_bandwidth
from torch_gpu_doctor.checks.support.sizing import worker_advice
from torch_gpu_doctor.facts.describe import gib
from torch_gpu_doctor.facts.measurements import ROUTINE_NON_TEMPORAL, STREAM_CACHE_MULTIPLE, not_measured
from torch_gpu_doctor.facts.memory_limits import ShmSizeSource
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.model import Command, Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Reason, Unavailable

LOW_AVAILABLE_BYTES = 2 << 30
SMALL_SHM_BYTES = 1 << 30  # Docker's default is 64 MiB; one batch of 64 224×224 float images is 38 MiB
SHM_FULL_FRACTION = 0.1
SHM = "/dev/shm"  # noqa: S108 - the shared-memory mount this check is about, not a temporary file
SMALL_LOCKED_BYTES = 64 << 20
SLOW_RAM_GB_PER_S = 5.0  # far below one DDR4 channel: single-channel, throttled, or a starved VM


def _mib(n: int) -> str:
    """64 KiB, 8 MiB, 16 GiB: the unit in which a limit is usually written."""
    if n < 1 << 20:
        return f"{n / 2**10:.0f} KiB"
    return f"{n / 2**20:.0f} MiB" if n < 2**30 else gib(n)


@check("memory.ram", "RAM is not smaller than the GPUs' memory", "memory")
def ram(facts: Facts) -> Finding:
    """
    ## What it checks
    Total and available RAM and swap (`/proc/meminfo`), next to the total memory of the NVIDIA GPUs.

    ## Why it matters
    Everything that reaches a GPU passes through RAM first: `torch.load` reads a checkpoint into RAM before
    it moves to the GPU, DataLoader workers each hold batches, and pinned buffers cannot be swapped. With less
    RAM than GPU memory, filling the GPUs means running out of RAM first, and the kernel's OOM killer ends the
    job with a bare `Killed`.

    ## How to fix
    Add RAM (at least as much as the GPUs have in total; twice is common on training servers), or load
    checkpoints with `torch.load(..., map_location="cuda", mmap=True)` and use fewer DataLoader workers.
    """
    cid = "memory.ram"
    memory = facts.memory
    if isinstance(memory, Unavailable):
        return Finding(cid, Status.UNKNOWN, f"Could not read the memory size: {memory}.")
    total, available, swap = memory.total_bytes, memory.available_bytes, memory.swap_total_bytes
    if isinstance(total, Unavailable):
        return Finding(cid, Status.UNKNOWN, f"Could not read the memory size: {total}.")
    evidence = [Evidence("MemTotal", gib(total), "/proc/meminfo")]
    parts = [f"{gib(total)} of RAM"]
    if isinstance(available, int):
        evidence.append(Evidence("MemAvailable", gib(available), "/proc/meminfo"))
        parts.append(f"{gib(available)} available")
    if isinstance(swap, int):
        evidence.append(Evidence("SwapTotal", gib(swap), "/proc/meminfo"))
        parts.append(f"{gib(swap)} of swap" if swap else "no swap")
    gpu_bytes = [g.memory_total_bytes for g in facts.nvidia_gpus if isinstance(g.memory_total_bytes, int)]
    gpu_total = sum(gpu_bytes)
    if gpu_bytes:
        evidence.append(Evidence("GPU memory, all NVIDIA GPUs", gib(gpu_total), "NVML"))
        parts.append(f"for {gib(gpu_total)} of GPU memory")
    sentence = ", ".join(parts)
    if gpu_total > total:
        return Finding(
            cid,
            Status.WARN,
            f"Less RAM than GPU memory: {sentence}.",
            details="Data on its way to the GPUs passes through RAM: a checkpoint loaded whole, or a big batch "
            "from many workers, can be killed by the OOM killer before the GPUs are full.",
            evidence=tuple(evidence),
            remediation=Remediation(
                text="Load checkpoints memory-mapped, so they never sit in RAM whole: "
                "torch.load(path, map_location='cuda', mmap=True), or safetensors (its files are mapped); "
                "keep DataLoader workers few. For good: RAM at least the GPUs' total.",
                target=Target.PYTHON_ENV,
            ),
        )
    if isinstance(available, int) and available < LOW_AVAILABLE_BYTES:
        return Finding(
            cid,
            Status.WARN,
            f"Only {gib(available)} of {gib(total)} RAM is available right now.",
            details="Other processes hold the rest; a training job started now may be killed by the OOM killer.",
            evidence=tuple(evidence),
            remediation=Remediation(
                text="See which processes hold the memory (largest first), and stop what you do not need.",
                commands=(Command(("ps", "aux", "--sort=-rss")),),
                target=Target.SYSTEM,
            ),
        )
    return Finding(cid, Status.PASS, f"{sentence[0].upper()}{sentence[1:]}.", evidence=tuple(evidence))


def _shm_fix(facts: Facts) -> Remediation:
    container = facts.os.container if not isinstance(facts.os, Unavailable) else None
    if container == "kubernetes":
        return Remediation(
            text="Mount a memory-backed emptyDir at /dev/shm in the pod spec: volumes: [{name: dshm, emptyDir: "
            "{medium: Memory, sizeLimit: 8Gi}}] and volumeMounts: [{name: dshm, mountPath: /dev/shm}].",
            target=Target.SYSTEM,
        )
    if container is not None:
        return Remediation(
            text="Start the container with a larger /dev/shm: `docker run --shm-size=8g ...` (or `--ipc=host`); "
            "in compose, `shm_size: 8gb`. Podman takes the same --shm-size flag.",
            target=Target.SYSTEM,
        )
    return Remediation(
        text="Grow /dev/shm until the next boot (make it permanent with a tmpfs line in /etc/fstab).",
        commands=(Command(("sudo", "mount", "-o", "remount,size=8G", SHM)),),
        requires_root=True,
        target=Target.SYSTEM,
    )


@check("memory.shm", f"{SHM} is large enough for DataLoader workers", "memory")
def shm(facts: Facts) -> Finding:
    """
    ## What it checks
    The size and free space of the shared-memory filesystem `/dev/shm` (its `size=` mount option, or the
    kernel's default of half the RAM when none is shown).

    ## Why it matters
    DataLoader worker processes hand every batch to the training process through `/dev/shm`. Docker gives a
    container only 64 MiB there, and workers then die with "bus error" or "DataLoader worker (pid ...) is
    killed by signal: Bus error ... insufficient shared memory (shm)".

    ## How to fix
    Start the container with `--shm-size=8g` (or `--ipc=host`); in Kubernetes mount a memory-backed
    `emptyDir` at `/dev/shm`; on a host, remount `/dev/shm` with a larger `size=`. As a stopgap,
    `num_workers=0` avoids shared memory at the cost of speed.
    """
    cid = "memory.shm"
    limits = facts.memory_limits
    if isinstance(limits, Unavailable):
        return Finding(cid, Status.UNKNOWN, f"Could not read /dev/shm: {limits}.")
    info = limits.shm
    if isinstance(info.mount_point, Unavailable):
        return Finding(cid, Status.UNKNOWN, f"Could not find the mount of {info.path}: {info.mount_point}.")
    source = "/proc/self/mountinfo"
    evidence = [Evidence("mount", f"{info.fs_type} at {info.mount_point}", source)]
    if info.mount_point != info.path:
        return Finding(
            cid,
            Status.PASS,
            f"{info.path} is not a mount of its own: shared memory files land on {info.fs_type} at "
            f"{info.mount_point}, without a tmpfs limit.",
            details=worker_advice(facts, None),
            evidence=tuple(evidence),
        )
    size, how = info.size_bytes, info.size_source
    if how is ShmSizeSource.UNLIMITED:
        return Finding(
            cid,
            Status.PASS,
            f"{info.path} has no size limit.",
            details=worker_advice(facts, None),
            evidence=tuple(evidence),
        )
    if isinstance(size, Unavailable):
        return Finding(cid, Status.UNKNOWN, f"Could not tell the size of {info.path}: {size}.")
    origin = "the kernel default, half of RAM" if how is ShmSizeSource.KERNEL_DEFAULT else "its size= option"
    evidence.append(Evidence("size", f"{_mib(size)} ({origin})", source))
    free = info.free_bytes
    if isinstance(free, int):
        evidence.append(Evidence("free", _mib(free), "statvfs"))
    if size < SMALL_SHM_BYTES:
        where = " (Docker's default)" if size == 64 << 20 else ""
        return Finding(
            cid,
            Status.WARN,
            f"{info.path} holds only {_mib(size)}{where}: DataLoader workers will die with 'bus error'.",
            details="Each worker passes its batches through shared memory; a few batches of images exceed this. "
            + worker_advice(facts, size, warned=True),
            evidence=tuple(evidence),
            remediation=_shm_fix(facts),
        )
    if isinstance(free, int) and free < SHM_FULL_FRACTION * size and free < SMALL_SHM_BYTES:
        return Finding(
            cid,
            Status.WARN,
            f"{info.path} is almost full: {_mib(free)} free of {_mib(size)}.",
            details="Leftover files of crashed jobs stay there until removed or until a reboot: see "
            f"`ls -la {info.path}` and delete those no running process uses.",
            evidence=tuple(evidence),
        )
    return Finding(
        cid,
        Status.PASS,
        f"{info.path}: {_mib(size)} ({origin}).",
        details=worker_advice(facts, size),
        evidence=tuple(evidence),
    )


@check("memory.locked_limit", "The locked-memory limit allows RDMA transfers", "memory")
def locked_limit(facts: Facts) -> Finding:
    """
    ## What it checks
    The locked-memory limit (`ulimit -l`, `Max locked memory` in `/proc/self/limits`) and whether this machine
    has RDMA devices (`/sys/class/infiniband`: InfiniBand, RoCE, EFA).

    ## Why it matters
    `pin_memory=True` pins pages through the NVIDIA driver, which this limit does not bound. RDMA does: NCCL
    over InfiniBand or RoCE and GPUDirect RDMA register their buffers with the network card, and with a small
    limit (64 KiB or 8 MiB, the defaults of many containers and distributions) that registration fails and
    NCCL falls back to slow sockets or stops.

    ## How to fix
    Raise the limit: `docker run --ulimit memlock=-1:-1`, `LimitMEMLOCK=infinity` for a systemd service, or
    `* soft memlock unlimited` and `* hard memlock unlimited` in `/etc/security/limits.conf` and log in again.
    """
    cid = "memory.locked_limit"
    limits = facts.memory_limits
    if isinstance(limits, Unavailable):
        return Finding(cid, Status.UNKNOWN, f"Could not read the limits: {limits}.")
    locked, rdma = limits.locked_memory, limits.rdma_devices
    if isinstance(locked, Unavailable):
        return Finding(cid, Status.UNKNOWN, f"Could not read the locked-memory limit: {locked}.")
    if locked.soft_unlimited:
        return Finding(cid, Status.PASS, "The locked-memory limit is unlimited.")
    soft = locked.soft_bytes or 0
    evidence = [Evidence("Max locked memory (soft)", _mib(soft), "/proc/self/limits")]
    if isinstance(rdma, Unavailable):
        evidence.append(Evidence("RDMA devices", str(rdma), "/sys/class/infiniband"))
        if soft < SMALL_LOCKED_BYTES:
            return Finding(
                cid,
                Status.UNKNOWN,
                f"The locked-memory limit is {_mib(soft)}; whether this machine has RDMA devices could not be read "
                f"({rdma}).",
                evidence=tuple(evidence),
            )
        return Finding(
            cid, Status.PASS, f"The locked-memory limit is {_mib(soft)}.", evidence=tuple(evidence)
        )
    if not rdma:
        return Finding(
            cid,
            Status.PASS,
            f"The locked-memory limit is {_mib(soft)}; it matters only for RDMA, and this machine has no RDMA "
            "device.",
            evidence=tuple(evidence),
        )
    evidence.append(Evidence("RDMA devices", ", ".join(rdma), "/sys/class/infiniband"))
    return Finding(
        cid,
        Status.WARN,
        f"The locked-memory limit is {_mib(soft)} on a machine with RDMA devices ({', '.join(rdma)}): NCCL "
        "cannot register its buffers for InfiniBand/RoCE.",
        details="NCCL then reports 'ibv_reg_mr failed' or 'Call to ibv_reg_mr failed' and falls back to sockets "
        "or stops. Set the limit to unlimited for the training job.",
        evidence=tuple(evidence),
        remediation=Remediation(
            text="Containers: `docker run --ulimit memlock=-1:-1 ...`. Hosts: add `* soft memlock unlimited` and "
            "`* hard memlock unlimited` to /etc/security/limits.conf and log in again; services: "
            "LimitMEMLOCK=infinity.",
            target=Target.SYSTEM,
        ),
    )


@check("memory.bandwidth", "RAM is fast enough to feed the GPUs", "memory")
def bandwidth(facts: Facts) -> Finding:
    """
    ## What it checks
    With `--measure`: the RAM copy bandwidth, measured with one thread per CPU over buffers four times the
    last-level cache (STREAM's rules, bytes counted as STREAM Copy does), next to the PCIe bandwidth of the
    fastest GPU link, which a host-to-device copy must be able to read from RAM. Where the buffers had to be
    smaller (a cache too large for the memory cap, or fresh memory too slow to prepare within the time
    budget) the finding says so. The copy streams with non-temporal stores whatever the size, so part of the
    reads may come from the cache: such a figure can only be too high, and a low one still stands. (A
    recording made before the copy routine was forced used glibc's size-picked stores, which on short arrays
    came out too low: a low figure there is not judged.)

    ## Why it matters
    Every batch is copied from RAM to the GPU; pageable tensors are copied twice. RAM slower than the GPU's
    link (one memory channel in use, a throttled or overcommitted VM) caps every transfer below what the link
    can do.

    ## How to fix
    Populate the memory channels in pairs as the board manual says (one DIMM per channel), enable the XMP/EXPO
    profile in the firmware, and on a VM ask for a larger instance or dedicated cores.
    """
    cid = "memory.bandwidth"
    measured = facts.measurements
    why = measured if isinstance(measured, Unavailable) else measured.ram
    if isinstance(why, Unavailable):
        status = Status.SKIP if why.reason in (Reason.NOT_APPLICABLE, Reason.NOT_RECORDED) else Status.UNKNOWN
        return Finding(cid, status, not_measured("RAM bandwidth", why))
    result = why
    rate = result.bandwidth_gb_per_s
    if isinstance(rate, Unavailable):
        return Finding(cid, Status.UNKNOWN, f"The RAM measurement did not finish: {rate}.")
    evidence = [Evidence("copy bandwidth", f"{rate:.1f} GB/s", result.method)]
    caveat = ""
    streamed = result.copy_routine == ROUTINE_NON_TEMPORAL
    if result.cache_multiple < STREAM_CACHE_MULTIPLE:
        arrays = f"The copied arrays were {result.cache_multiple:.1f}× the {result.cache_bytes >> 20} MiB "
        caveat = arrays + (
            f"last-level cache (STREAM asks for {STREAM_CACHE_MULTIPLE}×), so part of each source may have been "
            "read from the cache. The copy's stores bypass the cache, so only the reads can gain from it: the "
            "cache can make this figure higher than the RAM's, never lower (a busy machine can lower any figure)."
            if streamed
            else f"last-level cache (STREAM asks for {STREAM_CACHE_MULTIPLE}×). The error measured on such arrays "
            "went the other way from the cache's help: below glibc's non-temporal threshold (3/4 of the L3 "
            "that CPUID reports) memcpy writes through the cache, and under load the figure came out at "
            "0.22-0.75 of a C memcpy reference. This figure is more likely too low than too high."
        )
        evidence.append(
            Evidence(
                "copied arrays",
                f"{result.buffer_bytes * result.threads >> 20} MiB, {result.cache_multiple:.1f}× the cache",
                "the arrays' size against the last-level cache in /sys/devices/system/cpu/*/cache",
            )
        )
    links = [
        (bw, path.bdf)
        for path in (facts.pcie if isinstance(facts.pcie, tuple) else ())
        if (bw := loaded_bandwidth(path)) is not None
    ]
    need = max(links) if links else None
    if need is not None:
        evidence.append(Evidence("fastest GPU link", f"{need[0]:.1f} GB/s at {need[1]}", "pcie.link"))
    said = f"RAM copies at {rate:.1f} GB/s ({result.threads} threads)"
    too_low = rate < SLOW_RAM_GB_PER_S or (need is not None and rate < need[0])
    if caveat and too_low and not streamed:  # cut short under glibc's own choice: low is no evidence
        return Finding(
            cid,
            Status.UNKNOWN,
            f"{said} on arrays cut short, a figure more likely too low than the RAM's: not enough to judge.",
            details=caveat,
            evidence=tuple(evidence),
            remediation=Remediation(
                text="Measure again while the machine is idle (nothing else copying or computing).",
                commands=(Command(("gpu-doctor", "--measure", "--check", cid)),),
                target=Target.SYSTEM,
            ),
        )
    if rate < SLOW_RAM_GB_PER_S:
        return Finding(
            cid,
            Status.WARN,
            f"{said}: far below any dual-channel DDR4 machine (about 51 GB/s peak).",
            details="Typical causes: one memory channel in use, memory running at its fallback speed, or a VM whose "
            "host is overcommitted." + (f" {caveat}" if caveat else ""),
            evidence=tuple(evidence),
        )
    if need is not None and rate < need[0]:
        return Finding(
            cid,
            Status.WARN,
            f"{said}, less than the {need[0]:.1f} GB/s the GPU link at {need[1]} can take: transfers to the GPU "
            "will be limited by RAM, not by PCIe.",
            details=caveat,
            evidence=tuple(evidence),
        )
    context = f", above the {need[0]:.1f} GB/s of the fastest GPU link" if need is not None else ""
    return Finding(cid, Status.PASS, f"{said}{context}.", details=caveat, evidence=tuple(evidence))
