"""Identifiers in kernel text that no enumeration names: MACs, USB serial numbers, file system and GPU UUIDs.

The kernel log (`dmesg`, `journalctl -k`) names every network card, USB device and disk the kernel met, and
the kernel command line names the root file system (`root=UUID=...`); these values identify the machine
whether or not `identifiers` enumerated them. They are found here by shape, in that text only: the same
shapes elsewhere (a sysfs number, a PCI address) are what the checks read. The lines the checks read from the
kernel log (NVRM Xid lines, PCIe link and AER lines, Thunderbolt lines, module-signature refusals) hold none
of these shapes, so a replay reads them as they were.

Formats: `usb 1-1: SerialNumber: 4C530001230526115543` (drivers/usb/core/hub.c announce_device; a root hub
prints its controller's PCI address there: `usb usb1: SerialNumber: 0000:00:14.0`), `Command line:
BOOT_IMAGE=/vmlinuz root=UUID=3b1c...-... ro`, `EXT4-fs (nvme0n1p2): mounted filesystem 3b1c...-... r/w`,
`BTRFS: device fsid 3b1c...-... devid 1`, MACs as `aa:bb:cc:dd:ee:ff` or `aa-bb-cc-dd-ee-ff` (netfilter's
`MAC=` prints destination, source and type as one run; PXE's `BOOTIF=01-aa-bb-cc-dd-ee-ff` prefixes the
hardware type), predictable interface names `enx<mac without separators>`, and the driver's `NVRM: GPU at
PCI:0000:2b:00: GPU-0b11d014-1685-04bd-26ed-5fc0bc1c44ae` (samples/dmesg/xid-samples.txt).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from torch_gpu_doctor.bundle.identifiers import Kind, is_placeholder
from torch_gpu_doctor.lazy_re import lazy

# Runs of six or more hex pairs with one separator: a MAC, an InfiniBand hardware address, netfilter's MAC=.
_HEX2 = "[0-9A-Fa-f]{2}"
_MAC_RUN = lazy(
    rf"(?<![0-9A-Fa-f])(?<![0-9A-Fa-f][:-]){_HEX2}(?P<sep>[:-]){_HEX2}(?:(?P=sep){_HEX2}){{4,}}"
    r"(?![0-9A-Fa-f]|[:-][0-9A-Fa-f])"
)
_ENX_MAC = lazy(r"(?<=\benx)[0-9A-Fa-f]{12}(?![0-9A-Za-z])")
_USB_SERIAL = lazy(r"(?m)(?<=SerialNumber:)[ \t]*(?P<value>[^\r\n]*?)[ \t]*$")
_PCI_ADDRESS = lazy(r"[0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]")
_UUID36 = "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"
_FS_UUID = lazy(
    # root=UUID=..., resume=UUID=..., PARTUUID=... (GPT: a UUID; MBR: `0e2ad1b1-02`; FAT: `ABCD-1234`)
    r"(?<![A-Za-z0-9_])(?:PART)?UUID=(?P<value>[0-9A-Fa-f]{4,}(?:-[0-9A-Fa-f]{2,})*)(?![0-9A-Za-z_-])"
    # ext4/xfs `mounted filesystem <uuid>`, btrfs `device fsid <uuid>` and `first mount of filesystem <uuid>`
    rf"|(?:(?<=filesystem )|(?<=fsid ))(?P<bare>{_UUID36})(?![0-9A-Za-z_-])"
)

# `NVRM: GPU at PCI:0000:2b:00: GPU-0b11d014-...` names a GPU that NVML may no longer see (fallen off the bus).
_GPU_UUID = lazy(rf"(?<![0-9A-Za-z-])(?:GPU|MIG)-{_UUID36}(?![0-9A-Za-z-])")

Pseudonym = Callable[[Kind, str], str]  # (kind, value) -> the value's stable pseudonym


def _is_filler_mac(value: str) -> bool:
    digits = re.sub(r"[^0-9A-Fa-f]", "", value).lower()
    return digits.strip("0") == "" or digits.strip("f") == ""


def _replace_group(match: re.Match[str], group: str, replacement: str) -> str:
    start, end = match.span(group)
    offset = match.start(0)
    whole = match.group(0)
    return whole[: start - offset] + replacement + whole[end - offset :]


def scrub_fs_uuids(text: str, pseudonym: Pseudonym) -> tuple[str, int]:
    """File system UUIDs only (`root=UUID=...`, `mounted filesystem <uuid>`): their shape is theirs alone, so
    this runs on every text of a bundle; /proc/cmdline's words reach facts.json and the report too."""

    def fs_uuid(match: re.Match[str]) -> str:
        name = "value" if match["value"] is not None else "bare"
        return _replace_group(match, name, pseudonym(Kind.FS_UUID, match[name].lower()))

    return _FS_UUID.subn(fs_uuid, text)


def scrub_kernel_text(text: str, pseudonym: Pseudonym) -> tuple[str, frozenset[str]]:
    """The text with every MAC, USB serial number, file system UUID and GPU UUID replaced by its pseudonym,
    and the kinds replaced (manifest names: "mac", "serial", "fs_uuid", "gpu_uuid")."""
    seen: set[Kind] = set()

    def swap(kind: Kind, value: str) -> str:
        seen.add(kind)
        return pseudonym(kind, value)

    def mac(match: re.Match[str]) -> str:
        value = match.group(0)
        return value if _is_filler_mac(value) else swap(Kind.MAC, value.lower().replace("-", ":"))

    def serial(match: re.Match[str]) -> str:
        value = match["value"]
        if not value or is_placeholder(value) or _PCI_ADDRESS.fullmatch(value):
            return match.group(0)
        return _replace_group(match, "value", swap(Kind.SERIAL, value))

    text = _MAC_RUN.sub(mac, text)
    text = _ENX_MAC.sub(lambda m: swap(Kind.MAC, ":".join(re.findall("..", m.group(0).lower()))), text)
    text = _USB_SERIAL.sub(serial, text)
    text, uuids = scrub_fs_uuids(text, pseudonym)
    if uuids:
        seen.add(Kind.FS_UUID)
    text = _GPU_UUID.sub(lambda m: swap(Kind.GPU_UUID, m.group(0)), text)
    return text, frozenset(kind.name.lower() for kind in seen)
