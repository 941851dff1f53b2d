"""platform.iommu_p2p: does the IOMMU/ACS setup send GPU peer-to-peer traffic on a detour through the CPU?

Warns only with two or more NVIDIA GPUs below one PCIe switch that Linux put in separate IOMMU groups: that split is
made only when the switch's downstream ports have ACS redirect on (see torch_gpu_doctor.facts.iommu), which is the case
NVIDIA's NCCL guide says slows peer-to-peer down or hangs it. GPUs on separate root ports always cross the root
complex, so ACS on switches changes nothing for them. ACS control bits themselves need root to read: never guessed.
"""

from __future__ import annotations

from torch_gpu_doctor.facts.iommu import (
    NO_SHARED_SWITCH,
    TRANSLATED_TYPES,
    GpuIommu,
    GpuPairRoute,
    IommuFacts,
)
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.acs import clear_acs
from torch_gpu_doctor.model import Evidence, Finding, Status
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Reason, Unavailable

ID = "platform.iommu_p2p"
ROOT_ONLY = "Firmware can enable ACS without an IOMMU; only root can see it: `sudo lspci -vvv | grep ACSCtl`."


def _evidence(io: IommuFacts) -> tuple[Evidence, ...]:
    count = str(io.group_count) if isinstance(io.group_count, int) else f"unavailable ({io.group_count})"
    items = [
        Evidence("IOMMU groups", count, "/sys/kernel/iommu_groups"),
        Evidence("kernel IOMMU options", " ".join(io.cmdline_options) or "none", "/proc/cmdline"),
    ]
    for gpu in io.gpus:
        group = gpu.group if isinstance(gpu.group, str) else f"unavailable ({gpu.group})"
        kind = gpu.domain_type if isinstance(gpu.domain_type, str) else "type unknown"
        path = " > ".join(gpu.upstream) if isinstance(gpu.upstream, tuple) else "unknown path"
        items.append(
            Evidence(
                f"GPU {gpu.bdf}", f"IOMMU group {group} ({kind}); below {path or 'the root complex'}", "sysfs"
            )
        )
    return tuple(items)


def _translated(io: IommuFacts, pair: GpuPairRoute) -> list[str]:
    kinds = {g.bdf: g.domain_type for g in io.gpus}
    return sorted(
        {k for b in (pair.first, pair.second) if isinstance(k := kinds.get(b), str) and k in TRANSLATED_TYPES}
    )


@check(ID, "IOMMU and ACS leave GPU peer-to-peer traffic on its direct path", "platform")
def iommu_p2p(facts: Facts) -> Finding:
    """
    ## What it checks
    With two or more NVIDIA GPUs: the IOMMU groups under `/sys/kernel/iommu_groups`, each GPU's group and its
    domain type (`DMA`/`DMA-FQ` = translated, `identity` = passthrough), the PCI path of each GPU, and the kernel's
    IOMMU options. GPUs below one PCIe switch that sit in separate IOMMU groups mean the switch ports have ACS
    redirect enabled.

    ## Why it matters
    Multi-GPU training (NCCL, `torch.distributed`) copies between GPUs peer-to-peer. With ACS redirect on a
    PCIe switch, that traffic cannot turn around in the switch: it goes up to the CPU's root complex (and
    through IOMMU translation), which NVIDIA's NCCL guide says causes "a significant performance reduction or
    even a hang". GPUs linked by NVLink talk over NVLink instead; GPUDirect RDMA to a NIC on the same switch is
    still affected.

    ## How to fix
    Turn ACS off on the switch ports (`sudo setpci -s <port> ECAP_ACS+0x6.w=0000`, again after each reboot), or
    switch off IO virtualization (VT-d / AMD-Vi) or ACS in the firmware setup, or boot with `intel_iommu=off` /
    `amd_iommu=off` when no virtual machine needs the IOMMU. Keep ACS where devices are passed to VMs.
    """
    gpus = [g for g in facts.nvidia_gpus if g.on_pci_bus]
    if len(gpus) < 2:
        return Finding(
            ID, Status.SKIP, "Fewer than two NVIDIA GPUs on the PCI bus: no GPU peer-to-peer traffic."
        )
    io = facts.iommu
    if isinstance(io, Unavailable):
        status = Status.SKIP if io.reason is Reason.NOT_APPLICABLE else Status.UNKNOWN
        return Finding(ID, status, f"Could not read the IOMMU state: {io}.")
    ev = _evidence(io)
    if isinstance(io.group_count, Unavailable):
        return Finding(ID, Status.UNKNOWN, f"Could not list the IOMMU groups: {io.group_count}.", evidence=ev)
    redirected = [p for p in io.pairs if p.acs_redirect is True]
    if redirected:
        return _redirected(io, redirected, ev)
    if io.group_count == 0:
        return Finding(
            ID,
            Status.PASS,
            f"No IOMMU is active: Linux turns on no ACS redirection, so the {len(gpus)} GPUs' peer-to-peer traffic "
            "takes the direct path.",
            details=ROOT_ONLY,
            evidence=ev,
        )
    unknown = [
        p for p in io.pairs if not isinstance(p.acs_redirect, bool) and p.acs_redirect != NO_SHARED_SWITCH
    ]
    if unknown:
        return Finding(
            ID,
            Status.UNKNOWN,
            f"Could not tell whether ACS redirects peer-to-peer traffic between {unknown[0].first} and "
            f"{unknown[0].second}: {unknown[0].acs_redirect}.",
            details=ROOT_ONLY,
            evidence=ev,
        )
    if any(p.shared_bridge is not None for p in io.pairs):
        return Finding(
            ID,
            Status.PASS,
            "The GPUs below a shared PCIe switch are in one IOMMU group: no ACS redirection, peer-to-peer traffic "
            "turns around in the switch.",
            evidence=ev,
        )
    return Finding(
        ID,
        Status.PASS,
        "The GPUs sit on separate root ports: their peer-to-peer traffic crosses the CPU's root complex whatever "
        "ACS says, and no switch redirects it.",
        details=_types_note(io.gpus),
        evidence=ev,
    )


def _redirected(io: IommuFacts, pairs: list[GpuPairRoute], ev: tuple[Evidence, ...]) -> Finding:
    first = pairs[0]
    more = f" (and {len(pairs) - 1} more GPU pair{'s' if len(pairs) > 2 else ''})" if len(pairs) > 1 else ""
    kinds = _translated(io, first)
    translated = f" and through IOMMU address translation ({', '.join(kinds)})" if kinds else ""
    ports = tuple(port for p in pairs for port in p.turn_ports)
    return Finding(
        ID,
        Status.WARN,
        f"GPUs {first.first} and {first.second} share PCIe switch {first.shared_bridge} but sit in separate IOMMU "
        f"groups{more}: ACS redirects their peer-to-peer traffic up to the CPU's root complex{translated}, which "
        "slows NCCL down or hangs it.",
        details="Linux isolates devices below a switch in their own IOMMU groups only when the switch ports have ACS "
        "redirect on. If these GPUs are linked by NVLink, GPU-to-GPU traffic is unaffected; GPUDirect RDMA to a NIC "
        "on the same switch still is. If NCCL hangs, NCCL_P2P_DISABLE=1 works around it at a cost in speed.",
        evidence=ev,
        remediation=clear_acs(ports),
    )


def _types_note(gpus: tuple[GpuIommu, ...]) -> str:
    kinds = sorted({g.domain_type for g in gpus if isinstance(g.domain_type, str)})
    return f"IOMMU domain type of the GPUs: {', '.join(kinds)}." if kinds else ""
