"""Per-GPU health from NVML: clock event (throttle) reasons, ECC mode and counts, retired pages, remapped rows.

Each value is one NVML query (torch_gpu_doctor.host.nvml DEVICE_QUERIES), so a capture replays it; every query may
fail on its own: GeForce cards answer NotSupported for ECC and retired pages, pre-Ampere cards for remapped rows,
and those stay Unavailable (NOT_SUPPORTED) rather than becoming a zero. Field meanings: nvml.h, and the
"Clocks Event Reasons", "ECC Errors", "Retired Pages" and "Remapped Rows" sections of `nvidia-smi -q`
(samples/nvidia-smi-q/).
"""

from __future__ import annotations

from typing import Any

from torch_gpu_doctor.facts.bdf import normalize_bdf
from torch_gpu_doctor.facts.nvml import ask_device, per_device_session
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.host.nvml import Nvml
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

MAX_BITMASK = 1 << 64  # nvmlClocksEventReasons is an unsigned long long
MAX_COUNT = 1 << 63
MAX_DEVICES = 1024  # as torch_gpu_doctor.facts.nvml: a larger count can only be garbage


@dataclass(frozen=True)
class GpuHealth:
    index: int  # NVML index
    bdf: Maybe[str]  # normalised dddd:bb:dd.f
    clocks_event_reasons: Maybe[int]  # bitmask, see torch_gpu_doctor.checks.gpu_throttle
    display_active: Maybe[bool]  # a display (desktop) is initialised on this GPU
    ecc_enabled: Maybe[bool]  # ECC mode now
    ecc_pending: Maybe[bool]  # ECC mode after the next reset or reboot
    ecc_corrected_volatile: Maybe[int]  # since the driver loaded
    ecc_uncorrected_volatile: Maybe[int]
    ecc_corrected_aggregate: Maybe[int]  # over the GPU's life
    ecc_uncorrected_aggregate: Maybe[int]
    retired_pages_single_bit: Maybe[int]  # pre-Ampere dynamic page retirement
    retired_pages_double_bit: Maybe[int]
    retired_pages_pending: Maybe[bool]  # a retirement waits for the next driver reload
    remapped_rows_correctable: Maybe[int]  # Ampere+ row remapping
    remapped_rows_uncorrectable: Maybe[int]
    remapped_rows_pending: Maybe[bool]  # a remap waits for a GPU reset
    remapping_failed: Maybe[bool]  # a row could not be remapped: NVIDIA's RMA criterion


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(value: Any, query: str, limit: int = MAX_COUNT) -> Maybe[int]:
    if isinstance(value, Unavailable):
        return value
    if _is_int(value) and 0 <= value < limit:
        return int(value)
    return Unavailable(Reason.UNPARSEABLE, f"{query}={value!r}")


def _flag(value: Any, query: str) -> Maybe[bool]:
    """NVML's nvmlEnableState_t: 0 or 1, nothing else."""
    if isinstance(value, Unavailable):
        return value
    if _is_int(value) and value in (0, 1):
        return bool(value)
    return Unavailable(Reason.UNPARSEABLE, f"{query}={value!r}")


def _pair(value: Any, query: str, size: int) -> tuple[Any, ...] | Unavailable:
    if isinstance(value, Unavailable):
        return value
    if isinstance(value, list | tuple) and len(value) == size:
        return tuple(value)
    return Unavailable(Reason.UNPARSEABLE, f"{query}={value!r}")


def _device(nvml: Nvml, index: int) -> GpuHealth:
    def ask(query: str) -> Any:
        return ask_device(nvml, index, query)

    bus = ask("pci_bus_id")
    if isinstance(bus, str):
        bdf: Maybe[str] = normalize_bdf(bus) or Unavailable(Reason.UNPARSEABLE, f"busId {bus!r}")
    else:
        bdf = bus if isinstance(bus, Unavailable) else Unavailable(Reason.UNPARSEABLE, f"busId {bus!r}")
    ecc = _pair(ask("ecc_mode"), "ecc_mode", 2)
    rows = _pair(ask("remapped_rows"), "remapped_rows", 4)

    def part(values: tuple[Any, ...] | Unavailable, i: int, query: str, flag: bool) -> Any:
        if isinstance(values, Unavailable):
            return values
        return _flag(values[i], query) if flag else _count(values[i], query)

    return GpuHealth(
        index=index,
        bdf=bdf,
        clocks_event_reasons=_count(ask("clocks_event_reasons"), "clocks_event_reasons", MAX_BITMASK),
        display_active=_flag(ask("display_active"), "display_active"),
        ecc_enabled=part(ecc, 0, "ecc_mode[current]", flag=True),
        ecc_pending=part(ecc, 1, "ecc_mode[pending]", flag=True),
        ecc_corrected_volatile=_count(ask("ecc_errors_corrected_volatile"), "ecc_errors_corrected_volatile"),
        ecc_uncorrected_volatile=_count(
            ask("ecc_errors_uncorrected_volatile"), "ecc_errors_uncorrected_volatile"
        ),
        ecc_corrected_aggregate=_count(
            ask("ecc_errors_corrected_aggregate"), "ecc_errors_corrected_aggregate"
        ),
        ecc_uncorrected_aggregate=_count(
            ask("ecc_errors_uncorrected_aggregate"), "ecc_errors_uncorrected_aggregate"
        ),
        retired_pages_single_bit=_count(ask("retired_pages_single_bit"), "retired_pages_single_bit"),
        retired_pages_double_bit=_count(ask("retired_pages_double_bit"), "retired_pages_double_bit"),
        retired_pages_pending=_flag(ask("retired_pages_pending"), "retired_pages_pending"),
        remapped_rows_correctable=part(rows, 0, "remapped_rows[correctable]", flag=False),
        remapped_rows_uncorrectable=part(rows, 1, "remapped_rows[uncorrectable]", flag=False),
        remapped_rows_pending=part(rows, 2, "remapped_rows[pending]", flag=True),
        remapping_failed=part(rows, 3, "remapped_rows[failure]", flag=True),
    )


def gather_gpu_health(host: Host) -> tuple[GpuHealth, ...] | Unavailable:
    return per_device_session(host, lambda nvml, count: tuple(_device(nvml, i) for i in range(count)))
