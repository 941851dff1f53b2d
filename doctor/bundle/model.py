"""What a bundle is made of, its limits, and the one error every refusal raises."""

from __future__ import annotations

from torch_gpu_doctor.records import dataclass

MANIFEST = "manifest.json"  # every member: path, size, sha256 after redaction, how it was redacted
LINKS = "links.json"  # {"links": {path: relative target}}: the capture's symlinks, never tar symlinks
FACTS = "facts.json"
REPORT_JSON = "report.json"
REPORT_TEXT = "report.txt"
BUNDLE_FORMAT = "gpu-doctor-bundle"
BUNDLE_SCHEMA = 1
MiB = 1 << 20


class BundleError(ValueError):
    """A bundle that cannot be written or will not be read: one clear sentence for the user."""


@dataclass(frozen=True)
class Limits:
    """Bounds for writing and for reading a bundle (a capture is a few hundred KiB)."""

    max_members: int = 20_000
    max_member_bytes: int = 32 * MiB
    max_total_bytes: int = 64 * MiB


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Member:
    """One archive member after redaction; `data` None is a directory."""

    path: str
    data: bytes | None
    redaction: frozenset[str] = frozenset()

    @property
    def size(self) -> int:
        return 0 if self.data is None else len(self.data)


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < MiB:
        return f"{size / 1024:.1f} KiB"
    return f"{size / MiB:.1f} MiB"
