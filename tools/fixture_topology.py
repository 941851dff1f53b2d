"""Add NVML's topology answers to the multi-GPU fixture hosts (issue 20, gpu.topology): `python -m
tools.fixture_topology` (run by tools/regen.py).

Each host gets the matrix `nvidia-smi topo -m` (and `topo -p2p rw`) printed on a real machine of its kind, as
posted in a public thread, turned into the answers NVML gives: `topology_common_ancestor`, `p2p_status_read`,
`p2p_status_write` (one list per GPU, one entry per other GPU) and `nvlinks` (the active links). Where the
thread printed NV# the PCIe level under it is not shown: the NUMA affinity of the same printout places the pair
(one CPU: NODE, two: SYS). The NVSwitches' PCI addresses are not in the printout; only their type matters to
the check, so they are written as the switches' positions on the baseboard (0000:0N:00.0).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HOSTS = ROOT / "tests" / "fixtures" / "hosts"
LEVELS = {"PIX": 10, "PXB": 20, "PHB": 30, "NODE": 40, "SYS": 50}
P2P = {"OK": 0, "CNS": 1, "GNS": 2, "TNS": 3, "DR": 4, "NS": 5, "U": 6}
KEYS = ("nvlinks", "topology_common_ancestor", "p2p_status_read", "p2p_status_write")

# host -> (source, the matrix rows as printed (GPU columns only), NUMA node of each GPU, P2P status, NVSwitches)
TOPOLOGIES: dict[str, dict[str, Any]] = {
    "h100-sxm-x8-server": {
        "source": "https://github.com/HazyResearch/ThunderKittens/issues/167 (nvidia-smi topo -m, HGX H100 x8)",
        "rows": [["X" if i == j else "NV18" for j in range(8)] for i in range(8)],
        "numa": [0, 0, 0, 0, 1, 1, 1, 1],
        "p2p": "OK",  # NVLink peers: peer-to-peer works (NVML answers OK for read and write)
        "switches": 4,  # HGX H100: four third-generation NVSwitches; each GPU's 18 links spread over them
    },
    "rtx4090-workstation-healthy": {
        "source": "https://github.com/NVIDIA/go-gpuallocator/issues/17 (nvidia-smi topo -m, 8x RTX 4090 server)",
        "rows": [["X" if i == j else "SYS" for j in range(8)] for i in range(8)],
        "numa": [0, 0, 0, 0, 1, 1, 1, 1],
        # GeForce RTX 40/50: `topo -p2p rw` prints GNS between every pair (noonghunna/club-3090#1229, 2x 5090)
        "p2p": "GNS",
        "switches": 0,
    },
    "rtx3090-x8-slots": {
        # the fixture's two root ports of one host bridge (00:03.1, 00:03.2) make the pair PHB, as nvidia-smi
        # prints two x8 slots of one CPU (noonghunna/club-3090#1229); `topo -p2p rw` between two RTX 3090s
        # printed NS on the 2x 3090 rig of noonghunna/club-3090#1125
        "source": "the fixture's PCI tree; P2P from https://github.com/noonghunna/club-3090/issues/1125",
        "rows": [["X", "PHB"], ["PHB", "X"]],
        "numa": [0, 0],
        "p2p": "NS",
        "switches": 0,
    },
}


def answers(topology: dict[str, Any], bus_ids: list[str]) -> list[dict[str, Any]]:
    """The topology keys of each GPU's nvml.json entry."""
    rows, numa, p2p = topology["rows"], topology["numa"], P2P[topology["p2p"]]
    devices = []
    for i, row in enumerate(rows):
        levels: list[int | None] = []
        links: list[dict[str, str]] = []
        for j, cell in enumerate(row):
            if i == j:
                levels.append(None)
                continue
            if cell.startswith("NV"):
                levels.append(LEVELS["NODE"] if numa[i] == numa[j] else LEVELS["SYS"])
                if not topology["switches"]:
                    links += [{"remote_bus_id": bus_ids[j], "remote_type": "gpu"}] * int(cell[2:])
            else:
                levels.append(LEVELS[cell])
        if topology["switches"]:
            count = int(next(c for c in row if c.startswith("NV"))[2:])
            links = [
                {"remote_bus_id": f"00000000:0{k % topology['switches'] + 1}:00.0", "remote_type": "switch"}
                for k in range(count)
            ]
        status = [None if i == j else p2p for j in range(len(rows))]
        devices.append(
            {
                "nvlinks": links,
                "topology_common_ancestor": levels,
                "p2p_status_read": status,
                "p2p_status_write": list(status),
            }
        )
    return devices


# hosts whose generator adds the topology itself (tools/fixture_hosts_links.py): its test compares the whole file
GENERATED = frozenset({"rtx3090-x8-slots"})


def add_topology(nvml: dict[str, Any], host: str) -> None:
    """Put the host's topology answers into its nvml.json document, in place."""
    bus_ids = [d["pci_bus_id"] for d in nvml["devices"]]
    for device, extra in zip(nvml["devices"], answers(TOPOLOGIES[host], bus_ids), strict=True):
        device.update(extra)


def main() -> int:
    for host, topology in TOPOLOGIES.items():
        if host in GENERATED:
            continue
        path = HOSTS / host / "nvml.json"
        nvml = json.loads(path.read_text(encoding="utf-8"))
        add_topology(nvml, host)
        path.write_text(json.dumps(nvml, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}: topology from {topology['source']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
