"""Write the eGPU fixture hosts (issue 3/6, item 7): `python -m tools.fixture_hosts_egpu`.

An authorized Thunderbolt enclosure with its GPU behind the tunnel, an unauthorized one, and the same with the
firmware's `dponly` security level, on the sysfs trees of tests/fixtures/sysfs-trees. Sources of every value:
tests/fixtures/hosts/README.md. expected.json is written by hand, never here.
"""

from __future__ import annotations

import json
import sys

from tools.fixture_host_parts import ARCH_CU12X, CUDNN_9_1, cuda_torch, no_driver_runtime
from tools.fixture_host_texts import AMD_VENDOR, MODINFO, MODINFO_NOT_FOUND, UBUNTU_2204, UBUNTU_2404, pci_ids
from tools.fixture_host_tree import SYSFS_TREES, HostTree, python_probe
from tools.fixture_torch_probes import dist, ok, packages

# --- egpu-razer-core-authorized ------------------------------------------------------------------------


def egpu_authorized() -> HostTree:
    tree = SYSFS_TREES / "egpu-thunderbolt-authorized"
    host = HostTree(
        "egpu-razer-core-authorized",
        "RX 5700 XT eGPU in a Titan Ridge (Razer Core X Chroma) enclosure on an AMD USB4 laptop, authorized: "
        "amdgpu bound behind the tunnel, no NVIDIA GPU (sysfs-trees/egpu-thunderbolt-authorized; "
        "tests/fixtures/hosts/README.md)",
        python="/home/user/venv/bin/python",
    )
    host.copy_tree(tree)
    host.commands.extend(json.loads((tree / "commands.json").read_text(encoding="utf-8")))
    gpu = "pci0000:00/0000:00:03.1/0000:62:00.0/0000:63:01.0/0000:64:00.0/0000:65:00.0/0000:66:00.0"
    host.bind(gpu, "amdgpu")
    host.text("/sys/module/amdgpu/initstate", "live\n")
    host.text("/etc/os-release", UBUNTU_2404)
    host.text(
        "/usr/share/misc/pci.ids",
        pci_ids(AMD_VENDOR, "731f  Navi 10 [Radeon RX 5600 OEM/5600 XT / 5700/5700 XT]"),
    )
    host.marker("/dev/null", "/usr/bin/boltctl", "/usr/sbin/modinfo")
    host.marker("/dev/kfd", "/dev/dri/card0", "/dev/dri/renderD128")  # amdgpu's nodes for the one GPU
    host.command(MODINFO, stderr=MODINFO_NOT_FOUND, returncode=1)
    site = "/home/user/venv/lib/python3.12/site-packages"
    host.probes = {
        "python_env": python_probe("/home/user/venv/bin/python", "3.12.3", "/home/user/venv"),
        "torch_packages": ok(
            json.dumps(
                {
                    **packages(site, "2.5.1+cpu", None, [dist("torch", "2.5.1+cpu", site)]),
                    "user_site_enabled": False,
                }
            )
        ),
    }
    return host


# --- egpu-not-authorized --------------------------------------------------------------------------------

# `boltctl list` for the two devices of the kernel-doc listing, in the ASCII form bolt prints when stdout is not a
# terminal (doctor/facts/boltctl.py). Constructed: no capture of a "connected" (unauthorized) device was found;
# labels, names, vendors and uuids are the sysfs values, status "connected" is bolt's word for plugged but not
# authorized (hardware.md §2.2), "stored: no" because bolt has never seen them.
BOLT_UNAUTHORIZED = """ * Apple Thunderbolt to FireWire Adapter
   |- type:          peripheral
   |- name:          Thunderbolt to FireWire Adapter
   |- vendor:        Apple, Inc.
   |- uuid:          e0376f00-0300-0100-ffff-ffffffffffff
   |- status:        connected
   `- stored:        no

 * inXtron AKiTiO Thunder3 PCIe Box
   |- type:          peripheral
   |- name:          AKiTiO Thunder3 PCIe Box
   |- vendor:        inXtron
   |- uuid:          dc010000-0000-8508-a22d-32ca6421cb16
   |- status:        connected
   `- stored:        no

"""


def egpu_unauthorized() -> HostTree:
    host = HostTree(
        "egpu-not-authorized",
        "Laptop with an AKiTiO Thunder3 PCIe Box plugged in but not authorized (security 'secure'): no GPU on "
        "the PCI bus, no NVIDIA driver yet, torch 2.5.1+cu124 in a venv (kernel thunderbolt.rst listing; "
        "tests/fixtures/hosts/README.md)",
        python="/home/user/venv/bin/python",
    )
    host.copy_tree(SYSFS_TREES / "egpu-thunderbolt-unauthorized")
    host.text("/etc/os-release", UBUNTU_2204)
    host.marker("/dev/null", "/usr/bin/boltctl", "/usr/sbin/modinfo")
    host.command(["boltctl", "list"], stdout=BOLT_UNAUTHORIZED)
    host.command(MODINFO, stderr=MODINFO_NOT_FOUND, returncode=1)
    venv = "/home/user/venv"
    site = f"{venv}/lib/python3.10/site-packages"
    host.probes["python_env"] = python_probe(f"{venv}/bin/python", "3.10.12", venv)
    cuda_torch(host, site, "2.5.1+cu124", "12.4", [("nvidia-cudnn-cu12", "9.1.0.70")], CUDNN_9_1)
    host.probes["torch_runtime"] = no_driver_runtime(
        site, "2.5.1+cu124", "12.4", ARCH_CU12X, f"{venv}/bin/python", 90100
    )
    return host


def egpu_dponly() -> HostTree:
    """The same laptop and enclosure with the firmware's Thunderbolt security set to "DisplayPort and USB"."""
    host = egpu_unauthorized()
    host.name = "egpu-firmware-dponly"
    host.description = (
        "The egpu-not-authorized laptop with the firmware's Thunderbolt security level at 'dponly' (DisplayPort "
        "and USB only): no PCIe tunnel can exist whatever bolt does (sysfs-bus-thunderbolt ABI, hardware.md "
        "§2.1; tests/fixtures/hosts/README.md)"
    )
    domain = "pci0000:00/0000:00:1c.4/0000:05:00.0/0000:06:00.0/0000:07:00.0/domain0"
    host.text(f"/sys/devices/{domain}/security", "dponly\n")
    return host


BUILDERS = (egpu_authorized, egpu_unauthorized, egpu_dponly)


def main() -> int:
    for build in BUILDERS:
        print(build().write())
    return 0


if __name__ == "__main__":
    sys.exit(main())
