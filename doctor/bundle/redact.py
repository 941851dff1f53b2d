"""Replace identifiers with stable pseudonyms and drop secrets, in text, bytes, JSON and member paths.

Pure: a `Redactor` is built from the enumerated identifiers (torch_gpu_doctor.bundle.identifiers) and applied to
every member of a bundle, so one value gets one pseudonym everywhere. All identifiers are matched in one
pass, longest first (`/home/alice/x` is never half replaced), and only as whole tokens: host name `vm` is
not replaced inside `kvm` or `/proc/sys/vm`.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from dataclasses import field
from typing import Any

from torch_gpu_doctor.bundle.identifiers import Identifier, Kind
from torch_gpu_doctor.bundle.kernel_text import scrub_fs_uuids, scrub_kernel_text
from torch_gpu_doctor.bundle.secrets import looks_secret, redact_secrets
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.tokens import TOKEN

SECRET = "secret"  # the manifest's name for "secrets were dropped here"

# What may not touch a match on either side, per kind: a token of its own alphabet.
_EDGES: dict[Kind, tuple[str, str]] = {
    Kind.HOSTNAME: (r"[A-Za-z0-9_./-]", r"[A-Za-z0-9_/-]"),
    Kind.USER: (r"[A-Za-z0-9_.-]", r"[A-Za-z0-9_-]"),
    Kind.HOME: (r"[A-Za-z0-9_.-]", r"[A-Za-z0-9_-]"),
    Kind.IP: (r"[0-9A-Fa-f.:]", r"[0-9A-Fa-f:]|\.[0-9]"),
    Kind.MAC: (r"[0-9A-Fa-f:]", r"[0-9A-Fa-f:]"),
    Kind.CONTAINER: (r"[0-9A-Fa-f]", r"[0-9A-Fa-f]"),  # docker-<id>.scope, /docker/<id>, containers/<id>/
    Kind.POD: ("", r"[0-9A-Za-z_-]"),  # kubepods-besteffort-pod<uid>.slice: `d` before it, a hex letter
}
# Other spellings of one value, each with its own edges: a MAC as 1e-2d-3e-4f-5a-6b and in `enx1e2d3e4f5a6b`
# (bare hex between letters), a pod UID with `_` (systemd slices), a container's short id as a whole word
# (its default host name, `docker ps`).
_MAC_DASHED_EDGE = (r"[0-9A-Fa-f-]", r"[0-9A-Fa-f-]")
_BARE_HEX_EDGE = (r"[0-9A-Fa-f]", r"[0-9A-Fa-f]")
_WORD_EDGE = (r"[A-Za-z0-9_]", r"[A-Za-z0-9_]")
_MAC = lazy(r"[0-9a-f]{2}(?::[0-9a-f]{2}){5}")
_DEFAULT_EDGE = (r"[A-Za-z0-9_-]", r"[A-Za-z0-9_-]")
# Host names are matched in any case only when they look like machine names (a digit, dash or dot: node-07,
# gpu01.lab): a host called `vm` or `titan` must not turn `VM` or `NVIDIA TITAN` in a summary into `host-1`.
_CASELESS = {
    Kind.IP,
    Kind.MAC,
    Kind.GPU_UUID,
    Kind.THUNDERBOLT_UUID,
    Kind.DMI_UUID,
    Kind.MACHINE_ID,
    Kind.CONTAINER,
    Kind.POD,
    Kind.FS_UUID,
}


@dataclass(frozen=True)
class Redacted:
    """A redacted value and what was replaced in it (manifest: `{"redacted": [...]}` or "unchanged")."""

    text: str
    kinds: frozenset[str] = frozenset()


@dataclass
class Redactor:
    identifiers: tuple[Identifier, ...] = ()
    # Also replace what is an identifier by its shape alone (torch_gpu_doctor.bundle.kernel_text): file system UUIDs
    # everywhere, MACs, USB serials and GPU UUIDs in kernel text. False with --include-identifiers.
    shapes: bool = True
    pseudonyms: dict[str, str] = field(init=False, default_factory=dict)  # lookup key -> pseudonym
    kinds: dict[str, Kind] = field(init=False, default_factory=dict)
    replaced: Counter[str] = field(
        init=False, default_factory=Counter
    )  # kind -> occurrences, for the summary
    _pattern: re.Pattern[str] | None = field(init=False, default=None)
    _numbers: Counter[Kind] = field(init=False, default_factory=Counter)
    _spelled: dict[str, str] = field(init=False, default_factory=dict)  # spelling -> lookup key

    def __post_init__(self) -> None:
        users: dict[str, str] = {}
        for item in self.identifiers:
            if item.kind is Kind.HOME or (item.kind is Kind.CONTAINER and item.owner):
                continue
            self.pseudonym(item.kind, item.value)
            if item.kind is Kind.USER:
                users[item.value] = self.pseudonyms[_key(item)]
        for item in self.identifiers:
            if item.kind is Kind.HOME and _key(item) not in self.pseudonyms:
                self._numbers[Kind.HOME] += 1
                owner = users.get(item.owner or "", f"user-home-{self._numbers[Kind.HOME]}")
                self.pseudonyms[_key(item)] = posixpath.join(posixpath.dirname(item.value), owner)
                self.kinds[_key(item)] = Kind.HOME
            elif item.kind is Kind.CONTAINER and item.owner and _key(item) not in self.pseudonyms:
                full = self.pseudonyms.get(item.owner.lower())  # a short id: its container's pseudonym
                self.pseudonyms[_key(item)] = full or self.pseudonym(Kind.CONTAINER, item.owner)
                self.kinds[_key(item)] = Kind.CONTAINER
        spellings = [(text, edges, item) for item in self.identifiers for text, edges in _spellings(item)]
        for text, _, item in spellings:
            self._spelled.setdefault(text.lower() if _caseless(item) else text, _key(item))
        alternatives = [
            _alternative(text, edges, item)
            for text, edges, item in sorted(spellings, key=lambda s: (-len(s[0]), s[0]))
        ]
        self._pattern = re.compile("|".join(alternatives)) if alternatives else None

    def pseudonym(self, kind: Kind, value: str) -> str:
        """The value's pseudonym, numbered on first sight (`mac-3` for a MAC only the kernel log names)."""
        key = _key(Identifier(kind, value))
        if key not in self.pseudonyms:
            self._numbers[kind] += 1
            self.pseudonyms[key] = f"{kind.value}-{self._numbers[kind]}"
            self.kinds[key] = kind
        return self.pseudonyms[key]

    def legend(self) -> dict[str, str]:
        """{pseudonym: what it stands for} (kinds only, never the values), for the manifest."""
        return {p: self.kinds[k].name.lower() for k, p in self.pseudonyms.items()}

    def identifiers_only(self, text: str) -> Redacted:
        if self._pattern is None:
            return Redacted(text)
        seen: set[str] = set()

        def swap(match: re.Match[str]) -> str:
            key = _lookup(match.group(0), self._spelled)
            kind = self.kinds[key]
            seen.add(kind.name.lower())
            self.replaced[kind.name.lower()] += 1
            return self.pseudonyms[key]

        return Redacted(self._pattern.sub(swap, text), frozenset(seen))

    def text(self, text: str) -> Redacted:
        """Secrets dropped first (a token may contain a host name), then identifiers replaced."""
        cleaned, secrets = redact_secrets(text)
        uuids = 0
        if self.shapes:
            cleaned, uuids = scrub_fs_uuids(cleaned, self.pseudonym)
            self.replaced[Kind.FS_UUID.name.lower()] += uuids
        result = self.identifiers_only(cleaned)
        if uuids:
            result = Redacted(result.text, result.kinds | {Kind.FS_UUID.name.lower()})
        if self.shapes:  # after the known identifiers: a container id keeps its own pseudonym
            scrubbed, tokens = self._path_tokens(result.text)
            if tokens:
                result = Redacted(scrubbed, result.kinds | {Kind.TOKEN.name.lower()})
        if secrets:
            self.replaced[SECRET] += secrets
            return Redacted(result.text, result.kinds | {SECRET})
        return result

    def tokens(self, text: str) -> tuple[str, int]:
        """Every token-shaped run (torch_gpu_doctor.tokens) replaced by its pseudonym, and how many were."""
        count = 0

        def swap(match: re.Match[str]) -> str:
            nonlocal count
            count += 1
            return self.pseudonym(Kind.TOKEN, match.group(0))

        replaced = TOKEN.sub(swap, text)
        self.replaced[Kind.TOKEN.name.lower()] += count
        return replaced, count

    def _path_tokens(self, text: str) -> tuple[str, int]:
        """The tokens inside paths in the text (`/opt/runner/_work/<token>/venv`); text elsewhere keeps them."""
        total = 0

        def path(match: re.Match[str]) -> str:
            nonlocal total
            replaced, count = self.tokens(match.group(0))
            total += count
            return replaced

        return _PATH.sub(path, text), total

    def kernel_identifiers(self, text: str) -> Redacted:
        """Only the kernel text's own shapes: MACs, USB serials and file system UUIDs, enumerated or not
        (torch_gpu_doctor.bundle.kernel_text); secrets and enumerated identifiers are left to `text`."""
        if not self.shapes:
            return Redacted(text)
        scrubbed, kinds = scrub_kernel_text(text, self.pseudonym)
        for kind in kinds:
            self.replaced[kind] += 1
        return Redacted(scrubbed, kinds)

    def kernel_text(self, text: str) -> Redacted:
        """The kernel log or command line: `kernel_identifiers`, then secrets and identifiers as in any text."""
        scrubbed = self.kernel_identifiers(text)
        result = self.text(scrubbed.text)
        return Redacted(result.text, result.kinds | scrubbed.kinds)

    def data(self, data: bytes) -> tuple[bytes, frozenset[str]]:
        """Any file: decoded losslessly (surrogateescape), so binary bytes that match nothing stay as they were."""
        result = self.text(data.decode("utf-8", errors="surrogateescape"))
        return result.text.encode("utf-8", errors="surrogateescape"), result.kinds

    def path(self, path: str) -> str:
        """A member's path, redacted as a whole like text, so that paths and the contents naming them agree."""
        return self.text(path).text

    def json(self, value: Any, kinds: set[str]) -> Any:
        """A JSON document's strings (keys too); environment maps lose every variable that holds a secret."""
        if isinstance(value, str):
            result = self.text(value)
            kinds |= result.kinds
            return result.text
        if isinstance(value, list):
            return [self.json(item, kinds) for item in value]
        if isinstance(value, dict):
            kept = {}
            for key, item in value.items():
                kept_item = (
                    _without_secrets(item, kinds, self) if key == "env" and isinstance(item, dict) else item
                )
                kept[self.json(key, kinds)] = self.json(kept_item, kinds)
            return kept
        return value


def _without_secrets(env: dict[str, Any], kinds: set[str], redactor: Redactor) -> dict[str, Any]:
    """An environment map without the variables that hold a secret, and with its token-shaped values
    (a GPU UUID in CUDA_VISIBLE_DEVICES, a device-plugin id) replaced by pseudonyms."""
    kept = {}
    for name, value in env.items():
        if isinstance(value, str) and looks_secret(str(name), value):
            kinds.add(SECRET)
            redactor.replaced[SECRET] += 1
            continue
        if isinstance(value, str) and redactor.shapes:  # known identifiers first: a GPU's UUID stays one
            known = redactor.identifiers_only(value)
            kinds |= known.kinds
            kept[name], count = redactor.tokens(known.text)
            if count:
                kinds.add(Kind.TOKEN.name.lower())
            continue
        kept[name] = value
    return kept


# A path in any text: from a slash (or ~/) to the next blank, quote or separator
_PATH = lazy(r"(?<![\w.~-])(?:~/|/)[^\s\"'<>|;,:=]*")


def _caseless(item: Identifier) -> bool:
    if item.kind is Kind.HOSTNAME:
        return any(c.isdigit() or c in "-." for c in item.value)
    return item.kind in _CASELESS


def _key(item: Identifier) -> str:
    return item.value.lower() if _caseless(item) else item.value


def _lookup(found: str, table: dict[str, str]) -> str:
    return table[found] if found in table else table[found.lower()]


def _spellings(item: Identifier) -> list[tuple[str, tuple[str, str] | None]]:
    """(spelling, edges) of one identifier; edges None: the kind's own."""
    if item.kind is Kind.MAC and _MAC.fullmatch(item.value.lower()):
        return [
            (item.value, None),
            (item.value.replace(":", "-"), _MAC_DASHED_EDGE),
            (item.value.replace(":", ""), _BARE_HEX_EDGE),
        ]
    if item.kind is Kind.POD:
        return [(item.value, None), (item.value.replace("-", "_"), None)]
    if item.kind is Kind.CONTAINER and item.owner:
        return [(item.value, _WORD_EDGE)]
    return [(item.value, None)]


# An IPv4 address may be followed by `:port` (NCCL_COMM_ID=10.1.2.3:29500): the `:` edge is IPv6's only.
_IPV4_EDGE = (r"[0-9.]", r"[0-9]|\.[0-9]")


def _alternative(text: str, edges: tuple[str, str] | None, item: Identifier) -> str:
    ipv4 = item.kind is Kind.IP and ":" not in item.value
    before, after = edges or (_IPV4_EDGE if ipv4 else _EDGES.get(item.kind, _DEFAULT_EDGE))
    body = re.escape(text)
    if _caseless(item):
        body = f"(?i:{body})"
    lead = f"(?<!{before})" if before else ""
    return f"{lead}(?:{body})(?!{after})"
