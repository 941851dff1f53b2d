"""The frozen, JSON round-trippable snapshot of a machine. Every field may be unavailable, with its reason."""

from __future__ import annotations

import importlib
from dataclasses import field
from typing import TYPE_CHECKING

from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

if TYPE_CHECKING:  # each source's types load with the module that reads them: triage reads a few of ~30
    from torch_gpu_doctor.facts.boltctl import BoltDevice
    from torch_gpu_doctor.facts.container import ContainerFacts
    from torch_gpu_doctor.facts.driver import DriverFacts
    from torch_gpu_doctor.facts.gpu_health import GpuHealth
    from torch_gpu_doctor.facts.gpus import Gpu
    from torch_gpu_doctor.facts.iommu import IommuFacts
    from torch_gpu_doctor.facts.jetson import JetsonFacts
    from torch_gpu_doctor.facts.kernel import KernelFacts
    from torch_gpu_doctor.facts.kernel_log import KernelLogFacts
    from torch_gpu_doctor.facts.measurements import Measurements
    from torch_gpu_doctor.facts.memory import MemoryFacts
    from torch_gpu_doctor.facts.memory_limits import MemoryLimitsFacts
    from torch_gpu_doctor.facts.nvidia_module import NvidiaModuleFacts
    from torch_gpu_doctor.facts.nvml import NvmlFacts
    from torch_gpu_doctor.facts.pci import PciDevice, ProcGpuInfo
    from torch_gpu_doctor.facts.pcie_link import PcieLinkPath
    from torch_gpu_doctor.facts.platform import CpuFacts, OsFacts
    from torch_gpu_doctor.facts.python_env import PythonFacts
    from torch_gpu_doctor.facts.reported_errors import ReportedError
    from torch_gpu_doctor.facts.rocm import RocmFacts
    from torch_gpu_doctor.facts.secure_boot import SecureBootFacts
    from torch_gpu_doctor.facts.smoke import SmokeRun
    from torch_gpu_doctor.facts.storage import StorageFacts
    from torch_gpu_doctor.facts.thunderbolt import ThunderboltFacts
    from torch_gpu_doctor.facts.topology import TopologyFacts
    from torch_gpu_doctor.facts.torch import TorchPackages, TorchRuntime
    from torch_gpu_doctor.facts.virtualization import VirtualizationFacts
    from torch_gpu_doctor.facts.wsl import WslFacts

# The facts of each source are defined beside their gatherer, and imported from there.
__all__ = [
    "FACTS_SCHEMA_VERSION",
    "NOT_GATHERED",
    "NO_REPORTED_ERRORS",
    "SMOKE_NOT_RUN",
    "Facts",
    "annotation_names",
]

NOT_GATHERED = Unavailable(Reason.NOT_APPLICABLE, "not gathered in this run")
SMOKE_NOT_RUN = Unavailable(Reason.NOT_APPLICABLE, "the smoke test was not run (`gpu-doctor --smoke`)")
NO_REPORTED_ERRORS = Unavailable(
    Reason.NOT_APPLICABLE, "no program output was read (`gpu-doctor triage FILE` reads it)"
)

FACTS_SCHEMA_VERSION = 1


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
    topology: Maybe[TopologyFacts] = NOT_GATHERED  # NVML: NVLinks and each GPU pair's path and P2P status
    rocm: Maybe[RocmFacts] = NOT_GATHERED  # AMD: ROCm installs, amdgpu, /dev/kfd, gfx targets (KFD topology)
    virtualization: Maybe[VirtualizationFacts] = NOT_GATHERED  # hypervisor flag and DMI names
    jetson: Maybe[JetsonFacts] = (
        NOT_GATHERED  # the Jetson board, its L4T release and nvgpu; not_applicable elsewhere
    )
    smoke: Maybe[SmokeRun] = SMOKE_NOT_RUN  # the GPU smoke test: only when asked for, after the other facts
    # known error messages in program output the doctor read (a pasted traceback or log, in triage)
    reported_errors: Maybe[tuple[ReportedError, ...]] = NO_REPORTED_ERRORS

    @property
    def jetson_board(self) -> JetsonFacts | None:
        """The Jetson this is, or None (not one, or not known): its GPU is its SoC's, its driver its L4T's."""
        return self.jetson if not isinstance(self.jetson, Unavailable) else None

    @property
    def nvidia_gpus(self) -> tuple[Gpu, ...]:
        return tuple(g for g in self.gpus if g.vendor == "nvidia")


# Where each type named in Facts' annotations lives (the TYPE_CHECKING imports above, for the code that
# resolves annotations at run time; tests/facts/test_facts_model.py keeps the two equal).
_ANNOTATION_TYPES = {
    "BoltDevice": "torch_gpu_doctor.facts.boltctl",
    "ContainerFacts": "torch_gpu_doctor.facts.container",
    "CpuFacts": "torch_gpu_doctor.facts.platform",
    "DriverFacts": "torch_gpu_doctor.facts.driver",
    "Gpu": "torch_gpu_doctor.facts.gpus",
    "GpuHealth": "torch_gpu_doctor.facts.gpu_health",
    "IommuFacts": "torch_gpu_doctor.facts.iommu",
    "JetsonFacts": "torch_gpu_doctor.facts.jetson",
    "KernelFacts": "torch_gpu_doctor.facts.kernel",
    "KernelLogFacts": "torch_gpu_doctor.facts.kernel_log",
    "Measurements": "torch_gpu_doctor.facts.measurements",
    "MemoryFacts": "torch_gpu_doctor.facts.memory",
    "MemoryLimitsFacts": "torch_gpu_doctor.facts.memory_limits",
    "NvidiaModuleFacts": "torch_gpu_doctor.facts.nvidia_module",
    "NvmlFacts": "torch_gpu_doctor.facts.nvml",
    "OsFacts": "torch_gpu_doctor.facts.platform",
    "PciDevice": "torch_gpu_doctor.facts.pci",
    "PcieLinkPath": "torch_gpu_doctor.facts.pcie_link",
    "ProcGpuInfo": "torch_gpu_doctor.facts.pci",
    "PythonFacts": "torch_gpu_doctor.facts.python_env",
    "ReportedError": "torch_gpu_doctor.facts.reported_errors",
    "RocmFacts": "torch_gpu_doctor.facts.rocm",
    "SecureBootFacts": "torch_gpu_doctor.facts.secure_boot",
    "SmokeRun": "torch_gpu_doctor.facts.smoke",
    "StorageFacts": "torch_gpu_doctor.facts.storage",
    "ThunderboltFacts": "torch_gpu_doctor.facts.thunderbolt",
    "TopologyFacts": "torch_gpu_doctor.facts.topology",
    "TorchPackages": "torch_gpu_doctor.facts.torch",
    "TorchRuntime": "torch_gpu_doctor.facts.torch",
    "VirtualizationFacts": "torch_gpu_doctor.facts.virtualization",
    "WslFacts": "torch_gpu_doctor.facts.wsl",
}


def annotation_names() -> dict[str, object]:
    """The types Facts' annotations name, their modules imported: serialize resolves the annotations with them
    to decode a capture (the module's own globals hold only what a run needs)."""
    return {
        name: getattr(importlib.import_module(module), name) for name, module in _ANNOTATION_TYPES.items()
    }
