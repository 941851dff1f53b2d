"""NVML behind the Host seam.

NVML is reached through a small query vocabulary so that a captured machine carries its NVML answers as data
(`nvml.json`) and every call can fail exactly the way the real library fails: the error keeps pynvml's class
name (`NVMLError_LibRmVersionMismatch` → "LibRmVersionMismatch") and its numeric code.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, cast

# NVML_ERROR_* codes (nvml.h); the names are pynvml's exception-class suffixes.
ERROR_CODES: dict[str, int] = {
    "Uninitialized": 1,
    "InvalidArgument": 2,
    "NotSupported": 3,
    "NoPermission": 4,
    "AlreadyInitialized": 5,
    "NotFound": 6,
    "InsufficientSize": 7,
    "InsufficientPower": 8,
    "DriverNotLoaded": 9,
    "Timeout": 10,
    "IrqIssue": 11,
    "LibraryNotFound": 12,
    "FunctionNotFound": 13,
    "CorruptedInforom": 14,
    "GpuIsLost": 15,
    "ResetRequired": 16,
    "OperatingSystem": 17,
    "LibRmVersionMismatch": 18,
    "InUse": 19,
    "Memory": 20,
    "NoData": 21,
    "VgpuEccNotSupported": 22,
    "InsufficientResources": 23,
    "FreqNotSupported": 24,
    "ArgumentVersionMismatch": 25,
    "Deprecated": 26,
    "NotReady": 27,
    "GpuNotFound": 28,
    "InvalidState": 29,
    "Unknown": 999,
}
_NAMES_BY_CODE = {code: name for name, code in ERROR_CODES.items()}


class NvmlError(Exception):
    def __init__(self, name: str, code: int | None = None, message: str = "") -> None:
        self.name = name
        self.code = ERROR_CODES.get(name, 999) if code is None else code
        self.message = message or name
        super().__init__(f"NVMLError_{name}: {self.message}")

    @classmethod
    def from_code(cls, code: int, message: str = "") -> NvmlError:
        return cls(_NAMES_BY_CODE.get(code, "Unknown"), code, message)


# System-wide and per-device queries. Values are plain JSON types.
SYSTEM_QUERIES = ("driver_version", "nvml_version", "cuda_driver_version")
DEVICE_QUERIES = (
    "name",
    "uuid",
    "pci_bus_id",
    "pci_device_id",
    "memory_total_bytes",
    "compute_capability",
    "persistence_mode",
    "pcie_link_gen_current",
    "pcie_link_gen_max",
    "pcie_link_gen_gpu_max",
    "pcie_link_width_current",
    "pcie_link_width_max",
)


class Nvml(Protocol):
    def init(self) -> None: ...

    def shutdown(self) -> None: ...

    def system(self, query: str) -> Any: ...

    def device_count(self) -> int: ...

    def device(self, index: int, query: str) -> Any: ...


def _text(value: Any) -> str:
    # Old nvidia-ml-py releases return bytes, current ones str.
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _system_calls(p: Any) -> dict[str, Callable[[], Any]]:
    return {
        "driver_version": lambda: _text(p.nvmlSystemGetDriverVersion()),
        "nvml_version": lambda: _text(p.nvmlSystemGetNVMLVersion()),
        "cuda_driver_version": lambda: int(p.nvmlSystemGetCudaDriverVersion()),
    }


def _device_calls(p: Any, h: Any) -> dict[str, Callable[[], Any]]:
    return {
        "name": lambda: _text(p.nvmlDeviceGetName(h)),
        "uuid": lambda: _text(p.nvmlDeviceGetUUID(h)),
        "pci_bus_id": lambda: _text(p.nvmlDeviceGetPciInfo(h).busId),
        "pci_device_id": lambda: int(p.nvmlDeviceGetPciInfo(h).pciDeviceId),
        "memory_total_bytes": lambda: int(p.nvmlDeviceGetMemoryInfo(h).total),
        "compute_capability": lambda: list(p.nvmlDeviceGetCudaComputeCapability(h)),
        "persistence_mode": lambda: int(p.nvmlDeviceGetPersistenceMode(h)),
        "pcie_link_gen_current": lambda: int(p.nvmlDeviceGetCurrPcieLinkGeneration(h)),
        "pcie_link_gen_max": lambda: int(p.nvmlDeviceGetMaxPcieLinkGeneration(h)),
        "pcie_link_gen_gpu_max": lambda: int(p.nvmlDeviceGetGpuMaxPcieLinkGeneration(h)),
        "pcie_link_width_current": lambda: int(p.nvmlDeviceGetCurrPcieLinkWidth(h)),
        "pcie_link_width_max": lambda: int(p.nvmlDeviceGetMaxPcieLinkWidth(h)),
    }


class RealNvml:
    """The NVIDIA Management Library through nvidia-ml-py (module `pynvml`), imported lazily."""

    _lock = threading.Lock()

    def __init__(self) -> None:
        self._pynvml: Any = None
        self._handles: dict[int, Any] = {}

    def _translate(self, exc: BaseException) -> NvmlError:
        value = getattr(exc, "value", None)
        if isinstance(value, int):
            return NvmlError.from_code(value, str(exc))
        if isinstance(exc, OSError | ImportError):
            return NvmlError("LibraryNotFound", message=str(exc))
        if isinstance(exc, AttributeError):  # an old nvidia-ml-py without this function
            return NvmlError("FunctionNotFound", message=str(exc))
        return NvmlError("Unknown", message=f"{type(exc).__name__}: {exc}")

    def _call(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except NvmlError:
            raise
        except Exception as exc:  # pynvml raises NVMLError subclasses; anything else is reported too
            raise self._translate(exc) from exc

    def init(self) -> None:
        try:
            import pynvml
        except ImportError as exc:
            raise NvmlError("LibraryNotFound", message=f"nvidia-ml-py is not importable: {exc}") from exc
        with self._lock:
            self._call(pynvml.nvmlInit)
        self._pynvml = pynvml

    def shutdown(self) -> None:
        if self._pynvml is not None:
            self._call(self._pynvml.nvmlShutdown)
            self._pynvml = None

    def system(self, query: str) -> Any:
        return self._call(_system_calls(self._pynvml)[query])

    def device_count(self) -> int:
        return int(self._call(self._pynvml.nvmlDeviceGetCount))

    def device(self, index: int, query: str) -> Any:
        if index not in self._handles:
            self._handles[index] = self._call(lambda: self._pynvml.nvmlDeviceGetHandleByIndex(index))
        return self._call(_device_calls(self._pynvml, self._handles[index])[query])


def _answer(raw: Any) -> Any:
    if isinstance(raw, dict) and "error" in raw:
        code = raw.get("code")
        if not isinstance(code, int) or isinstance(code, bool):
            code = None  # garbled: NvmlError takes the name's code
        raise NvmlError(str(raw["error"]), code, str(raw.get("message") or ""))
    return raw


@dataclass(frozen=True)
class Garbled:
    """What a capture answers where nvml.json has the wrong shape: no NVML type, so facts call it unparseable."""

    where: str
    raw: Any


class RecordedNvml:
    """NVML answers replayed from a capture's `nvml.json`.

    Shape: {"init": null | {"error": NAME}, "system": {query: value | {"error": NAME}},
    "device_count": n | {"error": NAME} (defaults to len(devices)), "devices": [{query: value | {"error": NAME}}]}.
    A capture without `nvml.json` behaves like a machine without libnvidia-ml.
    """

    def __init__(self, data: dict[str, Any] | None) -> None:
        self._data = data

    def init(self) -> None:
        if self._data is None:
            raise NvmlError("LibraryNotFound", message="libnvidia-ml.so.1 was not found (not recorded)")
        _answer(self._data.get("init"))

    def shutdown(self) -> None:
        return None

    def _section(self, key: str, kind: type) -> Any:
        assert self._data is not None
        value = self._data.get(key, kind())
        return value if isinstance(value, kind) else Garbled(key, value)

    def system(self, query: str) -> Any:
        system = self._section("system", dict)
        if isinstance(system, Garbled):
            return system
        return _answer(system.get(query, {"error": "NotSupported"}))

    def device_count(self) -> int:
        assert self._data is not None
        devices = self._section("devices", list)
        default = devices if isinstance(devices, Garbled) else len(devices)
        # Not coerced with int(): a recorded "2" or "two" is garbage, and gather_nvml reports it as such.
        return cast(int, _answer(self._data.get("device_count", default)))

    def device(self, index: int, query: str) -> Any:
        devices = self._section("devices", list)
        if isinstance(devices, Garbled):
            return devices
        if index >= len(devices):
            raise NvmlError("InvalidArgument", message=f"no device {index}")
        entry = devices[index]
        if not isinstance(entry, dict):
            return Garbled(f"devices[{index}]", entry)
        return _answer(entry.get(query, {"error": "NotSupported"}))
