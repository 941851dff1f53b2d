"""WSL: which version, whether the Windows driver reaches Linux, and whether a Linux driver got in the way.

WSL 2 reaches the GPU through `/dev/dxg` and the Windows driver's libraries, which Windows projects into
`/usr/lib/wsl/lib` (hardware.md §3.7): libcuda.so, libcuda.so.1, libcuda.so.1.1, libnvidia-ml.so.1, nvidia-smi
and others, all plain files (microsoft/WSL#7314 lists them, #8587 shows `ls -la`), which makes ldconfig print
"libcuda.so.1 is not a symbolic link" (#5663, #11229). A Linux NVIDIA driver installed inside the distribution puts
its own libcuda.so.1 / libnvidia-ml.so.1 / nvidia-smi beside them and breaks CUDA and NVML (NVIDIA's CUDA on WSL
guide; NVIDIA/nvidia-docker#1551 shows `libnvoptix.so.470.57.02` in /usr/lib/x86_64-linux-gnu inside WSL2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from torch_gpu_doctor.facts.driver_libraries import (
    LIBCUDA,
    LIBNVML,
    WSL_LIB_DIR,
    LibraryFile,
    find_libraries,
    find_library,
    is_wsl_projection,
)
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

if TYPE_CHECKING:
    from torch_gpu_doctor.facts.platform import OsFacts

# Where a Linux driver package puts its libraries (Debian/Ubuntu multiarch, Fedora/RHEL/SUSE lib64, Arch lib).
LINUX_LIBRARY_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib")
DPKG_INFO = "/var/lib/dpkg/info"
PACMAN_LOCAL = "/var/lib/pacman/local"
DKMS_NVIDIA = "/var/lib/dkms/nvidia"
NOT_WSL = "not running under WSL"
NO_TRACES = "no Linux driver library, nvidia-smi or DKMS module: package records not read"
# Debian/Ubuntu and NVIDIA-repository packages that carry a Linux driver (not the container toolkit, not CUDA).
_DPKG_DRIVER = lazy(
    r"^(nvidia-driver(-\d+.*)?|libnvidia-compute-\d+.*|nvidia-utils-\d+.*|nvidia-dkms-\d+.*"
    r"|nvidia-kernel-(common|source)-\d+.*|nvidia-kernel-dkms|cuda-drivers(-\d+)?|libcuda1|libnvidia-ml1"
    r"|nvidia-smi|nvidia-open(-\d+)?)$"
)
# Arch: `<name>-<pkgver>-<pkgrel>` folders.
_PACMAN_DRIVER = lazy(
    r"^(nvidia|nvidia-lts|nvidia-dkms|nvidia-open|nvidia-open-dkms|nvidia-utils)-[^-]+-[^-]+$"
)


@dataclass(frozen=True)
class WslFacts:
    version: Maybe[int]  # 1 or 2, from the kernel release
    distro_name: str | None  # $WSL_DISTRO_NAME: the name `wsl.exe` commands take
    has_dxg: bool  # /dev/dxg: the GPU paravirtualisation device (WSL 2 only)
    projected: Maybe[tuple[str, ...]]  # the listing of /usr/lib/wsl/lib
    projected_libcuda: LibraryFile | None  # /usr/lib/wsl/lib/libcuda.so.1 (None: not projected)
    linux_libraries: tuple[LibraryFile, ...]  # libcuda.so.1 / libnvidia-ml.so.1 of a Linux driver
    nvidia_smi: str | None  # the nvidia-smi that PATH finds first
    nvidia_smi_target: Maybe[str]  # the file it resolves to: inside /usr/lib/wsl/ it is the Windows driver's
    driver_packages: Maybe[
        tuple[str, ...]
    ]  # Linux driver packages (dpkg / pacman), read when files hint at one
    dkms_nvidia: bool  # /var/lib/dkms/nvidia: a Linux kernel module was built (or tried) here


WSL_GPU_MIN_BUILD = 19044  # Windows 10 21H2: the oldest Windows 10 whose WSL 2 has GPU paravirtualisation


def wsl_version(release: str, has_dxg: bool) -> Maybe[int]:
    """WSL 2 kernels say `microsoft-standard` (`5.15.167.4-microsoft-standard-WSL2`); WSL 1 `4.4.0-19041-Microsoft`."""
    if has_dxg or "microsoft-standard" in release.lower() or "wsl2" in release.lower():
        return 2
    if release.strip().endswith("-Microsoft"):
        return 1
    return Unavailable(Reason.UNPARSEABLE, f"kernel release {release.strip()[:60]!r}")


def driver_packages_from_dpkg(names: tuple[str, ...]) -> tuple[str, ...]:
    """Driver packages from the `<package>[:<arch>].list` files dpkg keeps per installed package."""
    found = []
    for name in names:
        if name.endswith(".list"):
            package = name[: -len(".list")].split(":", 1)[0]
            if _DPKG_DRIVER.match(package):
                found.append(package)
    return tuple(sorted(set(found)))


def driver_packages_from_pacman(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted(name.rsplit("-", 2)[0] for name in names if _PACMAN_DRIVER.match(name)))


def gather_wsl(host: Host, os_facts: OsFacts | Unavailable) -> WslFacts | Unavailable:
    if isinstance(os_facts, Unavailable):
        return os_facts
    if not os_facts.is_wsl:
        return Unavailable(Reason.NOT_APPLICABLE, NOT_WSL)
    release = os_facts.kernel_release
    version = release if isinstance(release, Unavailable) else wsl_version(release, os_facts.has_dxg)
    projected = host.listdir(WSL_LIB_DIR)
    linux = tuple(
        lib
        for lib in find_libraries(host, (LIBCUDA, LIBNVML), LINUX_LIBRARY_DIRS)
        if not is_wsl_projection(lib)
    )
    smi = host.which("nvidia-smi")
    smi_target: Maybe[str] = (
        host.realpath(smi) if smi else Unavailable(Reason.NOT_FOUND, "nvidia-smi on PATH")
    )
    dkms = host.is_dir(DKMS_NVIDIA)
    foreign_smi = isinstance(smi_target, str) and not smi_target.startswith("/usr/lib/wsl/")
    # dpkg keeps thousands of records: read them only when a Linux driver left files, to name its packages
    # (a capture replicates every name it lists).
    packages = (
        _packages(host) if linux or foreign_smi or dkms else Unavailable(Reason.NOT_APPLICABLE, NO_TRACES)
    )
    return WslFacts(
        version=version,
        distro_name=host.env().get("WSL_DISTRO_NAME") or None,
        has_dxg=os_facts.has_dxg,
        projected=projected,
        projected_libcuda=find_library(host, WSL_LIB_DIR, LIBCUDA),
        linux_libraries=linux,
        nvidia_smi=smi,
        nvidia_smi_target=smi_target,
        driver_packages=packages,
        dkms_nvidia=dkms,
    )


def _packages(host: Host) -> Maybe[tuple[str, ...]]:
    dpkg = host.listdir(DPKG_INFO)
    pacman = host.listdir(PACMAN_LOCAL)
    if isinstance(dpkg, Unavailable) and isinstance(pacman, Unavailable):
        # rpm keeps a database gpu-doctor does not read: the library files above still tell.
        return dpkg if dpkg.reason is not Reason.NOT_FOUND else pacman
    found = () if isinstance(dpkg, Unavailable) else driver_packages_from_dpkg(dpkg)
    return found + (() if isinstance(pacman, Unavailable) else driver_packages_from_pacman(pacman))
