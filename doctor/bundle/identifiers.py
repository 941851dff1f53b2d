"""This machine's identifiers, enumerated so that redaction replaces exactly them (DESIGN §4: bundles).

`machine_identifiers` asks the live machine (host names, users and homes, interface addresses, DMI serials,
machine-id, container ids and pod UIDs); `capture_identifiers` reads a capture's answers (GPU UUIDs and serials,
Thunderbolt unique ids, container ids and pod UIDs in its cgroup and mountinfo files).
The sources that are not files (socket, psutil) come through `IdentitySources`, so tests can plant values.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import socket
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import field
from enum import Enum
from pathlib import Path, PurePosixPath
from typing import Any

from torch_gpu_doctor.host import layout
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.tokens import tokens_in
from torch_gpu_doctor.unavailable import Unavailable


class Kind(Enum):
    """What an identifier is; the value names the pseudonym (`host-1`) and the manifest's redaction list."""

    HOSTNAME = "host"
    USER = "user"
    HOME = "home"
    IP = "ip"
    MAC = "mac"
    GPU_UUID = "GPU-uuid"
    THUNDERBOLT_UUID = "tb-uuid"
    SERIAL = "serial"
    DMI_UUID = "dmi-uuid"
    MACHINE_ID = "machine-id"
    CONTAINER = "container"  # a Docker/containerd/CRI-O container id (64 hex), and its 12-char short form
    POD = "pod"  # a Kubernetes pod UID
    FS_UUID = "fs-uuid"  # a file system's UUID (`root=UUID=...`), found in the kernel log only
    TOKEN = "token"  # a token-shaped value in an environment variable or a path (torch_gpu_doctor.tokens)


@dataclass(frozen=True)
class Identifier:
    kind: Kind
    value: str
    # a home directory's user: /home/alice -> /home/<alice's pseudonym>; a short container id's full id
    owner: str | None = None


# Account names that say nothing about a person and also name distributions or system paths: replacing
# "ubuntu" or "root" everywhere would change os-release and /root paths, and so the findings of a replay.
GENERIC_USERS = frozenset(
    {"root", "nobody", "ubuntu", "debian", "centos", "fedora", "admin", "user", "ec2-user", "vagrant", "pi"}
    | {"jovyan", "cloud-user", "opc", "azureuser", "runner", "docker", "nvidia", "guest"}
)
LOCAL_HOSTNAMES = frozenset({"localhost", "localhost.localdomain", "localhost6", "ip6-localhost"})
# Host names an installer or an image gives every machine: they name a distribution, not this machine.
GENERIC_HOSTNAMES = (
    LOCAL_HOSTNAMES
    | GENERIC_USERS
    | frozenset(
        {"arch", "archlinux", "rocky", "almalinux", "rhel", "opensuse", "manjaro", "pop-os", "kali", "alpine"}
        | {"raspberrypi", "linux", "server", "host", "node", "gpu", "workstation", "desktop", "laptop"}
    )
)
# Folder names every root has, whether or not a capture recorded them: a user `local` must not turn
# /usr/local into /usr/user-1.
FILESYSTEM_WORDS = frozenset(
    {"bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "local", "media", "mnt", "opt"}
    | {"proc", "root", "run", "sbin", "share", "srv", "sys", "tmp", "usr", "var", "include", "src", "snap"}
)
DMI_FILES = ("product_serial", "board_serial", "chassis_serial", "product_uuid")
MACHINE_ID_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")
_PLACEHOLDER = lazy(
    r"o\.?e\.?m|not (specified|applicable|available|present)|default string|system serial|none|"
    r"to be filled|^0+$|^f+$|^x+$|^(0123456789|123456789|1234567890)$|^\W*$",
    re.IGNORECASE,
)
FQDN_TIMEOUT_S = 2.0  # getfqdn asks DNS; a broken resolver must not hold the bundle up


def is_placeholder(value: str) -> bool:
    """A firmware filler ("To Be Filled By O.E.M.", "0", "Default string"), not an identifier."""
    return len(value) < 4 or bool(_PLACEHOLDER.search(value.strip()))


def _fqdn() -> str:
    result: list[str] = []
    worker = threading.Thread(target=lambda: result.append(socket.getfqdn()), daemon=True)
    worker.start()
    worker.join(FQDN_TIMEOUT_S)
    return result[0] if result else ""


def _interfaces() -> dict[str, list[tuple[str, str]]]:
    """{interface: [(family, address)]} with family "ipv4", "ipv6" or "mac"."""
    import psutil

    families = {socket.AF_INET: "ipv4", socket.AF_INET6: "ipv6", psutil.AF_LINK: "mac"}
    return {
        name: [(families[a.family], a.address) for a in addrs if a.family in families]
        for name, addrs in psutil.net_if_addrs().items()
    }


def _current_user() -> str | None:
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return None


@dataclass(frozen=True)
class IdentitySources:
    """What the live machine says about itself outside its files (replaced by fakes in tests)."""

    hostnames: Callable[[], Iterable[str]] = lambda: (socket.gethostname(), _fqdn())
    interfaces: Callable[[], dict[str, list[tuple[str, str]]]] = _interfaces
    current_user: Callable[[], str | None] = _current_user
    extra: tuple[Identifier, ...] = field(default=())


def parse_passwd(text: str) -> list[tuple[str, int, str]]:
    """(name, uid, home) of each well-formed /etc/passwd line."""
    entries = []
    for line in text.splitlines():
        fields = line.split(":")
        if len(fields) >= 7 and fields[2].isdigit():
            entries.append((fields[0], int(fields[2]), fields[5]))
    return entries


def _first_line(host: Host, path: str) -> str:
    text = host.read_text(path)
    return (
        "" if isinstance(text, Unavailable) else text.strip().splitlines()[0].strip() if text.strip() else ""
    )


def _hostnames(host: Host, sources: IdentitySources) -> Iterator[Identifier]:
    names = [
        *sources.hostnames(),
        _first_line(host, "/etc/hostname"),
        _first_line(host, "/proc/sys/kernel/hostname"),
    ]
    for raw in names:
        name = raw.strip().rstrip(".")
        if len(name) >= 2 and name.lower() not in LOCAL_HOSTNAMES:
            yield Identifier(Kind.HOSTNAME, name)
            short = name.split(".", 1)[0]
            if short != name and len(short) >= 2 and short.lower() not in LOCAL_HOSTNAMES:
                yield Identifier(Kind.HOSTNAME, short)


def _users(host: Host, sources: IdentitySources) -> Iterator[Identifier]:
    env = host.env()
    passwd = host.read_text("/etc/passwd")
    entries = [] if isinstance(passwd, Unavailable) else parse_passwd(passwd)
    homes = {name: home for name, _, home in entries}
    system = {name for name, uid, _ in entries if uid < 1000 or uid == 65534}
    names = [sources.current_user(), env.get("USER"), env.get("LOGNAME"), env.get("SUDO_USER")]
    names += [name for name, uid, _ in entries if 1000 <= uid < 65534]
    for name in names:
        if not name or name in GENERIC_USERS or (name in system and name != env.get("SUDO_USER")):
            continue
        yield Identifier(Kind.USER, name)
        home = homes.get(name)
        if home and home not in ("/", "/nonexistent") and PurePosixPath(home).name != name:
            yield Identifier(Kind.HOME, home.rstrip("/"), owner=name)
    home = env.get("HOME", "").rstrip("/")
    owner = sources.current_user()
    if home and owner and owner not in GENERIC_USERS and PurePosixPath(home).name != owner:
        yield Identifier(Kind.HOME, home, owner=owner)


def _addresses(sources: IdentitySources) -> Iterator[Identifier]:
    for name, addresses in sources.interfaces().items():
        if name == "lo":
            continue
        for family, scoped in addresses:
            address = scoped.split("%", 1)[0]  # fe80::1%eth0
            if family == "mac":
                if address and address.strip("0:") and address.lower() != "ff:ff:ff:ff:ff:ff":
                    yield Identifier(Kind.MAC, address.lower())
            elif address and not address.startswith("127.") and address not in ("::1", "0.0.0.0", "::"):  # noqa: S104
                yield Identifier(Kind.IP, address.lower())


def _firmware(host: Host) -> Iterator[Identifier]:
    for name in DMI_FILES:
        value = _first_line(host, f"/sys/class/dmi/id/{name}")
        if value and not is_placeholder(value):
            yield Identifier(Kind.DMI_UUID if name == "product_uuid" else Kind.SERIAL, value)
    for path in MACHINE_ID_FILES:
        value = _first_line(host, path)
        if re.fullmatch(r"[0-9a-fA-F]{32}", value):
            yield Identifier(Kind.MACHINE_ID, value.lower())


# Where a runtime writes its container's id (64 hex): cgroup v1 `/docker/<id>`, systemd scopes
# `docker-<id>.scope` / `cri-containerd-<id>.scope` / `crio-<id>.scope` / `libpod-<id>.scope`, kubelet's cgroupfs
# `/kubepods/besteffort/pod<uid>/<id>`, and the files Docker bind-mounts into a container
# (`/var/lib/docker/containers/<id>/hostname` in mountinfo; Podman: `overlay-containers/<id>/userdata/...`;
# containerd's CRI: `/run/containerd/io.containerd.grpc.v1.cri/sandboxes/<id>/hostname`).
_CONTAINER_ID = lazy(
    r"(?:/docker/|docker-|containers/|sandboxes/|cri-containerd-|crio-|conmon-|libpod-|/pod[0-9a-f_-]{36}/)"
    r"(?P<id>[0-9a-f]{64})(?![0-9A-Za-z])"
)
# A pod's UID: `/var/lib/kubelet/pods/<uid>/...` (mountinfo), cgroupfs `/kubepods/burstable/pod<uid>/`, and
# systemd's `kubepods-besteffort-pod<uid with _ for ->.slice`.
_POD_UID = lazy(
    r"(?:/pods/|pod)(?P<uid>[0-9a-f]{8}(?P<sep>[-_])[0-9a-f]{4}(?P=sep)[0-9a-f]{4}(?P=sep)[0-9a-f]{4}"
    r"(?P=sep)[0-9a-f]{12})(?![0-9A-Za-z])"
)
SHORT_CONTAINER_ID = 12  # `docker ps` and a container's default host name show the id's first 12 characters
CONTAINER_FILES = ("/proc/1/cgroup", "/proc/self/cgroup", "/proc/self/mountinfo", "/proc/1/mountinfo")


def container_identifiers(text: str) -> Iterator[Identifier]:
    """Container ids (with their short form, owned by the full id) and pod UIDs in cgroup or mountinfo text."""
    for match in _CONTAINER_ID.finditer(text):
        full = match["id"]
        yield Identifier(Kind.CONTAINER, full)
        yield Identifier(Kind.CONTAINER, full[:SHORT_CONTAINER_ID], owner=full)
    for match in _POD_UID.finditer(text):
        yield Identifier(Kind.POD, match["uid"].replace("_", "-"))


def _containers(host: Host) -> Iterator[Identifier]:
    for path in CONTAINER_FILES:
        text = host.read_text(path)
        if not isinstance(text, Unavailable):
            yield from container_identifiers(text)


def machine_identifiers(host: Host, sources: IdentitySources | None = None) -> tuple[Identifier, ...]:
    """Every identifier of the live machine behind `host`, in a stable order, without duplicates."""
    sources = sources or IdentitySources()
    found = [
        *_hostnames(host, sources),
        *_users(host, sources),
        *_addresses(sources),
        *_firmware(host),
        *_containers(host),
        *sources.extra,
    ]
    return unique(found)


def unique(identifiers: Iterable[Identifier]) -> tuple[Identifier, ...]:
    seen: set[tuple[Kind, str]] = set()
    kept = []
    for item in identifiers:
        key = (item.kind, item.value.lower())
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return tuple(kept)


# Keys in the capture's JSON (nvml.json, facts.json) whose values identify one device.
_ID_KEYS = {
    "uuid": None,
    "unique_id": Kind.THUNDERBOLT_UUID,
    "serial": Kind.SERIAL,
    "serial_number": Kind.SERIAL,
}
_SMI_SERIAL = lazy(r"^\s*(?:Serial Number|Board Serial|GPU UUID)\s*:\s*(\S+)\s*$", re.MULTILINE)


def _json_ids(data: Any) -> Iterator[Identifier]:
    if isinstance(data, dict):
        for key, value in data.items():
            if key in _ID_KEYS and isinstance(value, str) and not is_placeholder(value):
                kind = _ID_KEYS[key]
                if kind is None:
                    kind = Kind.GPU_UUID if value.startswith(("GPU-", "MIG-")) else Kind.THUNDERBOLT_UUID
                yield Identifier(kind, value)
            else:
                yield from _json_ids(value)
    elif isinstance(data, list):
        for item in data:
            yield from _json_ids(item)


def identifiers_in_text(text: str) -> Iterator[Identifier]:
    """GPU UUIDs and serial numbers in `nvidia-smi -q` style text and /proc/driver/nvidia/gpus/*/information."""
    for match in _SMI_SERIAL.finditer(text):
        value = match.group(1)
        if not is_placeholder(value):
            yield Identifier(Kind.GPU_UUID if value.startswith(("GPU-", "MIG-")) else Kind.SERIAL, value)


def _os_release_words(root: Path) -> set[str]:
    words: set[str] = set()
    for name in ("etc/os-release", "usr/lib/os-release"):
        path = root / name
        try:
            text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
        except OSError:
            continue
        for line in text.splitlines():
            key, _, value = line.partition("=")
            if key.strip() in ("ID", "ID_LIKE", "VERSION_CODENAME", "UBUNTU_CODENAME"):
                words.update(value.strip().strip("\"'").lower().split())
    return words


def common_words(directory: Path) -> frozenset[str]:
    """Words that are never one machine's host or user name: the capture's distribution words, its folder
    top-level folder names (dev, usr, sys, ...), FILESYSTEM_WORDS (local, share, ...) and the generic host
    names."""
    root = directory / layout.ROOT_DIR
    words = set(FILESYSTEM_WORDS) | _os_release_words(root) | GENERIC_HOSTNAMES
    if root.is_dir():
        words.update(top.name.lower() for top in root.iterdir())  # never deeper: root/home/alice is alice
    return frozenset(words)


def without_common_words(found: Iterable[Identifier], words: frozenset[str]) -> tuple[Identifier, ...]:
    """Host and user names that are common words are left as they are (replacing them breaks a replay)."""
    return tuple(
        item
        for item in found
        if not (item.kind in (Kind.HOSTNAME, Kind.USER) and item.value.lower() in words)
    )


def _env_tokens(directory: Path, facts: Any) -> Iterator[Identifier]:
    """Token-shaped values of the environment variables (host.json's and the facts'): identifiers, so that a
    finding quoting `CUDA_VISIBLE_DEVICES=<token>` loses the token too."""
    maps: list[Any] = [facts.get("env") if isinstance(facts, dict) else None]
    try:
        host = json.loads((directory / layout.HOST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        host = None
    maps.append(host.get("env") if isinstance(host, dict) else None)
    for env in maps:
        for value in env.values() if isinstance(env, dict) else ():
            if isinstance(value, str):
                for token in tokens_in(value):  # a GPU's UUID keeps its kind: replays still read it as one
                    kind = Kind.GPU_UUID if token.startswith(("GPU-", "MIG-")) else Kind.TOKEN
                    yield Identifier(kind, token)


def capture_identifiers(directory: Path, facts: Any = None) -> tuple[Identifier, ...]:
    """Device identifiers a capture recorded: NVML and facts UUIDs, Thunderbolt unique_id, GPU serials,
    container ids and pod UIDs (cgroup and mountinfo files)."""
    found: list[Identifier] = []
    for name in (layout.NVML_FILE, layout.COMMANDS_FILE):
        path = directory / name
        if path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError, RecursionError):
                continue
            found += _json_ids(data)
            if name == layout.COMMANDS_FILE and isinstance(data, list):
                for entry in data:
                    if isinstance(entry, dict):
                        found += identifiers_in_text(str(entry.get("stdout", "")))
    if facts is not None:
        found += _json_ids(facts)
    found += _env_tokens(directory, facts)
    root = directory / layout.ROOT_DIR
    for path in sorted(root.glob("sys/bus/thunderbolt/devices/*/unique_id")):  # never `**`: sysfs has cycles
        if path.is_file() and not path.is_symlink():
            value = path.read_text(encoding="utf-8", errors="replace").strip()
            if value and not is_placeholder(value):
                found.append(Identifier(Kind.THUNDERBOLT_UUID, value))
    for path in sorted(root.glob("proc/driver/nvidia/gpus/*/information")):
        if path.is_file():
            found += identifiers_in_text(path.read_text(encoding="utf-8", errors="replace"))
    for pattern in ("proc/*/cgroup", "proc/*/mountinfo", "proc/*/mounts"):
        for path in sorted(root.glob(pattern)):
            if path.is_file() and not path.is_symlink():
                found += container_identifiers(path.read_text(encoding="utf-8", errors="replace"))
    return unique(found)
