"""/proc/self/mountinfo: which mount holds a path, and the options it was mounted with.

Line format (proc(5), Documentation/filesystems/proc.rst §3.5):
`ID PARENT MAJ:MIN ROOT MOUNT_POINT MOUNT_OPTIONS [OPTIONAL_FIELDS...] - FSTYPE SOURCE SUPER_OPTIONS`.
The kernel escapes space, tab, newline and backslash in ROOT, MOUNT_POINT and SOURCE as three-digit octal
(`\\040`); the optional fields (`shared:1`, `master:3`, ...) vary in number, so the ` - ` separator is the
only reliable anchor.
"""

from __future__ import annotations

import posixpath

from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

MOUNTINFO = "/proc/self/mountinfo"
_OCTAL_ESCAPE = lazy(r"\\([0-7]{3})")
_MAJOR_MINOR = lazy(r"^(\d+):(\d+)$")


@dataclass(frozen=True)
class MountEntry:
    mount_id: int
    parent_id: int
    major: int
    minor: int
    root: str  # the directory of the filesystem that is mounted here (a btrfs subvolume, a bind source)
    mount_point: str
    mount_options: tuple[str, ...]
    fs_type: str
    source: str  # "/dev/nvme0n1p2", "server:/export", "tmpfs", "overlay", ...
    super_options: tuple[str, ...]

    @property
    def device_number(self) -> str:
        return f"{self.major}:{self.minor}"

    def option(self, name: str) -> str | None:
        """The value of `name=value` in the filesystem's own options (`size=` of tmpfs, `upperdir=`)."""
        prefix = name + "="
        for opt in self.super_options:
            if opt.startswith(prefix):
                return opt[len(prefix) :]
        return None


def unescape(field: str) -> str:
    """Undo the kernel's octal escaping (`\\040` is a space)."""
    return _OCTAL_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), field)


def parse_mountinfo_line(line: str) -> MountEntry | None:
    """One mountinfo line, or None when it is not in the kernel's format."""
    fields = line.split()
    try:
        dash = fields.index("-", 6)
    except ValueError:
        return None
    numbers = _MAJOR_MINOR.match(fields[2])
    if numbers is None or not (fields[0].isdigit() and fields[1].isdigit()):
        return None
    after = fields[dash + 1 :]
    if len(after) < 2:
        return None
    return MountEntry(
        mount_id=int(fields[0]),
        parent_id=int(fields[1]),
        major=int(numbers.group(1)),
        minor=int(numbers.group(2)),
        root=unescape(fields[3]),
        mount_point=unescape(fields[4]),
        mount_options=tuple(fields[5].split(",")),
        fs_type=after[0],
        source=unescape(after[1]),
        # Some kernels and captures end the line right after the source: no super options.
        super_options=tuple(after[2].split(",")) if len(after) > 2 else (),
    )


def parse_mountinfo(text: str) -> tuple[MountEntry, ...]:
    """Every line that parses, in file order (later lines are mounted on top of earlier ones)."""
    entries = (parse_mountinfo_line(line) for line in text.splitlines())
    return tuple(e for e in entries if e is not None)


def read_mountinfo(host: Host) -> Maybe[tuple[MountEntry, ...]]:
    """The mount table of the diagnosing process, or why it could not be read."""
    text = host.read_text(MOUNTINFO)
    if isinstance(text, Unavailable):
        return text
    entries = parse_mountinfo(text)
    if not entries:
        return Unavailable(Reason.UNPARSEABLE, f"{MOUNTINFO}: no line in the kernel's format")
    return entries


def _covers(mount_point: str, path: str) -> bool:
    return mount_point in ("/", path) or path.startswith(mount_point.rstrip("/") + "/")


def mount_for_path(entries: tuple[MountEntry, ...], path: str) -> MountEntry | None:
    """The mount that holds an absolute, symlink-free path: the longest mount point that is a prefix of it.

    On equal length the later line wins: a second mount on the same point hides the first (seen on this
    project's CI VM: /dev/shm is mounted twice).
    """
    path = posixpath.normpath(path)
    best: MountEntry | None = None
    for entry in entries:
        if _covers(entry.mount_point, path) and (
            best is None or len(entry.mount_point) >= len(best.mount_point)
        ):
            best = entry
    return best
