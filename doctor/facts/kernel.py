"""Loaded kernel modules, /dev/nvidia* nodes and nouveau blacklisting."""

from __future__ import annotations

from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Unavailable


@dataclass(frozen=True)
class KernelModule:
    name: str
    loaded: bool


@dataclass(frozen=True)
class KernelFacts:
    modules: Maybe[tuple[KernelModule, ...]]  # nvidia, nvidia_uvm, nvidia_drm, nvidia_modeset, nouveau
    device_nodes: Maybe[tuple[str, ...]]  # /dev/nvidia* names
    nouveau_blacklisted_by: tuple[str, ...]  # files / cmdline that blacklist nouveau
    cmdline: Maybe[str]


WATCHED_MODULES = ("nvidia", "nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nouveau", "amdgpu")
MODPROBE_DIRS = ("/etc/modprobe.d", "/usr/lib/modprobe.d", "/lib/modprobe.d", "/run/modprobe.d")
CMDLINE_BLACKLIST = ("modprobe.blacklist=nouveau", "rd.driver.blacklist=nouveau", "nouveau.modeset=0")


def parse_proc_modules(text: str) -> set[str]:
    """Module names from /proc/modules (`name size refcount deps state address`)."""
    names = set()
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[1].isdigit():
            names.add(fields[0])
    return names


def modprobe_blacklists_nouveau(text: str) -> bool:
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if words[:2] == ["blacklist", "nouveau"]:
            return True
        if (
            len(words) >= 3
            and words[0] == "install"
            and words[1] == "nouveau"
            and words[2] in ("/bin/false", "/bin/true")
        ):
            return True
    return False


def cmdline_blacklists_nouveau(cmdline: str) -> list[str]:
    found = []
    for word in cmdline.split():
        if word in CMDLINE_BLACKLIST or (
            word.startswith(("modprobe.blacklist=", "module_blacklist="))
            and "nouveau" in word.split("=", 1)[1].split(",")
        ):
            found.append(word)
    return found


def gather_kernel(host: Host) -> KernelFacts:
    return KernelFacts(
        modules=_modules(host),
        device_nodes=_device_nodes(host),
        nouveau_blacklisted_by=tuple(_blacklists(host)),
        cmdline=_cmdline(host),
    )


def _modules(host: Host) -> Maybe[tuple[KernelModule, ...]]:
    text = host.read_text("/proc/modules")
    if isinstance(text, Unavailable):
        # Fall back to /sys/module/<name>, which exists for loaded modules.
        if not host.is_dir("/sys/module"):
            return text
        return tuple(KernelModule(n, host.exists(f"/sys/module/{n}/initstate")) for n in WATCHED_MODULES)
    loaded = parse_proc_modules(text)
    return tuple(KernelModule(name, name in loaded) for name in WATCHED_MODULES)


def _device_nodes(host: Host) -> Maybe[tuple[str, ...]]:
    names = host.listdir("/dev")
    if isinstance(names, Unavailable):
        return names
    return tuple(n for n in names if n.startswith("nvidia"))


def _cmdline(host: Host) -> Maybe[str]:
    text = host.read_text("/proc/cmdline")
    return text if isinstance(text, Unavailable) else text.strip()


def _blacklists(host: Host) -> list[str]:
    found: list[str] = []
    for directory in MODPROBE_DIRS:
        names = host.listdir(directory)
        if isinstance(names, Unavailable):
            continue
        for name in names:
            if not name.endswith(".conf"):
                continue
            text = host.read_text(f"{directory}/{name}")
            if not isinstance(text, Unavailable) and modprobe_blacklists_nouveau(text):
                found.append(f"{directory}/{name}")
    cmdline = _cmdline(host)
    if not isinstance(cmdline, Unavailable):
        found.extend(f"/proc/cmdline: {word}" for word in cmdline_blacklists_nouveau(cmdline))
    return found
