"""Thunderbolt devices as bolt sees them: the text of `boltctl list` (samples/boltctl/, hardware.md §2.2).

boltctl has no machine-readable output. Its layout (gicmo/bolt `cli/boltctl.c` `print_device()`): a header
line ` ● <label>` then `   ├─ key:   value` lines, nested ones as `   │  ├─ key:  value`. When stdout is not a
terminal (as when the doctor runs it) bolt prints ASCII glyphs instead (`common/bolt-term.c`): `*`/`o` for the
circles, `|-`, `` `- ``, `| `; colours (ANSI) only on a terminal. Both forms parse the same.
"""

from __future__ import annotations

from enum import Enum

from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

BOLTCTL_ARGV = ("boltctl", "list")
BOLTCTL_TIMEOUT_S = 5.0  # asks boltd over D-Bus; a wedged daemon must not stall the run
_ANSI = lazy(r"\x1b\[[0-9;]*m")
# ● ○ (UTF-8) or * o (ASCII): one leading space at most, as " %s%s%s %s\n" prints it
_HEADER = lazy(r"^ ?(?:●|○|\*|o) (?P<label>\S.*?)\s*$")
_TREE = " │├└─|`-"
_FIELD = lazy(r"^(?P<key>[a-z][a-z ]*?):(?:\s+(?P<value>.*?))?\s*$")
_SPEED = lazy(r"^(?P<total>[0-9]{1,4}) Gb/s = (?P<lanes>[0-9]{1,2}) lanes \* (?P<lane>[0-9]{1,4}) Gb/s$")


class BoltStatus(str, Enum):
    """The status words print_device() writes."""

    DISCONNECTED = "disconnected"
    CONNECTING = "connecting"
    CONNECTED = "connected"  # plugged in, not authorized: no PCIe tunnel yet
    AUTHORIZED = "authorized"
    NO_PCIE = "connected (no PCIe tunnels)"  # authorized, but bolt's authflags say nopcie
    AUTH_ERROR = "authorization error"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class BoltDevice:
    label: str
    device_type: Maybe[str]  # "host" / "peripheral"
    name: Maybe[str]
    vendor: Maybe[str]
    uuid: Maybe[str]  # the device's unique_id in sysfs
    generation: Maybe[str]  # "Thunderbolt 3", "USB4" (newer bolt only)
    status: Maybe[BoltStatus]
    domain: Maybe[str]  # printed only while connected
    rx_lanes: Maybe[int]
    rx_lane_gbits_per_s: Maybe[int]
    tx_lanes: Maybe[int]
    tx_lane_gbits_per_s: Maybe[int]
    authflags: Maybe[str]
    stored: Maybe[bool]  # in bolt's database (so authorized again on the next plug-in per its policy)
    policy: Maybe[str]  # "iommu" / "auto" / "manual" / "default": only for stored devices


def parse_boltctl_list(text: str) -> tuple[BoltDevice, ...]:
    """Every device block of `boltctl list` output; fields a block lacks are unavailable (not printed)."""
    blocks: list[tuple[str, dict[str, str]]] = []
    for raw in text.splitlines():
        line = _ANSI.sub("", raw)
        header = _HEADER.match(line)
        if header:
            blocks.append((header.group("label"), {}))
            continue
        field = _FIELD.match(line.lstrip(_TREE))
        if blocks and field and line[:1] in _TREE:
            # The first spelling wins: old bolt nests an `authorized:` time under status, newer prints it at top.
            blocks[-1][1].setdefault(field.group("key"), field.group("value") or "")
    return tuple(_device(label, fields) for label, fields in blocks)


def _device(label: str, fields: dict[str, str]) -> BoltDevice:
    def get(key: str) -> Maybe[str]:
        value = fields.get(key)
        return value if value else Unavailable(Reason.NOT_FOUND, f"boltctl printed no {key!r} line")

    status_text = get("status")
    status: Maybe[BoltStatus]
    if isinstance(status_text, Unavailable):
        status = status_text
    else:
        try:
            status = BoltStatus(status_text)
        except ValueError:
            status = Unavailable(Reason.UNPARSEABLE, f"status {status_text[:40]!r}")
    rx_lanes, rx_lane = _speed(get("rx speed"))
    tx_lanes, tx_lane = _speed(get("tx speed"))
    stored = get("stored")
    return BoltDevice(
        label=label,
        device_type=get("type"),
        name=get("name"),
        vendor=get("vendor"),
        uuid=get("uuid"),
        generation=get("generation"),
        status=status,
        domain=get("domain"),
        rx_lanes=rx_lanes,
        rx_lane_gbits_per_s=rx_lane,
        tx_lanes=tx_lanes,
        tx_lane_gbits_per_s=tx_lane,
        authflags=get("authflags"),
        # "no", else a date (newer bolt) or "yes" (older bolt)
        stored=stored if isinstance(stored, Unavailable) else stored != "no",
        policy=get("policy"),
    )


def _speed(text: Maybe[str]) -> tuple[Maybe[int], Maybe[int]]:
    """`40 Gb/s = 2 lanes * 20 Gb/s` → (2, 20); the total must agree, or the line is garbage."""
    if isinstance(text, Unavailable):
        return text, text
    match = _SPEED.match(text)
    if match is None or int(match["total"]) != int(match["lanes"]) * int(match["lane"]):
        bad = Unavailable(Reason.UNPARSEABLE, f"link speed {text[:40]!r}")
        return bad, bad
    return int(match["lanes"]), int(match["lane"])


def gather_boltctl(host: Host) -> Maybe[tuple[BoltDevice, ...]]:
    """Run `boltctl list` if bolt is installed; unavailable (with why) when it is not or boltd does not answer."""
    if host.which(BOLTCTL_ARGV[0]) is None:
        return Unavailable(Reason.NOT_FOUND, "boltctl is not on PATH (bolt not installed)")
    result = host.run(BOLTCTL_ARGV, timeout=BOLTCTL_TIMEOUT_S)
    if not result.ok:
        return result.unavailable()
    return parse_boltctl_list(result.stdout)
