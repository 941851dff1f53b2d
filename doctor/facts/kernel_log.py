"""What the kernel log says about the NVIDIA driver: Xid lines and module-signature refusals.

Read with `dmesg`, or `journalctl -k -b` when dmesg is refused. An unreadable log is never an empty one:
with `kernel.dmesg_restrict = 1` an unprivileged dmesg fails with "read kernel buffer failed: Operation not
permitted", and journalctl shows a user outside `systemd-journal`/`adm` only their own messages (exit 0, a
hint on stderr, "-- No entries --"); both leave `source` Unavailable (hardware.md §3.8, §8 trap 4).

Line formats (samples/dmesg/xid-samples.txt): `NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.`,
older drivers `NVRM: Xid (0000:01:00): 31, Ch 0000000b, ...`, with or without a `[  179.437927]` or syslog
prefix. Signature refusals: `Lockdown: modprobe: unsigned module loading is restricted; see man
kernel_lockdown.7` (RinCat/RTL88x2BU-Linux-Driver#114), `Loading of module with unavailable key is rejected`
(a module signed with a key the firmware does not trust), and the taint notice `nvidia: module verification
failed: signature and/or required key missing - tainting kernel` (loaded anyway: signatures not enforced).
"""

from __future__ import annotations

import re

from torch_gpu_doctor.facts.bdf import normalize_bdf
from torch_gpu_doctor.facts.sysfs_attr import flag, read_attribute
from torch_gpu_doctor.host.base import CommandResult, Host
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

DMESG_ARGV = ("dmesg",)
JOURNAL_ARGV = ("journalctl", "-k", "-b", "--no-pager", "-o", "short-monotonic")
DMESG_RESTRICT = "/proc/sys/kernel/dmesg_restrict"
DMESG_TIMEOUT_S = 10.0
JOURNAL_TIMEOUT_S = 15.0
MAX_XID_EVENTS = 200  # the newest are kept; a GPU in trouble can log thousands
MAX_SIGNATURE_LINES = 20
MAX_DRIVER_LINES = 40
MAX_LINE = 300

# NVRM's prefix may be cut off where a person quotes the line (an issue's title: "Xid (PCI:0000:2b:00): 31 MMU
# Fault: ...", NVIDIA/open-gpu-kernel-modules#1030); "Xid (PCI:" is the driver's alone either way
_XID = lazy(
    r"(?:NVRM: )?\bXid \((?:PCI:)?(?P<address>[0-9a-fA-F:.]{4,20})\): (?P<xid>\d{1,4})\b,?\s*(?P<detail>.*)$"
)
_SIGNATURE = lazy(
    r"Lockdown: [^:]{1,64}: unsigned module loading is restricted"
    r"|Loading of (?:unsigned module|module with unavailable key) is rejected"
    r"|module verification failed: signature and/or required key missing"
    r"|Key was rejected by service|Required key not available"
    r"|PKCS#7 signature not signed with a trusted key",
    re.IGNORECASE,
)
# The driver's own lines that name why it refuses or cannot start a GPU (the error-signature catalogue reads
# them): a GPU the branch or the module flavour does not support, a legacy branch, a failed initialisation.
# Only these: other NVRM lines carry identifiers (GPU UUIDs) and decide nothing.
_DRIVER_LINE = lazy(
    r"NVRM:.*(?:installed in this system|supported through|requires use of|will ignore|not supported by"
    r"|RmInitAdapter failed|rm_init_adapter failed)",
    re.IGNORECASE,
)
# journalctl, run by a user who may not read the system journal: exit 0 and no kernel lines
_JOURNAL_DENIED = (
    "not seeing messages from other users and the system",
    "No journal files were opened due to insufficient permissions",
)


@dataclass(frozen=True)
class XidEvent:
    xid: int
    bdf: Maybe[str]  # normalised; the line names bus and device only, so the function is .0
    detail: str  # the driver's text after the number
    line: str  # the log line, as read (cut at 300 characters)


@dataclass(frozen=True)
class KernelLogFacts:
    source: Maybe[str]  # the command that gave the log, or why none could
    dmesg_restrict: Maybe[bool]  # kernel.dmesg_restrict: 1 = only CAP_SYSLOG may read the ring buffer
    lines_read: int
    xid_events: tuple[XidEvent, ...]  # oldest first; the newest MAX_XID_EVENTS when there are more
    xid_events_total: int
    signature_lines: tuple[str, ...]  # module-signature refusals and taint notices
    # the driver's lines that say why it refuses or cannot start a GPU (the newest): checks read them with
    # the error-signature catalogue, as triage reads a paste
    driver_lines: tuple[str, ...] = ()


def _clip(line: str) -> str:
    line = line.strip()
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"


def parse_xid(line: str) -> XidEvent | None:
    match = _XID.search(line)
    if match is None:
        return None
    address = match["address"]
    bdf = normalize_bdf(address)
    return XidEvent(
        xid=int(match["xid"]),
        bdf=bdf or Unavailable(Reason.UNPARSEABLE, f"PCI address {address!r}"),
        detail=match["detail"].strip()[:MAX_LINE],
        line=_clip(line),
    )


def parse_kernel_log(text: str, source: str, restrict: Maybe[bool]) -> KernelLogFacts:
    events: list[XidEvent] = []
    signatures: list[str] = []
    driver: list[str] = []
    total = 0
    lines = text.splitlines()
    for line in lines:
        event = parse_xid(line)
        if event is not None:
            total += 1
            events.append(event)
            if len(events) > MAX_XID_EVENTS:
                del events[0]
        elif _SIGNATURE.search(line) and len(signatures) < MAX_SIGNATURE_LINES:
            signatures.append(_clip(line))
        elif _DRIVER_LINE.search(line):
            driver.append(_clip(line))
            if len(driver) > MAX_DRIVER_LINES:
                del driver[0]
    return KernelLogFacts(
        source, restrict, len(lines), tuple(events), total, tuple(signatures), tuple(dict.fromkeys(driver))
    )


def _restrict(host: Host) -> Maybe[bool]:
    return read_attribute(host, DMESG_RESTRICT, flag("1", "0"))


def _refused(result: CommandResult, restrict: Maybe[bool]) -> Unavailable:
    why = result.unavailable()
    text = f"{result.stderr}\n{result.stdout}"
    if "Operation not permitted" in text or any(hint in text for hint in _JOURNAL_DENIED):
        if restrict is True and result.argv[0] == "dmesg":
            detail = f"{why.detail}; kernel.dmesg_restrict = 1 lets only root (CAP_SYSLOG) read it"
        else:
            detail = why.detail
        return Unavailable(Reason.PERMISSION_DENIED, detail)
    return why


def _usable(result: CommandResult, restrict: Maybe[bool]) -> str | Unavailable:
    if not result.ok:
        return _refused(result, restrict)
    if any(hint in result.stderr or hint in result.stdout for hint in _JOURNAL_DENIED):
        return _refused(result, restrict)
    # journalctl's own lines ("-- No entries --", "-- Logs begin at ... --", "-- Boot <id> --") are not the log
    body = [line for line in result.stdout.splitlines() if line.strip() and not line.startswith("-- ")]
    if not body:
        # A booted kernel always logs something: an empty answer is a log we may not see, never a clean one.
        return Unavailable(Reason.FAILED, f"{result.argv[0]}: no kernel messages in its output")
    return result.stdout


def gather_kernel_log(host: Host) -> KernelLogFacts:
    restrict = _restrict(host)
    failures: list[Unavailable] = []
    for argv, timeout in ((DMESG_ARGV, DMESG_TIMEOUT_S), (JOURNAL_ARGV, JOURNAL_TIMEOUT_S)):
        if host.which(argv[0]) is None:
            failures.append(Unavailable(Reason.NOT_FOUND, f"{argv[0]} is not on PATH"))
            continue
        text = _usable(host.run(argv, timeout=timeout), restrict)
        if isinstance(text, str):
            return parse_kernel_log(text, " ".join(argv), restrict)
        failures.append(text)
    return KernelLogFacts(_why(failures), restrict, 0, (), 0, ())


def _why(failures: list[Unavailable]) -> Unavailable:
    """The most telling reason first: a refusal says more than a missing command."""
    for wanted in (Reason.PERMISSION_DENIED, Reason.TIMED_OUT, Reason.FAILED, Reason.NOT_RECORDED):
        found = [f for f in failures if f.reason is wanted]
        if found:
            return Unavailable(wanted, "; ".join(f.detail for f in found))
    return Unavailable(Reason.NOT_FOUND, "; ".join(f.detail for f in failures))
