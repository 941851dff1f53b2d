"""Which family of distribution a machine belongs to, for choosing package and initramfs commands."""

from __future__ import annotations

from enum import Enum

from torch_gpu_doctor.facts.model import OsFacts
from torch_gpu_doctor.unavailable import Unavailable


class Family(str, Enum):
    UBUNTU = "ubuntu"
    DEBIAN = "debian"
    FEDORA = "fedora"
    RHEL = "rhel"
    ARCH = "arch"
    SUSE = "suse"
    UNKNOWN = "unknown"


_BY_ID = {
    "ubuntu": Family.UBUNTU,
    "pop": Family.UBUNTU,
    "linuxmint": Family.UBUNTU,
    "elementary": Family.UBUNTU,
    "zorin": Family.UBUNTU,
    "debian": Family.DEBIAN,
    "raspbian": Family.DEBIAN,
    "fedora": Family.FEDORA,
    "nobara": Family.FEDORA,
    "rhel": Family.RHEL,
    "rocky": Family.RHEL,
    "almalinux": Family.RHEL,
    "centos": Family.RHEL,
    "ol": Family.RHEL,
    "amzn": Family.RHEL,
    "arch": Family.ARCH,
    "manjaro": Family.ARCH,
    "endeavouros": Family.ARCH,
    "cachyos": Family.ARCH,
    "opensuse-tumbleweed": Family.SUSE,
    "opensuse-leap": Family.SUSE,
    "opensuse": Family.SUSE,
    "sles": Family.SUSE,
    "suse": Family.SUSE,
}


def family(os_facts: OsFacts | Unavailable) -> Family:
    if isinstance(os_facts, Unavailable):
        return Family.UNKNOWN
    ids = [os_facts.distro_id] if isinstance(os_facts.distro_id, str) else []
    for candidate in [*ids, *os_facts.distro_like]:
        found = _BY_ID.get(candidate.lower())
        if found is not None:
            return found
    return Family.UNKNOWN
