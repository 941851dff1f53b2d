"""Is this a virtual machine, and which hypervisor: the CPU's `hypervisor` flag and the DMI strings.

The rules are systemd-detect-virt's (systemd `src/basic/virt.c`): the `hypervisor` CPUID bit, which every
hypervisor sets for its guests and /proc/cpuinfo lists among the `flags`, says *that* this is a VM; the DMI
vendor strings in /sys/class/dmi/id (readable without root) say *which* one. Firecracker guests have no DMI at
all, so the flag alone is kept as "a virtual machine, hypervisor not named".
"""

from __future__ import annotations

from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

DMI_DIR = "/sys/class/dmi/id"
DMI_FILES = ("sys_vendor", "product_name", "board_vendor", "bios_vendor")
# DMI vendor prefixes → hypervisor, after systemd's dmi_vendor_table (order matters: first match wins).
DMI_VENDORS = (
    ("KVM", "KVM"),
    ("OpenStack", "KVM (OpenStack)"),
    ("KubeVirt", "KVM (KubeVirt)"),
    ("Amazon EC2", "Amazon EC2 (Nitro/KVM)"),
    ("QEMU", "QEMU/KVM"),
    ("VMware", "VMware"),
    ("VMW", "VMware"),
    ("innotek GmbH", "VirtualBox"),
    ("VirtualBox", "VirtualBox"),
    ("Xen", "Xen"),
    ("Bochs", "Bochs"),
    ("Parallels", "Parallels"),
    ("BHYVE", "bhyve"),
    ("Hyper-V", "Hyper-V"),
    ("Apple Virtualization", "Apple Virtualization"),
    ("Google Compute Engine", "Google Compute Engine (KVM)"),
    ("Google", "Google Compute Engine (KVM)"),
)


@dataclass(frozen=True)
class VirtualizationFacts:
    hypervisor_flag: Maybe[bool]  # `hypervisor` in /proc/cpuinfo flags (x86); Unavailable elsewhere
    dmi: tuple[tuple[str, str], ...]  # (file, value) of the DMI strings that could be read
    hypervisor: str | None  # named from DMI; None when not named
    is_vm: Maybe[bool]


def hypervisor_from_dmi(values: dict[str, str]) -> str | None:
    """Which hypervisor the DMI strings name; Hyper-V shows as Microsoft's "Virtual Machine"."""
    for field in DMI_FILES:
        value = values.get(field, "")
        for prefix, name in DMI_VENDORS:
            if value.startswith(prefix):
                return name
    if (
        values.get("sys_vendor", "").startswith("Microsoft")
        and values.get("product_name") == "Virtual Machine"
    ):
        return "Hyper-V"
    return None


def cpu_flags(cpuinfo: str) -> set[str] | None:
    """The first `flags` line of /proc/cpuinfo (x86); None when there is none (arm64 says `Features`)."""
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() == "flags":
            return set(value.split())
    return None


def gather_virtualization(host: Host) -> VirtualizationFacts:
    cpuinfo = host.read_text("/proc/cpuinfo")
    flag: Maybe[bool]
    if isinstance(cpuinfo, Unavailable):
        flag = cpuinfo
    else:
        flags = cpu_flags(cpuinfo)
        flag = (
            "hypervisor" in flags
            if flags is not None
            else Unavailable(Reason.NOT_SUPPORTED, "no x86 `flags` line in /proc/cpuinfo")
        )
    dmi: dict[str, str] = {}
    for name in DMI_FILES:
        text = host.read_text(f"{DMI_DIR}/{name}")
        if not isinstance(text, Unavailable) and text.strip():
            dmi[name] = text.strip()
    named = hypervisor_from_dmi(dmi)
    is_vm: Maybe[bool]
    if named is not None or flag is True:
        is_vm = True
    elif flag is False:
        is_vm = False
    else:
        is_vm = Unavailable(Reason.NOT_FOUND, "no hypervisor flag readable and no DMI string names one")
    return VirtualizationFacts(flag, tuple(dmi.items()), named, is_vm)
