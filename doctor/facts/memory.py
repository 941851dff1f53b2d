"""RAM and swap totals from /proc/meminfo."""

from __future__ import annotations

from torch_gpu_doctor.facts.meminfo import parse_meminfo
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable


@dataclass(frozen=True)
class MemoryFacts:
    total_bytes: Maybe[int]
    available_bytes: Maybe[int]
    swap_total_bytes: Maybe[int]


def gather_memory(host: Host) -> MemoryFacts:
    text = host.read_text("/proc/meminfo")
    if isinstance(text, Unavailable):
        return MemoryFacts(text, text, text)
    info = parse_meminfo(text)

    def get(key: str) -> Maybe[int]:
        return info[key] if key in info else Unavailable(Reason.UNPARSEABLE, f"{key} not in /proc/meminfo")

    return MemoryFacts(get("MemTotal"), get("MemAvailable"), get("SwapTotal"))
