"""What NVML says about the driver and each GPU. Every call may fail on its own (NotSupported per field)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, TypeVar

from torch_gpu_doctor.facts.bdf import normalize_bdf
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.host.nvml import Nvml, NvmlError
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable


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


T = TypeVar("T")
MAX_DEVICES = 1024  # far above any one machine; a larger (or negative) count can only be garbage
_REASONS = {
    "NotSupported": Reason.NOT_SUPPORTED,
    "FunctionNotFound": Reason.NOT_SUPPORTED,
    "NoPermission": Reason.PERMISSION_DENIED,
    "Timeout": Reason.TIMED_OUT,
    "LibraryNotFound": Reason.NOT_FOUND,
}


def error_unavailable(error: NvmlError) -> Unavailable:
    return Unavailable(_REASONS.get(error.name, Reason.FAILED), f"NVMLError_{error.name}")


def ask_device(nvml: Nvml, index: int, query: str) -> Any:
    """One device answer, or its NVML error as the facts' Unavailable."""
    return _ask(nvml.device, index, query)


def per_device_session(host: Host, read: Callable[[Nvml, int], T]) -> T | Unavailable:
    """An NVML session of its own (RealNvml shares one init with the nvml probe when they overlap): the device
    count, checked (a garbled capture's is unparseable), handed to `read`; the session is closed after."""
    nvml = host.nvml()
    try:
        nvml.init()
    except NvmlError as error:
        return error_unavailable(error)
    try:
        count = _ask(nvml.device_count)
        if isinstance(count, Unavailable):
            return count
        if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= MAX_DEVICES:
            return Unavailable(Reason.UNPARSEABLE, f"device_count={count!r}")
        return read(nvml, count)
    finally:
        with contextlib.suppress(NvmlError):
            nvml.shutdown()


def _ask(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except NvmlError as error:
        return error_unavailable(error)


def _typed(value: Any, kind: type, query: str) -> Maybe[Any]:
    """Accept the value only if it has the expected JSON type (a garbage capture must not leak through)."""
    if isinstance(value, Unavailable):
        return value
    if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
        return value
    return Unavailable(Reason.UNPARSEABLE, f"{query}={value!r}")


def _device(nvml: Nvml, index: int) -> NvmlDevice:
    def ask(query: str, kind: type) -> Maybe[Any]:
        return _typed(_ask(nvml.device, index, query), kind, query)

    bus = ask("pci_bus_id", str)
    bdf: Maybe[str] = (
        bus
        if isinstance(bus, Unavailable)
        else (normalize_bdf(bus) or Unavailable(Reason.UNPARSEABLE, f"busId {bus!r}"))
    )
    cc_raw = _ask(nvml.device, index, "compute_capability")
    cc: Maybe[str]
    if isinstance(cc_raw, Unavailable):
        cc = cc_raw
    elif isinstance(cc_raw, list | tuple) and len(cc_raw) == 2 and all(isinstance(v, int) for v in cc_raw):
        cc = f"{cc_raw[0]}.{cc_raw[1]}"
    else:
        cc = Unavailable(Reason.UNPARSEABLE, f"compute capability {cc_raw!r}")
    persistence = ask("persistence_mode", int)
    return NvmlDevice(
        index=index,
        name=ask("name", str),
        uuid=ask("uuid", str),
        bdf=bdf,
        pci_device_id=ask("pci_device_id", int),
        memory_total_bytes=ask("memory_total_bytes", int),
        compute_capability=cc,
        persistence_mode=persistence if isinstance(persistence, Unavailable) else bool(persistence),
        pcie_link_gen_current=ask("pcie_link_gen_current", int),
        pcie_link_gen_max=ask("pcie_link_gen_max", int),
        pcie_link_gen_gpu_max=ask("pcie_link_gen_gpu_max", int),
        pcie_link_width_current=ask("pcie_link_width_current", int),
        pcie_link_width_max=ask("pcie_link_width_max", int),
    )


def gather_nvml(host: Host) -> NvmlFacts:
    nvml = host.nvml()
    try:
        nvml.init()
    except NvmlError as error:
        failed = error_unavailable(error)
        return NvmlFacts(
            init_error=NvmlErrorInfo(error.name, error.code, error.message),
            driver_version=failed,
            nvml_version=failed,
            cuda_driver_version=failed,
            device_count=failed,
            devices=(),
        )
    try:
        count = _typed(_ask(nvml.device_count), int, "device_count")
        if isinstance(count, int) and not 0 <= count <= MAX_DEVICES:  # a garbled capture, not a machine
            count = Unavailable(Reason.UNPARSEABLE, f"device_count={count!r}")
        devices = tuple(_device(nvml, i) for i in range(count)) if isinstance(count, int) else ()
        return NvmlFacts(
            init_error=None,
            driver_version=_typed(_ask(nvml.system, "driver_version"), str, "driver_version"),
            nvml_version=_typed(_ask(nvml.system, "nvml_version"), str, "nvml_version"),
            cuda_driver_version=_typed(_ask(nvml.system, "cuda_driver_version"), int, "cuda_driver_version"),
            device_count=count,
            devices=devices,
        )
    finally:
        with contextlib.suppress(NvmlError):
            nvml.shutdown()
