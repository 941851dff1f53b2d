"""`dkms status`: which module versions DKMS knows, and for which kernels it built them.

Two line formats, one per DKMS generation (both seen in public captures):
  DKMS 3:  `nvidia/550.90.12, 6.1.91-99.172.amzn2023.x86_64, x86_64: installed`
  DKMS 2:  `zfs, 0.6.0.65, 3.2.0-26-generic, x86_64: installed`
A module that was added but never built has no kernel: `nvidia/550.120: added`. A note may follow the state:
`installed (Original modules exist)`, `installed (WARNING! Diff between built and installed module!)`.
Lines that fit neither form (errors, warnings) are ignored.
"""

from __future__ import annotations

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass

DKMS_STATUS = ("dkms", "status")
DKMS_TIMEOUT_S = 15.0  # a shell script walking /var/lib/dkms
_LINE = lazy(r"^(?P<head>[^:]+): (?P<state>[a-z]+)\b[ \t]*(?P<note>.*)$")


@dataclass(frozen=True)
class DkmsEntry:
    module: str
    version: str
    kernel: str | None  # None: added, not built for any kernel
    arch: str | None
    state: str  # "added" | "built" | "installed" (or what a newer dkms prints)
    note: str  # "(Original modules exist)", "(WARNING! ...)", or ""


def parse_dkms_line(line: str) -> DkmsEntry | None:
    match = _LINE.match(line.strip())
    if match is None:
        return None
    parts = [p.strip() for p in match["head"].split(",")]
    if "/" in parts[0]:  # DKMS 3: module/version, kernel, arch
        module, _, version = parts[0].partition("/")
        rest = parts[1:]
    elif len(parts) >= 2:  # DKMS 2: module, version, kernel, arch
        module, version, rest = parts[0], parts[1], parts[2:]
    else:
        return None
    if not module or not version or len(rest) not in (0, 2) or not all(rest):
        return None
    kernel, arch = (rest[0], rest[1]) if rest else (None, None)
    return DkmsEntry(module, version, kernel, arch, match["state"], match["note"].strip())


def parse_dkms_status(text: str) -> tuple[DkmsEntry, ...]:
    entries = (parse_dkms_line(line) for line in text.splitlines())
    return tuple(e for e in entries if e is not None)
