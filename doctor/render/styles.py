"""How statuses and areas look in every renderer (light: the TUI's first paint imports it)."""

from __future__ import annotations

from gpu_doctor.model import Status

STYLES = {
    Status.PASS: "green",
    Status.WARN: "yellow",
    Status.FAIL: "bold red",
    Status.SKIP: "dim",
    Status.UNKNOWN: "magenta",
    Status.CRASH: "bold magenta",
}
AREA_TITLES = {
    "gpu": "GPUs",
    "driver": "Driver",
    "pcie": "PCIe",
    "egpu": "eGPU (Thunderbolt/USB4)",
    "amd": "AMD",
    "env": "Environment",
    "smoke": "Smoke test",
    "probe": "Gathering facts",
    "plugin": "Plugins",
}
