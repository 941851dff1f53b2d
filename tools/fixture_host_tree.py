"""Build a fixture host (tests/fixtures/hosts/<name>/) from parts, in the layout of docs/capture-format.md.

A host is a fake root (files, empty marker files, relative symlinks, sysfs trees copied from
tests/fixtures/sysfs-trees and storage-trees) plus host.json, commands.json, nvml.json and probes.json.
`expected.json` is written by hand and never touched here. Used by tools/fixture_hosts_{egpu,links,platform}.py;
where each value comes from is in tests/fixtures/hosts/README.md.
"""

from __future__ import annotations

import json
import posixpath
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.fixture_torch_probes import ok

REPO = Path(__file__).resolve().parent.parent
HOSTS = REPO / "tests" / "fixtures" / "hosts"
SYSFS_TREES = REPO / "tests" / "fixtures" / "sysfs-trees"
STORAGE_TREES = REPO / "tests" / "fixtures" / "storage-trees"
PCI_DEVICES = "/sys/bus/pci/devices"
PCI_DRIVERS = "/sys/bus/pci/drivers"
STD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass
class HostTree:
    """Everything one fixture host holds; `write()` replaces its root/ and JSON files (not expected.json)."""

    name: str
    description: str
    python: str | None = "/usr/bin/python3"
    env: dict[str, str] = field(default_factory=lambda: {"PATH": STD_PATH})
    file_errors: dict[str, str] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)  # host path -> host-absolute target
    trees: list[Path] = field(default_factory=list)  # capture roots whose contents are copied first
    commands: list[dict[str, Any]] = field(default_factory=list)
    nvml: dict[str, Any] | None = None  # None: no nvml.json (libnvidia-ml not installed)
    probes: dict[str, dict[str, Any]] = field(default_factory=dict)

    # --- the root tree ------------------------------------------------------------------------------------

    def text(self, path: str, content: str) -> None:
        self.files[path] = content.encode("utf-8")

    def binary(self, path: str, data: bytes) -> None:
        self.files[path] = data

    def marker(self, *paths: str) -> None:
        """Empty files: device nodes, libraries and programs whose contents are never read."""
        for path in paths:
            self.files[path] = b""

    def link(self, path: str, target: str) -> None:
        """A symlink; `target` is host-absolute (written relative) or already relative."""
        self.links[path] = target

    def copy_tree(self, capture: Path) -> None:
        """Copy another capture's root/ (a sysfs or storage tree) under this host's root, links kept."""
        self.trees.append(capture / "root")

    def pci_function(
        self,
        devpath: str,
        vendor: int,
        device: int | None,
        klass: int,
        *,
        subsystem: tuple[int, int] | None = None,
        driver: str | None = None,
    ) -> None:
        """A PCI function at /sys/devices/<devpath>: ids, its bus link and, when bound, its driver links."""
        base = f"/sys/devices/{devpath}"
        bdf = posixpath.basename(devpath)
        self.text(f"{base}/vendor", f"0x{vendor:04x}\n")
        if device is not None:
            self.text(f"{base}/device", f"0x{device:04x}\n")
        self.text(f"{base}/class", f"0x{klass:06x}\n")
        if subsystem is not None:
            self.text(f"{base}/subsystem_vendor", f"0x{subsystem[0]:04x}\n")
            self.text(f"{base}/subsystem_device", f"0x{subsystem[1]:04x}\n")
        self.link(f"{PCI_DEVICES}/{bdf}", base)
        if driver is not None:
            self.bind(devpath, driver)

    def bind(self, devpath: str, driver: str) -> None:
        """`driver -> .../bus/pci/drivers/<name>` and the driver's link back, as the kernel makes them."""
        base = f"/sys/devices/{devpath}"
        self.link(f"{base}/driver", f"{PCI_DRIVERS}/{driver}")
        self.link(f"{PCI_DRIVERS}/{driver}/{posixpath.basename(devpath)}", base)

    def pcie_link(self, devpath: str, current: tuple[str, int], maximum: tuple[str, int] | None) -> None:
        """`current_link_*` and, when known, `max_link_*` (kernel 5.7+ strings such as `16.0 GT/s PCIe`)."""
        base = f"/sys/devices/{devpath}"
        self.text(f"{base}/current_link_speed", current[0] + "\n")
        self.text(f"{base}/current_link_width", f"{current[1]}\n")
        if maximum is not None:
            self.text(f"{base}/max_link_speed", maximum[0] + "\n")
            self.text(f"{base}/max_link_width", f"{maximum[1]}\n")

    # --- recordings -----------------------------------------------------------------------------------------

    def command(
        self,
        argv: list[str],
        stdout: str = "",
        stderr: str = "",
        returncode: int = 0,
        status: str | None = None,
    ) -> None:
        state = status or ("ok" if returncode == 0 else "nonzero")
        self.commands.append(
            {"argv": argv, "status": state, "returncode": returncode, "stdout": stdout, "stderr": stderr}
        )

    # --- output -------------------------------------------------------------------------------------------------

    def write(self, hosts: Path = HOSTS) -> Path:
        """Write into `hosts`/<name>/ (the fixture folder; a temporary folder in the regeneration test)."""
        directory = hosts / self.name
        root = directory / "root"
        if root.exists():
            shutil.rmtree(root)
        root.mkdir(parents=True)
        for tree in self.trees:
            shutil.copytree(tree, root, symlinks=True, dirs_exist_ok=True)
        for path, data in sorted(self.files.items()):
            local = root / path.lstrip("/")
            local.parent.mkdir(parents=True, exist_ok=True)
            local.write_bytes(data)
        for path, target in sorted(self.links.items()):
            local = root / path.lstrip("/")
            local.parent.mkdir(parents=True, exist_ok=True)
            relative = (
                posixpath.relpath(target, posixpath.dirname(path)) if target.startswith("/") else target
            )
            if local.is_symlink() or local.exists():
                local.unlink()
            local.symlink_to(relative)
        meta = {
            "description": self.description,
            "python": self.python,
            "env": self.env,
            "file_errors": self.file_errors,
        }
        _dump(directory / "host.json", meta)
        _dump(directory / "commands.json", self.commands)
        _dump(directory / "probes.json", self.probes)
        nvml_file = directory / "nvml.json"
        if self.nvml is None:
            nvml_file.unlink(missing_ok=True)
        else:
            _dump(nvml_file, self.nvml)
        return directory


def _dump(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# --- NVML answers (nvml.json) ---------------------------------------------------------------------------------

MIB = 1 << 20


def nvml_device(
    name: str,
    uuid: str,
    bus_id: str,
    device_vendor: int,
    memory_mib: int,
    cc: tuple[int, int],
    persistence: int | None,
    gen: tuple[int, int, int],
    width: tuple[int, int],
) -> dict[str, Any]:
    """One GPU as nvidia-smi -q shows it: gen = (current, max, device max), width = (current, max)."""
    return {
        "name": name,
        "uuid": uuid,
        "pci_bus_id": bus_id,
        "pci_device_id": device_vendor,
        "memory_total_bytes": memory_mib * MIB,
        "compute_capability": list(cc),
        "persistence_mode": (
            persistence
            if persistence is not None
            else {"error": "NotSupported", "code": 3, "message": "Not Supported"}
        ),
        "pcie_link_gen_current": gen[0],
        "pcie_link_gen_max": gen[1],
        "pcie_link_gen_gpu_max": gen[2],
        "pcie_link_width_current": width[0],
        "pcie_link_width_max": width[1],
    }


def nvml_answers(driver: str, cuda: int, devices: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "init": None,
        "system": {"driver_version": driver, "nvml_version": f"12.{driver}", "cuda_driver_version": cuda},
        "devices": devices,
    }


def nvml_failing(error: str, code: int, message: str) -> dict[str, Any]:
    """nvmlInit itself fails (pynvml's class suffix, the NVML_ERROR_* code, nvmlErrorString's text)."""
    return {"init": {"error": error, "code": code, "message": message}, "system": {}, "devices": []}


# --- probe recordings (probes.json) -------------------------------------------------------------------------


def python_probe(
    executable: str,
    version: str,
    prefix: str,
    base: str = "/usr",
    machine: str = "x86_64",
    conda: str | None = None,
) -> dict[str, Any]:
    """The python_env probe's output for an interpreter (machine and conda prefix settable)."""
    out = {
        "executable": executable,
        "version": version,
        "implementation": "CPython",
        "machine": machine,
        "system": "Linux",
        "prefix": prefix,
        "base_prefix": base,
        "in_virtualenv": prefix != base,
        "conda_prefix": conda,
        "user_site_enabled": prefix == base,
    }
    return {**ok(json.dumps(out)), "argv": [executable, "-c", "<probe:python_env>"]}
