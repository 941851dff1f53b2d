"""In-memory Facts for check and fix tests: healthy defaults, override what a test is about."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from torch_gpu_doctor.facts.driver import DriverFacts, DriverVersionReading
from torch_gpu_doctor.facts.gpus import Gpu
from torch_gpu_doctor.facts.kernel import KernelFacts, KernelModule
from torch_gpu_doctor.facts.model import FACTS_SCHEMA_VERSION, Facts
from torch_gpu_doctor.facts.nvml import NvmlDevice, NvmlErrorInfo, NvmlFacts
from torch_gpu_doctor.facts.platform import OsFacts
from torch_gpu_doctor.facts.python_env import PythonFacts
from torch_gpu_doctor.facts.torch import TorchPackages, TorchRuntime
from torch_gpu_doctor.unavailable import Reason, Unavailable

GONE = Unavailable(Reason.NOT_FOUND, "test")


def os_facts(distro_id: str = "ubuntu", like: tuple[str, ...] = ("debian",), wsl: bool = False) -> OsFacts:
    return OsFacts(
        system="Linux",
        kernel_release="6.8.0-45-generic" if not wsl else "5.15.167.4-microsoft-standard-WSL2",
        kernel_version="Linux version 6.8.0-45-generic",
        distro_id=distro_id,
        distro_name=f"{distro_id} test",
        distro_version="24.04",
        distro_like=like,
        is_wsl=wsl,
        has_dxg=wsl,
    )


def gpu(
    bdf: str = "0000:01:00.0",
    name: str = "NVIDIA GeForce RTX 4090",
    cc: str = "8.9",
    nvml_index: int | None = 0,
    kernel_driver: str | None = "nvidia",
    vendor: str = "nvidia",
    excluded: bool | None = None,
) -> Gpu:
    return Gpu(
        bdf=bdf,
        vendor=vendor,
        device_id=0x2684,
        name=name,
        name_source="nvml",
        compute_capability=cc,
        compute_capability_source="nvml",
        memory_total_bytes=24 * 2**30,
        uuid="GPU-00000000-0000-0000-0000-000000000000",
        kernel_driver=kernel_driver,
        on_pci_bus=True,
        nvml_index=nvml_index,
        excluded=excluded,
    )


def nvml_device(index: int = 0, bdf: str = "0000:01:00.0", **fields: Any) -> NvmlDevice:
    base = NvmlDevice(
        index=index,
        name="NVIDIA GeForce RTX 4090",
        uuid="GPU-00000000-0000-0000-0000-000000000000",
        bdf=bdf,
        pci_device_id=0x268410DE,
        memory_total_bytes=24 * 2**30,
        compute_capability="8.9",
        persistence_mode=False,
        pcie_link_gen_current=1,
        pcie_link_gen_max=4,
        pcie_link_gen_gpu_max=4,
        pcie_link_width_current=16,
        pcie_link_width_max=16,
    )
    return replace(base, **fields)


def nvml_ok(version: str = "550.54.15", devices: tuple[NvmlDevice, ...] | None = None) -> NvmlFacts:
    devs = (nvml_device(),) if devices is None else devices
    return NvmlFacts(None, version, "12." + version, 12040, len(devs), devs)


def nvml_error(name: str, code: int) -> NvmlFacts:
    err = Unavailable(Reason.FAILED, f"NVMLError_{name}")
    return NvmlFacts(NvmlErrorInfo(name, code, name), err, err, err, err, ())


def driver(version: str | None = "550.54.15", **fields: Any) -> DriverFacts:
    value: str | Unavailable = version if version is not None else GONE
    base = DriverFacts(
        version=value,
        version_source="nvml" if version else None,
        readings=(
            DriverVersionReading("nvml", "nvmlSystemGetDriverVersion", value),
            DriverVersionReading("sysfs", "/sys/module/nvidia/version", value),
        ),
        kernel_module_flavor="open" if version else GONE,
        is_jetson=False,
        cuda_version="12.4" if version else GONE,
        cuda_version_source="nvml" if version else None,
        userspace_version=value,
        userspace_library="/usr/lib/x86_64-linux-gnu/libnvidia-ml.so." + (version or "x"),
        installed_module_version=Unavailable(Reason.NOT_APPLICABLE, "loaded"),
        nvidia_smi="/usr/bin/nvidia-smi",
    )
    return replace(base, **fields)


def kernel(
    loaded: tuple[str, ...] = ("nvidia", "nvidia_uvm"), blacklists: tuple[str, ...] = ()
) -> KernelFacts:
    names = ("nvidia", "nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nouveau", "amdgpu")
    return KernelFacts(
        modules=tuple(KernelModule(n, n in loaded) for n in names),
        device_nodes=("nvidia0", "nvidiactl", "nvidia-uvm"),
        nouveau_blacklisted_by=blacklists,
        cmdline="BOOT_IMAGE=/vmlinuz root=/dev/sda1",
    )


def facts(**fields: Any) -> Facts:
    base = Facts(
        schema_version=FACTS_SCHEMA_VERSION,
        host="test",
        os=os_facts(),
        cpu=GONE,
        memory=GONE,
        python=GONE,
        driver=driver(),
        kernel=kernel(),
        nvml=nvml_ok(),
        pci=(),
        proc_gpus=(),
        gpus=(gpu(),),
    )
    return replace(base, **fields)


def python_facts(
    version: str = "3.11.7", machine: str = "x86_64", executable: str = "/venv/bin/python"
) -> Any:

    return PythonFacts(
        executable=executable,
        version=version,
        implementation="CPython",
        machine=machine,
        system="Linux",
        prefix="/venv",
        base_prefix="/usr",
        in_virtualenv=True,
        conda_prefix=Unavailable(Reason.NOT_APPLICABLE, "not conda"),
        user_site_enabled=False,
    )


def torch_packages(
    version: str | None = "2.13.0+cu130", cuda: str | None = "13.0", paths: int = 1
) -> TorchPackages:
    return TorchPackages(
        torch_paths=tuple(f"/site{i}/torch" for i in range(paths)),
        version=version,
        cuda=cuda,
        hip=None,
        debug=False,
        companions=(),
        distributions=(),
        sys_path=(),
        user_site=None,
        user_site_enabled=False,
        externally_managed=False,
    )


def torch_runtime(**fields: Any) -> TorchRuntime:
    """A torch runtime probe that imported a CUDA build and initialised CUDA; override what a test is about."""
    base = TorchRuntime(
        outcome="ok",
        failed_stage=None,
        message="",
        stderr_tail="",
        version="2.5.1+cu124",
        cuda="12.4",
        hip=None,
        arch_list=("sm_86",),
        cuda_available=True,
        cuda_warnings=(),
        cuda_init_error=None,
        devices=(),
        cudnn_available=None,
        cudnn_version=None,
        nccl_version=None,
        mapped_libraries=(),
    )
    return replace(base, **fields)
