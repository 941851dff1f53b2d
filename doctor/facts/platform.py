"""OS, distribution, kernel, WSL and CPU, read from procfs and /etc/os-release (or, on a system too old to have
one, its /etc/<name>-release line, parsed by the `distro` library)."""

from __future__ import annotations

import shlex
from pathlib import Path

from torch_gpu_doctor.facts.container import DOCKERENV, booted_from_image
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable


@dataclass(frozen=True)
class OsFacts:
    system: str  # "Linux", "Windows", "Darwin" (as the diagnosed Python reports it, else "Linux")
    kernel_release: Maybe[str]  # /proc/sys/kernel/osrelease
    kernel_version: Maybe[str]  # /proc/version
    distro_id: Maybe[str]  # /etc/os-release ID
    distro_name: Maybe[str]  # PRETTY_NAME
    distro_version: Maybe[str]  # VERSION_ID
    distro_like: tuple[str, ...]
    is_wsl: bool
    has_dxg: bool  # /dev/dxg: the GPU paravirtualisation device of WSL2
    container: str | None = (
        None  # "docker" | "podman" | "kubernetes" | the value of $container; None: not seen
    )


@dataclass(frozen=True)
class CpuFacts:
    model: Maybe[str]
    logical_cpus: Maybe[int]


OS_RELEASE_PATHS = ("/etc/os-release", "/usr/lib/os-release")
# Before os-release (CentOS/RHEL 6, old SUSE): one line such as "CentOS release 6.10 (Final)". The names are
# those distro 1.9 looks for (distro.py, _DISTRO_RELEASE_BASENAMES) where we have fix commands, most specific
# first: CentOS also has a redhat-release.
LEGACY_RELEASE_PATHS = (
    "/etc/centos-release",
    "/etc/rocky-release",
    "/etc/fedora-release",
    "/etc/oracle-release",
    "/etc/redhat-release",
    "/etc/SuSE-release",
)


def parse_os_release(text: str) -> dict[str, str]:
    """KEY=value lines with shell quoting (os-release(5)); malformed lines are skipped."""
    values: dict[str, str] = {}
    for raw_line in text.splitlines():
        line = raw_line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, raw = line.partition("=")
        if not key.isidentifier():
            continue
        try:
            words = shlex.split(raw)
        except ValueError:
            continue
        values[key] = " ".join(words)
    return values


def parse_cpuinfo(text: str) -> tuple[str | None, int]:
    """(model name, logical CPU count) from /proc/cpuinfo on x86 and arm64."""
    model: str | None = None
    count = 0
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key = key.strip().lower()
        if key == "processor":
            count += 1
        elif model is None and key in ("model name", "hardware", "cpu model"):
            model = value.strip() or None
    return model, count


def is_wsl_kernel(version_text: str) -> bool:
    lowered = version_text.lower()
    return "microsoft" in lowered or "wsl" in lowered


def gather_os(host: Host) -> OsFacts:
    release = _strip(host.read_text("/proc/sys/kernel/osrelease"))
    version = _strip(host.read_text("/proc/version"))
    os_release: dict[str, str] = {}
    source: Maybe[str] = Unavailable(Reason.NOT_FOUND, "/etc/os-release")
    for path in OS_RELEASE_PATHS:
        text = host.read_text(path)
        if not isinstance(text, Unavailable):
            os_release = parse_os_release(text)
            source = path
            break
        source = text

    if isinstance(source, Unavailable):
        legacy = _legacy_release(host)
        if legacy is not None:
            source, os_release = legacy

    def field(key: str) -> Maybe[str]:
        if isinstance(source, Unavailable):
            return source
        return os_release.get(key) or Unavailable(Reason.NOT_FOUND, f"{key} in {source}")

    wsl = any(not isinstance(text, Unavailable) and is_wsl_kernel(text) for text in (release, version))
    return OsFacts(
        system="Linux",
        kernel_release=release,
        kernel_version=version,
        distro_id=field("ID"),
        distro_name=field("PRETTY_NAME"),
        distro_version=field("VERSION_ID"),
        distro_like=tuple(os_release.get("ID_LIKE", "").split()),
        is_wsl=wsl,
        has_dxg=host.exists("/dev/dxg"),
        container=detect_container(host),
    )


def _legacy_release(host: Host) -> tuple[str, dict[str, str]] | None:
    """(path, os-release keys) from the first legacy release file, read through the host (so a capture holds
    it) and parsed by distro, which takes the distribution's id from the file's name."""
    import tempfile  # only on such a system: not part of every start (triage reads OsFacts from here)

    import distro  # only on such a system

    for path in LEGACY_RELEASE_PATHS:
        text = host.read_text(path)
        if isinstance(text, Unavailable) or not text.strip():
            continue
        with tempfile.TemporaryDirectory(prefix="gpu-doctor-release-") as folder:
            copy = Path(folder) / Path(path).name
            copy.write_text(text.splitlines()[0] + "\n", encoding="utf-8")
            parsed = distro.LinuxDistribution(
                include_lsb=False,
                include_uname=False,
                include_oslevel=False,
                os_release_file=str(Path(folder) / "os-release"),  # absent: only the release line counts
                distro_release_file=str(copy),
            )
            found = {
                "ID": parsed.id(),
                "PRETTY_NAME": parsed.name(pretty=True),
                "VERSION_ID": parsed.version(),
            }
        return path, {key: value for key, value in found.items() if value}
    return None


def detect_container(host: Host) -> str | None:
    """Markers the runtimes leave (hardware.md §3.7); cgroup v2 paths prove nothing, so they are not used."""
    env = host.env()
    if env.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    if host.exists(DOCKERENV) and booted_from_image(host) is None:
        return "docker"
    if host.exists("/run/.containerenv"):
        return "podman"
    value = env.get("container")
    return value or None


def gather_cpu(host: Host) -> CpuFacts:
    text = host.read_text("/proc/cpuinfo")
    if isinstance(text, Unavailable):
        return CpuFacts(model=text, logical_cpus=text)
    model, count = parse_cpuinfo(text)
    return CpuFacts(
        model=model or Unavailable(Reason.UNPARSEABLE, "no model name in /proc/cpuinfo"),
        logical_cpus=count or Unavailable(Reason.UNPARSEABLE, "no processor lines in /proc/cpuinfo"),
    )


def _strip(value: str | Unavailable) -> Maybe[str]:
    if isinstance(value, Unavailable):
        return value
    return value.strip() or Unavailable(Reason.UNPARSEABLE, "empty")
