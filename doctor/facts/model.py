"""The frozen, JSON round-trippable snapshot of a machine. Every field may be unavailable, with its reason."""

from __future__ import annotations

from dataclasses import dataclass, field

from torch_gpu_doctor.facts.boltctl import BoltDevice
from torch_gpu_doctor.facts.container import ContainerFacts
from torch_gpu_doctor.facts.gpu_health import GpuHealth
from torch_gpu_doctor.facts.iommu import IommuFacts
from torch_gpu_doctor.facts.kernel_log import KernelLogFacts
from torch_gpu_doctor.facts.measurements import Measurements
from torch_gpu_doctor.facts.memory_limits import MemoryLimitsFacts
from torch_gpu_doctor.facts.nvidia_module import NvidiaModuleFacts
from torch_gpu_doctor.facts.pcie_link import PcieLinkPath
from torch_gpu_doctor.facts.rocm import RocmFacts
from torch_gpu_doctor.facts.secure_boot import SecureBootFacts
from torch_gpu_doctor.facts.storage import StorageFacts
from torch_gpu_doctor.facts.thunderbolt import ThunderboltFacts
from torch_gpu_doctor.facts.torch import TorchPackages, TorchRuntime
from torch_gpu_doctor.facts.virtualization import VirtualizationFacts
from torch_gpu_doctor.facts.wsl import WslFacts
from torch_gpu_doctor.smoke.model import SmokeRun
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

NOT_GATHERED = Unavailable(Reason.NOT_APPLICABLE, "not gathered in this run")
SMOKE_NOT_RUN = Unavailable(Reason.NOT_APPLICABLE, "the smoke test was not run (gpu-doctor --smoke)")

FACTS_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class OsFacts:
    system: str  # "Linux", "Windows", "Darwin" (as the diagnosed Python reports it, else "Linux")
    kernel_release: Maybe[str]  # /proc/sys/kernel/osrelease
    kernel_version: Maybe[str]  # /proc/version
    distro_id: Maybe[str]  # /etc/os-release ID
    distro_name: Maybe[str]  # PRETTY_NAME
    distro_version: Maybe[str]  # VERSION_ID
    distro_like: tuple[str, ...]
    is_wsl: bool
    has_dxg: bool  # /dev/dxg: the GPU paravirtualisation device of WSL2
    container: str | None = (
        None  # "docker" | "podman" | "kubernetes" | the value of $container; None: not seen
    )


@dataclass(frozen=True)
class CpuFacts:
    model: Maybe[str]
    logical_cpus: Maybe[int]


@dataclass(frozen=True)
class MemoryFacts:
    total_bytes: Maybe[int]
    available_bytes: Maybe[int]
    swap_total_bytes: Maybe[int]


@dataclass(frozen=True)
class PythonFacts:
    executable: str  # as given (--python) or the interpreter running gpu-doctor
    version: Maybe[str]
    implementation: Maybe[str]
    machine: Maybe[str]  # platform.machine() of the target interpreter
    system: Maybe[str]  # platform.system()
    prefix: Maybe[str]
    base_prefix: Maybe[str]
    in_virtualenv: Maybe[bool]
    conda_prefix: Maybe[str]
    user_site_enabled: Maybe[bool]


@dataclass(frozen=True)
class DriverVersionReading:
    source: str  # "nvml" | "sysfs" | "procfs" | "nvidia-smi"
    origin: str  # the file, call or command it came from
    version: Maybe[str]


@dataclass(frozen=True)
class DriverFacts:
    version: Maybe[str]  # the first source that answered, in DESIGN order
    version_source: str | None
    readings: tuple[DriverVersionReading, ...]
    kernel_module_flavor: Maybe[str]  # "open" | "proprietary" (from /proc/driver/nvidia/version)
    is_jetson: bool  # L4T: the version is an L4T release, not a desktop driver branch
    cuda_version: Maybe[str]  # newest CUDA the driver supports, e.g. "12.4"
    cuda_version_source: str | None  # "nvml" | "nvidia-smi" | "compat table"
    userspace_version: Maybe[str]  # version of the libnvidia-ml.so.1 user-space library
    userspace_library: Maybe[str]  # its resolved path
    installed_module_version: Maybe[str]  # `modinfo -F version nvidia`: built for the running kernel
    nvidia_smi: str | None  # path, if on PATH


@dataclass(frozen=True)
class KernelModule:
    name: str
    loaded: bool


@dataclass(frozen=True)
class KernelFacts:
    modules: Maybe[tuple[KernelModule, ...]]  # nvidia, nvidia_uvm, nvidia_drm, nvidia_modeset, nouveau
    device_nodes: Maybe[tuple[str, ...]]  # /dev/nvidia* names
    nouveau_blacklisted_by: tuple[str, ...]  # files / cmdline that blacklist nouveau
    cmdline: Maybe[str]


@dataclass(frozen=True)
class NvmlErrorInfo:
    name: str  # pynvml class suffix: "LibRmVersionMismatch"
    code: int
    message: str


@dataclass(frozen=True)
class NvmlDevice:
    index: int
    name: Maybe[str]
    uuid: Maybe[str]
    bdf: Maybe[str]  # normalised dddd:bb:dd.f lower case
    pci_device_id: Maybe[int]  # 0xDEVICEVENDOR as NVML reports it
    memory_total_bytes: Maybe[int]
    compute_capability: Maybe[str]  # "8.9"
    persistence_mode: Maybe[bool]
    pcie_link_gen_current: Maybe[int]
    pcie_link_gen_max: Maybe[int]
    pcie_link_gen_gpu_max: Maybe[int]
    pcie_link_width_current: Maybe[int]
    pcie_link_width_max: Maybe[int]


@dataclass(frozen=True)
class NvmlFacts:
    init_error: NvmlErrorInfo | None
    driver_version: Maybe[str]
    nvml_version: Maybe[str]
    cuda_driver_version: Maybe[int]  # 12040 = CUDA 12.4
    device_count: Maybe[int]
    devices: tuple[NvmlDevice, ...]


@dataclass(frozen=True)
class ProcGpuInfo:
    """/proc/driver/nvidia/gpus/<BDF>/information"""

    bdf: str
    model: Maybe[str]
    uuid: Maybe[str]
    device_minor: Maybe[int]
    excluded: Maybe[bool]


@dataclass(frozen=True)
class PciDevice:
    bdf: str
    vendor_id: int
    device_id: int
    class_code: int  # 0x030000 VGA, 0x030200 3D controller, 0x038000 display other
    subsystem_vendor_id: Maybe[int]
    subsystem_device_id: Maybe[int]
    driver: str | None  # bound kernel driver (basename of the `driver` link), None when unbound
    sysfs_path: Maybe[str]  # resolved device directory
    name: Maybe[str]  # from pci.ids


@dataclass(frozen=True)
class Gpu:
    """One GPU, joined across sysfs, NVML and /proc/driver/nvidia by normalised PCI address."""

    bdf: Maybe[str]
    vendor: str  # "nvidia" | "amd"
    device_id: Maybe[int]
    name: Maybe[str]
    name_source: str | None
    compute_capability: Maybe[str]
    compute_capability_source: str | None
    memory_total_bytes: Maybe[int]
    uuid: Maybe[str]
    kernel_driver: str | None
    on_pci_bus: bool  # seen in /sys/bus/pci
    nvml_index: int | None  # None: the NVIDIA driver does not expose it
    excluded: bool | None  # "GPU Excluded: Yes" in /proc/driver/nvidia


@dataclass(frozen=True)
class Facts:
    schema_version: int
    host: str
    os: Maybe[OsFacts]
    cpu: Maybe[CpuFacts]
    memory: Maybe[MemoryFacts]
    python: Maybe[PythonFacts]
    driver: Maybe[DriverFacts]
    kernel: Maybe[KernelFacts]
    nvml: Maybe[NvmlFacts]
    pci: Maybe[tuple[PciDevice, ...]]
    proc_gpus: Maybe[tuple[ProcGpuInfo, ...]]
    gpus: tuple[Gpu, ...]
    env: dict[str, str] = field(
        default_factory=dict
    )  # the variables that matter (CUDA_*, LD_LIBRARY_PATH, ...)
    torch_packages: Maybe[TorchPackages] = NOT_GATHERED
    torch: Maybe[TorchRuntime] = NOT_GATHERED
    pcie: Maybe[tuple[PcieLinkPath, ...]] = NOT_GATHERED  # each GPU's chain up to its root port
    thunderbolt: Maybe[ThunderboltFacts] = NOT_GATHERED
    boltctl: Maybe[tuple[BoltDevice, ...]] = NOT_GATHERED
    memory_limits: Maybe[MemoryLimitsFacts] = NOT_GATHERED  # locked memory, /dev/shm, swap
    storage: Maybe[StorageFacts] = NOT_GATHERED  # the data directory's mount, disks, free space
    measurements: Maybe[Measurements] = NOT_GATHERED  # RAM and disk speed, only with --measure
    container: Maybe[ContainerFacts] = NOT_GATHERED  # runtime markers, injected driver libraries
    wsl: Maybe[WslFacts] = NOT_GATHERED  # not_applicable outside WSL
    iommu: Maybe[IommuFacts] = NOT_GATHERED  # IOMMU groups and the P2P route between NVIDIA GPUs
    nvidia_module: Maybe[NvidiaModuleFacts] = NOT_GATHERED  # the module on disk per kernel, modinfo, DKMS
    secure_boot: Maybe[SecureBootFacts] = NOT_GATHERED  # UEFI Secure Boot, lockdown, MOK certificates
    kernel_log: Maybe[KernelLogFacts] = NOT_GATHERED  # Xid lines and module-signature refusals
    gpu_health: Maybe[tuple[GpuHealth, ...]] = NOT_GATHERED  # NVML: clock events, ECC, bad memory
    rocm: Maybe[RocmFacts] = NOT_GATHERED  # AMD: ROCm installs, amdgpu, /dev/kfd, gfx targets (KFD topology)
    virtualization: Maybe[VirtualizationFacts] = NOT_GATHERED  # hypervisor flag and DMI names
    smoke: Maybe[SmokeRun] = SMOKE_NOT_RUN  # the GPU smoke test: only when asked for, after the other facts

    @property
    def nvidia_gpus(self) -> tuple[Gpu, ...]:
        return tuple(g for g in self.gpus if g.vendor == "nvidia")
