"""One spelling of a PCI address for every source: `dddd:bb:dd.f`, lower case.

NVML says `00000000:01:00.0` (8-digit upper-case domain), sysfs and procfs `0000:01:00.0`, Xid lines
`PCI:0000:2b:00` (no function) or `0000:01:00`.
"""

from __future__ import annotations

from torch_gpu_doctor.lazy_re import lazy

_BDF = lazy(
    r"^(?:PCI:)?(?:(?P<domain>[0-9a-fA-F]{1,8}):)?(?P<bus>[0-9a-fA-F]{1,2}):(?P<dev>[0-9a-fA-F]{1,2})(?:\.(?P<fn>[0-7]))?$"
)


def normalize_bdf(text: str) -> str | None:
    match = _BDF.match(text.strip())
    if not match:
        return None
    domain = int(match["domain"] or "0", 16)
    return f"{domain:04x}:{int(match['bus'], 16):02x}:{int(match['dev'], 16):02x}.{int(match['fn'] or '0')}"
