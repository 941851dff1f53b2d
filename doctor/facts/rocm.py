"""AMD GPU compute stack, from files only: ROCm installs under /opt, the amdgpu module, /dev/kfd and the render
nodes, and each GPU's gfx target from the KFD topology in sysfs (hardware.md §6).

No command runs here (rocminfo, rocm-smi): the KFD topology holds what the checks need, and a captured machine
replays files exactly. Whether the user may open /dev/kfd (groups `render`/`video`) is not knowable offline, so
only presence is recorded.
"""

from __future__ import annotations

import re

from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

OPT = "/opt"
DEFAULT_ROCM = "/opt/rocm"
# The rocm-core package writes `.info/version`; `.info/version-rocm` is the same number under another name.
VERSION_FILES = (".info/version", ".info/version-rocm")
KFD_NODES = "/sys/class/kfd/kfd/topology/nodes"
AMDGPU_MODULE = "/sys/module/amdgpu"
VENDOR_AMD = 0x1002  # as facts/pci.py; not imported from there: facts/model.py imports this module

_VERSION = lazy(r"([0-9]{1,3}\.[0-9]{1,3}(?:\.[0-9]{1,3})?)(?:[-.~+][0-9A-Za-z.~+-]*)?", re.ASCII)
_VERSIONED_DIR = lazy(r"rocm-([0-9]{1,3}\.[0-9]{1,3}(?:\.[0-9]{1,3})?)", re.ASCII)


@dataclass(frozen=True)
class RocmInstall:
    path: str  # "/opt/rocm" or "/opt/rocm-6.2.0"
    version: Maybe[str]  # "6.2.0": the file's number without the build suffix ("6.2.0-66")
    version_file: str | None  # where it was read


@dataclass(frozen=True)
class KfdAgent:
    """One GPU node of /sys/class/kfd/kfd/topology/nodes (CPU nodes have gfx_target_version 0 and are left out)."""

    node: int
    gfx_target_version: int  # 90402
    gfx_target: Maybe[str]  # "gfx942"
    vendor_id: Maybe[int]  # 4098 = 0x1002 for AMD
    device_id: Maybe[int]  # PCI device id, 29857 = 0x74a1 (MI300X)
    bdf: Maybe[str]  # from `domain` and `location_id` (bus << 8 | devfn)
    drm_render_minor: Maybe[int]  # 128 -> /dev/dri/renderD128


@dataclass(frozen=True)
class RocmFacts:
    version: Maybe[str]  # of /opt/rocm when it exists, else the newest /opt/rocm-X.Y.Z
    version_source: str | None  # the file it came from
    installs: tuple[RocmInstall, ...]  # every ROCm tree under /opt
    amdgpu_loaded: Maybe[bool]  # /sys/module/amdgpu exists
    amdgpu_version: Maybe[str]  # /sys/module/amdgpu/version: only the DKMS (out-of-tree) driver has it
    kfd_present: Maybe[bool]  # /dev/kfd, the ROCm compute device node
    render_nodes: Maybe[tuple[str, ...]]  # /dev/dri/renderD* names
    agents: Maybe[tuple[KfdAgent, ...]]  # NOT_FOUND when there is no KFD (no amdgpu, or no AMD GPU)


# --- pure parsers ---------------------------------------------------------------------------------------------


def parse_version_file(text: str) -> str | None:
    """`6.2.0-66` or `7.1.1` (the first line of .info/version) -> "6.2.0"; anything else -> None."""
    first = text.strip().splitlines()[0].strip() if text.strip() else ""
    match = _VERSION.fullmatch(first)
    return match.group(1) if match else None


def gfx_target_name(version: int) -> str | None:
    """KFD's `gfx_target_version` (major*10000 + minor*100 + stepping) -> the gfx name; minor and stepping print
    in hex: 90402 -> gfx942, 90010 -> gfx90a, 100300 -> gfx1030. 0 (a CPU node) or out of range -> None."""
    major, rest = divmod(version, 10000)
    minor, stepping = divmod(rest, 100)
    if version <= 0 or major == 0 or minor > 15 or stepping > 15:
        return None
    return f"gfx{major}{minor:x}{stepping:x}"


def gfx_version_tuple(name: str) -> tuple[int, int, int] | None:
    """ "gfx1031" -> (10, 3, 1), "gfx90a" -> (9, 0, 10): the inverse of gfx_target_name."""
    match = re.fullmatch(r"gfx([0-9]{1,2})([0-9a-f])([0-9a-f])", name.strip(), re.ASCII)
    if not match:
        return None
    return int(match.group(1)), int(match.group(2), 16), int(match.group(3), 16)


def parse_kfd_properties(text: str) -> dict[str, int] | None:
    """`key value` lines of a topology node's `properties` file; None when no line has that shape."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            values[parts[0]] = int(parts[1])
    return values or None


def agent_from_properties(node: int, values: dict[str, int], where: str) -> KfdAgent | None:
    """The GPU agent a node describes, or None for a CPU node (gfx_target_version 0 or absent)."""
    gfx = values.get("gfx_target_version", 0)
    if gfx == 0:
        return None
    name = gfx_target_name(gfx)

    def field(key: str) -> Maybe[int]:
        return values[key] if key in values else Unavailable(Reason.NOT_FOUND, f"{where}: no {key}")

    location, domain = values.get("location_id"), values.get("domain", 0)
    bdf: Maybe[str] = (
        f"{domain:04x}:{location >> 8:02x}:{(location & 0xFF) >> 3:02x}.{location & 0x7}"
        if location is not None
        else Unavailable(Reason.NOT_FOUND, f"{where}: no location_id")
    )
    return KfdAgent(
        node=node,
        gfx_target_version=gfx,
        gfx_target=name if name else Unavailable(Reason.UNPARSEABLE, f"{where}: gfx_target_version {gfx}"),
        vendor_id=field("vendor_id"),
        device_id=field("device_id"),
        bdf=bdf,
        drm_render_minor=field("drm_render_minor"),
    )


# --- gathering ------------------------------------------------------------------------------------------------


def gather_rocm(host: Host) -> RocmFacts:
    installs = _installs(host)
    version, source = _chosen_version(installs)
    return RocmFacts(
        version=version,
        version_source=source,
        installs=installs,
        amdgpu_loaded=_amdgpu_loaded(host),
        amdgpu_version=_amdgpu_version(host),
        kfd_present=_device_present(host, "/dev/kfd"),
        render_nodes=_render_nodes(host),
        agents=_agents(host),
    )


def _install(host: Host, path: str) -> RocmInstall | None:
    """The ROCm tree at `path`, or None when there is none."""
    first_error: Unavailable | None = None
    for name in VERSION_FILES:
        where = f"{path}/{name}"
        text = host.read_text(where)
        if isinstance(text, Unavailable):
            if text.reason is not Reason.NOT_FOUND and first_error is None:
                first_error = text
            continue
        parsed = parse_version_file(text)
        value: Maybe[str] = parsed or Unavailable(Reason.UNPARSEABLE, f"{where}: {text.strip()[:40]!r}")
        return RocmInstall(path, value, where)
    if first_error is not None:
        return RocmInstall(path, first_error, None)
    if not host.is_dir(path):
        return None
    # A tree without the rocm-core file: its folder name may still say the version.
    named = _VERSIONED_DIR.fullmatch(path.rsplit("/", 1)[-1])
    if named:
        return RocmInstall(path, named.group(1), None)
    return RocmInstall(path, Unavailable(Reason.NOT_FOUND, f"{path}/{VERSION_FILES[0]}"), None)


def _installs(host: Host) -> tuple[RocmInstall, ...]:
    names = host.listdir(OPT)
    paths = [DEFAULT_ROCM]
    if not isinstance(names, Unavailable):
        paths += [f"{OPT}/{n}" for n in names if _VERSIONED_DIR.fullmatch(n)]
    found = (_install(host, p) for p in paths)
    return tuple(i for i in found if i is not None)


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def _chosen_version(installs: tuple[RocmInstall, ...]) -> tuple[Maybe[str], str | None]:
    """/opt/rocm is what tools and build systems use by default; without it, the newest versioned tree."""
    default = next((i for i in installs if i.path == DEFAULT_ROCM), None)
    if default is not None:
        return default.version, default.version_file
    known = [i for i in installs if isinstance(i.version, str)]
    if not known and installs:  # a ROCm tree whose version could not be read is not "no ROCm"
        return installs[0].version, installs[0].version_file
    if not known:
        return Unavailable(Reason.NOT_FOUND, f"no ROCm under {OPT} ({DEFAULT_ROCM}/{VERSION_FILES[0]})"), None
    newest = max(known, key=lambda i: _key(str(i.version)))
    return newest.version, newest.version_file


def _amdgpu_loaded(host: Host) -> Maybe[bool]:
    if not host.is_dir("/sys/module"):
        return Unavailable(Reason.NOT_FOUND, "/sys/module")
    return host.is_dir(AMDGPU_MODULE)


def _amdgpu_version(host: Host) -> Maybe[str]:
    text = host.read_text(f"{AMDGPU_MODULE}/version")
    if isinstance(text, Unavailable):
        return text
    return text.strip() or Unavailable(Reason.UNPARSEABLE, f"{AMDGPU_MODULE}/version is empty")


def _device_present(host: Host, path: str) -> Maybe[bool]:
    if not host.is_dir("/dev"):
        return Unavailable(Reason.NOT_FOUND, "/dev")
    return host.exists(path)


def _render_nodes(host: Host) -> Maybe[tuple[str, ...]]:
    if not host.is_dir("/dev"):
        return Unavailable(Reason.NOT_FOUND, "/dev")
    names = host.listdir("/dev/dri")
    if isinstance(names, Unavailable):
        return () if names.reason is Reason.NOT_FOUND else names
    return tuple(n for n in names if n.startswith("renderD"))


def _agents(host: Host) -> Maybe[tuple[KfdAgent, ...]]:
    names = host.listdir(KFD_NODES)
    if isinstance(names, Unavailable):
        return names
    agents = []
    unreadable: list[Unavailable] = []
    for name in sorted((n for n in names if n.isdigit()), key=int):
        where = f"{KFD_NODES}/{name}/properties"
        text = host.read_text(where)
        if isinstance(text, Unavailable):
            unreadable.append(text)
            continue
        values = parse_kfd_properties(text)
        if values is None:
            unreadable.append(Unavailable(Reason.UNPARSEABLE, f"{where}: {text.strip()[:40]!r}"))
            continue
        agent = agent_from_properties(int(name), values, where)
        # Old kernels print no vendor_id; anything that names another vendor is not an AMD GPU.
        if agent is not None and (isinstance(agent.vendor_id, Unavailable) or agent.vendor_id == VENDOR_AMD):
            agents.append(agent)
    if unreadable and not agents:
        return unreadable[0]  # nothing to show: why the topology could not be read
    return tuple(agents)
