"""Values that look like secrets, found in any text and replaced, whatever `--include-identifiers` says.

Pure: text in, text out. The patterns are the shapes that leak in support requests: credentials in URLs
(`https://user:token@host`, pip index URLs), provider tokens (GitHub, Hugging Face, AWS, Slack, OpenAI,
GitLab), `NAME=value` where the name says secret, `.netrc` passwords and `Authorization` headers.
"""

from __future__ import annotations

import re

from torch_gpu_doctor.facts.environment import SECRET_NAME, SECRET_NAME_WORDS
from torch_gpu_doctor.lazy_re import lazy

SECRET_MARK = "<secret>"

# Names that hold a secret (the words of torch_gpu_doctor.facts.environment, the one rule), here only where a word is
# a whole part of the name: HF_TOKEN, AWS_SECRET_ACCESS_KEY, password, api-key, but not iommu.passthrough or
# boltctl's `authflags` (replays read those).
_SECRET_NAME = rf"[A-Za-z0-9_.-]*?(?<![A-Za-z0-9])(?:{SECRET_NAME_WORDS})(?![A-Za-z0-9])[A-Za-z0-9_.-]*"
_STRONG_NAME = (
    r"[A-Za-z0-9_.-]*?(?<![A-Za-z0-9])(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|APIKEY|API_KEY|CREDENTIALS?)"
    r"(?![A-Za-z0-9])[A-Za-z0-9_.-]*"
)
# A short value after such a `NAME:` is a secret too (`password: hunter2`), unless it is a YAML word.
_NOT_A_VALUE = r"(?:none|null|~|true|false|yes|no|<secret>)(?![^\s\x00\"',;])"

_PATTERNS: tuple[re.Pattern[str], ...] = (
    # scheme://user:password@host and scheme://token@host (pip, conda and git URLs)
    lazy(r"(?<=://)[^/@\s\"'<>]+@"),
    # provider token shapes
    lazy(r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    lazy(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{20,}"),
    lazy(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    lazy(r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}"),
    lazy(r"(?<![A-Za-z0-9])sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"),
    lazy(r"(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{20,}"),
    lazy(r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}\b"),
    lazy(r"(?<![A-Za-z0-9])pypi-[A-Za-z0-9_-]{50,}"),
    # NAME=value where NAME says secret (environ, shell, ini/pip.conf "password = x")
    lazy(rf"(?i)(?<![A-Za-z0-9_.-])(?:{_SECRET_NAME})[ \t]*=[ \t]*(?P<value>(?!<secret>)[^\s\x00\"',;]+)"),
    # NAME: <long opaque value> (YAML, JSON-ish, headers); short values such as `Node Index: N/A` stay
    lazy(
        rf"(?i)(?<![A-Za-z0-9_.-])(?:{_SECRET_NAME})[\"']?[ \t]*:[ \t]*[\"']?(?P<value>(?=[A-Za-z0-9+/_=.-]*[0-9])(?=[A-Za-z0-9+/_=.-]*[A-Za-z])[A-Za-z0-9+/_=.-]{{16,}})"
    ),
    # password: <any value> (YAML): a short password is still one; YAML words such as `token: null` stay
    lazy(
        rf"(?i)(?<![A-Za-z0-9_.-])(?:{_STRONG_NAME})[\"']?[ \t]*:[ \t]*[\"']?(?P<value>(?!{_NOT_A_VALUE})[^\s\x00\"',;]+)"
    ),
    # .netrc: machine HOST login USER password SECRET
    lazy(r"(?im)^[ \t]*(?:machine|default)\b.*?\bpassword[ \t]+(?P<value>(?!<secret>)\S+)"),
    # Authorization: Bearer/Basic <value>
    lazy(
        r"(?i)\b(?:bearer|basic)[ \t]+(?P<value>(?=[A-Za-z0-9._~+/=-]*[0-9])(?=[A-Za-z0-9._~+/=-]*[A-Za-z])[A-Za-z0-9._~+=-][A-Za-z0-9._~+/=-]{15,})"
    ),
)


def _replace(match: re.Match[str]) -> str:
    whole = match.group(0)
    if "value" in match.re.groupindex and match.group("value") is not None:
        start, end = match.span("value")
        offset = match.start(0)
        return whole[: start - offset] + SECRET_MARK + whole[end - offset :]
    if whole.endswith("@"):
        return SECRET_MARK + "@"
    return SECRET_MARK


def redact_secrets(text: str) -> tuple[str, int]:
    """The text with every secret-looking value replaced by `<secret>`, and how many were replaced."""
    found = 0
    for pattern in _PATTERNS:
        text, n = pattern.subn(_replace, text)
        found += n
    return text, found


def looks_secret(name: str, value: str) -> bool:
    """An environment variable that must not travel: a secret's name, or a value holding one."""
    return (
        bool(SECRET_NAME.search(name))
        or redact_secrets(value)[1] > 0
        or redact_secrets(f"{name}={value}")[1] > 0
    )
