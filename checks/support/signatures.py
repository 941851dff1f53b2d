"""The error-signature catalogue (error_signatures.json): what known error messages mean and imply.

Each entry is data with its source thread: a pattern matched against one line of text, what it means in plain
words, the facts it implies (a closed vocabulary, IMPLICATIONS), and the check that judges those facts. Triage
reads a paste with it; the live doctor explains torch's own messages with it (torch.cuda_init). A test proves
every entry against the real pastes it was taken from (tests/triage/pastes/).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from functools import cache, cached_property
from typing import Any

from torch_gpu_doctor import data_cache, pattern_cache
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.reported_errors import ReportedError
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Evidence, Remediation, Target
from torch_gpu_doctor.package_data import package_file, package_text
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Unavailable

CATALOGUE = "error_signatures.json"
CLASSES = frozenset(
    {
        "arch", "driver_too_old", "forward_compat", "no_driver", "nvml", "driver_library_mismatch",
        "unknown_error", "cpu_build", "missing_library", "undefined_symbol", "cudnn", "cublas",
        "library_path", "two_torch", "no_visible_gpu", "container", "mig", "wsl", "oom", "shm", "nccl_shm", "nccl",
        "nccl_p2p", "nccl_ib", "xid", "gpu_lost", "ecc", "illegal_address", "rocm", "secure_boot",
        "driver_unsupported_gpu", "import_failed", "other",
    }
)  # fmt: skip
ERRORS = frozenset(
    {
        "oom", "custom_all_reduce", "nccl_nvml", "nccl_shm", "nccl_shm_permission", "nccl_shm_attach", "nccl", "nccl_p2p", "nccl_ib", "nccl_wsl", "nccl_system", "nccl_timeout", "nccl_timeout_sync", "fabric_manager_mismatch", "gpu_lost", "ecc", "xid", "no_kernel_image", "torch_arch_warning",
        "illegal_address", "cublas", "cudnn", "rocm_no_binary", "rocm_hip_error", "mig", "secure_boot_refused",
        "driver_unsupported_gpu", "api_mismatch", "missing_library", "undefined_symbol", "companion_mismatch",
        "container_runtime", "container_no_gpus", "container_host_driver", "visible_devices",
    }
)  # fmt: skip
NVML_ERRORS = frozenset(
    {"LibRmVersionMismatch", "DriverNotLoaded", "NoPermission", "Unknown", "LibraryNotFound"}
)
# implication key -> the kind of value it takes ("$group" values are filled from the match)
IMPLICATIONS: dict[str, type] = {
    "driver_cuda": str,
    "driver_version": str,
    "driver_loaded": bool,
    "nvml_error": str,
    "gpu_name": str,
    "gpu_sm": str,
    "gpu_cc": str,
    "arch_list": str,
    "torch_cuda_build": bool,
    "torch_version": str,  # the installed torch a message names ("torch==2.13.0+cu130", "you have 2.0.0+cpu")
    "torch_import_failed": bool,
    "cuda_init_error": bool,
    "cuda_available": bool,
    "visible_devices_problem": bool,
    "wsl": bool,
    "macos": bool,  # a message only torch's MPS backend prints: Apple's GPU, so a Mac
    "container_without_gpus": bool,
    "nouveau_loaded": bool,
    "error": str,
}
# re.IGNORECASE matches "i" with the dotless ı and the dotted İ; casefold() leaves ı and splits İ in two
_SNAKE_CASE = lazy(r"[a-z][a-z0-9_]*")
_DOTTED_I = str.maketrans({"\u0130": "i", "\u0131": "i"})
_GROUP = lazy(r"^\$(?P<name>[a-z_][a-z0-9_]*)$")
_FILL = lazy(r"\$(?P<name>[a-z_][a-z0-9_]*)")


class CatalogueError(ValueError):
    """error_signatures.json does not have the expected shape."""


@dataclass(frozen=True)
class Signature:
    id: str
    cls: str  # the class of problem (CLASSES)
    regex: str  # matched case-insensitively against one stripped line
    means: str
    implies: dict[str, str | bool]
    check: str  # the check id that judges what it implies
    source: str  # owner/repo#N
    url: str
    example: str | None  # the stored paste it was taken from (tests/triage/pastes/...)
    # plain lower-case text every line the pattern matches contains (tools/signature_needles.py), or None
    needle: str | None = None
    # for an alternation without a common needle: one per alternative, a line must contain at least one
    needle_any: tuple[str, ...] = ()
    # For an error no check turns into a finding from what it implies (a program's bug, a build tool's
    # refusal, another program's CUDA error): the cause in one sentence and its fix, so that a paste that
    # holds it never reads "no problem found" (triage.wording.with_own_causes). None: the check it names decides.
    cause: str | None = None
    fix: Remediation | None = None
    # signatures whose failure this one's cause explains (a CUDA_HOME that is a list explains an extension
    # built without CUDA): where both are in one paste, this one is the cause, wherever each stands
    explains: tuple[str, ...] = ()
    # a context that means something only beside another error (tokens added to a tokenizer, beside a
    # device-side assertion): the signature whose hit this one needs in the same paste, else None
    within: str | None = None

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """Compiled on first use: most signatures never meet a line that has their needle."""
        return pattern_cache.compile(self.regex, re.IGNORECASE)


@dataclass(frozen=True)
class Hit:
    """A signature found on one line: what it means, what it implies with the values filled in."""

    signature: Signature
    line: int  # 1-based line number in the text
    text: str  # the line
    values: dict[str, str]  # the pattern's named groups that matched
    implies: dict[str, str | bool]  # the signature's implications, "$group" replaced by its value

    def own_cause(self) -> tuple[str, Remediation] | None:
        """The signature's own cause and fix, each "$group" replaced by what this line said (a "$NAME" that
        is not one of the pattern's groups, such as $CONDA_PREFIX, stays as written)."""
        cause, fix = self.signature.cause, self.signature.fix
        if cause is None or fix is None:
            return None

        def fill(text: str) -> str:
            return _FILL.sub(lambda m: self.values.get(m["name"], m[0]), text)

        commands = tuple(
            dataclasses.replace(c, argv=tuple(fill(a) for a in c.argv), note=fill(c.note))
            for c in fix.commands
        )
        return fill(cause), dataclasses.replace(fix, text=fill(fix.text), commands=commands)


def _text(entry: dict[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CatalogueError(f"{where}: {key!r} must be a non-empty string")
    return value


def parse_catalogue(
    data: Any, known_checks: frozenset[str] | None = None, compile_patterns: bool = True
) -> tuple[Signature, ...]:
    """The validated entries; `known_checks`, when given, is the set of check ids a signature may name.

    Without `compile_patterns` the patterns are compiled only when used, and what needs a compiled pattern
    (that it compiles, that the implications' $groups are its groups) is not checked: load_catalogue reads
    the shipped file so, which tests/triage/test_signatures.py parses with every check."""
    if not isinstance(data, dict) or not isinstance(data.get("signatures"), list):  # "source_note" aside
        raise CatalogueError(f"{CATALOGUE}: expected {{'signatures': [...]}}")
    seen: set[str] = set()
    found = []
    for position, entry in enumerate(data["signatures"]):
        where = f"{CATALOGUE}[{position}]"
        if not isinstance(entry, dict):
            raise CatalogueError(f"{where}: not an object")
        sid = _text(entry, "id", where)
        where = f"{CATALOGUE}: {sid}"
        if sid in seen or not _SNAKE_CASE.fullmatch(sid):
            raise CatalogueError(f"{where}: the id is repeated or not snake_case")
        seen.add(sid)
        cls = _text(entry, "class", where)
        if cls not in CLASSES:
            raise CatalogueError(f"{where}: unknown class {cls!r}")
        regex = _text(entry, "pattern", where)
        groups: Mapping[str, int] | None = None
        if compile_patterns:
            try:
                groups = re.compile(regex, re.IGNORECASE).groupindex
            except re.error as exc:
                raise CatalogueError(f"{where}: the pattern does not compile: {exc}") from exc
        needle = entry.get("needle")
        if needle is not None and (not isinstance(needle, str) or not needle or needle != needle.lower()):
            raise CatalogueError(f"{where}: 'needle' must be lower-case text or absent")
        needle_any = entry.get("needle_any", [])
        if not isinstance(needle_any, list) or not all(
            isinstance(n, str) and n and n == n.lower() for n in needle_any
        ):
            raise CatalogueError(f"{where}: 'needle_any' must be a list of lower-case texts or absent")
        implies = entry.get("implies")
        if not isinstance(implies, dict):  # {}: recognised and explained, but it decides nothing by itself
            raise CatalogueError(f"{where}: 'implies' must be an object")
        for key, value in implies.items():
            kind = IMPLICATIONS.get(key)
            if kind is None or not isinstance(value, kind):
                raise CatalogueError(f"{where}: implies {key}={value!r} is not in the vocabulary")
            group = _GROUP.match(value) if isinstance(value, str) else None
            if group is not None and groups is not None and group["name"] not in groups:
                raise CatalogueError(
                    f"{where}: {key} uses ${group['name']}, which the pattern does not capture"
                )
        if implies.get("error") is not None and implies["error"] not in ERRORS:
            raise CatalogueError(f"{where}: unknown error kind {implies['error']!r}")
        if implies.get("nvml_error") is not None and implies["nvml_error"] not in NVML_ERRORS:
            raise CatalogueError(f"{where}: unknown NVML error {implies['nvml_error']!r}")
        check = _text(entry, "check", where)
        if known_checks is not None and check not in known_checks:
            raise CatalogueError(f"{where}: no check {check!r}")
        example = entry.get("example")
        if example is not None and not isinstance(example, str):
            raise CatalogueError(f"{where}: 'example' must be a file name or null")
        cause, fix = _own_fix(entry.get("fix"), where)
        explains = entry.get("explains", [])
        if not isinstance(explains, list) or not all(isinstance(e, str) for e in explains):
            raise CatalogueError(f"{where}: 'explains' must be a list of signature ids or absent")
        within = entry.get("within")
        if within is not None and not isinstance(within, str):
            raise CatalogueError(f"{where}: 'within' must be a signature id or absent")
        found.append(
            Signature(
                sid,
                cls,
                regex,
                _text(entry, "means", where),
                dict(implies),
                check,
                _text(entry, "source", where),
                _text(entry, "url", where),
                example,
                needle=needle,
                needle_any=tuple(needle_any),
                cause=cause,
                fix=fix,
                explains=tuple(explains),
                within=within,
            )
        )
    unknown = sorted({e for s in found for e in (*s.explains, *filter(None, [s.within]))} - seen)
    if unknown:
        raise CatalogueError(f"{CATALOGUE}: 'explains' or 'within' names no signature: {', '.join(unknown)}")
    return tuple(found)


def _own_fix(data: Any, where: str) -> tuple[str | None, Remediation | None]:
    """A signature's own cause and fix: {"cause", "text", "commands": [{"argv": [...], "note"}], "target",
    "requires_root"}. Commands are argv lists, shown and copied (they hold placeholders such as SCRIPT.py and
    belong to the machine that printed the error), never run from here."""
    if data is None:
        return None, None
    if not isinstance(data, dict):
        raise CatalogueError(f"{where}: 'fix' must be an object")
    commands = []
    for command in data.get("commands", []):
        argv = command.get("argv") if isinstance(command, dict) else None
        note = command.get("note", "") if isinstance(command, dict) else None
        if (
            not isinstance(argv, list)
            or not argv
            or not all(isinstance(a, str) and a for a in argv)
            or not isinstance(note, str)
        ):
            raise CatalogueError(
                f"{where}: each fix command is {{'argv': [non-empty strings], 'note': text}}"
            )
        commands.append(Command(tuple(argv), note, runs_here=False))
    target = data.get("target", Target.SYSTEM.value)
    if target not in {t.value for t in Target}:
        raise CatalogueError(f"{where}: unknown fix target {target!r}")
    root = data.get("requires_root", False)
    if not isinstance(root, bool):
        raise CatalogueError(f"{where}: 'requires_root' must be true or false")
    cause = _text(data, "cause", f"{where} fix")
    fix = Remediation(
        _text(data, "text", f"{where} fix"), tuple(commands), requires_root=root, target=Target(target)
    )
    return cause, fix


@cache
def load_catalogue() -> tuple[Signature, ...]:
    """The shipped catalogue, validated (by this run or, through data_cache, by an earlier one)."""
    shipped = package_file("torch_gpu_doctor.checks.support", CATALOGUE)
    return data_cache.cached("error-signatures", _shipped_catalogue, (shipped,))


def _shipped_catalogue() -> tuple[Signature, ...]:
    text = package_text("torch_gpu_doctor.checks.support", CATALOGUE)
    return parse_catalogue(json.loads(text), compile_patterns=False)


def _folded(text: str) -> str:
    return text.translate(_DOTTED_I).casefold()  # as re.IGNORECASE compares: "ſ" is "s", "ı" is "i"


def candidates(text: str, catalogue: tuple[Signature, ...] | None = None) -> tuple[Signature, ...]:
    """The signatures whose needles are somewhere in `text`: the only ones that can match a line of it, or
    lines of it joined with a space. A paste is searched once for each needle instead of each of its lines
    for every needle (issue 17's budget: the catalogue has about 300 entries, a 5 KB paste about 150 lines).
    Case folding maps each character alone, so a line's folded text is part of the whole's."""
    folded = _folded(text)
    return tuple(
        s
        for s in (catalogue if catalogue is not None else load_catalogue())
        if (s.needle is None or s.needle in folded)
        and (not s.needle_any or any(n in folded for n in s.needle_any))
    )


def match_line(line: str, number: int, catalogue: tuple[Signature, ...] | None = None) -> list[Hit]:
    """Every signature that matches this line (stripped); `catalogue`: the signatures to try (all of them, or
    the `candidates` of the text the line is from)."""
    text = line.strip()
    folded = _folded(text)
    hits = []
    for signature in catalogue if catalogue is not None else load_catalogue():
        if signature.needle is not None and signature.needle not in folded:
            continue
        if signature.needle_any and not any(n in folded for n in signature.needle_any):
            continue
        found = signature.pattern.search(text)
        if found is None:
            continue
        values = {k: v for k, v in found.groupdict().items() if v is not None}
        implies: dict[str, str | bool] = {}
        for key, value in signature.implies.items():
            group = _GROUP.match(value) if isinstance(value, str) else None
            if group is None:
                implies[key] = value
            elif group["name"] in values:
                implies[key] = values[group["name"]]
        hits.append(Hit(signature, number, text, values, implies))
    return hits


def explain(message: str) -> Signature | None:
    """The first signature a message (one or several lines) matches: what torch's or CUDA's words mean."""
    for number, line in enumerate(message.splitlines() or [message], start=1):
        hits = match_line(line, number)
        if hits:
            return hits[0].signature
    return None


def catalogue_fix(error: ReportedError) -> Remediation | None:
    """The catalogue's own fix for a reported error, filled with what its line said; None when its signature
    has none (the check decides the fix) or is not in the catalogue."""
    signature = next((s for s in load_catalogue() if s.id == error.signature), None)
    if signature is None:
        return None
    own = Hit(signature, 0, error.text, dict(error.values), {}).own_cause()
    return own[1] if own is not None else None


def reported_evidence(errors: list[ReportedError], most: int = 3) -> tuple[Evidence, ...]:
    """The first reported lines of these errors, as a finding's evidence (the line and where it was)."""
    return tuple(Evidence("reported", e.text, e.where) for e in errors[:most])


def reported(facts: Facts, *kinds: str) -> list[ReportedError]:
    """The errors of these kinds that were reported: in program output the doctor read (a paste, for
    triage) and in the driver's own kernel-log lines (live, or a pasted kernel log). [] when none."""
    errors = facts.reported_errors
    pasted = () if isinstance(errors, Unavailable) else errors
    seen = {(e.signature, e.text.strip()) for e in pasted}
    logged = tuple(e for e in kernel_log_errors(facts) if (e.signature, e.text.strip()) not in seen)
    return [e for e in (*pasted, *logged) if e.kind in kinds]


def kernel_log_errors(facts: Facts) -> tuple[ReportedError, ...]:
    """The known error messages among the NVIDIA driver's kernel-log lines."""
    log = facts.kernel_log
    if isinstance(log, Unavailable) or not log.driver_lines:
        return ()
    source = log.source if isinstance(log.source, str) else "the kernel log"
    return _errors_in(log.driver_lines, source)


@cache
def _errors_in(lines: tuple[str, ...], source: str) -> tuple[ReportedError, ...]:
    found = []
    for number, line in enumerate(lines, 1):
        for hit in match_line(line, number):
            kind = hit.implies.get("error")
            if isinstance(kind, str):
                where = f"the kernel log, `{source}`"
                found.append(
                    ReportedError(kind, hit.signature.id, hit.signature.means, hit.text, where, hit.values)
                )
    return tuple(found)
