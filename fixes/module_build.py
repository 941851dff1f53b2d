"""Building the nvidia module for a kernel that has none: its headers, then DKMS (or akmods on Fedora).

Header packages per family: `linux-headers-<release>` (Debian, Ubuntu), `kernel-devel-<release>` (Fedora,
RHEL), the kernel flavour's `-headers` package (Arch), `kernel-default-devel` (openSUSE). Ubuntu's prebuilt
modules come from `linux-modules-nvidia-<branch>-<release>` instead, when the module folder says so.
"""

from __future__ import annotations

from torch_gpu_doctor.facts.platform import OsFacts
from torch_gpu_doctor.fixes.distro import Builder, filled, recipe
from torch_gpu_doctor.model import Command, Remediation, Target
from torch_gpu_doctor.unavailable import Unavailable

LOAD = Command(("sudo", "modprobe", "nvidia"), note="or reboot")
BUILD = {
    Builder.AKMODS: Command(
        ("sudo", "akmods", "--force", "--kernels", "{release}"), note="akmods builds the module"
    ),
    Builder.DKMS: Command(("sudo", "dkms", "autoinstall", "-k", "{release}"), note="DKMS builds the module"),
}


def build_module(
    os_facts: OsFacts | Unavailable, release: str, ubuntu_branch: int | None = None
) -> Remediation:
    """Install `release`'s headers and let DKMS (akmods on Fedora) build the nvidia module for it.
    `ubuntu_branch`: the module folder says the modules come prebuilt for each kernel, as Ubuntu ships them."""
    how = recipe(os_facts)
    if how.prebuilt_modules is not None and ubuntu_branch is not None:
        package = how.prebuilt_modules.format(branch=ubuntu_branch, release=release)
        return Remediation(
            text=f"Install Ubuntu's prebuilt NVIDIA {ubuntu_branch} modules for kernel {release}, then load "
            "the module or reboot.",
            commands=(Command(("sudo", "apt", "install", package)), LOAD),
            requires_root=True,
            needs_network=True,
            target=Target.SYSTEM,
        )
    if how.headers is None or how.builder is None:
        return Remediation(
            text=f"Install the kernel headers for {release} with your package manager, then run "
            f"`sudo dkms autoinstall -k {release}` and load the module (or reboot).",
            requires_root=True,
            needs_network=True,
            target=Target.SYSTEM,
        )
    return Remediation(
        text=f"Install the kernel headers for {release} so the module can be built for it, build it, then "
        "load it (or reboot).",
        commands=(filled(how.headers, release=release), filled(BUILD[how.builder], release=release), LOAD),
        requires_root=True,
        needs_network=True,
        target=Target.SYSTEM,
    )


DKMS_ANY = Command(
    ("sudo", "dkms", "autoinstall"), note="builds it for the running kernel, once its headers are in"
)
PROBE = Command(
    ("sudo", "modprobe", "nvidia"),
    note="'Module nvidia not found': not built for this kernel; 'Key was rejected': Secure Boot; "
    "'No such device': no NVIDIA GPU here (lspci lists none), nouveau holds it (`lsmod | grep nouveau`), or this "
    "driver does not support it",
)


def load_or_build(os_facts: OsFacts | Unavailable, kernel_changed: bool = False) -> Remediation:
    """The driver's user-space part answers (nvidia-smi ran) and its module is not loaded, on a kernel whose
    release is not known (a paste): loading it names why, building it for the running kernel is the usual
    fix. `kernel_changed`: the person said the kernel changed or another kernel works, so the build comes
    first."""
    how = recipe(os_facts)
    release = None if isinstance(os_facts, Unavailable) else os_facts.kernel_release
    if isinstance(release, str) and how.headers is not None and how.builder is not None:
        build: tuple[Command, ...] = (
            filled(how.headers, release=release),
            filled(BUILD[how.builder], release=release),
        )
    else:
        build = (DKMS_ANY,)
    headers = (
        f"its headers (`{' '.join(how.headers.argv).replace('{release}', '$(uname -r)')}`)"
        if how.headers is not None
        else "its headers (linux-headers-$(uname -r) on Debian and Ubuntu, the kernel's own -headers package on "
        "Arch, kernel-devel-$(uname -r) on Fedora and RHEL)"
    )
    text = (
        f"Build the module for the running kernel: install {headers}, run `sudo dkms autoinstall`, then "
        "reboot. A driver from NVIDIA's .run file or a cloud install script is built by running that installer "
        "again. If `sudo modprobe nvidia` answers 'Key was rejected by service', Secure Boot refused the module: "
        "enrol its key (mokutil) or sign it. If it answers 'No such device', nouveau holds the GPU (blacklist it "
        "and rebuild the initramfs) or the driver's branch no longer supports this GPU (a legacy one does)."
    )
    return Remediation(
        text=text,
        commands=(*build, PROBE) if kernel_changed else (PROBE, *build),
        requires_root=True,
        requires_reboot=True,
        needs_network=True,
        target=Target.SYSTEM,
    )
