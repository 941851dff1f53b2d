"""Values that look like secrets, found in any text and replaced, whatever `--include-identifiers` says.

Pure: text in, text out. The patterns are the shapes that leak in support requests: credentials in URLs
(`https://user:token@host`, pip index URLs), provider tokens (GitHub, Hugging Face, AWS, Slack, OpenAI,
GitLab), `NAME=value` where the name says secret, `.netrc` passwords and `Authorization` headers.
"""

from __future__ import annotations

import re

SECRET_MARK = "<secret>"

# Names that hold a secret: HF_TOKEN, AWS_SECRET_ACCESS_KEY, password, api-key, PIP_INDEX_URL is matched by
# its value (a URL with credentials) instead.
_SECRET_NAME = r"[A-Za-z0-9_.-]*(?:token|secret|passw(?:or)?d|(?<![a-z])pass\b|apikey|api[_-]key|[_.-]key\b|_key_|credential|auth_|_auth\b|authorization|cookie)[A-Za-z0-9_.-]*"
SECRET_NAME = re.compile(rf"^{_SECRET_NAME}$", re.IGNORECASE)

_PATTERNS: tuple[re.Pattern[str], ...] = (
    # scheme://user:password@host and scheme://token@host (pip, conda and git URLs)
    re.compile(r"(?<=://)[^/@\s\"'<>]+@"),
    # provider token shapes
    re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    re.compile(r"\bhf_[A-Za-z0-9]{20,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"),
    re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"),
    re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"),
    re.compile(r"\bpypi-[A-Za-z0-9_-]{50,}"),
    # NAME=value where NAME says secret (environ, shell, ini/pip.conf "password = x")
    re.compile(
        rf"(?i)(?<![A-Za-z0-9_.-])(?:{_SECRET_NAME})[ \t]*=[ \t]*(?P<value>(?!<secret>)[^\s\x00\"',;]+)"
    ),
    # NAME: <long opaque value> (YAML, JSON-ish, headers); short values such as `authflags: none` stay
    re.compile(
        rf"(?i)(?<![A-Za-z0-9_.-])(?:{_SECRET_NAME})[\"']?[ \t]*:[ \t]*[\"']?(?P<value>(?=[A-Za-z0-9+/_=.-]*[0-9])(?=[A-Za-z0-9+/_=.-]*[A-Za-z])[A-Za-z0-9+/_=.-]{{16,}})"
    ),
    # .netrc: machine HOST login USER password SECRET
    re.compile(r"(?im)^[ \t]*(?:machine|default)\b.*?\bpassword[ \t]+(?P<value>(?!<secret>)\S+)"),
    # Authorization: Bearer/Basic <value>
    re.compile(
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
        bool(SECRET_NAME.match(name))
        or redact_secrets(value)[1] > 0
        or redact_secrets(f"{name}={value}")[1] > 0
    )
