"""Three Jetson fixture hosts (issue 20): an Orin Nano on JetPack 6 with PyPI's torch, a Xavier NX on JetPack 5
with NVIDIA's torch, a Nano on JetPack 4 without torch. File contents are the published ones named beside each;
what had to be chosen is said (tests/fixtures/hosts/README.md has the table).

    python tools/fixture_hosts_jetson.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.fixture_host_tree import STD_PATH, HostTree, python_probe  # noqa: E402
from tools.fixture_torch_probes import cuda_runtime, dist, ok, packages, runtime  # noqa: E402

# lkk688/edgeAI docs/curriculum/02a_linux_basics.md (an Orin Nano Super devkit, R36.4.3), verbatim
ORIN_RELEASE = (
    "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64, DATE: Wed Jan  8 01:49:37 UTC 2025\n"
    # lines 2-4 of the file as NVlabs/sionna-rk's Jetson setup doc prints them (R36.3.0)
    "# KERNEL_VARIANT: oot\n"
    "TARGET_USERSPACE_LIB_DIR=nvidia\n"
    "TARGET_USERSPACE_LIB_DIR_PATH=usr/lib/aarch64-linux-gnu/nvidia\n"
)
ORIN_MODEL = "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super"
# henrygd/beszel#286, an Orin Nano on 5.15.148-tegra: "Mem:7.44 ... MemUsed:2.98 ... Swap:3.72" (GiB) and 6
# cores; /proc/meminfo's three lines the doctor reads, in kB, from those figures (the rest of the file chosen
# away: the parser reads only these)
ORIN_MEMINFO = "MemTotal:        7801405 kB\nMemFree:          812744 kB\nMemAvailable:    4676649 kB\nSwapTotal:       3900703 kB\n"
ORIN_COMPATIBLE = ("nvidia,p3768-0000+p3767-0005-super", "nvidia,p3767-0005", "nvidia,tegra234")
ORIN_DRIVER = (
    "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  540.4.0  Release Build  "
    "(buildbrain@mobile-u64-6336-d8000)  Tue Jan  7 17:35:12 PST 2025\n"
    "GCC version:  collect2: error: ld returned 1 exit status\n"
)
# its `lsmod | grep nvgpu` line (size, users) in /proc/modules' layout; the address is chosen
ORIN_MODULES = (
    "nvgpu 2654208 23 - Live 0x0000000000000000 (O)\nnvmap 204800 79 nvgpu, Live 0x0000000000000000 (O)\n"
)

# Xavier NX devkit on R35.4.1 (a repository README's table: model, L4T, kernel 5.10.120-tegra); the release
# line of R35.4.1 from boxcutter/kvm's JetPack 5.1.2 box (an AGX Orin: JetPack 5 writes BOARD: t186ref on both)
XAVIER_RELEASE = "# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64, DATE: Tue Aug  1 19:57:35 UTC 2023\n"
XAVIER_MODEL = "NVIDIA Jetson Xavier NX Developer Kit"

# jetson-nano on R32.7.6 (a published shell log), verbatim; compatible of a Nano B01 devkit
NANO_RELEASE = "# R32 (release), REVISION: 7.6, GCID: 38171779, BOARD: t210ref, EABI: aarch64, DATE: Tue Nov  5 07:46:14 UTC 2024\n"
NANO_VERSION = (
    "Linux version 4.9.337-tegra (buildbrain@mobile-u64-5499-d7000) (gcc version 7.3.1 20180425 "
    "[linaro-7.3-2018.05 revision d29120a424ecfbc167ef90065c0eeb7f91977701] (Linaro GCC 7.3-2018.05) ) #1 SMP "
    "PREEMPT Mon Nov 4 23:41:41 PST 2024\n"
)
NANO_MODEL = "NVIDIA Jetson Nano Developer Kit"
NANO_COMPATIBLE = ("nvidia,p3449-0000-b00+p3448-0000-b00", "nvidia,jetson-nano", "nvidia,tegra210")


def device_tree(host: HostTree, model: str, compatible: tuple[str, ...] = ()) -> None:
    """The kernel writes device-tree strings NUL-terminated (`cat` glues them together)."""
    host.binary("/proc/device-tree/model", model.encode() + b"\x00")
    if compatible:
        host.binary("/proc/device-tree/compatible", b"".join(s.encode() + b"\x00" for s in compatible))


def os_release(pretty: str, version_id: str, codename: str) -> str:
    return (
        f'PRETTY_NAME="{pretty}"\nNAME="Ubuntu"\nVERSION_ID="{version_id}"\nVERSION="{pretty[7:]}"\n'
        f"VERSION_CODENAME={codename}\nID=ubuntu\nID_LIKE=debian\nUBUNTU_CODENAME={codename}\n"
    )


def orin_pypi_torch() -> HostTree:
    venv = "/home/user/venv"
    host = HostTree(
        "jetson-orin-jp6-pypi-torch",
        "Jetson Orin Nano Super devkit, L4T R36.4.3 (JetPack 6.2), Ubuntu 22.04: `pip install torch` in a venv "
        "gave PyPI's aarch64 torch 2.5.1, a CPU build: platform.jetson names NVIDIA's index for JetPack 6",
        python=f"{venv}/bin/python",
        env={"PATH": f"{venv}/bin:" + STD_PATH},
    )
    host.text("/etc/nv_tegra_release", ORIN_RELEASE)
    device_tree(host, ORIN_MODEL, ORIN_COMPATIBLE)
    host.text("/proc/driver/nvidia/version", ORIN_DRIVER)
    host.text("/proc/modules", ORIN_MODULES)
    host.text("/proc/meminfo", ORIN_MEMINFO)
    host.text("/sys/module/nvgpu/initstate", "live\n")
    host.text("/proc/sys/kernel/osrelease", "5.15.148-tegra\n")
    host.text("/etc/os-release", os_release("Ubuntu 22.04.5 LTS", "22.04", "jammy"))
    host.marker("/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-modeset", "/dev/nvmap")
    site = f"{venv}/lib/python3.10/site-packages"
    host.probes["python_env"] = python_probe(f"{venv}/bin/python", "3.10.12", venv, machine="aarch64")
    data = packages(site, "2.5.1", None, [dist("torch", "2.5.1", site)])
    data["user_site_enabled"] = False
    host.probes["torch_packages"] = ok(json.dumps(data))
    return host


def xavier_nvidia_torch() -> HostTree:
    host = HostTree(
        "jetson-xavier-jp5-nvidia-torch",
        "Jetson Xavier NX devkit, L4T R35.4.1 (JetPack 5.1.2), Ubuntu 20.04, NVIDIA's torch 2.1.0a0+41361538.nv23.06 "
        "(the v512 wheel) in the system Python's user site: healthy",
        python="/usr/bin/python3",
    )
    host.text("/etc/nv_tegra_release", XAVIER_RELEASE)
    device_tree(host, XAVIER_MODEL)
    host.text("/proc/sys/kernel/osrelease", "5.10.120-tegra\n")
    host.text("/etc/os-release", os_release("Ubuntu 20.04.6 LTS", "20.04", "focal"))
    host.text("/sys/module/nvgpu/initstate", "live\n")
    host.marker("/dev/nvhost-ctrl-gpu", "/dev/nvmap")
    site = "/home/user/.local/lib/python3.8/site-packages"
    host.probes["python_env"] = python_probe("/usr/bin/python3", "3.8.10", "/usr", machine="aarch64")
    version = "2.1.0a0+41361538.nv23.06"
    data = packages(site, version, "11.4", [dist("torch", "2.1.0a0+41361538.nv23.6", site)])
    data["user_site"] = site
    host.probes["torch_packages"] = ok(json.dumps(data))
    device = {"index": 0, "name": "Xavier", "capability": "7.2", "total_memory_bytes": 7_766_360_064}
    result = cuda_runtime(
        site,
        version,
        "11.4",
        ["sm_72", "sm_87"],
        python="/usr/bin/python3",
        device_count=1,
        devices=[{**device, "uuid": None, "pci_bus_id": None}],
        cudnn_version=8600,
    )
    host.probes["torch_runtime"] = ok(runtime(result))
    return host


def nano_no_torch() -> HostTree:
    host = HostTree(
        "jetson-nano-jp4-no-torch",
        "Jetson Nano devkit (B01), L4T R32.7.6 (JetPack 4.6.6), Ubuntu 18.04, Python 3.6: no torch yet; the "
        "install command is NVIDIA's v461 wheel, not a PyPI one (PyPI has no torch for this Python)",
        python="/usr/bin/python3",
    )
    host.text("/etc/nv_tegra_release", NANO_RELEASE)
    device_tree(host, NANO_MODEL, NANO_COMPATIBLE)
    host.text("/proc/version", NANO_VERSION)
    host.text("/proc/sys/kernel/osrelease", "4.9.337-tegra\n")
    host.text("/etc/os-release", os_release("Ubuntu 18.04.6 LTS", "18.04", "bionic"))
    host.text("/sys/module/nvgpu/parameters/railgate_enable", "Y\n")
    host.marker("/dev/nvhost-ctrl-gpu", "/dev/nvmap")
    host.probes["python_env"] = python_probe("/usr/bin/python3", "3.6.9", "/usr", machine="aarch64")
    data = packages("/usr/lib/python3/dist-packages", "", None, [])
    data["torch_paths"] = []
    data["torch_version_py"] = None
    host.probes["torch_packages"] = ok(json.dumps(data))
    return host


BUILDERS = (orin_pypi_torch, xavier_nvidia_torch, nano_no_torch)


def main() -> int:
    for build in BUILDERS:
        print(build().write())
    return 0


if __name__ == "__main__":
    sys.exit(main())
