"""Letting GPU peer-to-peer traffic turn around inside a PCIe switch again: ACS off on the switch's ports.

From NVIDIA's NCCL troubleshooting guide ("PCI Access Control Services"): if PCI switches have ACS enabled it
needs to be disabled, from the BIOS (IO virtualization / VT-d) or, for Broadcom PLX switches, from the OS with
`setpci -s <BDF> ECAP_ACS+0x6.w=0000`, again after every reboot.
"""

from __future__ import annotations

from torch_gpu_doctor.model import Command, Remediation, Target


def clear_acs(ports: tuple[str, ...]) -> Remediation:
    commands = tuple(
        Command(
            ("sudo", "setpci", "-s", port, "ECAP_ACS+0x6.w=0000"),
            note="ACS control off on this port until reboot",
        )
        for port in sorted(set(ports))
    )
    return Remediation(
        text=(
            "Turn ACS off on the switch ports the GPUs hang from (until the next reboot), or for good switch off "
            "IO virtualization (VT-d / AMD-Vi, or ACS) in the firmware setup, or boot with intel_iommu=off / "
            "amd_iommu=off when no virtual machine needs the IOMMU (iommu=pt alone leaves ACS on). Check with "
            "`nvidia-smi topo -p2p p` and CUDA's p2pBandwidthLatencyTest. ACS is what isolates devices for VFIO "
            "passthrough: keep it where VMs get devices from this switch."
        ),
        commands=commands,
        requires_root=True,
        target=Target.SYSTEM,
    )
