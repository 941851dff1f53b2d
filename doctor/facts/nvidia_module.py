"""The nvidia kernel module on disk: for which kernels it exists, what `modinfo` says, what DKMS built.

A kernel upgrade without a rebuilt module is the classic "the GPU vanished after updates": DKMS needs the new
kernel's headers (`/lib/modules/<release>/build`) to build it. Where distributions put the module under
`/lib/modules/<release>/`: `updates/dkms/` (DKMS: Ubuntu, Debian, Arch's nvidia-dkms), `extra/nvidia/`
(Fedora akmods, fedora-silverblue/issue-tracker#272), `extramodules/` (Arch's prebuilt packages),
`kernel/drivers/video/` (NVIDIA's .run installer, open-gpu-kernel-modules#271), `kernel/nvidia-<branch>/`
(Ubuntu's prebuilt linux-modules-nvidia packages), `updates/` (openSUSE).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from torch_gpu_doctor.facts.dkms import DKMS_STATUS, DKMS_TIMEOUT_S, DkmsEntry, parse_dkms_status
from torch_gpu_doctor.facts.modinfo import ModuleInfo, parse_modinfo
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

if TYPE_CHECKING:
    from torch_gpu_doctor.facts.driver import DriverFacts

OSRELEASE = "/proc/sys/kernel/osrelease"
MODULES_ROOTS = ("/lib/modules", "/usr/lib/modules")
MODULE_SUBDIRS = ("updates/dkms", "updates", "extra", "extra/nvidia", "extramodules", "kernel/drivers/video")
MODULE_FILE = lazy(r"^nvidia\.ko(?:\.(?:xz|zst|gz))?$")
MODINFO_ARGV = ("modinfo", "nvidia")
MODINFO_TIMEOUT_S = 5.0
MAX_KERNELS = 64
NO_MODULE = "modinfo finds no nvidia module for the running kernel"


@dataclass(frozen=True)
class InstalledKernel:
    release: str  # the /lib/modules/<release> folder
    installed: bool  # has modules.dep or kernel/: an installed kernel, not a leftover folder
    headers: bool  # /lib/modules/<release>/build resolves: DKMS can build for it
    nvidia_modules: tuple[str, ...]  # nvidia.ko* files found for it


@dataclass(frozen=True)
class NvidiaModuleFacts:
    running_kernel: Maybe[str]  # /proc/sys/kernel/osrelease
    modinfo: Maybe[ModuleInfo]  # `modinfo nvidia` for the running kernel
    kernels: Maybe[tuple[InstalledKernel, ...]]  # every /lib/modules/<release>
    dkms: Maybe[tuple[DkmsEntry, ...]]  # every `dkms status` line (all modules, not only nvidia)


def kernel_sort_key(release: str) -> tuple[int, ...]:
    """`6.8.0-45-generic` → (6, 8, 0, 45): good enough to tell which of two installed kernels is newer."""
    return tuple(int(n) for n in re.findall(r"\d+", release)[:6])


def _modules_root(host: Host) -> str | None:
    return next((root for root in MODULES_ROOTS if host.is_dir(root)), None)


def _module_files(host: Host, folder: str) -> tuple[str, ...]:
    found: list[str] = []
    subdirs = list(MODULE_SUBDIRS)
    kernel_dir = host.listdir(f"{folder}/kernel")
    if isinstance(kernel_dir, tuple):  # Ubuntu's prebuilt modules: kernel/nvidia-550/nvidia.ko
        subdirs += [f"kernel/{name}" for name in sorted(kernel_dir) if name.startswith("nvidia")]
    for sub in subdirs:
        names = host.listdir(f"{folder}/{sub}")
        if isinstance(names, tuple):
            found += [f"{folder}/{sub}/{n}" for n in sorted(names) if MODULE_FILE.match(n)]
    return tuple(found)


def _kernels(host: Host) -> Maybe[tuple[InstalledKernel, ...]]:
    root = _modules_root(host)
    if root is None:
        return Unavailable(Reason.NOT_FOUND, " or ".join(MODULES_ROOTS))
    names = host.listdir(root)
    if isinstance(names, Unavailable):
        return names
    kernels = []
    for release in sorted(names, key=kernel_sort_key)[-MAX_KERNELS:]:
        folder = f"{root}/{release}"
        if not host.is_dir(folder):
            continue
        kernels.append(
            InstalledKernel(
                release=release,
                installed=host.exists(f"{folder}/modules.dep") or host.is_dir(f"{folder}/kernel"),
                headers=host.exists(f"{folder}/build"),
                nvidia_modules=_module_files(host, folder),
            )
        )
    return tuple(kernels)


def module_missing(modinfo: Maybe[ModuleInfo]) -> bool:
    """modinfo ran and found no nvidia module (not: modinfo is missing or failed)."""
    return isinstance(modinfo, Unavailable) and modinfo.detail == NO_MODULE


def _missing_or(why: Unavailable) -> Unavailable:
    # kmod: "modinfo: ERROR: Module nvidia not found." and exit 1
    if why.reason is Reason.FAILED and "Module nvidia not found" in why.detail:
        return Unavailable(Reason.NOT_FOUND, NO_MODULE)
    return why


def _modinfo(host: Host, driver: DriverFacts | Unavailable) -> Maybe[ModuleInfo]:
    # gather_driver already asked `modinfo -F version nvidia` when the module is not loaded: when that found
    # nothing, asking again in another form would only repeat the answer.
    if not isinstance(driver, Unavailable):
        known = driver.installed_module_version
        if isinstance(known, Unavailable) and known.reason is not Reason.NOT_APPLICABLE:
            return _missing_or(known)
    if host.which("modinfo") is None:
        return Unavailable(Reason.NOT_FOUND, "modinfo is not on PATH")
    result = host.run(MODINFO_ARGV, timeout=MODINFO_TIMEOUT_S)
    if not result.ok:
        return _missing_or(result.unavailable())
    return parse_modinfo(result.stdout) or Unavailable(
        Reason.UNPARSEABLE, f"modinfo: {result.stdout.strip()[:80]!r}"
    )


def _dkms(host: Host) -> Maybe[tuple[DkmsEntry, ...]]:
    if host.which("dkms") is None:
        return Unavailable(Reason.NOT_FOUND, "dkms is not on PATH")
    result = host.run(DKMS_STATUS, timeout=DKMS_TIMEOUT_S)
    if not result.ok:
        return result.unavailable()
    return parse_dkms_status(result.stdout)


def _running_kernel(host: Host) -> Maybe[str]:
    text = host.read_text(OSRELEASE)
    if isinstance(text, Unavailable):
        return text
    release = text.strip()
    if release and len(release) < 128 and "/" not in release and release.isprintable():
        return release
    return Unavailable(Reason.UNPARSEABLE, f"{OSRELEASE}: {release[:60]!r}")


def gather_nvidia_module(host: Host, driver: DriverFacts | Unavailable) -> NvidiaModuleFacts:
    return NvidiaModuleFacts(
        running_kernel=_running_kernel(host),
        modinfo=_modinfo(host, driver),
        kernels=_kernels(host),
        dkms=_dkms(host),
    )
