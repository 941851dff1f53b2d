"""Write the platform and driver-state fixture hosts (issue 3/6, item 7): `python -m tools.fixture_hosts_platform`.

A virtio VM, a Docker container started without GPUs, WSL2 with a Linux driver installed inside, Secure Boot
refusing the module, a driver upgraded without a reboot, and an AMD GPU behind its on-card switch. Sources of
every value: tests/fixtures/hosts/README.md. expected.json is written by hand, never here.
"""

from __future__ import annotations

import json
import sys

from tools.fixture_host_parts import (
    ARCH_29_CU128,
    ARCH_CU12X,
    CUDNN_9_1,
    CUDNN_9_10,
    NO_DEVICE_STAGES,
    cuda_torch,
    dkms_modules,
    driver_libraries,
    libcuda,
    loaded_driver,
    no_driver_runtime,
)
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
    NVIDIA_SMI_QUERY,
    NVIDIA_VENDOR,
    NVRM_550_120,
    SMI_NO_DRIVER,
    UBUNTU_2204,
    UBUNTU_2404,
    modinfo_nvidia,
    pci_ids,
)
from tools.fixture_host_tree import (
    HOSTS,
    STD_PATH,
    STORAGE_TREES,
    SYSFS_TREES,
    HostTree,
    nvml_failing,
    python_probe,
)
from tools.fixture_torch_probes import ERROR_803, cuda_runtime, dist, ok, packages, runtime

CAPTURES = STORAGE_TREES / "captures"
CI_HOST = HOSTS / "ci-no-gpu-cuda-toolkit" / "root"
DRIVER_NOT_LOADED = nvml_failing("DriverNotLoaded", 9, "Driver Not Loaded")


# --- 7. virtio-vm-no-gpu ---------------------------------------------------------------------------------------

CI_FILES = (
    "proc/cmdline",
    "proc/cpuinfo",
    "proc/version",
    "proc/sys/kernel/osrelease",
    "usr/lib/os-release",
    "sys/module/8250/parameters/nr_uarts",
)
CI_DEVICES = ("full", "fuse", "kmsg", "kvm", "null", "ptmx", "random", "ttyS0", "urandom", "vsock", "zero")
# class and vendor of the CI VM's other PCI functions (ci-no-gpu-cuda-toolkit)
CI_PCI = {
    "0000:00:00.0": (0x8086, 0x060000),
    "0000:00:01.0": (0x1AF4, 0xFFFF00),
    "0000:00:03.0": (0x1AF4, 0x020000),
}
CI_PCI |= {"0000:00:04.0": (0x1AF4, 0xFFFF00), "0000:00:05.0": (0x1AF4, 0xFFFF00)}


def ci_mountinfo() -> str:
    """The CI VM's mount table without the storage work's test mounts and the sandbox's tool mount."""
    lines = (CAPTURES / "ci-vm-mountinfo.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    dropped = ("/tmp/helperb-cap/", "/mnt/sandboxing/")  # noqa: S108 - mount points in the capture, not files
    return "".join(line for line in lines if not any(d in line for d in dropped))


def virtio_vm() -> HostTree:
    venv = "/home/user/venv"
    host = HostTree(
        "virtio-vm-no-gpu",
        "Debian 12 VM (Firecracker, virtio-blk root) with no GPU at all, torch 2.9.1+cu128 (the PyPI default) "
        "in a venv: torch cannot find a driver (the CI VM: samples/sysfs/local-vm-virtio-blk-and-pci.txt and "
        "the storage-trees captures)",
        python=f"{venv}/bin/python",
    )
    host.copy_tree(SYSFS_TREES / "virtio-vm")
    host.copy_tree(STORAGE_TREES / "virtio-vda")
    for rel in CI_FILES:
        host.binary(f"/{rel}", (CI_HOST / rel).read_bytes())
    host.link("/etc/os-release", "../usr/lib/os-release")
    host.link("/lib", "usr/lib")
    host.marker(*(f"/dev/{name}" for name in CI_DEVICES))
    # The VM boots a root filesystem exported from a Docker image: /.dockerenv came with it, while PID 2 is
    # the kernel's kthreadd and / is ext4 on /dev/vda (both read on the CI VM, 2026-11-25)
    host.marker("/.dockerenv")
    host.text("/proc/2/comm", "kthreadd\n")
    for bdf, (vendor, klass) in CI_PCI.items():
        host.pci_function(f"pci0000:00/{bdf}", vendor, None, klass)
    host.text("/proc/meminfo", (CAPTURES / "ci-vm-meminfo.txt").read_text(encoding="utf-8"))
    host.text("/proc/self/mountinfo", ci_mountinfo())
    host.text("/proc/self/limits", (CAPTURES / "ci-vm-limits.txt").read_text(encoding="utf-8"))
    site = f"{venv}/lib/python3.11/site-packages"
    host.probes["python_env"] = python_probe(f"{venv}/bin/python", "3.11.2", venv)
    cuda_torch(host, site, "2.9.1+cu128", "12.8", [("nvidia-cudnn-cu12", "9.10.2.21")], CUDNN_9_10)
    host.probes["torch_runtime"] = no_driver_runtime(
        site, "2.9.1+cu128", "12.8", ARCH_29_CU128, f"{venv}/bin/python", 91002
    )
    return host


# --- 8. docker-container-no-gpus ----------------------------------------------------------------------------------

# ENV of NVIDIA's CUDA base images (gitlab.com/nvidia/container-images/cuda templates; hardware.md §3.7: set in
# the image, so present whether or not GPUs were passed)
CUDA_IMAGE_ENV = {
    "PATH": "/usr/local/nvidia/bin:/usr/local/cuda/bin:" + STD_PATH,
    "LD_LIBRARY_PATH": "/usr/local/nvidia/lib:/usr/local/nvidia/lib64",
    "NVIDIA_VISIBLE_DEVICES": "all",
    "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
    "CUDA_VERSION": "12.1.1",
}
CONTAINER_DEVICES = ("console", "full", "null", "ptmx", "random", "tty", "urandom", "zero")


def docker_no_gpus() -> HostTree:
    host = HostTree(
        "docker-container-no-gpus",
        "Docker container from nvidia/cuda:12.1.1-runtime-ubuntu22.04 started without --gpus on a KVM VM with "
        "an RTX 3090 passed through (driver 525.147.05): the GPU shows in sysfs, no /dev/nvidia*, no "
        "libnvidia-ml, 64 MiB /dev/shm (telegraf rtx-3090-v12.xml host; storage-trees/docker-overlay mounts)",
        env=dict(CUDA_IMAGE_ENV),
    )
    host.copy_tree(STORAGE_TREES / "docker-overlay")
    gpu = "pci0000:00/0000:00:10.0"
    host.pci_function(gpu, 0x10DE, 0x2204, 0x030000, driver="nvidia")
    host.text("/sys/module/nvidia/version", "525.147.05\n")
    host.text("/proc/modules", MODULES_PROPRIETARY)
    host.marker("/.dockerenv", *(f"/dev/{name}" for name in CONTAINER_DEVICES))
    host.text("/proc/1/cgroup", "0::/\n")
    host.text("/etc/os-release", UBUNTU_2204)
    site = "/usr/local/lib/python3.10/dist-packages"
    host.probes["python_env"] = python_probe("/usr/bin/python3", "3.10.12", "/usr")
    cuda_torch(host, site, "2.5.1+cu124", "12.4", [("nvidia-cudnn-cu12", "9.1.0.70")], CUDNN_9_1)
    host.probes["torch_runtime"] = no_driver_runtime(
        site, "2.5.1+cu124", "12.4", ARCH_CU12X, "/usr/bin/python3", 90100
    )
    return host


# --- 9. wsl2-linux-driver-inside -----------------------------------------------------------------------------------

LINUX_DRIVER_PACKAGES = (  # what `apt install nvidia-driver-535` records on Ubuntu 22.04 (the driver's part)
    "nvidia-driver-535",
    "nvidia-dkms-535",
    "nvidia-kernel-common-535",
    "nvidia-utils-535",
    "libnvidia-compute-535:amd64",
)


def wsl_linux_driver() -> HostTree:
    version = "535.183.01"
    host = HostTree(
        "wsl2-linux-driver-inside",
        "WSL2 (RTX 3080, Windows driver 536.40) where `apt install nvidia-driver-535` put a Linux driver's "
        "libnvidia-ml/libcuda and nvidia-smi beside /usr/lib/wsl/lib: NVML finds the Linux library and says "
        "DriverNotLoaded (the wsl2 fixture plus a Linux 535 driver; tests/fixtures/hosts/README.md)",
        env={
            "PATH": STD_PATH + ":/usr/games:/usr/local/games:/usr/lib/wsl/lib",
            "WSL_DISTRO_NAME": "Ubuntu",
        },
    )
    host.copy_tree(HOSTS / "wsl2")
    driver_libraries(host, version)
    host.marker("/usr/bin/nvidia-smi", "/usr/sbin/modinfo")
    host.marker(*(f"/var/lib/dpkg/info/{name}.list" for name in LINUX_DRIVER_PACKAGES))
    host.marker(f"/usr/src/nvidia-{version}/dkms.conf")
    host.link(f"/var/lib/dkms/nvidia/{version}/source", f"/usr/src/nvidia-{version}")
    host.nvml = DRIVER_NOT_LOADED
    host.command(NVIDIA_SMI_QUERY, stdout=SMI_NO_DRIVER, returncode=9)
    host.command(MODINFO, stderr=MODINFO_NOT_FOUND, returncode=1)
    site = "/home/user/.local/lib/python3.10/site-packages"
    host.probes["python_env"] = python_probe("/usr/bin/python3", "3.10.12", "/usr")
    cuda_torch(host, site, "2.5.1+cu124", "12.4", [("nvidia-cudnn-cu12", "9.1.0.70")], CUDNN_9_1)
    return host


# --- 10. secure-boot-blocks-module ------------------------------------------------------------------------------

EFI_GLOBAL = "8be4df61-93ca-11d2-aa0d-00e098032b8c"
# efivarfs: 4 bytes of attributes (NV|BS|RT = 0x06, little-endian), then the 1-byte value (hardware.md §3.5)
SECURE_BOOT_ON = bytes([0x06, 0x00, 0x00, 0x00, 0x01])
SETUP_MODE_OFF = bytes([0x06, 0x00, 0x00, 0x00, 0x00])
SECURE_BOOT_OFF = SETUP_MODE_OFF
KERNEL = "6.8.0-49-generic"
# `journalctl -k -b -o short-monotonic` of that boot, cut to the lines about Secure Boot and the module. The
# kernel's own sentences: "secureboot: Secure boot enabled" (arch/x86/kernel/setup.c), Ubuntu's lockdown notice,
# "Loading of unsigned module is rejected" (kernel/module/signing.c, sig_enforce on); timestamps chosen.
SECURE_BOOT_JOURNAL = """[    0.000000] desktop kernel: secureboot: Secure boot enabled
[    0.000000] desktop kernel: Kernel is locked down from EFI Secure Boot mode; see man kernel_lockdown.7
[    4.812733] desktop kernel: Loading of unsigned module is rejected
[    4.905519] desktop kernel: Loading of unsigned module is rejected
"""


def secure_boot() -> HostTree:
    version = "570.124.04"
    venv = "/home/user/venv"
    host = HostTree(
        "secure-boot-blocks-module",
        "Ubuntu 22.04 desktop with an RTX 3060: NVIDIA's .run installer built an unsigned nvidia 570.124.04 with "
        'DKMS for the running kernel; Secure Boot is on, so the kernel refuses it ("Loading of unsigned module '
        'is rejected") and libnvidia-ml says DriverNotLoaded (telegraf rtx-3060-v12.xml; hardware.md §3.5)',
        python=f"{venv}/bin/python",
    )
    port = "pci0000:00/0000:00:03.1"
    gpu = f"{port}/0000:2d:00.0"
    host.pci_function(port, 0x1022, None, 0x060400)
    host.pcie_link(port, ("2.5 GT/s PCIe", 16), None)
    host.pci_function(gpu, 0x10DE, 0x2487, 0x030000, subsystem=(0x3842, 0x3658))
    host.pcie_link(gpu, ("2.5 GT/s PCIe", 16), ("16.0 GT/s PCIe", 16))
    host.text(f"/sys/devices/{gpu}/power_state", "D0\n")
    host.binary(f"/sys/firmware/efi/efivars/SecureBoot-{EFI_GLOBAL}", SECURE_BOOT_ON)
    host.binary(f"/sys/firmware/efi/efivars/SetupMode-{EFI_GLOBAL}", SETUP_MODE_OFF)
    host.text("/sys/kernel/security/lockdown", "none [integrity] confidentiality\n")
    host.text("/sys/module/module/parameters/sig_enforce", "Y\n")
    host.text("/proc/sys/kernel/dmesg_restrict", "1\n")
    dkms_modules(host, KERNEL)
    driver_libraries(host, version)
    host.text("/proc/modules", MODULES_GENERIC)
    host.marker("/dev/null", "/usr/bin/nvidia-smi", "/usr/sbin/modinfo", "/usr/sbin/dkms", "/usr/bin/mokutil")
    host.marker("/usr/bin/dmesg", "/usr/bin/journalctl")
    host.text("/etc/os-release", UBUNTU_2204)
    host.text("/usr/share/misc/pci.ids", pci_ids(NVIDIA_VENDOR, "2487  GA104 [GeForce RTX 3060]"))
    host.nvml = DRIVER_NOT_LOADED
    host.command(NVIDIA_SMI_QUERY, stdout=SMI_NO_DRIVER, returncode=9)
    host.command(MODINFO, stdout=version + "\n")
    host.command(MODINFO_NVIDIA, stdout=modinfo_nvidia(KERNEL, version))
    host.command(DKMS_STATUS, stdout=f"nvidia, {version}, {KERNEL}, x86_64: installed\n")
    host.command(DMESG, stderr=DMESG_DENIED, returncode=1)
    host.command(JOURNAL_KERNEL, stdout=SECURE_BOOT_JOURNAL)
    site = f"{venv}/lib/python3.10/site-packages"
    host.probes["python_env"] = python_probe(f"{venv}/bin/python", "3.10.12", venv)
    cuda_torch(host, site, "2.6.0+cu124", "12.4", [("nvidia-cudnn-cu12", "9.1.0.70")], CUDNN_9_1)
    return host


# --- 11. driver-upgraded-no-reboot ----------------------------------------------------------------------------------


def driver_upgraded() -> HostTree:
    venv = "/home/user/venv"
    host = HostTree(
        "driver-upgraded-no-reboot",
        "Ubuntu 22.04 desktop (RTX 3080) after `apt upgrade` moved nvidia-driver-550 from 550.120 to 550.127.05 "
        "without a reboot: module 550.120 still loaded, libnvidia-ml 550.127.05, NVML LibRmVersionMismatch "
        "(telegraf rtx-3080-v13.xml; hardware.md §3.6)",
        python=f"{venv}/bin/python",
    )
    port = "pci0000:00/0000:00:01.1"
    gpu = f"{port}/0000:0c:00.0"
    host.pci_function(port, 0x1022, None, 0x060400)
    host.pcie_link(port, ("16.0 GT/s PCIe", 16), None)
    host.pci_function(gpu, 0x10DE, 0x2216, 0x030000, subsystem=(0x19DA, 0x1612), driver="nvidia")
    host.pcie_link(gpu, ("16.0 GT/s PCIe", 16), ("16.0 GT/s PCIe", 16))
    host.text(f"/sys/devices/{gpu}/power_state", "D0\n")
    # the upgrade replaced the user-space libraries and the DKMS modules, not the running module
    loaded_driver(host, "550.120", NVRM_550_120, MODULES_PROPRIETARY, 1, libraries="550.127.05")
    dkms_modules(host, KERNEL)
    host.binary(f"/sys/firmware/efi/efivars/SecureBoot-{EFI_GLOBAL}", SECURE_BOOT_OFF)
    host.binary(f"/sys/firmware/efi/efivars/SetupMode-{EFI_GLOBAL}", SETUP_MODE_OFF)
    host.marker("/usr/sbin/modinfo", "/usr/sbin/dkms")
    # what dpkg installed for the running kernel: the new build, while the old one still runs
    host.command(MODINFO_NVIDIA, stdout=modinfo_nvidia(KERNEL, "550.127.05"))
    host.command(DKMS_STATUS, stdout=f"nvidia, 550.127.05, {KERNEL}, x86_64: installed\n")
    host.text("/etc/os-release", UBUNTU_2204)
    host.text(
        "/usr/share/misc/pci.ids", pci_ids(NVIDIA_VENDOR, "2216  GA102 [GeForce RTX 3080 Lite Hash Rate]")
    )
    host.nvml = nvml_failing("LibRmVersionMismatch", 18, "RM has detected an NVML/RM version mismatch.")
    site = f"{venv}/lib/python3.10/site-packages"
    host.probes["python_env"] = python_probe(f"{venv}/bin/python", "3.10.12", venv)
    cuda_torch(host, site, "2.5.1+cu124", "12.4", [("nvidia-cudnn-cu12", "9.1.0.70")], CUDNN_9_1)
    host.probes["torch_runtime"] = ok(
        runtime(
            cuda_runtime(
                site,
                "2.5.1+cu124",
                "12.4",
                ARCH_CU12X,
                python=f"{venv}/bin/python",
                cuda_available=False,
                cuda_warnings=["CUDA initialization: " + ERROR_803],
                cuda_init_error="RuntimeError: " + ERROR_803,
                cudnn_version=90100,
                mapped_libraries=[libcuda("550.127.05")],
            ),
            NO_DEVICE_STAGES,
        )
    )
    return host


# --- 12. amd-gpu-on-card-switch ---------------------------------------------------------------------------------

HIP_VERSION = "6.4.43482-0f2d60242"  # torch.version.hip's format (major.minor.build-hash); build chosen


def amd_switch() -> HostTree:
    venv = "/home/user/venv"
    host = HostTree(
        "amd-gpu-on-card-switch",
        "AMD GPU (32 GT/s x16 on the card) behind its on-card switch, whose upstream port shows the slot: "
        "16 GT/s x8 of 32 GT/s x16; amdgpu bound, no NVIDIA, torch 2.8.0+rocm6.4 working "
        "(nokyan/resources#512; tests/fixtures/hosts/README.md)",
        python=f"{venv}/bin/python",
    )
    host.copy_tree(SYSFS_TREES / "amd-gpu-onboard-switch")
    gpu = "pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:00.0/0000:03:00.0"
    host.text(f"/sys/devices/{gpu}/device", "0x7550\n")
    host.bind(gpu, "amdgpu")
    host.text("/sys/module/amdgpu/initstate", "live\n")
    host.marker("/dev/null", "/dev/kfd", "/dev/dri/renderD128", "/usr/sbin/modinfo")
    host.command(MODINFO, stderr=MODINFO_NOT_FOUND, returncode=1)
    host.text("/etc/os-release", UBUNTU_2404)
    site = f"{venv}/lib/python3.12/site-packages"
    data = packages(site, "2.8.0+rocm6.4", None, [dist("torch", "2.8.0+rocm6.4", site)])
    data["torch_version_py"]["hip"] = HIP_VERSION
    data["user_site_enabled"] = False
    lib = f"{site}/torch/lib"
    result = cuda_runtime(
        site,
        "2.8.0+rocm6.4",
        "",
        [
            "gfx900",
            "gfx906",
            "gfx908",
            "gfx90a",
            "gfx942",
            "gfx1030",
            "gfx1100",
            "gfx1101",
            "gfx1102",
            "gfx1200",
            "gfx1201",
        ],
        python=f"{venv}/bin/python",
        hip=HIP_VERSION,
        device_count=1,
        devices=[
            {
                "index": 0,
                "name": "AMD Radeon Graphics",
                "capability": "12.0",
                "total_memory_bytes": 17095983104,
                "uuid": None,
                "pci_bus_id": None,
            }
        ],
        cudnn_available=None,
        mapped_libraries=[
            {"name": "libamdhip64", "path": f"{lib}/libamdhip64.so", "realpath": f"{lib}/libamdhip64.so"},
            {"name": "libMIOpen", "path": f"{lib}/libMIOpen.so", "realpath": f"{lib}/libMIOpen.so"},
        ],
    )
    result["cuda"] = None  # a ROCm build: torch.version.cuda is None, torch.version.hip is set
    host.probes = {
        "python_env": python_probe(f"{venv}/bin/python", "3.12.3", venv),
        "torch_packages": ok(json.dumps(data)),
        "torch_runtime": ok(runtime(result)),
    }
    return host


BUILDERS = (virtio_vm, docker_no_gpus, wsl_linux_driver, secure_boot, driver_upgraded, amd_switch)


def main() -> int:
    for build in BUILDERS:
        print(build().write())
    return 0


if __name__ == "__main__":
    sys.exit(main())
