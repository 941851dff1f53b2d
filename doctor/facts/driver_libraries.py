"""Where the NVIDIA driver's user-space libraries (libcuda.so.1, libnvidia-ml.so.1) are, and what they point to.

The driver installs `libcuda.so.1 -> libcuda.so.<version>` in the distribution's library folder (hardware.md
§3.6); the NVIDIA Container Toolkit bind-mounts the host's copies into a container; Apptainer's `--nv` puts them in
`/.singularity.d/libs`; GKE in `/usr/local/nvidia/lib64`; WSL2 projects the Windows driver's unversioned copies
into `/usr/lib/wsl/lib` as plain files, not links (microsoft/WSL#8587, #5663).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

LIBCUDA = "libcuda.so.1"
LIBNVML = "libnvidia-ml.so.1"
WSL_LIB_DIR = "/usr/lib/wsl/lib"
APPTAINER_LIB_DIR = "/.singularity.d/libs"
# The distribution folders first, then the folders container runtimes inject into, then WSL's projection.
LIBRARY_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib",
    "/usr/local/nvidia/lib64",
    APPTAINER_LIB_DIR,
    WSL_LIB_DIR,
)
# A driver release in a file name: 550.54.15, 580.65.06 (ASCII, bounded; facts/model.py imports this module, so
# facts/driver.py's parser, which imports the model, cannot be used here).
_DRIVER_VERSION = lazy(r"^(\d{3,4})\.\d{1,9}(\.\d{1,9})?$", re.ASCII)


@dataclass(frozen=True)
class LibraryFile:
    """One copy of a driver library found on the machine."""

    name: str  # the soname looked for: libcuda.so.1
    path: str  # where it was found
    resolved: Maybe[str]  # the file it finally points to
    is_symlink: bool  # False: a plain file (WSL projects them so; ldconfig then complains)
    version: Maybe[str]  # from the resolved name (libcuda.so.550.54.15); WSL's copies carry none


def find_library(host: Host, directory: str, name: str) -> LibraryFile | None:
    """The copy of `name` in `directory`, or None when there is none."""
    path = f"{directory}/{name}"
    if not host.exists(path):
        return None
    link = host.readlink(path)
    resolved = host.realpath(path)
    stem = name.rsplit(".so.", 1)[0] + ".so."
    version = resolved if isinstance(resolved, Unavailable) else _driver_version(resolved, stem)
    return LibraryFile(name, path, resolved, not isinstance(link, Unavailable), version)


def _driver_version(resolved: str, stem: str) -> Maybe[str]:
    """`libcuda.so.550.54.15` gives 550.54.15; `libcuda.so.1.1` (WSL, Jetson) is an ABI number, not a driver."""
    base = posixpath.basename(resolved)
    tail = base[len(stem) :] if base.startswith(stem) else ""
    if not _DRIVER_VERSION.match(tail):
        return Unavailable(Reason.NOT_SUPPORTED, f"no driver version in the name {base[:80]}")
    return tail


def find_libraries(host: Host, names: Iterable[str], directories: Iterable[str]) -> tuple[LibraryFile, ...]:
    """Every copy, once: `/lib/x86_64-linux-gnu` and `/usr/lib/x86_64-linux-gnu` are one folder on merged-/usr."""
    found: list[LibraryFile] = []
    seen: set[tuple[str, str]] = set()
    wanted = tuple(names)
    for directory in directories:
        for name in wanted:
            library = find_library(host, directory, name)
            if library is None:
                continue
            key = (name, library.resolved if isinstance(library.resolved, str) else library.path)
            if key not in seen:
                seen.add(key)
                found.append(library)
    return tuple(found)


def is_wsl_projection(library: LibraryFile) -> bool:
    """The Windows driver's copy (or a link to it), not a Linux driver's."""
    where = library.resolved if isinstance(library.resolved, str) else library.path
    return where.startswith("/usr/lib/wsl/")
