"""What each family of Linux distributions needs typed: one frozen recipe per family, in one table.

Every fix that depends on the distribution (the driver package, the kernel headers, building and signing the
module, the initramfs, removing a driver installed inside WSL) reads its family's `Recipe` here instead of
switching on the family itself. A family added to `Family` without a recipe fails the completeness test
(tests/fixes/test_distro_recipes.py); a field a family cannot fill is None, and the fixes then say in words
what to do instead of guessing a command.

Sources per family are on each recipe; the module-signing paths are those of hardware.md §3.5 (see
fixes/module_signing.py), the driver packages those of the distributions' own NVIDIA pages.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from enum import Enum

from torch_gpu_doctor.facts.platform import OsFacts
from torch_gpu_doctor.fixes.driver_plan import DriverPlan
from torch_gpu_doctor.model import Command
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Unavailable


class Family(str, Enum):
    UBUNTU = "ubuntu"
    POP = "pop"  # Ubuntu's packages, System76's driver
    DEBIAN = "debian"
    FEDORA = "fedora"
    RHEL = "rhel"
    ARCH = "arch"
    SUSE = "suse"
    UNKNOWN = "unknown"


# os-release ID (or an ID_LIKE entry) -> family
_BY_ID = {
    "ubuntu": Family.UBUNTU,
    "pop": Family.POP,
    "linuxmint": Family.UBUNTU,
    "elementary": Family.UBUNTU,
    "zorin": Family.UBUNTU,
    "debian": Family.DEBIAN,
    "raspbian": Family.DEBIAN,
    "fedora": Family.FEDORA,
    "nobara": Family.FEDORA,
    "rhel": Family.RHEL,
    "rocky": Family.RHEL,
    "almalinux": Family.RHEL,
    "centos": Family.RHEL,
    "ol": Family.RHEL,
    "amzn": Family.RHEL,
    "arch": Family.ARCH,
    "manjaro": Family.ARCH,
    "endeavouros": Family.ARCH,
    "cachyos": Family.ARCH,
    "opensuse-tumbleweed": Family.SUSE,
    "opensuse-leap": Family.SUSE,
    "opensuse": Family.SUSE,
    "sles": Family.SUSE,
    "suse": Family.SUSE,
}

NVIDIA_DOWNLOADS = "https://www.nvidia.com/Download/index.aspx"
KEPLER_BRANCH = 470
DEBIAN_WITHOUT_470 = 13  # trixie dropped nvidia-tesla-470-driver (bookworm has 470.256.02)
UBUNTU_MOK = "/var/lib/shim-signed/mok/MOK.der"
DKMS_MOK = "/var/lib/dkms/mok.pub"
AKMODS_MOK = "/etc/pki/akmods/certs/public_key.der"


class Builder(str, Enum):
    """What builds (and signs) the nvidia module for a kernel."""

    DKMS = "dkms"
    AKMODS = "akmods"


@dataclass(frozen=True)
class DriverInstall:
    """The driver's install commands for one plan (empty: only the text can help) and what to say."""

    commands: tuple[Command, ...]
    text: str


@dataclass(frozen=True)
class Recipe:
    family: Family
    source: str  # where the commands and package names come from
    # the NVIDIA driver for a DriverPlan on this release (the distribution's major version, when known)
    driver: Callable[[DriverPlan, int | None], DriverInstall]
    headers: Command | None  # the running kernel's headers; "{release}" is the kernel release
    prebuilt_modules: str | None  # a package of modules built for one kernel: "{branch}", "{release}"
    builder: Builder | None  # what builds the module once the headers are there
    signing_builder: Builder | None  # what rebuilds it signed for Secure Boot
    mok_certificate: str | None  # the module-signing certificate that builder creates
    initramfs: Command  # rebuilds the initramfs (a module blacklist must reach it too)
    remove: tuple[str, ...] | None  # argv prefix that removes packages (a Linux driver inside WSL)
    owner: Command | None  # which package owns "{path}", with what to do next in its note
    # the package that brings Python's venv module where the distribution ships it apart (Debian, Ubuntu)
    venv: Command | None = None


def _ubuntu_driver(plan: DriverPlan, version: int | None) -> DriverInstall:  # noqa: ARG001 - no per-release rule
    branch, legacy = plan.branch, bool(plan.end_of_life)
    if branch is None:
        return DriverInstall(
            (
                Command(
                    ("sudo", "ubuntu-drivers", "install"),
                    note="installs the branch Ubuntu recommends for your GPU",
                ),
            ),
            "Install the NVIDIA driver Ubuntu recommends for this GPU, then reboot.",
        )
    package = f"nvidia-driver-{branch}" + ("-open" if plan.open_modules else "")
    note = (
        "a newer branch from `ubuntu-drivers list` works as well"
        if not legacy
        else "the last branch for these GPUs"
    )
    return DriverInstall(
        (Command(("sudo", "apt", "update")), Command(("sudo", "apt", "install", package), note=note)),
        f"Install Ubuntu's {package} package, then reboot.",
    )


def _pop_driver(plan: DriverPlan, version: int | None) -> DriverInstall:  # noqa: ARG001 - one rule for all
    # Pop!_OS carries NVIDIA's driver in its own repository (pop-os/nvidia-graphics-drivers) and installs it
    # through System76's meta package, which follows the branch Pop ships (R595 since pop-os/system76-driver#355,
    # 2026-05); the Kepler branch stays an Ubuntu package by its own name.
    if plan.end_of_life and plan.branch:
        package = f"nvidia-driver-{plan.branch}"
        return DriverInstall(
            (Command(("sudo", "apt", "update")), Command(("sudo", "apt", "install", package))),
            f"Install the {package} package (the last branch for these GPUs), then reboot.",
        )
    return DriverInstall(
        (
            Command(("sudo", "apt", "update")),
            Command(
                ("sudo", "apt", "install", "system76-driver-nvidia"),
                note="Pop!_OS's driver package: it brings the NVIDIA branch Pop!_OS ships"
                + (f" (R{plan.branch} or newer is needed)" if plan.branch else ""),
            ),
        ),
        "Install Pop!_OS's NVIDIA driver (system76-driver-nvidia), then reboot.",
    )


def _debian_driver(plan: DriverPlan, version: int | None) -> DriverInstall:
    branch = plan.branch
    if branch == KEPLER_BRANCH and version is not None and version >= DEBIAN_WITHOUT_470:
        return DriverInstall(
            (),
            f"Debian {version} packages no R470 driver, the last branch for Kepler GPUs (Debian 12 has "
            "nvidia-tesla-470-driver): these GPUs have no packaged driver on this release.",
        )
    if branch == KEPLER_BRANCH:
        packages: tuple[str, ...] = ("nvidia-tesla-470-driver",)
    else:
        packages = ("nvidia-open-kernel-dkms", "nvidia-driver") if plan.open_modules else ("nvidia-driver",)
    return DriverInstall(
        (
            Command(("sudo", "apt", "update")),
            Command(
                ("sudo", "apt", "install", *packages, "firmware-misc-nonfree", "linux-headers-amd64"),
                note="needs contrib, non-free and non-free-firmware in your APT sources; on arm64: linux-headers-arm64",
            ),
        ),
        "Install Debian's NVIDIA driver packages (DKMS builds the module for your kernel), then reboot."
        + (
            f" Debian ships one branch per release: if `apt policy nvidia-driver` shows one older than "
            f"R{branch}, use NVIDIA's CUDA repository for Debian instead."
            if branch and branch != KEPLER_BRANCH
            else ""
        ),
    )


def _fedora_driver(plan: DriverPlan, version: int | None) -> DriverInstall:  # noqa: ARG001 - no per-release rule
    # RPM Fusion's legacy branches are whole package sets: akmod-nvidia-580xx with xorg-x11-drv-nvidia-580xx-cuda
    branch = plan.branch
    suffix = f"-{branch}xx" if plan.end_of_life and branch else ""
    akmod = f"akmod-nvidia{suffix}"
    return DriverInstall(
        (
            Command(
                ("sudo", "dnf", "install", akmod, f"xorg-x11-drv-nvidia{suffix}-cuda"),
                note="from the RPM Fusion nonfree repository; wait for akmods to build the module before rebooting",
            ),
        ),
        "Install the NVIDIA driver from RPM Fusion, wait a few minutes for the module to build, then reboot."
        + (f" {akmod} is RPM Fusion's legacy package for the R{branch} branch." if suffix else ""),
    )


def _rhel_driver(plan: DriverPlan, version: int | None) -> DriverInstall:  # noqa: ARG001 - no per-release rule
    return DriverInstall(
        (
            Command(
                ("sudo", "dnf", "install", "nvidia-open" if plan.open_modules else "cuda-drivers"),
                note="from NVIDIA's CUDA repository for your RHEL-compatible release"
                + (f"; it must provide R{plan.branch} or newer" if plan.branch else ""),
            ),
        ),
        "Install the driver from NVIDIA's CUDA repository for your release, then reboot.",
    )


def _arch_driver(plan: DriverPlan, version: int | None) -> DriverInstall:  # noqa: ARG001 - rolling release
    if plan.end_of_life and plan.branch:
        return DriverInstall(
            (),
            f"These GPUs need the proprietary R{plan.branch} legacy branch, which Arch ships only in the AUR "
            f"(nvidia-{plan.branch}xx-dkms): build it with your AUR helper, then reboot.",
        )
    package = "nvidia-open" if plan.open_modules else "nvidia"
    return DriverInstall(
        (Command(("sudo", "pacman", "-S", "--needed", package)),),
        "Install the NVIDIA driver package for your kernel, then reboot.",
    )


def _suse_driver(plan: DriverPlan, version: int | None) -> DriverInstall:  # noqa: ARG001 - no per-release rule
    # sndirsch.github.io (SUSE's NVIDIA packager), 2026-02-22: Turing and newer get the G07 open modules
    # (the meta package also pulls in the CUDA user space); older GPUs the proprietary G06, Kepler G05.
    if plan.branch == KEPLER_BRANCH:
        packages: tuple[str, ...] = ("nvidia-gfxG05-kmp-default", "nvidia-computeG05")
        note = "from NVIDIA's repository for openSUSE (the R470 branch)"
    elif plan.open_modules:
        packages = ("nvidia-open-driver-G07-signed-kmp-meta",)
        note = (
            "the signed open modules and the CUDA user space, from NVIDIA's repository for openSUSE; "
            "SLE 15 SP7 still uses nvidia-open-driver-G06-signed-kmp-meta"
        )
    else:
        packages = ("nvidia-driver-G06-kmp-default", "nvidia-compute-utils-G06")
        note = "from NVIDIA's repository for openSUSE (proprietary modules, for GPUs before Turing)"
    return DriverInstall(
        (Command(("sudo", "zypper", "install", *packages), note=note),),
        "Install openSUSE's NVIDIA driver packages, then reboot.",
    )


def _any_driver(plan: DriverPlan, version: int | None) -> DriverInstall:  # noqa: ARG001 - nothing known
    branch, legacy = plan.branch, bool(plan.end_of_life)
    return DriverInstall(
        (),
        f"Install the NVIDIA driver for your distribution (or from {NVIDIA_DOWNLOADS})"
        + (f", R{branch} or newer" if branch and not legacy else f", the R{branch} branch" if branch else "")
        + ", then reboot.",
    )


_APT_HEADERS = Command(("sudo", "apt", "install", "linux-headers-{release}"))
# what Debian and the distributions built on it share: the initramfs tool, dpkg, apt's purge, venv apart
_UPDATE_INITRAMFS = Command(("sudo", "update-initramfs", "-u"))
_APT_PURGE = ("sudo", "apt-get", "purge")
_DPKG_OWNER = Command(("dpkg", "-S", "{path}"), note="then: sudo apt-get purge <that package>")
_APT_VENV = Command(("sudo", "apt", "install", "python3-venv"), note="Debian and Ubuntu ship venv apart")
_DNF_HEADERS = Command(("sudo", "dnf", "install", "kernel-devel-{release}"))
_DRACUT = Command(("sudo", "dracut", "--force"), note="Fedora, RHEL, openSUSE and most others")
_RPM_OWNER = ("rpm", "-qf", "{path}")

_UBUNTU = Recipe(
    Family.UBUNTU,
    source="help.ubuntu.com NVIDIA drivers installation; Ubuntu's linux-modules-nvidia packages",
    driver=_ubuntu_driver,
    headers=_APT_HEADERS,
    prebuilt_modules="linux-modules-nvidia-{branch}-{release}",
    builder=Builder.DKMS,
    signing_builder=Builder.DKMS,
    mok_certificate=UBUNTU_MOK,
    initramfs=_UPDATE_INITRAMFS,
    remove=_APT_PURGE,
    owner=_DPKG_OWNER,
    venv=_APT_VENV,
)

RECIPES: dict[Family, Recipe] = {
    Family.UBUNTU: _UBUNTU,
    Family.POP: replace(
        _UBUNTU,
        family=Family.POP,
        prebuilt_modules=None,  # Ubuntu's linux-modules-nvidia-* are built for Ubuntu's kernels, not Pop's
        source="Ubuntu's recipe; the driver from System76's docs (content/install-pop.md: sudo apt install system76-driver-nvidia)",
        driver=_pop_driver,
    ),
    Family.DEBIAN: Recipe(
        Family.DEBIAN,
        source="wiki.debian.org/NvidiaGraphicsDrivers; apt-cache of bookworm and trixie",
        driver=_debian_driver,
        headers=_APT_HEADERS,
        prebuilt_modules=None,
        builder=Builder.DKMS,
        signing_builder=Builder.DKMS,
        mok_certificate=DKMS_MOK,
        initramfs=_UPDATE_INITRAMFS,
        remove=_APT_PURGE,
        owner=_DPKG_OWNER,
        venv=_APT_VENV,
    ),
    Family.FEDORA: Recipe(
        Family.FEDORA,
        source="rpmfusion.org/Howto/NVIDIA; akmods 0.5.10",
        driver=_fedora_driver,
        headers=_DNF_HEADERS,
        prebuilt_modules=None,
        builder=Builder.AKMODS,
        signing_builder=Builder.AKMODS,
        mok_certificate=AKMODS_MOK,
        initramfs=_DRACUT,
        remove=("sudo", "dnf", "remove"),
        owner=Command(_RPM_OWNER, note="then: sudo dnf remove <that package>"),
    ),
    Family.RHEL: Recipe(
        Family.RHEL,
        source="NVIDIA's CUDA installation guide for Linux (RHEL and compatibles)",
        driver=_rhel_driver,
        headers=_DNF_HEADERS,
        prebuilt_modules=None,
        builder=Builder.DKMS,
        signing_builder=None,  # NVIDIA's precompiled streams are signed by NVIDIA; DKMS builds need own keys
        mok_certificate=None,
        initramfs=_DRACUT,
        remove=("sudo", "dnf", "remove"),
        owner=Command(_RPM_OWNER, note="then: sudo dnf remove <that package>"),
    ),
    Family.ARCH: Recipe(
        Family.ARCH,
        source="wiki.archlinux.org/title/NVIDIA",
        driver=_arch_driver,
        headers=Command(
            ("sudo", "pacman", "-S", "--needed", "linux-headers"),
            note="for the linux kernel; linux-lts-headers, linux-zen-headers ... for those kernels",
        ),
        prebuilt_modules=None,
        builder=Builder.DKMS,
        signing_builder=Builder.DKMS,
        mok_certificate=DKMS_MOK,
        initramfs=Command(("sudo", "mkinitcpio", "-P")),
        remove=("sudo", "pacman", "-Rns"),
        owner=Command(("pacman", "-Qo", "{path}"), note="then: sudo pacman -Rns <that package>"),
    ),
    Family.SUSE: Recipe(
        Family.SUSE,
        source="en.opensuse.org/SDB:NVIDIA_drivers; sndirsch.github.io (2026-02-22)",
        driver=_suse_driver,
        headers=Command(("sudo", "zypper", "install", "kernel-default-devel")),
        prebuilt_modules=None,
        builder=Builder.DKMS,
        signing_builder=None,  # the -signed-kmp packages come signed; nothing to rebuild
        mok_certificate=None,
        initramfs=_DRACUT,
        remove=("sudo", "zypper", "remove"),
        owner=Command(_RPM_OWNER, note="then: sudo zypper remove <that package>"),
    ),
    Family.UNKNOWN: Recipe(
        Family.UNKNOWN,
        source="no distribution recognised: the fixes say in words what to do",
        driver=_any_driver,
        headers=None,
        prebuilt_modules=None,
        builder=None,
        signing_builder=None,
        mok_certificate=None,
        initramfs=_DRACUT,
        remove=None,
        owner=None,
    ),
}


def family(os_facts: OsFacts | Unavailable) -> Family:
    if isinstance(os_facts, Unavailable):
        return Family.UNKNOWN
    ids = [os_facts.distro_id] if isinstance(os_facts.distro_id, str) else []
    for candidate in [*ids, *os_facts.distro_like]:
        found = _BY_ID.get(candidate.lower())
        if found is not None:
            return found
    return Family.UNKNOWN


def recipe(os_facts: OsFacts | Unavailable) -> Recipe:
    """The recipe of the machine's family (the UNKNOWN one when no family is recognised)."""
    return RECIPES[family(os_facts)]


def recipe_for_files(os_facts: OsFacts | Unavailable, files: tuple[str, ...]) -> Recipe:
    """The machine's recipe; where its family is not known, the one its files' folders say: Debian's multiarch
    folders (/usr/lib/x86_64-linux-gnu) are dpkg's (a paste that shows a library's path and no distribution)."""
    family_of = family(os_facts)
    if family_of is Family.UNKNOWN and any("-linux-gnu/" in f for f in files):
        return RECIPES[Family.DEBIAN]
    return RECIPES[family_of]


def major_version(os_facts: OsFacts | Unavailable) -> int | None:
    """The distribution's major version (Debian 12 -> 12), where it says one."""
    version = None if isinstance(os_facts, Unavailable) else os_facts.distro_version
    head = version.split(".")[0] if isinstance(version, str) else ""
    return int(head) if head.isdigit() else None


def filled(command: Command, **values: str) -> Command:
    """A recipe's command with its placeholders ({release}, {path}, ...) filled in."""
    return Command(
        tuple(word.format(**values) for word in command.argv), command.note, command.stdin, command.runs_here
    )
