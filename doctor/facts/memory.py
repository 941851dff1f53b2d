"""RAM and swap totals from /proc/meminfo."""

from __future__ import annotations

from gpu_doctor.facts.model import MemoryFacts
from gpu_doctor.host.base import Host
from gpu_doctor.unavailable import Maybe, Reason, Unavailable


def parse_meminfo(text: str) -> dict[str, int]:
    """`Key:   12345 kB` lines → bytes. Lines that do not parse are skipped."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        key, sep, rest = line.partition(":")
        words = rest.split()
        # ASCII digits only ("²".isdigit() is True but int() rejects it), and few enough for int().
        if not sep or not words or not (words[0].isascii() and words[0].isdigit()) or len(words[0]) > 30:
            continue
        scale = 1024 if len(words) > 1 and words[1].lower() == "kb" else 1
        values[key.strip()] = int(words[0]) * scale
    return values


def gather_memory(host: Host) -> MemoryFacts:
    text = host.read_text("/proc/meminfo")
    if isinstance(text, Unavailable):
        return MemoryFacts(text, text, text)
    info = parse_meminfo(text)

    def get(key: str) -> Maybe[int]:
        return info[key] if key in info else Unavailable(Reason.UNPARSEABLE, f"{key} not in /proc/meminfo")

    return MemoryFacts(get("MemTotal"), get("MemAvailable"), get("SwapTotal"))
