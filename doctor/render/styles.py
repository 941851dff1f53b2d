"""How statuses and areas look in every renderer (light: the TUI's first paint imports it)."""

from __future__ import annotations

import os

from torch_gpu_doctor.model import Status

STYLES = {
    Status.PASS: "green",
    Status.WARN: "yellow",
    Status.FAIL: "bold red",
    Status.SKIP: "dim",
    Status.UNKNOWN: "magenta",
    Status.CRASH: "bold magenta",
}
# Under NO_COLOR the TUI turns every colour into the grey of its luminance: "bold red" becomes grey 237 on
# the grey 235 of the background, unreadable (seen in tmux). Without colour, weight and reverse video tell.
NO_COLOR_STYLES = {
    Status.PASS: "",
    Status.WARN: "bold",
    Status.FAIL: "bold reverse",
    Status.SKIP: "dim",
    Status.UNKNOWN: "italic",
    Status.CRASH: "bold reverse",
}


def no_color() -> bool:
    """NO_COLOR is set to something (no-color.org: an empty value does not count)."""
    return bool(os.environ.get("NO_COLOR"))


def style_of(status: Status) -> str:
    """The TUI's style for a status: its colour, or under NO_COLOR a style that reads without one."""
    return (NO_COLOR_STYLES if no_color() else STYLES)[status]


AREA_TITLES = {
    "gpu": "GPUs",
    "driver": "Driver",
    "pcie": "PCIe",
    "egpu": "eGPU (Thunderbolt/USB4)",
    "amd": "AMD",
    "env": "Environment",
    "nccl": "NCCL",
    "smoke": "Smoke test",
    "probe": "Gathering facts",
    "plugin": "Plugins",
}
