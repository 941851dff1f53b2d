"""NVML behind the Host seam.

NVML is reached through a small query vocabulary so that a captured machine carries its NVML answers as data
(`nvml.json`) and every call can fail exactly the way the real library fails: the error keeps pynvml's class
name (`NVMLError_LibRmVersionMismatch` → "LibRmVersionMismatch") and its numeric code.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any, Protocol, cast

from torch_gpu_doctor.records import dataclass

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
    # GPU health (torch_gpu_doctor.facts.gpu_health): plain ints and lists of ints, as NVML returns them
    "clocks_event_reasons",  # bitmask, nvmlDeviceGetCurrentClocksEventReasons (ThrottleReasons before R535)
    "display_active",  # 1: a display is initialised on this GPU (a desktop runs on it)
    "ecc_mode",  # [current, pending], 1 = enabled
    "ecc_errors_corrected_volatile",  # since the driver last loaded
    "ecc_errors_uncorrected_volatile",
    "ecc_errors_corrected_aggregate",  # over the GPU's life (inforom)
    "ecc_errors_uncorrected_aggregate",
    "retired_pages_single_bit",  # count of pages retired for repeated single-bit errors (pre-Ampere)
    "retired_pages_double_bit",  # count of pages retired for double-bit errors
    "retired_pages_pending",  # 1: a retirement waits for the next driver reload
    "remapped_rows",  # [correctable, uncorrectable, pending, failure] (Ampere and newer)
    # GPU topology (torch_gpu_doctor.facts.topology); the pair queries answer a list with one entry per GPU
    # index (null for the device itself), each a value or {"error": NAME}
    "nvlinks",  # the active NVLinks: [{"remote_bus_id": str, "remote_type": "gpu"|"switch"|"ibmnpu"|...}]
    "topology_common_ancestor",  # nvmlDeviceGetTopologyCommonAncestor level to each GPU: 0, 10, ..., 50
    "p2p_status_read",  # nvmlDeviceGetP2PStatus(..., NVML_P2P_CAPS_INDEX_READ) to each GPU: 0 = OK
    "p2p_status_write",
)
PAIR_QUERIES = ("topology_common_ancestor", "p2p_status_read", "p2p_status_write")
# nvmlGpuP2PCapsIndex_t (nvml.h). Not pynvml's constants: its NVML_P2P_CAPS_INDEX_READ is the tuple (0,)
_P2P_READ, _P2P_WRITE = 0, 1
# nvmlIntNvLinkDeviceType_t (nvml.h)
NVLINK_REMOTE_TYPES = {0: "gpu", 1: "ibmnpu", 2: "switch", 255: "unknown"}


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
        **_health_calls(p, h),
    }


# nvmlMemoryErrorType_t and nvmlEccCounterType_t (nvml.h); nvmlPageRetirementCause_t for retired pages
_CORRECTED, _UNCORRECTED = 0, 1
_VOLATILE, _AGGREGATE = 0, 1
_MULTIPLE_SINGLE_BIT, _DOUBLE_BIT = 0, 1


def _clock_reasons(p: Any, h: Any) -> int:
    """The R535 name first; older drivers export only the deprecated ...ThrottleReasons (same bits)."""
    try:
        return int(p.nvmlDeviceGetCurrentClocksEventReasons(h))
    except AttributeError:  # an nvidia-ml-py older than the new name
        pass
    except Exception as exc:
        if getattr(exc, "value", None) != ERROR_CODES["FunctionNotFound"]:
            raise
    return int(p.nvmlDeviceGetCurrentClocksThrottleReasons(h))


def _health_calls(p: Any, h: Any) -> dict[str, Callable[[], Any]]:
    def ecc(kind: int, counter: int) -> Callable[[], Any]:
        return lambda: int(p.nvmlDeviceGetTotalEccErrors(h, kind, counter))

    return {
        "clocks_event_reasons": lambda: _clock_reasons(p, h),
        "display_active": lambda: int(p.nvmlDeviceGetDisplayActive(h)),
        "ecc_mode": lambda: [int(v) for v in p.nvmlDeviceGetEccMode(h)],
        "ecc_errors_corrected_volatile": ecc(_CORRECTED, _VOLATILE),
        "ecc_errors_uncorrected_volatile": ecc(_UNCORRECTED, _VOLATILE),
        "ecc_errors_corrected_aggregate": ecc(_CORRECTED, _AGGREGATE),
        "ecc_errors_uncorrected_aggregate": ecc(_UNCORRECTED, _AGGREGATE),
        "retired_pages_single_bit": lambda: len(p.nvmlDeviceGetRetiredPages(h, _MULTIPLE_SINGLE_BIT)),
        "retired_pages_double_bit": lambda: len(p.nvmlDeviceGetRetiredPages(h, _DOUBLE_BIT)),
        "retired_pages_pending": lambda: int(p.nvmlDeviceGetRetiredPagesPendingStatus(h)),
        "remapped_rows": lambda: [int(v) for v in p.nvmlDeviceGetRemappedRows(h)],
        "nvlinks": lambda: _nvlinks(p, h),
    }


def _nvlinks(p: Any, h: Any) -> list[dict[str, Any]]:
    """The device's active NVLinks, each with what is at its other end. A GPU without NVLink answers
    NotSupported for link 0; links past the device's last answer InvalidArgument or NotSupported."""
    links = []
    for link in range(int(getattr(p, "NVML_NVLINK_MAX_LINKS", 18))):
        try:
            active = int(p.nvmlDeviceGetNvLinkState(h, link)) == 1
        except Exception as exc:
            if getattr(exc, "value", None) in (ERROR_CODES["InvalidArgument"], ERROR_CODES["NotSupported"]):
                break  # no such link: the list is complete
            raise
        if not active:
            continue
        remote_type = "unknown"
        with contextlib.suppress(Exception):  # an nvidia-ml-py or driver older than the call
            remote_type = NVLINK_REMOTE_TYPES.get(
                int(p.nvmlDeviceGetNvLinkRemoteDeviceType(h, link)), "unknown"
            )
        bus: str | None = None  # the link is active whatever its far end's address says
        with contextlib.suppress(Exception):
            bus = _text(p.nvmlDeviceGetNvLinkRemotePciInfo(h, link).busId)
        links.append({"remote_bus_id": bus, "remote_type": remote_type})
    return links


def _pair_calls(p: Any, h: Any, other: Any) -> dict[str, Callable[[], Any]]:
    return {
        "topology_common_ancestor": lambda: int(p.nvmlDeviceGetTopologyCommonAncestor(h, other)),
        "p2p_status_read": lambda: int(p.nvmlDeviceGetP2PStatus(h, other, _P2P_READ)),
        "p2p_status_write": lambda: int(p.nvmlDeviceGetP2PStatus(h, other, _P2P_WRITE)),
    }


class RealNvml:
    """The NVIDIA Management Library through nvidia-ml-py (module `pynvml`), imported lazily.

    Sessions are counted: probes that run at the same time share one `nvmlInit`, and only the last
    `shutdown` ends it. Without persistence mode each init makes the driver set every GPU up again (seconds
    on a multi-GPU server), so a second probe must not pay for it twice.
    """

    _lock = threading.Lock()

    def __init__(self) -> None:
        self._pynvml: Any = None
        self._handles: dict[int, Any] = {}
        self._sessions = 0

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
            if self._sessions == 0:
                self._call(pynvml.nvmlInit)
                self._pynvml = pynvml
            self._sessions += 1

    def shutdown(self) -> None:
        with self._lock:
            if self._sessions == 0:
                return
            self._sessions -= 1
            if self._sessions or self._pynvml is None:
                return
            pynvml, self._pynvml = self._pynvml, None
            self._handles.clear()
            self._call(pynvml.nvmlShutdown)

    def system(self, query: str) -> Any:
        return self._call(_system_calls(self._pynvml)[query])

    def device_count(self) -> int:
        return int(self._call(self._pynvml.nvmlDeviceGetCount))

    def _handle(self, index: int) -> Any:
        if index not in self._handles:
            self._handles[index] = self._call(lambda: self._pynvml.nvmlDeviceGetHandleByIndex(index))
        return self._handles[index]

    def device(self, index: int, query: str) -> Any:
        if query in PAIR_QUERIES:
            return [self._pair(index, other, query) for other in range(self.device_count())]
        return self._call(_device_calls(self._pynvml, self._handle(index))[query])

    def _pair(self, index: int, other: int, query: str) -> Any:
        """One entry of a pair query's list: the value, or the error as a capture records it."""
        if other == index:
            return None
        try:
            return self._call(_pair_calls(self._pynvml, self._handle(index), self._handle(other))[query])
        except NvmlError as error:
            return {"error": error.name, "code": error.code}


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
