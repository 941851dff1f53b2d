"""Write the PCIe-link fixture hosts (issue 3/6, item 7): `python -m tools.fixture_hosts_links`.

x8-slot RTX 3090s, an idle RTX 4090 on a riser, RTX 4060 Ti cards in x4 and x8 links, a GPU on a Pi's x1 lane:
the sysfs trees of tests/fixtures/sysfs-trees (already rebuilt from the samples) or the nvidia-smi values they
come with, plus driver, NVML and torch-probe recordings. Sources of every value: tests/fixtures/hosts/README.md.
expected.json is written by hand, never here.
"""

from __future__ import annotations

import json
import sys

from tools.fixture_host_parts import (
    ARCH_29_CU128,
    ARCH_CU12X,
    CUDNN_9_1,
    CUDNN_9_5,
    CUDNN_9_10,
    cuda_torch,
    driver_libraries,
    gpu_device,
    libcuda,
    libcudnn,
    loaded_driver,
)
from tools.fixture_host_texts import (
    DEBIAN_11,
    DMESG,
    MODULES_OPEN,
    MODULES_PROPRIETARY,
    NVIDIA_VENDOR,
    NVRM_550_54_14,
    NVRM_550_127_05,
    NVRM_OPEN_560_35_03,
    UBUNTU_2204,
    pci_ids,
)
from tools.fixture_host_tree import (
    SYSFS_TREES,
    HostTree,
    nvml_answers,
    nvml_device,
    python_probe,
)
from tools.fixture_topology import add_topology
from tools.fixture_torch_probes import cuda_runtime, dist, ok, packages, runtime

# --- 3. rtx3090-x8-slots ------------------------------------------------------------------------------------------

RTX3090_UUIDS = ("GPU-4aba3cfa-7b42-cca6-97f4-5cdd281b0746", "GPU-74e6e433-5193-b31f-b8b5-7a54c8b4623e")


def rtx3090_x8() -> HostTree:
    host = HostTree(
        "rtx3090-x8-slots",
        "2x RTX 3090 in x8 slots idling at 2.5 GT/s, open module 560.35.03, Ubuntu 22.04, torch 2.9.1+cu128 in a "
        "venv (noonghunna/club-3090#1095 lspci joined with samples/nvidia-smi-q/thamada-RTX3090-q.txt)",
        python="/home/user/venv/bin/python",
    )
    host.copy_tree(SYSFS_TREES / "rtx3090-x8-slot-idle")
    second = "pci0000:00/0000:00:03.2/0000:0b:00.0"
    first = "pci0000:00/0000:00:03.1/0000:0a:00.0"
    # The first card (0a:00.0, from the issue's `lspci -nnk`) sits in the other x8 slot of the pair.
    host.pci_function("pci0000:00/0000:00:03.1", 0x1022, None, 0x060400)
    host.pcie_link("pci0000:00/0000:00:03.1", ("2.5 GT/s PCIe", 8), ("16.0 GT/s PCIe", 8))
    host.pci_function(first, 0x10DE, 0x2204, 0x030000, subsystem=(0x10B0, 0x2204), driver="nvidia")
    host.pcie_link(first, ("2.5 GT/s PCIe", 8), ("16.0 GT/s PCIe", 16))
    host.text(f"/sys/devices/{first}/power_state", "D0\n")
    host.bind(second, "nvidia")
    host.text(f"/sys/devices/{second}/subsystem_vendor", "0x10b0\n")
    host.text(f"/sys/devices/{second}/subsystem_device", "0x2204\n")
    loaded_driver(host, "560.35.03", NVRM_OPEN_560_35_03, MODULES_OPEN, 2)
    host.text("/etc/os-release", UBUNTU_2204)
    host.text("/usr/share/misc/pci.ids", pci_ids(NVIDIA_VENDOR, "2204  GA102 [GeForce RTX 3090]"))
    host.nvml = nvml_answers(
        "560.35.03",
        12060,
        [
            nvml_device(
                "NVIDIA GeForce RTX 3090", uuid, bus, 0x220410DE, 24576, (8, 6), 1, (1, 4, 4), (8, 16)
            )
            for uuid, bus in zip(RTX3090_UUIDS, ("00000000:0A:00.0", "00000000:0B:00.0"), strict=True)
        ],
    )
    add_topology(
        host.nvml, "rtx3090-x8-slots"
    )  # PHB, and NS between two RTX 3090s (tools/fixture_topology.py)
    venv = "/home/user/venv"
    site = f"{venv}/lib/python3.10/site-packages"
    host.probes["python_env"] = python_probe(f"{venv}/bin/python", "3.10.12", venv)
    cuda_torch(host, site, "2.9.1+cu128", "12.8", [("nvidia-cudnn-cu12", "9.10.2.21")], CUDNN_9_10)
    host.probes |= {
        "torch_runtime": ok(
            runtime(
                cuda_runtime(
                    site,
                    "2.9.1+cu128",
                    "12.8",
                    ARCH_29_CU128,
                    python=f"{venv}/bin/python",
                    device_count=2,
                    devices=[gpu_device(i, "NVIDIA GeForce RTX 3090", "8.6", 25438126080) for i in range(2)],
                    cudnn_version=91002,
                    mapped_libraries=[libcuda("560.35.03"), libcudnn(site)],
                )
            )
        ),
    }
    return host


# --- 4. rtx4090-riser-idle -------------------------------------------------------------------------------------


def rtx4090_riser() -> HostTree:
    conda = "/home/user/miniconda3/envs/jan"
    host = HostTree(
        "rtx4090-riser-idle",
        "RTX 4090 on a riser idling at 2.5 GT/s x16, proprietary 550.127.05, Ubuntu 22.04, torch 2.6.0+cu124 "
        "in a conda env (janhq/jan#183 lspci joined with samples/nvidia-smi-q/thamada-RTX4090-q.txt)",
        python=f"{conda}/bin/python",
    )
    host.copy_tree(SYSFS_TREES / "rtx4090-riser-idle-gen1")
    gpu = "pci0000:00/0000:00:01.1/0000:01:00.0"
    host.bind(gpu, "nvidia")
    host.text(f"/sys/devices/{gpu}/subsystem_vendor", "0x10b0\n")
    host.text(f"/sys/devices/{gpu}/subsystem_device", "0xf297\n")
    loaded_driver(host, "550.127.05", NVRM_550_127_05, MODULES_PROPRIETARY, 1)
    host.text("/etc/os-release", UBUNTU_2204)
    host.text("/usr/share/misc/pci.ids", pci_ids(NVIDIA_VENDOR, "2684  AD102 [GeForce RTX 4090]"))
    host.nvml = nvml_answers(
        "550.127.05",
        12040,
        [
            nvml_device(
                "NVIDIA GeForce RTX 4090",
                "GPU-8ee5f1e0-e705-aac5-6d6e-b97ad59601ef",
                "00000000:01:00.0",
                0x268410DE,
                24564,
                (8, 9),
                1,
                (1, 4, 4),
                (16, 16),
            )
        ],
    )
    site = f"{conda}/lib/python3.11/site-packages"
    host.probes = {
        "python_env": python_probe(f"{conda}/bin/python", "3.11.10", conda, conda, conda=conda),
        "torch_packages": ok(
            json.dumps(
                packages(
                    site,
                    "2.6.0+cu124",
                    "12.4",
                    [dist("nvidia-cudnn-cu12", "9.1.0.70", site), dist("torch", "2.6.0", site, [CUDNN_9_1])],
                )
            )
        ),
        "torch_runtime": ok(
            runtime(
                cuda_runtime(
                    site,
                    "2.6.0+cu124",
                    "12.4",
                    ARCH_CU12X,
                    python=f"{conda}/bin/python",
                    device_count=1,
                    devices=[gpu_device(0, "NVIDIA GeForce RTX 4090", "8.9", 25386352640)],
                    cudnn_version=90100,
                    mapped_libraries=[libcuda("550.127.05"), libcudnn(site)],
                )
            )
        ),
    }
    return host


# --- 5. rtx4060ti-x4 --------------------------------------------------------------------------------------------


def rtx4060ti_x4() -> HostTree:
    host = HostTree(
        "rtx4060ti-x4",
        "2x RTX 4060 Ti (x8 cards) under load: 03:00.0 trained x4 in an x4 slot, 09:00.0 at its full x8; "
        "proprietary 550.54.14, Ubuntu 22.04, torch 2.7.1+cu126 with torchvision/torchaudio "
        "(samples/nvidia-smi-q/thamada-RTX4060Ti-q.txt)",
    )
    ports = {"0000:03:00.0": ("pci0000:00/0000:00:02.1", 4), "0000:09:00.0": ("pci0000:00/0000:00:03.1", 16)}
    widths = {"0000:03:00.0": 4, "0000:09:00.0": 8}
    for bdf, (port, port_width) in ports.items():
        gpu = f"{port}/{bdf}"
        host.pci_function(port, 0x1022, None, 0x060400)
        host.pcie_link(port, ("16.0 GT/s PCIe", widths[bdf]), ("16.0 GT/s PCIe", port_width))
        host.pci_function(gpu, 0x10DE, 0x2803, 0x030000, subsystem=(0x1462, 0x5174), driver="nvidia")
        host.pcie_link(gpu, ("16.0 GT/s PCIe", widths[bdf]), ("16.0 GT/s PCIe", 8))
        host.text(f"/sys/devices/{gpu}/power_state", "D0\n")
    loaded_driver(host, "550.54.14", NVRM_550_54_14, MODULES_PROPRIETARY, 2)
    host.text("/etc/os-release", UBUNTU_2204)
    host.text("/usr/share/misc/pci.ids", pci_ids(NVIDIA_VENDOR, "2803  AD106 [GeForce RTX 4060 Ti]"))
    host.nvml = nvml_answers(
        "550.54.14",
        12040,
        [
            nvml_device(
                "NVIDIA GeForce RTX 4060 Ti",
                "GPU-5fd2f5bb-12a1-ad58-a590-2f48aa312d92",
                "00000000:03:00.0",
                0x280310DE,
                16380,
                (8, 9),
                0,
                (4, 4, 4),
                (4, 8),
            ),
            nvml_device(
                "NVIDIA GeForce RTX 4060 Ti",
                "GPU-064b552e-b923-6fed-6f91-386f97032a9d",
                "00000000:09:00.0",
                0x280310DE,
                16380,
                (8, 9),
                0,
                (4, 4, 4),
                (8, 8),
            ),
        ],
    )
    site = "/usr/local/lib/python3.10/dist-packages"
    # What the probe reads from a real companion's version.py: `__version__` and `git_version`, no `cuda`
    # (torch 2.11's torchvision/torchaudio on a real machine, 2026-11-26): the variant is in the local tag.
    version_py = {"git_version": "0" * 40}
    torch = packages(
        site,
        "2.7.1+cu126",
        "12.6",
        [
            dist("nvidia-cudnn-cu12", "9.5.1.17", site),
            dist("torch", "2.7.1+cu126", site, [CUDNN_9_5]),
            dist("torchaudio", "2.7.1+cu126", site, ["torch==2.7.1"]),
            dist("torchvision", "0.22.1+cu126", site, ["torch==2.7.1"]),
        ],
    )
    torch["companions"] = {
        "torchvision": {
            "paths": [f"{site}/torchvision"],
            "version_py": {**version_py, "__version__": "0.22.1+cu126"},
        },
        "torchaudio": {
            "paths": [f"{site}/torchaudio"],
            "version_py": {**version_py, "__version__": "2.7.1+cu126"},
        },
    }
    host.probes = {
        "python_env": python_probe("/usr/bin/python3", "3.10.12", "/usr"),
        "torch_packages": ok(json.dumps(torch)),
        "torch_runtime": ok(
            runtime(
                cuda_runtime(
                    site,
                    "2.7.1+cu126",
                    "12.6",
                    ARCH_CU12X,
                    device_count=2,
                    devices=[
                        gpu_device(i, "NVIDIA GeForce RTX 4060 Ti", "8.9", 17175150592) for i in range(2)
                    ],
                    cudnn_version=90501,
                    mapped_libraries=[libcuda("550.54.14"), libcudnn(site)],
                )
            )
        ),
    }
    return host


# --- 6. gpu-x1-link ----------------------------------------------------------------------------------------------


# `dmesg` lines quoted in geerlingguy/raspberry-pi-pcie-devices#480 (2023-02-15), verbatim; the rest of the log
# was not quoted.
PI_DMESG = """[  657.116281] NVRM: Chipset not recognized (vendor ID 0x14e4, device ID 0x2711)
[  657.116303] The NVIDIA GPU driver for AArch64 has not been qualified on this platform
               and therefore it is not recommended or intended for use in any production
               environment.
[  657.378801] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x24:0xffff:1423)
[  657.378923] NVRM: GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0
[  661.566796] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x24:0xffff:1423)
[  661.566927] NVRM: GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0
"""


def gpu_x1_link() -> HostTree:
    host = HostTree(
        "gpu-x1-link",
        "Quadro RTX 8000 on a Raspberry Pi CM4's single PCIe 2.0 x1 lane: driver 525.89.02 (aarch64) loaded, "
        "RmInitAdapter failed so NVML lists no GPU (geerlingguy/raspberry-pi-pcie-devices#480, #509)",
    )
    host.copy_tree(SYSFS_TREES / "quadro-rtx8000-pi-x1")
    port = "platform/scb/fd500000.pcie/pci0000:00/0000:00:00.0"
    host.text(f"/sys/devices/{port}/vendor", "0x14e4\n")
    host.text(f"/sys/devices/{port}/device", "0x2711\n")
    host.bind(f"{port}/0000:01:00.0", "nvidia")
    host.text("/sys/module/nvidia/version", "525.89.02\n")
    for module in ("nvidia", "nvidia_modeset", "nvidia_drm"):
        host.text(f"/sys/module/{module}/initstate", "live\n")
    host.marker("/dev/null", "/dev/nvidiactl", "/dev/nvidia0", "/usr/bin/nvidia-smi", "/usr/bin/dmesg")
    host.command(DMESG, stdout=PI_DMESG)
    driver_libraries(host, "525.89.02", "/usr/lib/aarch64-linux-gnu")
    host.text("/etc/os-release", DEBIAN_11)
    host.text("/usr/share/misc/pci.ids", pci_ids(NVIDIA_VENDOR, "1e30  TU102GL [Quadro RTX 6000/8000]"))
    host.nvml = nvml_answers("525.89.02", 12000, [])
    site = "/home/pi/.local/lib/python3.9/site-packages"
    torch = {
        **packages(site, "2.0.1", None, [dist("torch", "2.0.1", site)]),
        "user_site": site,
    }
    host.probes = {
        "python_env": python_probe("/usr/bin/python3", "3.9.2", "/usr", machine="aarch64"),
        "torch_packages": ok(json.dumps(torch)),
    }
    return host


BUILDERS = (
    rtx3090_x8,
    rtx4090_riser,
    rtx4060ti_x4,
    gpu_x1_link,
)


def main() -> int:
    for build in BUILDERS:
        print(build().write())
    return 0


if __name__ == "__main__":
    sys.exit(main())
