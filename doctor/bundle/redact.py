"""Replace identifiers with stable pseudonyms and drop secrets, in text, bytes, JSON and member paths.

Pure: a `Redactor` is built from the enumerated identifiers (gpu_doctor.bundle.identifiers) and applied to
every member of a bundle, so one value gets one pseudonym everywhere. All identifiers are matched in one
pass, longest first (`/home/alice/x` is never half replaced), and only as whole tokens: host name `vm` is
not replaced inside `kvm` or `/proc/sys/vm`.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from gpu_doctor.bundle.identifiers import Identifier, Kind
from gpu_doctor.bundle.secrets import looks_secret, redact_secrets

SECRET = "secret"  # the manifest's name for "secrets were dropped here"

# What may not touch a match on either side, per kind: a token of its own alphabet.
_EDGES: dict[Kind, tuple[str, str]] = {
    Kind.HOSTNAME: (r"[A-Za-z0-9_./-]", r"[A-Za-z0-9_/-]"),
    Kind.USER: (r"[A-Za-z0-9_.-]", r"[A-Za-z0-9_-]"),
    Kind.HOME: (r"[A-Za-z0-9_.-]", r"[A-Za-z0-9_-]"),
    Kind.IP: (r"[0-9A-Fa-f.:]", r"[0-9A-Fa-f:]|\.[0-9]"),
    Kind.MAC: (r"[0-9A-Fa-f:]", r"[0-9A-Fa-f:]"),
}
_DEFAULT_EDGE = (r"[A-Za-z0-9_-]", r"[A-Za-z0-9_-]")
# Host names stay case-sensitive: a host called `vm` must not turn the word `VM` in a summary into `host-1`.
_CASELESS = {
    Kind.IP,
    Kind.MAC,
    Kind.GPU_UUID,
    Kind.THUNDERBOLT_UUID,
    Kind.DMI_UUID,
    Kind.MACHINE_ID,
}


@dataclass(frozen=True)
class Redacted:
    """A redacted value and what was replaced in it (manifest: `{"redacted": [...]}` or "unchanged")."""

    text: str
    kinds: frozenset[str] = frozenset()


@dataclass
class Redactor:
    identifiers: tuple[Identifier, ...] = ()
    pseudonyms: dict[str, str] = field(init=False, default_factory=dict)  # lookup key -> pseudonym
    kinds: dict[str, Kind] = field(init=False, default_factory=dict)
    replaced: Counter[str] = field(
        init=False, default_factory=Counter
    )  # kind -> occurrences, for the summary
    _pattern: re.Pattern[str] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        numbers: Counter[Kind] = Counter()
        users: dict[str, str] = {}
        for item in self.identifiers:
            if item.kind is Kind.HOME:
                continue
            key = _key(item)
            if key in self.pseudonyms:
                continue
            numbers[item.kind] += 1
            self.pseudonyms[key] = f"{item.kind.value}-{numbers[item.kind]}"
            self.kinds[key] = item.kind
            if item.kind is Kind.USER:
                users[item.value] = self.pseudonyms[key]
        for item in self.identifiers:
            if item.kind is Kind.HOME and _key(item) not in self.pseudonyms:
                numbers[Kind.HOME] += 1
                owner = users.get(item.owner or "", f"user-home-{numbers[Kind.HOME]}")
                self.pseudonyms[_key(item)] = posixpath.join(posixpath.dirname(item.value), owner)
                self.kinds[_key(item)] = Kind.HOME
        alternatives = [
            _alternative(item) for item in sorted(self.identifiers, key=lambda i: (-len(i.value), i.value))
        ]
        self._pattern = re.compile("|".join(alternatives)) if alternatives else None

    def legend(self) -> dict[str, str]:
        """{pseudonym: what it stands for} (kinds only, never the values), for the manifest."""
        return {p: self.kinds[k].name.lower() for k, p in self.pseudonyms.items()}

    def identifiers_only(self, text: str) -> Redacted:
        if self._pattern is None:
            return Redacted(text)
        seen: set[str] = set()

        def swap(match: re.Match[str]) -> str:
            key = _lookup(match.group(0), self.pseudonyms)
            kind = self.kinds[key]
            seen.add(kind.name.lower())
            self.replaced[kind.name.lower()] += 1
            return self.pseudonyms[key]

        return Redacted(self._pattern.sub(swap, text), frozenset(seen))

    def text(self, text: str) -> Redacted:
        """Secrets dropped first (a token may contain a host name), then identifiers replaced."""
        cleaned, secrets = redact_secrets(text)
        result = self.identifiers_only(cleaned)
        if secrets:
            self.replaced[SECRET] += secrets
            return Redacted(result.text, result.kinds | {SECRET})
        return result

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
    kept = {}
    for name, value in env.items():
        if isinstance(value, str) and looks_secret(str(name), value):
            kinds.add(SECRET)
            redactor.replaced[SECRET] += 1
            continue
        kept[name] = value
    return kept


def _key(item: Identifier) -> str:
    return item.value.lower() if item.kind in _CASELESS else item.value


def _lookup(found: str, table: dict[str, str]) -> str:
    return found if found in table else found.lower()


# An IPv4 address may be followed by `:port` (NCCL_COMM_ID=10.1.2.3:29500): the `:` edge is IPv6's only.
_IPV4_EDGE = (r"[0-9.]", r"[0-9]|\.[0-9]")


def _alternative(item: Identifier) -> str:
    ipv4 = item.kind is Kind.IP and ":" not in item.value
    before, after = _IPV4_EDGE if ipv4 else _EDGES.get(item.kind, _DEFAULT_EDGE)
    body = re.escape(item.value)
    if item.kind in _CASELESS:
        body = f"(?i:{body})"
    return f"(?<!{before})(?:{body})(?!{after})"
