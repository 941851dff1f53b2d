"""The finding model every check, fix and renderer shares (DESIGN §3)."""

from __future__ import annotations

import dataclasses
import shlex
from dataclasses import field
from enum import Enum

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass


class Status(str, Enum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"  # not applicable here; never counts as pass
    UNKNOWN = "unknown"  # could not tell (a fact was unavailable)
    CRASH = "crash"  # the check or its probe broke; a bug or a hang, never a traceback on screen

    @property
    def severity(self) -> int:
        """Ordering for "worst status" and --fail-on thresholds."""
        return _SEVERITY[self]


_SEVERITY = {
    Status.SKIP: 0,
    Status.PASS: 1,
    Status.UNKNOWN: 2,
    Status.CRASH: 3,
    Status.WARN: 4,
    Status.FAIL: 5,
}


class Target(str, Enum):
    PYTHON_ENV = "python-env"  # changes only the diagnosed interpreter's packages; gpu-doctor may run it
    SYSTEM = "system"  # driver, modules, firmware: shown and copied, run only on explicit request


@dataclass(frozen=True)
class Command:
    argv: tuple[str, ...]
    note: str = ""  # one line shown beside the command, e.g. "Ubuntu 22.04 and newer"
    stdin: str = ""  # text fed to the command (e.g. a config file for `sudo tee`), never a shell string
    # False: it runs somewhere else (the container's host, Windows) or holds a placeholder (IMAGE):
    # shown and copied, never offered to run from here.
    runs_here: bool = True

    def display(self, windows: bool = False) -> str:
        """The line to type: a POSIX shell's, or cmd's and PowerShell's (`windows`, or a program or argument
        given by a Windows path), where single quotes are not quotes."""
        if not self.stdin and (windows or any(_WINDOWS_PROGRAM.match(a) is not None for a in self.argv)):
            return _windows_line(self.argv)
        line = shlex.join(self.argv)  # text on stdin: a POSIX tool (sudo tee), which Windows has not
        return f"printf %s {shlex.quote(self.stdin)} | {line}" if self.stdin else line


# A program or an argument given by a Windows path (C:\...\python.exe, `uv pip install --python .\python_embeded\
# python.exe`) runs in cmd or PowerShell, where a POSIX shell's single quotes are not quotes: its line quotes, with
# double quotes, only what needs it.
_WINDOWS_PROGRAM = lazy(r"^(?:[A-Za-z]:\\|\.\\|\\\\)")
_WINDOWS_SPECIAL = frozenset(' \t"&|<>^%()')


def _windows_line(argv: tuple[str, ...]) -> str:
    """cmd's and PowerShell's line. `env [-u VAR] [VAR=value] PROGRAM ...` is a POSIX tool: its variables are set
    by cmd (`set VAR=value`, `set VAR=` to remove one) in a child cmd, which PowerShell starts the same way."""
    if len(argv) < 2 or argv[0] != "env":
        return " ".join(_windows_quote(a) for a in argv)
    sets: list[str] = []
    rest = list(argv[1:])
    while rest:
        if rest[0] == "-u" and len(rest) > 1:
            sets.append(f"set {rest[1]}=")
            rest = rest[2:]
        elif "=" in rest[0] and not rest[0].startswith("-"):
            if (
                rest[0].split("=", 1)[1].startswith("/")
            ):  # a POSIX path (CUDA_HOME=/usr/local/cuda): no cmd line
                return " ".join(_windows_quote(a) for a in argv)
            sets.append(f"set {rest[0]}")
            rest = rest[1:]
        else:
            break
    if not sets or not rest:
        return " ".join(_windows_quote(a) for a in argv)
    program = " ".join(_windows_quote(a) for a in rest)
    return 'cmd /c "' + "&& ".join(sets) + "&& " + program + '"'


def _windows_quote(arg: str) -> str:
    if arg and not any(c in _WINDOWS_SPECIAL for c in arg):
        return arg
    return '"' + arg.replace('"', '\\"') + '"'


@dataclass(frozen=True)
class Remediation:
    text: str
    commands: tuple[Command, ...] = ()
    requires_root: bool = False
    requires_reboot: bool = False
    destructive: bool = False
    needs_network: bool = False
    target: Target = Target.SYSTEM

    def __post_init__(self) -> None:
        """A command list that runs `sudo` or reboots says so in the flags too, at construction: a fix never
        shows `systemctl reboot` beside requires_reboot false (a rule that later drops such a command with
        dataclasses.replace keeps the flag: more caution, never less)."""
        if not self.requires_root and any(c.argv[:1] == ("sudo",) for c in self.commands):
            object.__setattr__(self, "requires_root", True)
        if not self.requires_reboot and any(c.argv in _REBOOTS for c in self.commands):
            object.__setattr__(self, "requires_reboot", True)


_REBOOTS = frozenset(
    {("systemctl", "reboot"), ("sudo", "systemctl", "reboot"), ("reboot",), ("sudo", "reboot")}
)


def flag_words(fix: Remediation) -> list[str]:
    """The remediation's safety flags as words, in one order everywhere: [needs root] [needs reboot] ..."""
    return [
        name
        for name, on in (
            ("needs root", fix.requires_root),
            ("needs reboot", fix.requires_reboot),
            ("destructive", fix.destructive),
            ("needs network", fix.needs_network),
        )
        if on
    ]


@dataclass(frozen=True)
class Evidence:
    """One value a check looked at, and where it came from (a file, a command, an NVML call)."""

    label: str
    value: str
    source: str


@dataclass(frozen=True)
class Finding:
    check_id: str
    status: Status
    summary: str
    details: str = ""
    evidence: tuple[Evidence, ...] = ()
    remediation: Remediation | None = None
    traceback: str = ""  # only for crash findings; shown in verbose output and bundles
    # the check ids of other problems in the same report that cause this one (checks/support/causes.json):
    # a symptom's next step is its cause's fix
    caused_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class Figure:
    """One measured figure of the smoke test beside its expectation and verdict (checks/support/smoke_figures)."""

    key: str  # h2d_pinned, device_copy, matmul_fp16, peer_copy 0->1, all_reduce
    device: int | None
    label: str
    value: float
    unit: str  # "GB/s" | "TFLOPS"
    expected_min: float | None  # None: nothing to compare with (no datasheet entry, no link figure)
    expectation: str  # where the expectation comes from, in words
    status: Status  # PASS or WARN; a missing expectation is PASS with the reason in `expectation`
    sentence: str  # the figure, its expectation and the verdict, as the user reads it


@dataclass(frozen=True)
class Explanation:
    what: str
    why: str
    fix: str


@dataclass(frozen=True)
class CheckSpec:
    id: str  # stable dotted id, never renamed (a test pins the list)
    title: str
    area: str
    explanation: Explanation
    required: bool = False  # an unknown or crash here makes the run "incomplete" (exit 3)


@dataclass(frozen=True)
class Counts:
    passed: int = 0
    warn: int = 0
    fail: int = 0
    skip: int = 0
    unknown: int = 0
    crash: int = 0

    def labelled(self) -> list[tuple[str, Status]]:
        """("2 fail", FAIL), ("1 warn", WARN), ...: worst first, zero counts left out; every front end
        (text, TUI status line, the TUI's exit line) says the same."""
        order = (
            (self.fail, Status.FAIL),
            (self.warn, Status.WARN),
            (self.crash, Status.CRASH),
            (self.unknown, Status.UNKNOWN),
            (self.passed, Status.PASS),
            (self.skip, Status.SKIP),
        )
        return [(f"{n} {status.value}", status) for n, status in order if n]


@dataclass(frozen=True)
class FindingsSummary:
    status: Status
    exit_code: int
    counts: Counts = field(default_factory=Counts)


# C0 controls but newline and tab, DEL, and C1 controls: what a terminal acts on instead of showing
_CONTROLS = lazy(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape_controls(text: str) -> str:
    """Control characters shown as `\\x1b`, never sent: a GPU name, a capture's description or a probe's
    output must not retitle the window, clear the screen or colour the report (issue 21)."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def printable(finding: Finding) -> Finding:
    """The finding with the control characters of its text escaped (they come from the data it quotes);
    commands are left exact."""
    texts = [
        finding.summary,
        finding.details,
        *(v for e in finding.evidence for v in (e.label, e.value, e.source)),
    ]
    if finding.remediation is not None:
        texts.append(finding.remediation.text)
    if not any(_CONTROLS.search(t) for t in texts):
        return finding
    remediation = finding.remediation
    if remediation is not None:
        remediation = dataclasses.replace(remediation, text=escape_controls(remediation.text))
    return dataclasses.replace(
        finding,
        summary=escape_controls(finding.summary),
        details=escape_controls(finding.details),
        evidence=tuple(
            Evidence(escape_controls(e.label), escape_controls(e.value), escape_controls(e.source))
            for e in finding.evidence
        ),
        remediation=remediation,
    )
