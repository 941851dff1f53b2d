"""Which container runtime this runs in, and what of the NVIDIA driver it let in (hardware.md §3.7).

Markers, strongest first: Kubernetes' service variables and service-account mount; Apptainer/Singularity's
variables and `/.singularity.d`; `/run/.containerenv` (Podman and Buildah; empty unless `--privileged`, then
`engine="podman-<version>"` and name/id/image lines, containers/podman libpod/container_internal_common.go);
`/.dockerenv` (Docker); `$container` (Podman, systemd-nspawn, LXC set it for PID 1); `/run/systemd/container`
(systemd inside the container writes the same word); cgroup v1 paths of PID 1 (`/docker/<id>`, `/kubepods/...`,
`/lxc/<name>`). cgroup v2 shows `0::/` inside a cgroup namespace and proves nothing, so it is not used.
The GPU side is read where the checks need it: device nodes from the kernel facts, GPUs on the (not namespaced)
PCI bus from the pci facts, the driver libraries and the NVIDIA Container Toolkit's variables here.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from enum import Enum

from torch_gpu_doctor.facts.driver_libraries import (
    LIBCUDA,
    LIBNVML,
    LIBRARY_DIRS,
    LibraryFile,
    find_libraries,
)
from torch_gpu_doctor.facts.mountinfo import mount_for_path, read_mountinfo
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

CONTAINERENV = "/run/.containerenv"
DOCKERENV = "/.dockerenv"
DOCKERENV_MARKER = f"{DOCKERENV} exists"
SYSTEMD_CONTAINER = "/run/systemd/container"
PROC1_CGROUP = "/proc/1/cgroup"
K8S_SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
APPTAINER_DIR = "/.singularity.d"
PID2_COMM = "/proc/2/comm"
CONTAINER_ROOT_FILESYSTEMS = frozenset({"overlay", "fuse.fuse-overlayfs", "aufs", "shiftfs"})
_ENGINE = lazy(r"^([a-z]+)-")


class ContainerRuntime(str, Enum):
    DOCKER = "docker"
    PODMAN = "podman"
    KUBERNETES = "kubernetes"  # any engine under a kubelet: the pod spec decides what gets in
    APPTAINER = "apptainer"
    SINGULARITY = "singularity"  # SingularityCE / Singularity 3: same `--nv` flag as Apptainer
    LXC = "lxc"  # LXC and LXD / Incus
    OTHER = "other"  # systemd-nspawn, Buildah, an unknown `$container` value


@dataclass(frozen=True)
class ContainerFacts:
    runtime: ContainerRuntime | None  # None: no runtime left a marker
    markers: tuple[str, ...]  # every marker seen, as "<source>: <what>", for the evidence
    engine: Maybe[str]  # `engine=` of /run/.containerenv (podman-4.9.3); only privileged Podman containers
    driver_libraries: tuple[LibraryFile, ...]  # libcuda.so.1 / libnvidia-ml.so.1 wherever runtimes put them
    visible_devices: str | None  # NVIDIA_VISIBLE_DEVICES (None: unset); CUDA images set `all` themselves
    driver_capabilities: str | None  # NVIDIA_DRIVER_CAPABILITIES; the toolkit's default is `utility` only
    set_aside: tuple[str, ...] = ()  # markers seen but outweighed, each with why (a leftover /.dockerenv)


def parse_containerenv(text: str) -> dict[str, str]:
    """`key="value"` / `key=value` lines as Podman writes them (Go %q quoting); other lines are skipped."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, raw = line.partition("=")
        if not sep or not key.isidentifier():
            continue
        try:
            words = shlex.split(raw)
        except ValueError:
            continue
        values[key] = words[0] if words else ""
    return values


def cgroup_runtime(text: str) -> ContainerRuntime | None:
    """The runtime named by a cgroup v1 path of PID 1 (`12:devices:/docker/<id>`); v2's `0::/` names none."""
    for line in text.splitlines():
        path = line.split(":", 2)[-1]
        if "/kubepods" in path:
            return ContainerRuntime.KUBERNETES
        if "/docker/" in path or "/docker-" in path:
            return ContainerRuntime.DOCKER
        if "libpod" in path:
            return ContainerRuntime.PODMAN
        if path.startswith("/lxc/") or "lxc.payload" in path:
            return ContainerRuntime.LXC
    return None


def runtime_from_word(word: str) -> ContainerRuntime | None:
    """`$container` and /run/systemd/container: docker, podman, lxc, lxc-libvirt, systemd-nspawn, oci, ...

    systemd calls WSL a container too (`wsl`), but a WSL distribution is not one: None.
    """
    token = word.strip().lower()
    if not token or token == "wsl":
        return None
    for runtime in (ContainerRuntime.DOCKER, ContainerRuntime.PODMAN, ContainerRuntime.LXC):
        if token.startswith(runtime.value):
            return runtime
    return ContainerRuntime.OTHER


def gather_container(host: Host) -> ContainerFacts:
    env = host.env()
    found: list[tuple[ContainerRuntime, str]] = []
    engine = _markers(host, env, found)
    set_aside: tuple[str, ...] = ()
    if [why for _, why in found] == [DOCKERENV_MARKER] and (booted := booted_from_image(host)) is not None:
        set_aside, found = (f"{DOCKERENV_MARKER}, but {booted}",), []
    return ContainerFacts(
        runtime=found[0][0] if found else None,
        markers=tuple(why for _, why in found),
        engine=engine,
        driver_libraries=find_libraries(host, (LIBCUDA, LIBNVML), LIBRARY_DIRS),
        visible_devices=env.get("NVIDIA_VISIBLE_DEVICES"),
        driver_capabilities=env.get("NVIDIA_DRIVER_CAPABILITIES"),
        set_aside=set_aside,
    )


def booted_from_image(host: Host) -> str | None:
    """Why a lone /.dockerenv is a file left in an image this machine booted from, not a container; None
    when that cannot be shown (not readable, or it looks like a container after all)."""
    comm = host.read_text(PID2_COMM)
    if isinstance(comm, Unavailable) or comm.strip() != "kthreadd":
        return None
    mounts = read_mountinfo(host)
    root = None if isinstance(mounts, Unavailable) else mount_for_path(mounts, "/")
    if root is None or root.fs_type in CONTAINER_ROOT_FILESYSTEMS or not root.source.startswith("/dev/"):
        return None
    return (
        f"PID 2 is the kernel's kthreadd (no container's PID namespace) and / is {root.fs_type} on "
        f"{root.source}: a file left in the image this machine booted from"
    )


def _markers(host: Host, env: Mapping[str, str], found: list[tuple[ContainerRuntime, str]]) -> Maybe[str]:
    """Append every marker seen, strongest first; returns Podman's engine line."""
    if env.get("KUBERNETES_SERVICE_HOST"):
        found.append((ContainerRuntime.KUBERNETES, "KUBERNETES_SERVICE_HOST is set"))
    if host.is_dir(K8S_SERVICE_ACCOUNT):
        found.append((ContainerRuntime.KUBERNETES, f"{K8S_SERVICE_ACCOUNT} exists"))
    for prefix, runtime in (
        ("APPTAINER_", ContainerRuntime.APPTAINER),
        ("SINGULARITY_", ContainerRuntime.SINGULARITY),
    ):
        names = sorted(n for n in env if n in (f"{prefix}CONTAINER", f"{prefix}NAME"))
        if names:
            found.append((runtime, f"{names[0]} is set"))
    if host.is_dir(APPTAINER_DIR):
        found.append((ContainerRuntime.APPTAINER, f"{APPTAINER_DIR} exists"))
    engine = _containerenv(host, found)
    if host.exists(DOCKERENV):
        found.append((ContainerRuntime.DOCKER, DOCKERENV_MARKER))
    word = runtime_from_word(env.get("container", ""))
    if word is not None:
        found.append((word, f"$container={env['container']}"))
    _from_file(host, SYSTEMD_CONTAINER, found)
    cgroup = host.read_text(PROC1_CGROUP)
    from_cgroup = None if isinstance(cgroup, Unavailable) else cgroup_runtime(cgroup)
    if from_cgroup is not None:
        found.append((from_cgroup, f"{PROC1_CGROUP} names a {from_cgroup.value} cgroup"))
    return engine


def _containerenv(host: Host, found: list[tuple[ContainerRuntime, str]]) -> Maybe[str]:
    text = host.read_text(CONTAINERENV)
    if isinstance(text, Unavailable):
        if text.reason is Reason.NOT_FOUND:
            return text
        found.append((ContainerRuntime.PODMAN, f"{CONTAINERENV} exists ({text.reason.value})"))
        return text
    engine = parse_containerenv(text).get("engine")
    match = _ENGINE.match(engine or "")
    runtime = (
        ContainerRuntime.PODMAN if match is None or match.group(1) == "podman" else ContainerRuntime.OTHER
    )
    found.append((runtime, f"{CONTAINERENV} exists" + (f" (engine {engine})" if engine else "")))
    if engine:
        return engine
    return Unavailable(
        Reason.NOT_SUPPORTED, f"{CONTAINERENV} names no engine (Podman writes it with --privileged)"
    )


def _from_file(host: Host, path: str, found: list[tuple[ContainerRuntime, str]]) -> None:
    text = host.read_text(path)
    runtime = None if isinstance(text, Unavailable) else runtime_from_word(text)
    if runtime is not None and not isinstance(text, Unavailable):
        found.append((runtime, f"{path} says {text.strip()[:40]!r}"))
