"""Pieces several fixture hosts share: a loaded NVIDIA driver's files, torch wheel pins and runtime entries.

Values: arch lists and cuDNN pins are those of compat/cuda_matrix.json for the release and variant named;
the driver's files follow hardware.md §3 (tests/fixtures/hosts/README.md names each host's sources).
"""

from __future__ import annotations

import json
from typing import Any

from tools.fixture_host_texts import NVIDIA_DEVICE_NODES, proc_version
from tools.fixture_host_tree import HostTree
from tools.fixture_torch_probes import NO_DRIVER, cuda_runtime, dist, ok, packages, runtime

CUDNN_9_1 = 'nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux" and platform_machine == "x86_64"'
CUDNN_9_5 = 'nvidia-cudnn-cu12==9.5.1.17; platform_system == "Linux" and platform_machine == "x86_64"'
CUDNN_9_10 = 'nvidia-cudnn-cu12==9.10.2.21; platform_system == "Linux" and platform_machine == "x86_64"'
ARCH_CU12X = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]  # 2.5-2.7 cu124/cu126 Linux
ARCH_29_CU128 = ["sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
# the probe's stages when CUDA does not start (no `devices` stage)
NO_DEVICE_STAGES = ("import", "arch_list", "cuda_init", "cudnn", "nccl", "libraries")
LIBDIR = "/usr/lib/x86_64-linux-gnu"


def driver_libraries(host: HostTree, version: str, libdir: str = LIBDIR) -> None:
    """libnvidia-ml and libcuda of a driver package: `lib*.so.1 -> lib*.so.<version>` (hardware.md §3.6)."""
    for lib in ("libnvidia-ml", "libcuda"):
        host.marker(f"{libdir}/{lib}.so.{version}")
        host.link(f"{libdir}/{lib}.so.1", f"{lib}.so.{version}")


def loaded_driver(
    host: HostTree, version: str, nvrm: str | None, modules: str, gpus: int, libraries: str | None = None
) -> None:
    """A loaded NVIDIA driver: version files, /proc/modules, device nodes, its libraries and nvidia-smi.

    `libraries`: the user-space version when it differs from the loaded module's (an upgrade without reboot).
    """
    host.text("/sys/module/nvidia/version", version + "\n")
    if nvrm is not None:
        host.text("/proc/driver/nvidia/version", proc_version(nvrm))
    host.text("/proc/modules", modules)
    host.marker("/dev/null", *(f"/dev/{n}" for n in NVIDIA_DEVICE_NODES))
    host.marker(*(f"/dev/nvidia{i}" for i in range(gpus)), "/usr/bin/nvidia-smi")
    driver_libraries(host, libraries or version)


def dkms_modules(host: HostTree, release: str) -> None:
    """The modules DKMS installs for the running kernel (Ubuntu: /lib/modules/<release>/updates/dkms)."""
    host.text("/proc/sys/kernel/osrelease", release + "\n")
    for module in ("nvidia", "nvidia-modeset", "nvidia-drm", "nvidia-uvm"):
        host.marker(f"/lib/modules/{release}/updates/dkms/{module}.ko")


def libcuda(version: str) -> dict[str, str]:
    """libcuda as the torch process maps it: the loader's `libcuda.so.1` resolving to the driver's file."""
    return {
        "name": "libcuda",
        "path": "/lib/x86_64-linux-gnu/libcuda.so.1",
        "realpath": f"{LIBDIR}/libcuda.so.{version}",
    }


def libcudnn(site: str) -> dict[str, str]:
    path = f"{site}/nvidia/cudnn/lib/libcudnn.so.9"
    return {"name": "libcudnn", "path": path, "realpath": path}


def gpu_device(index: int, name: str, cc: str, memory_bytes: int) -> dict[str, Any]:
    """One entry of the runtime probe's device list (torch.cuda.get_device_properties)."""
    return {
        "index": index,
        "name": name,
        "capability": cc,
        "total_memory_bytes": memory_bytes,
        "uuid": None,
        "pci_bus_id": None,
    }


def cuda_torch(
    host: HostTree, site: str, version: str, cuda: str, pins: list[tuple[str, str]], requires: str
) -> None:
    """torch_packages for a PyPI CUDA wheel in `site`: torch plus the nvidia-* wheels it pins."""
    dists = [dist(name, pinned, site) for name, pinned in pins]
    dists.append(dist("torch", version.split("+", maxsplit=1)[0], site, [requires]))
    data = packages(site, version, cuda, dists)
    if "/.local/" in site:
        data["user_site"] = site
    elif not site.startswith("/usr/"):
        data["user_site_enabled"] = False
    host.probes["torch_packages"] = ok(json.dumps(data))


def no_driver_runtime(
    site: str, version: str, cuda: str, arch: list[str], python: str, cudnn: int
) -> dict[str, object]:
    """torch_runtime where libcuda.so.1 cannot be loaded: PyTorch's "Found no NVIDIA driver" (compat.md §6).

    cuDNN still loads (it needs no GPU), so `cudnn` is the wheel's version as torch reports it (90100 = 9.1.0).
    """
    return ok(
        runtime(
            cuda_runtime(
                site,
                version,
                cuda,
                arch,
                python=python,
                cuda_available=False,
                cuda_warnings=["CUDA initialization: " + NO_DRIVER],
                cuda_init_error="RuntimeError: " + NO_DRIVER,
                cudnn_version=cudnn,
            ),
            NO_DEVICE_STAGES,
        )
    )
