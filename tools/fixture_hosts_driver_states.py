"""Write four driver-state fixture hosts into tests/fixtures/hosts/:

    PYTHONPATH=. .venv/bin/python tools/fixture_hosts_driver_states.py

kernel-update-no-headers, nvml-timeout-xid79, closed-module-on-blackwell, legacy-gpu-new-driver.
Sources of every value: tests/fixtures/hosts/README.md. expected.json is written separately (pinned from
the doctor's current output and reviewed), never here.
"""

from __future__ import annotations

import sys

from tools.fixture_host_parts import CUDNN_9_1, CUDNN_9_10, cuda_torch, dkms_modules, driver_libraries
from tools.fixture_host_texts import (
    DKMS_STATUS,
    DMESG,
    DMESG_DENIED,
    JOURNAL_KERNEL,
    MODINFO,
    MODINFO_NOT_FOUND,
    MODINFO_NVIDIA,
    MODULES_GENERIC,
    MODULES_PROPRIETARY,
    NVIDIA_DEVICE_NODES,
    NVIDIA_SMI_QUERY,
    NVIDIA_VENDOR,
    SMI_NO_DRIVER,
    UBUNTU_2204,
    UBUNTU_2404,
    modinfo_nvidia,
    pci_ids,
    proc_version,
)
from tools.fixture_host_tree import HostTree, nvml_answers, nvml_device, nvml_failing, python_probe
from torch_gpu_doctor.host.nvml import DEVICE_QUERIES

EFI_GLOBAL = "8be4df61-93ca-11d2-aa0d-00e098032b8c"
EFI_OFF = bytes([0x06, 0x00, 0x00, 0x00, 0x00])  # SecureBoot 0 / SetupMode 0 (hardware.md §3.5)
DRIVER_NOT_LOADED = nvml_failing("DriverNotLoaded", 9, "Driver Not Loaded")
VENV = "/home/user/venv"


def secure_boot_off(host: HostTree) -> None:
    host.binary(f"/sys/firmware/efi/efivars/SecureBoot-{EFI_GLOBAL}", EFI_OFF)
    host.binary(f"/sys/firmware/efi/efivars/SetupMode-{EFI_GLOBAL}", EFI_OFF)


def venv_torch(
    host: HostTree, python_version: str, torch: str, cuda: str, pin: tuple[str, str], req: str
) -> None:
    short = ".".join(python_version.split(".")[:2])
    site = f"{VENV}/lib/python{short}/site-packages"
    host.probes["python_env"] = python_probe(f"{VENV}/bin/python", python_version, VENV)
    cuda_torch(host, site, torch, cuda, [pin], req)


# --- 1. kernel-update-no-headers ---------------------------------------------------------------------------------

OLD_KERNEL = "6.8.0-49-generic"
NEW_KERNEL = "6.8.0-50-generic"
DRIVER_550 = "550.127.05"
# journalctl run by a user outside 'adm'/'systemd-journal' (systemd 249): no kernel lines, a hint on stderr
JOURNAL_HINT = (
    "Hint: You are currently not seeing messages from other users and the system.\n"
    "      Users in groups 'adm', 'systemd-journal' can see all messages.\n"
    "      Pass -q to turn off this notice.\n"
)


def kernel_update() -> HostTree:
    host = HostTree(
        "kernel-update-no-headers",
        "Ubuntu 22.04 desktop (RTX 3080) after `apt upgrade` installed kernel 6.8.0-50-generic without its "
        "headers and the machine rebooted into it: nvidia-driver-550 (DKMS, 550.127.05) is built only for "
        "6.8.0-49-generic, modinfo finds no nvidia module, the module is not loaded, NVML DriverNotLoaded "
        "(telegraf rtx-3080-v13.xml; DKMS header error as kasbert/epsolar-tracer#53)",
        python=f"{VENV}/bin/python",
    )
    port = "pci0000:00/0000:00:01.1"
    gpu = f"{port}/0000:0c:00.0"
    host.pci_function(port, 0x1022, None, 0x060400)
    host.pcie_link(port, ("2.5 GT/s PCIe", 16), None)
    host.pci_function(gpu, 0x10DE, 0x2216, 0x030000, subsystem=(0x19DA, 0x1612))  # no driver bound
    host.pcie_link(gpu, ("2.5 GT/s PCIe", 16), ("16.0 GT/s PCIe", 16))
    host.text(f"/sys/devices/{gpu}/power_state", "D0\n")
    secure_boot_off(host)
    host.text("/proc/sys/kernel/osrelease", NEW_KERNEL + "\n")
    host.text("/proc/sys/kernel/dmesg_restrict", "1\n")
    # both kernels installed (modules.dep); only the old one has headers (build -> its linux-headers folder)
    # and the DKMS-built nvidia modules
    for release in (OLD_KERNEL, NEW_KERNEL):
        host.marker(f"/lib/modules/{release}/modules.dep")
    host.marker(f"/usr/src/linux-headers-{OLD_KERNEL}/Makefile")
    host.link(f"/lib/modules/{OLD_KERNEL}/build", f"/usr/src/linux-headers-{OLD_KERNEL}")
    for module in ("nvidia", "nvidia-modeset", "nvidia-drm", "nvidia-uvm"):
        host.marker(f"/lib/modules/{OLD_KERNEL}/updates/dkms/{module}.ko")
    host.marker(f"/usr/src/nvidia-{DRIVER_550}/dkms.conf")
    host.link(f"/var/lib/dkms/nvidia/{DRIVER_550}/source", f"/usr/src/nvidia-{DRIVER_550}")
    driver_libraries(host, DRIVER_550)
    host.text("/proc/modules", MODULES_GENERIC)
    host.marker("/dev/null", "/usr/bin/nvidia-smi", "/usr/sbin/modinfo", "/usr/sbin/dkms")
    host.marker("/usr/bin/dmesg", "/usr/bin/journalctl")
    host.text("/etc/os-release", UBUNTU_2204)
    host.text(
        "/usr/share/misc/pci.ids", pci_ids(NVIDIA_VENDOR, "2216  GA102 [GeForce RTX 3080 Lite Hash Rate]")
    )
    host.nvml = DRIVER_NOT_LOADED
    host.command(NVIDIA_SMI_QUERY, stdout=SMI_NO_DRIVER, returncode=9)
    host.command(MODINFO, stderr=MODINFO_NOT_FOUND, returncode=1)
    host.command(DKMS_STATUS, stdout=f"nvidia, {DRIVER_550}, {OLD_KERNEL}, x86_64: installed\n")
    host.command(DMESG, stderr=DMESG_DENIED, returncode=1)
    host.command(JOURNAL_KERNEL, stdout="-- No entries --\n", stderr=JOURNAL_HINT)
    venv_torch(host, "3.10.12", "2.5.1+cu124", "12.4", ("nvidia-cudnn-cu12", "9.1.0.70"), CUDNN_9_1)
    return host


# --- 2. nvml-timeout-xid79 -------------------------------------------------------------------------------------

# samples/nvidia-smi-q/thamada-A100SXMx4-q.txt: bus id, UUID (all 0x20B210DE, subsystem 0x147F10DE, 81920 MiB,
# persistence Enabled, PCIe Gen4 of Gen4 x16, driver 555.42.02, CUDA 12.5)
A100 = (
    ("0000:68:00.0", "GPU-31515c3d-1414-7c2c-004a-f86a898946ac"),
    ("0000:9e:00.0", "GPU-72d87681-01db-370e-567d-41afcf20fad0"),
    ("0000:c2:00.0", "GPU-62989189-9e1e-ac75-4676-114f14998542"),
    ("0000:d4:00.0", "GPU-011b2cfe-2b8e-1cb0-19e1-1b764e854dfc"),
)
DRIVER_555 = "555.42.02"
LOST = 1  # 0000:9e:00.0
UNKNOWN = {"error": "Unknown", "code": 999, "message": "Unknown Error"}
# Xid 79 lines in the format of pop-os/pop#3363 (driver 5xx: "pid='<unknown>', name=<unknown>"), with this
# GPU's bus id and UUID; timestamps and host name chosen
XID_JOURNAL = """[ 8153.309113] gpu-node kernel: NVRM: GPU at PCI:0000:9e:00: GPU-72d87681-01db-370e-567d-41afcf20fad0
[ 8153.309119] gpu-node kernel: NVRM: Xid (PCI:0000:9e:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
[ 8153.309130] gpu-node kernel: NVRM: GPU 0000:9e:00.0: GPU has fallen off the bus.
"""
XID_KERNEL = "5.15.0-125-generic"
# the healthy GPUs' health answers, from the same nvidia-smi -q: clock event reasons Idle only (0x1), display
# inactive, ECC enabled (current and pending), no ECC errors, retired pages N/A (not recorded: NotSupported),
# remapped rows 0/0, none pending, no failure
A100_HEALTH = {
    "clocks_event_reasons": 1,
    "display_active": 0,
    "ecc_mode": [1, 1],
    "ecc_errors_corrected_volatile": 0,
    "ecc_errors_uncorrected_volatile": 0,
    "ecc_errors_corrected_aggregate": 0,
    "ecc_errors_uncorrected_aggregate": 0,
    "remapped_rows": [0, 0, 0, 0],
}


def xid79() -> HostTree:
    host = HostTree(
        "nvml-timeout-xid79",
        "Ubuntu 22.04 server with 4x A100-SXM4-80GB on driver 555.42.02 (proprietary): GPU 0000:9e:00.0 fell "
        "off the bus (kernel log: NVRM Xid 79), NVML still starts but every query of that GPU answers "
        "Unknown Error, as nvidia-smi's 'Unable to determine the device handle' (thamada A100SXMx4-q.txt; "
        "pop-os/pop#3363; haotian-liu/LLaVA#1466)",
        python=f"{VENV}/bin/python",
    )
    devices = []
    for index, (bdf, uuid) in enumerate(A100):
        bus = int(bdf[5:7], 16)
        port = f"pci0000:{bus - 2:02x}/0000:{bus - 2:02x}:01.0"  # a root port per GPU, chosen
        gpu = f"{port}/{bdf}"
        host.pci_function(port, 0x8086, None, 0x060400)
        host.pci_function(gpu, 0x10DE, 0x20B2, 0x030200, subsystem=(0x10DE, 0x147F), driver="nvidia")
        host.marker(f"/dev/nvidia{index}")
        if index == LOST:
            devices.append({query: dict(UNKNOWN) for query in DEVICE_QUERIES})
            continue
        host.pcie_link(port, ("16.0 GT/s PCIe", 16), ("16.0 GT/s PCIe", 16))
        host.pcie_link(gpu, ("16.0 GT/s PCIe", 16), ("16.0 GT/s PCIe", 16))
        host.text(f"/sys/devices/{gpu}/power_state", "D0\n")
        devices.append(
            nvml_device(
                "NVIDIA A100-SXM4-80GB",
                uuid,
                f"0000{bdf.upper()}",
                0x20B210DE,
                81920,
                (8, 0),
                1,
                (4, 4, 4),
                (16, 16),
            )
            | A100_HEALTH
        )
    host.nvml = nvml_answers(DRIVER_555, 12050, devices)
    host.text("/sys/module/nvidia/version", DRIVER_555 + "\n")
    host.text("/proc/modules", MODULES_PROPRIETARY)
    host.marker(*(f"/dev/{n}" for n in NVIDIA_DEVICE_NODES), "/dev/null")
    driver_libraries(host, DRIVER_555)
    host.marker(
        "/usr/bin/nvidia-smi", "/usr/sbin/modinfo", "/usr/sbin/dkms", "/usr/bin/dmesg", "/usr/bin/journalctl"
    )
    dkms_modules(host, XID_KERNEL)
    host.text("/proc/sys/kernel/dmesg_restrict", "1\n")
    host.text("/etc/os-release", UBUNTU_2204)
    host.text("/usr/share/misc/pci.ids", pci_ids(NVIDIA_VENDOR, "20b2  GA100 [A100 SXM4 80GB]"))
    secure_boot_off(host)
    host.command(MODINFO_NVIDIA, stdout=modinfo_nvidia(XID_KERNEL, DRIVER_555))
    host.command(DKMS_STATUS, stdout=f"nvidia, {DRIVER_555}, {XID_KERNEL}, x86_64: installed\n")
    host.command(DMESG, stderr=DMESG_DENIED, returncode=1)
    host.command(JOURNAL_KERNEL, stdout=XID_JOURNAL)
    venv_torch(host, "3.10.12", "2.5.1+cu124", "12.4", ("nvidia-cudnn-cu12", "9.1.0.70"), CUDNN_9_1)
    return host


# --- 3. closed-module-on-blackwell -------------------------------------------------------------------------------

DRIVER_580 = "580.105.08"
BW_KERNEL = "6.14.0-36-generic"
# dmesg (run as root) of the proprietary 580.105.08 module refusing a Blackwell GPU: the loading line and the
# two-line refusal verbatim from QuangMDoan/autonomy ros2_setup/kilted_setup.md (Ubuntu 24.04.3, nvidia-driver-580),
# with that laptop's 0000:02:00.0 / 10de:2c58 replaced by the RTX 5090 desktop's 0000:01:00.0 / 10de:2b85 of
# NVIDIA/open-gpu-kernel-modules#862 (same "RmInitAdapter failed! (0x22:0x56:884)" there)
BW_DMESG = """[    5.499014] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.105.08  Wed Oct 29 23:15:11 UTC 2025
[    5.559842] NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:2b85)
               NVRM: installed in this system requires use of the NVIDIA open kernel modules.
[    5.559858] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:884)
[    5.560313] NVRM: GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0
[    8.481576] NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:2b85)
               NVRM: installed in this system requires use of the NVIDIA open kernel modules.
[    8.481591] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:884)
[    8.482116] NVRM: GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0
"""
GCC_UBUNTU_2404 = "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n"


def blackwell() -> HostTree:
    host = HostTree(
        "closed-module-on-blackwell",
        "Ubuntu 24.04 desktop with a GeForce RTX 5090 (Blackwell, 10de:2b85) and nvidia-driver-580 "
        "(580.105.08, the proprietary kernel module, DKMS): the module loads and binds, but refuses the GPU "
        "('requires use of the NVIDIA open kernel modules', RmInitAdapter failed), NVML lists no GPU, "
        "nvidia-smi 'No devices were found' (QuangMDoan/autonomy kilted_setup.md; "
        "NVIDIA/open-gpu-kernel-modules#862)",
        python=f"{VENV}/bin/python",
    )
    port = "pci0000:00/0000:00:01.1"
    gpu = f"{port}/0000:01:00.0"
    host.pci_function(port, 0x1022, None, 0x060400)
    host.pcie_link(port, ("32.0 GT/s PCIe", 16), None)
    host.pci_function(gpu, 0x10DE, 0x2B85, 0x030000, driver="nvidia")
    host.pcie_link(gpu, ("32.0 GT/s PCIe", 16), ("32.0 GT/s PCIe", 16))
    host.text(f"/sys/devices/{gpu}/power_state", "D0\n")
    host.text("/sys/module/nvidia/version", DRIVER_580 + "\n")
    host.text(
        "/proc/driver/nvidia/version",
        proc_version(
            f"NVIDIA UNIX x86_64 Kernel Module  {DRIVER_580}  Wed Oct 29 23:15:11 UTC 2025", GCC_UBUNTU_2404
        ),
    )
    host.text("/proc/modules", MODULES_PROPRIETARY)
    host.marker("/dev/null", "/dev/nvidia0", *(f"/dev/{n}" for n in NVIDIA_DEVICE_NODES))
    driver_libraries(host, DRIVER_580)
    host.text("/proc/sys/kernel/osrelease", BW_KERNEL + "\n")
    for module in ("nvidia", "nvidia-modeset", "nvidia-drm", "nvidia-uvm"):
        host.marker(f"/lib/modules/{BW_KERNEL}/updates/dkms/{module}.ko.zst")
    host.marker(f"/lib/modules/{BW_KERNEL}/modules.dep")
    host.marker(
        "/usr/bin/nvidia-smi", "/usr/sbin/modinfo", "/usr/sbin/dkms", "/usr/bin/dmesg", "/usr/bin/journalctl"
    )
    host.text("/proc/sys/kernel/dmesg_restrict", "1\n")
    secure_boot_off(host)
    host.text("/etc/os-release", UBUNTU_2404)
    host.nvml = nvml_answers(DRIVER_580, 13000, [])
    host.command(
        MODINFO_NVIDIA, stdout=modinfo_nvidia(BW_KERNEL, DRIVER_580).replace("nvidia.ko\n", "nvidia.ko.zst\n")
    )
    host.command(DKMS_STATUS, stdout=f"nvidia/{DRIVER_580}, {BW_KERNEL}, x86_64: installed\n")
    host.command(DMESG, stdout=BW_DMESG)
    venv_torch(host, "3.12.3", "2.9.1+cu128", "12.8", ("nvidia-cudnn-cu12", "9.10.2.21"), CUDNN_9_10)
    return host


# --- 4. legacy-gpu-new-driver ------------------------------------------------------------------------------------

AWS_KERNEL = "6.8.0-1021-aws"
# charmed-kubernetes/kubernetes-docs#646/#647 (AWS p2.xlarge, Tesla K80 at 00:1e.0, Ubuntu): the NVRM text
# verbatim, as dmesg prints one multi-line record; the driver version in it is this machine's (chosen: 550.127.05
# for the report's 510.47.03); the nvlink line and first timestamps from #646, the last timestamp chosen
K80_DMESG = """[ 3570.610595] nvidia-nvlink: Nvlink Core is being initialized, major device number 239
[ 3570.610602] NVRM: The NVIDIA Tesla K80 GPU installed in this system is
               NVRM:  supported through the NVIDIA 470.xx Legacy drivers. Please
               NVRM:  visit http://www.nvidia.com/object/unix.html for more
               NVRM:  information.  The 550.127.05 NVIDIA driver will ignore
               NVRM:  this GPU.  Continuing probe...
[ 3570.610630] NVRM: No NVIDIA GPU found.
"""


def legacy() -> HostTree:
    host = HostTree(
        "legacy-gpu-new-driver",
        "Ubuntu 22.04 on an AWS p2.xlarge (Tesla K80, Kepler, compute capability 3.7) with nvidia-driver-550 "
        "(550.127.05, DKMS) installed: the driver refuses the GPU ('supported through the NVIDIA 470.xx Legacy "
        "drivers', 'No NVIDIA GPU found'), the module does not stay loaded, NVML DriverNotLoaded "
        "(charmed-kubernetes/kubernetes-docs#646, #647)",
        python=f"{VENV}/bin/python",
    )
    gpu = "pci0000:00/0000:00:1e.0"  # on the VM's root bus, no PCIe port above it
    host.pci_function(
        gpu, 0x10DE, 0x102D, 0x030200
    )  # nothing bound (#646's lspci: no "Kernel driver in use")
    host.text("/proc/sys/kernel/osrelease", AWS_KERNEL + "\n")
    host.text("/proc/sys/kernel/dmesg_restrict", "1\n")
    host.marker(f"/lib/modules/{AWS_KERNEL}/modules.dep")
    for module in ("nvidia", "nvidia-modeset", "nvidia-drm", "nvidia-uvm"):
        host.marker(f"/lib/modules/{AWS_KERNEL}/updates/dkms/{module}.ko")
    driver_libraries(host, DRIVER_550)
    host.text("/proc/modules", MODULES_GENERIC)
    host.marker("/dev/null", "/usr/bin/nvidia-smi", "/usr/sbin/modinfo", "/usr/sbin/dkms")
    host.marker("/usr/bin/dmesg", "/usr/bin/journalctl")
    host.text("/etc/os-release", UBUNTU_2204)
    host.text("/usr/share/misc/pci.ids", pci_ids(NVIDIA_VENDOR, "102d  GK210GL [Tesla K80]"))
    host.nvml = DRIVER_NOT_LOADED
    host.command(NVIDIA_SMI_QUERY, stdout=SMI_NO_DRIVER, returncode=9)
    host.command(MODINFO, stdout=DRIVER_550 + "\n")
    host.command(MODINFO_NVIDIA, stdout=modinfo_nvidia(AWS_KERNEL, DRIVER_550))
    host.command(DKMS_STATUS, stdout=f"nvidia, {DRIVER_550}, {AWS_KERNEL}, x86_64: installed\n")
    host.command(DMESG, stdout=K80_DMESG)
    venv_torch(host, "3.10.12", "2.5.1+cu124", "12.4", ("nvidia-cudnn-cu12", "9.1.0.70"), CUDNN_9_1)
    return host


BUILDERS = {
    "kernel-update-no-headers": kernel_update,
    "nvml-timeout-xid79": xid79,
    "closed-module-on-blackwell": blackwell,
    "legacy-gpu-new-driver": legacy,
}


def main(names: list[str]) -> int:
    for name in names or list(BUILDERS):
        print(BUILDERS[name]().write())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
