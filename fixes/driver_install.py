"""The NVIDIA driver package for the user's distribution, for a DriverPlan (branch, open or proprietary)."""

from __future__ import annotations

from torch_gpu_doctor.facts.model import OsFacts
from torch_gpu_doctor.fixes.distro import Family, family
from torch_gpu_doctor.fixes.driver_plan import DriverPlan
from torch_gpu_doctor.model import Command, Remediation, Target
from torch_gpu_doctor.unavailable import Unavailable

NVIDIA_DOWNLOADS = "https://www.nvidia.com/Download/index.aspx"
OPEN_MODULE_MIN_CC = (7, 5)  # NVIDIA's open kernel modules support Turing and newer only
KEPLER_BRANCH = 470
DEBIAN_WITHOUT_470 = 13  # trixie dropped nvidia-tesla-470-driver (bookworm has 470.256.02)


def driver_install(os_facts: OsFacts | Unavailable, plan: DriverPlan) -> Remediation:
    """Install the distribution's NVIDIA driver for `plan`, then reboot."""
    commands, text = _commands(family(os_facts), plan, _version(os_facts))
    extra = " ".join(t for t in (plan.summary(), plan.module_note) if t)
    return Remediation(
        text=f"{text} {extra}".strip(),
        commands=commands,
        requires_root=bool(commands),
        requires_reboot=True,
        needs_network=True,
        target=Target.SYSTEM,
    )


def _version(os_facts: OsFacts | Unavailable) -> int | None:
    """The distribution's major version (Debian 12 -> 12), where it says one."""
    version = None if isinstance(os_facts, Unavailable) else os_facts.distro_version
    head = version.split(".")[0] if isinstance(version, str) else ""
    return int(head) if head.isdigit() else None


def _commands(fam: Family, plan: DriverPlan, version: int | None) -> tuple[tuple[Command, ...], str]:
    branch, is_open, legacy = plan.branch, plan.open_modules, bool(plan.end_of_life)
    if fam is Family.UBUNTU:
        if branch is None:
            return (
                Command(
                    ("sudo", "ubuntu-drivers", "install"),
                    note="installs the branch Ubuntu recommends for your GPU",
                ),
            ), "Install the NVIDIA driver Ubuntu recommends for this GPU, then reboot."
        package = f"nvidia-driver-{branch}" + ("-open" if is_open else "")
        return (
            Command(("sudo", "apt", "update")),
            Command(
                ("sudo", "apt", "install", package),
                note="a newer branch from `ubuntu-drivers list` works as well"
                if not legacy
                else "the last branch for these GPUs",
            ),
        ), f"Install Ubuntu's {package} package, then reboot."
    if fam is Family.DEBIAN:
        if branch == KEPLER_BRANCH and version is not None and version >= DEBIAN_WITHOUT_470:
            return (), (
                f"Debian {version} packages no R470 driver, the last branch for Kepler GPUs (Debian 12 has "
                "nvidia-tesla-470-driver): these GPUs have no packaged driver on this release."
            )
        if branch == KEPLER_BRANCH:
            packages: tuple[str, ...] = ("nvidia-tesla-470-driver",)
        else:
            packages = ("nvidia-open-kernel-dkms", "nvidia-driver") if is_open else ("nvidia-driver",)
        return (
            Command(("sudo", "apt", "update")),
            Command(
                ("sudo", "apt", "install", *packages, "firmware-misc-nonfree", "linux-headers-amd64"),
                note="needs contrib, non-free and non-free-firmware in your APT sources; on arm64: linux-headers-arm64",
            ),
        ), (
            "Install Debian's NVIDIA driver packages (DKMS builds the module for your kernel), then reboot."
            + (
                f" Debian ships one branch per release: if `apt policy nvidia-driver` shows one older than "
                f"R{branch}, use NVIDIA's CUDA repository for Debian instead."
                if branch and branch != KEPLER_BRANCH
                else ""
            )
        )
    if fam is Family.FEDORA:
        # RPM Fusion's legacy branches are whole package sets: akmod-nvidia-580xx with xorg-x11-drv-nvidia-580xx-cuda
        suffix = f"-{branch}xx" if legacy and branch else ""
        akmod = f"akmod-nvidia{suffix}"
        return (
            Command(
                ("sudo", "dnf", "install", akmod, f"xorg-x11-drv-nvidia{suffix}-cuda"),
                note="from the RPM Fusion nonfree repository; wait for akmods to build the module before rebooting",
            ),
        ), (
            "Install the NVIDIA driver from RPM Fusion, wait a few minutes for the module to build, then reboot."
            + (
                f" {akmod} is RPM Fusion's legacy package for the R{branch} branch."
                if akmod != "akmod-nvidia"
                else ""
            )
        )
    if fam is Family.RHEL:
        return (
            Command(
                ("sudo", "dnf", "install", "nvidia-open" if is_open else "cuda-drivers"),
                note="from NVIDIA's CUDA repository for your RHEL-compatible release"
                + (f"; it must provide R{branch} or newer" if branch else ""),
            ),
        ), "Install the driver from NVIDIA's CUDA repository for your release, then reboot."
    if fam is Family.ARCH:
        if legacy and branch:
            return (), (
                f"These GPUs need the proprietary R{branch} legacy branch, which Arch ships only in the AUR "
                f"(nvidia-{branch}xx-dkms): build it with your AUR helper, then reboot."
            )
        package = "nvidia-open" if is_open else "nvidia"
        return (
            Command(("sudo", "pacman", "-S", "--needed", package)),
        ), "Install the NVIDIA driver package for your kernel, then reboot."
    if fam is Family.SUSE:
        # sndirsch.github.io (SUSE's NVIDIA packager), 2026-02-22: Turing and newer get the G07 open modules
        # (the meta package also pulls in the CUDA user space); older GPUs the proprietary G06, Kepler G05.
        if branch == KEPLER_BRANCH:
            packages = ("nvidia-gfxG05-kmp-default", "nvidia-computeG05")
            note = "from NVIDIA's repository for openSUSE (the R470 branch)"
        elif is_open:
            packages = ("nvidia-open-driver-G07-signed-kmp-meta",)
            note = (
                "the signed open modules and the CUDA user space, from NVIDIA's repository for openSUSE; "
                "SLE 15 SP7 still uses nvidia-open-driver-G06-signed-kmp-meta"
            )
        else:
            packages = ("nvidia-driver-G06-kmp-default", "nvidia-compute-utils-G06")
            note = "from NVIDIA's repository for openSUSE (proprietary modules, for GPUs before Turing)"
        return (
            Command(("sudo", "zypper", "install", *packages), note=note),
        ), "Install openSUSE's NVIDIA driver packages, then reboot."
    return (), (
        f"Install the NVIDIA driver for your distribution (or from {NVIDIA_DOWNLOADS})"
        + (f", R{branch} or newer" if branch and not legacy else f", the R{branch} branch" if branch else "")
        + ", then reboot."
    )
