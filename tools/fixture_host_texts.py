"""Real file contents shared by the fixture hosts of tools/fixture_hosts_*.py, each with its source.

Nothing here is invented: os-release files are the distributions' own (as the existing fixtures hold them),
/proc/driver/nvidia/version lines are quoted from the samples or public captures named beside them, pci.ids
lines are Debian's pci.ids 2023.04.10 (tests/fixtures/hosts/README.md).
"""

from __future__ import annotations

UBUNTU_2204 = """PRETTY_NAME="Ubuntu 22.04.5 LTS"
NAME="Ubuntu"
VERSION_ID="22.04"
VERSION="22.04.5 LTS (Jammy Jellyfish)"
VERSION_CODENAME=jammy
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"
UBUNTU_CODENAME=jammy
"""

UBUNTU_2404 = """PRETTY_NAME="Ubuntu 24.04.1 LTS"
NAME="Ubuntu"
VERSION_ID="24.04"
VERSION="24.04.1 LTS (Noble Numbat)"
VERSION_CODENAME=noble
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"
UBUNTU_CODENAME=noble
LOGO=ubuntu-logo
"""

DEBIAN_11 = """PRETTY_NAME="Debian GNU/Linux 11 (bullseye)"
NAME="Debian GNU/Linux"
VERSION_ID="11"
VERSION="11 (bullseye)"
VERSION_CODENAME=bullseye
ID=debian
HOME_URL="https://www.debian.org/"
SUPPORT_URL="https://www.debian.org/support"
BUG_REPORT_URL="https://bugs.debian.org/"
"""

# Ubuntu 22.04's compiler, as the DKMS-built module records it (rtx4090-workstation-healthy's line).
GCC_UBUNTU_2204 = "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n"


def proc_version(nvrm: str, gcc: str = GCC_UBUNTU_2204) -> str:
    """/proc/driver/nvidia/version: `NVRM version: %s` then the GCC line (nv-procfs.c, hardware.md §3.1)."""
    return f"NVRM version: {nvrm}\n{gcc}"


# NVRM lines quoted in public code (not verified against the driver packages themselves).
NVRM_OPEN_560_35_03 = (
    "NVIDIA UNIX Open Kernel Module for x86_64  560.35.03  Release Build  (dvs-builder@U16-I3-B03-4-3)  "
    "Fri Aug 16 21:42:42 UTC 2024"
)
NVRM_550_54_14 = "NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024"
NVRM_550_120 = "NVIDIA UNIX x86_64 Kernel Module  550.120  Fri Sep 13 10:10:01 UTC 2024"
NVRM_550_127_05 = "NVIDIA UNIX x86_64 Kernel Module  550.127.05  Tue Oct  8 16:30:26 UTC 2024"

# /proc/modules lines of a loaded driver: proprietary (POE, rtx4090-workstation-healthy) and open (OE,
# h100-sxm-x8-server); the sizes belong to the builds those captures came from.
MODULES_PROPRIETARY = """nvidia_uvm 2576384 0 - Live 0x0000000000000000 (POE)
nvidia_drm 73728 9 - Live 0x0000000000000000 (POE)
nvidia_modeset 1159168 23 nvidia_drm, Live 0x0000000000000000 (POE)
nvidia 36966400 1393 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (POE)
"""
MODULES_OPEN = """nvidia_drm 131072 12 - Live 0x0000000000000000 (OE)
nvidia_modeset 1712128 6 nvidia_drm, Live 0x0000000000000000 (OE)
nvidia_uvm 3960832 0 - Live 0x0000000000000000 (OE)
nvidia 78815232 62 nvidia_modeset,nvidia_uvm, Live 0x0000000000000000 (OE)
"""
# No NVIDIA module loaded (nvidia-gpu-no-driver's generic lines).
MODULES_GENERIC = """mac_hid 16384 0 - Live 0x0000000000000000
sg 45056 0 - Live 0x0000000000000000
crypto_user 24576 0 - Live 0x0000000000000000
"""

NVIDIA_DEVICE_NODES = ("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset")


def pci_ids(vendor: str, *devices: str) -> str:
    """A pci.ids excerpt: the vendor line and its device lines, tab-indented as in the file."""
    return f"{vendor}\n" + "".join(f"\t{line}\n" for line in devices)


NVIDIA_VENDOR = "10de  NVIDIA Corporation"
AMD_VENDOR = "1002  Advanced Micro Devices, Inc. [AMD/ATI]"

# NVIDIA's answers when the kernel module does not run (nvidia-smi exit code 9, hardware.md §4).
SMI_NO_DRIVER = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
    "latest NVIDIA driver is installed and running.\n\n"
)
NVIDIA_SMI_QUERY = [
    "nvidia-smi",
    "--query-gpu=driver_version,name,pci.bus_id,uuid,memory.total",
    "--format=csv,noheader,nounits",
]
MODINFO = ["modinfo", "-F", "version", "nvidia"]
MODINFO_NOT_FOUND = "modinfo: ERROR: Module nvidia not found.\n"

# Commands of the driver-state facts (doctor/facts/kernel_log.py, nvidia_module.py, dkms.py), by exact argv.
DMESG = ["dmesg"]
JOURNAL_KERNEL = ["journalctl", "-k", "-b", "--no-pager", "-o", "short-monotonic"]
MODINFO_NVIDIA = ["modinfo", "nvidia"]
DKMS_STATUS = ["dkms", "status"]
DMESG_DENIED = "dmesg: read kernel buffer failed: Operation not permitted\n"


def modinfo_nvidia(release: str, version: str, where: str = "updates/dkms") -> str:
    """`modinfo nvidia` of an unsigned build in kmod's `%-16s%s` layout (no sig_* lines: not signed).

    Only fields whose values follow from the build are shown: the file, version, the class aliases the
    module claims (display and 3D controllers), and vermagic = the kernel it was built for.
    """
    rows = [
        ("filename", f"/lib/modules/{release}/{where}/nvidia.ko"),
        ("alias", "char-major-195-*"),
        ("version", version),
        ("supported", "external"),
        ("license", "NVIDIA"),
        ("alias", "pci:v000010DEd*sv*sd*bc03sc02i00*"),
        ("alias", "pci:v000010DEd*sv*sd*bc03sc00i00*"),
        ("depends", ""),
        ("retpoline", "Y"),
        ("name", "nvidia"),
        ("vermagic", f"{release} SMP preempt mod_unload modversions "),
    ]
    return "".join(f"{key + ':':<16}{value}\n" for key, value in rows)
