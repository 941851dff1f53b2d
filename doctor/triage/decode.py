"""Bytes someone pasted → text the parsers can read, or a clear reason why not.

Handles what pastes really are: UTF-8 with or without a BOM, UTF-16 as Windows PowerShell's `>` writes it
(with or without a BOM), CRLF and lone CR line ends, terminal colours and other escape sequences (coloured
tracebacks, `rich` output), and pastes far larger than a report. Escape sequences are removed before anything
is parsed or shown, so nothing from a paste can drive the terminal.
"""

from __future__ import annotations

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass

MAX_BYTES = 8 << 20  # a report is a few KB; a whole NCCL_DEBUG=INFO log is read up to here
MAX_LINES = 50_000  # lines looked at; a longer paste is cut (and says so)
_SAMPLE = 4096
# CSI (colours, cursor), OSC (window title, hyperlinks), and the two-byte escapes
_ESCAPES = lazy(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI ... final byte
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL or ST
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC strings
    r"|\x1b[@-Z\\-_]"  # other two-byte escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
_CONTROL = lazy(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class UnreadablePaste(Exception):
    """Not text a person pasted: exit 2 with this message."""


@dataclass(frozen=True)
class Paste:
    text: str  # decoded; line ends are "\n"; escape sequences and control characters removed
    encoding: str  # "utf-8", "utf-8 (BOM)", "utf-16-le", "utf-16-be"
    notes: tuple[str, ...] = ()  # what was done to it, for the person: "cut at 50000 lines", ...


def decode_paste(data: bytes, name: str) -> Paste:
    """`data` is at most MAX_BYTES + 1 bytes (more means the input was longer than MAX_BYTES)."""
    notes: list[str] = []
    if len(data) > MAX_BYTES:
        data = data[:MAX_BYTES]
        notes.append(f"only the first {MAX_BYTES >> 20} MiB were read")
    if not data.strip():
        raise UnreadablePaste(f"{name} is empty")
    encoding, text = _decode(data)
    if "\x00" in text or _mostly_control(text):
        raise UnreadablePaste(f"{name} is binary data, not text that was pasted")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    cleaned = _ESCAPES.sub("", text)
    if cleaned != text:
        notes.append("terminal escape sequences (colours) were removed")
    cleaned = _CONTROL.sub("", cleaned)
    unquoted = _unquote(cleaned)
    if unquoted != cleaned:
        notes.append("quoted lines ('> ') were read without their quote marks")
        cleaned = unquoted
    lines = cleaned.split("\n")
    if len(lines) > MAX_LINES:
        cleaned = "\n".join(lines[:MAX_LINES])
        notes.append(f"only the first {MAX_LINES} lines were read")
    return Paste(cleaned, encoding, tuple(notes))


def _decode(data: bytes) -> tuple[str, str]:
    if data.startswith(b"\xef\xbb\xbf"):
        return "utf-8 (BOM)", data[3:].decode("utf-8", errors="replace")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) and not data.startswith(b"\xff\xfe\x00\x00"):
        codec = "utf-16-le" if data.startswith(b"\xff\xfe") else "utf-16-be"
        return codec, data[2:].decode(codec, errors="replace")
    sample = data[:_SAMPLE]
    even, odd = sample[0::2], sample[1::2]
    if len(sample) >= 4 and odd.count(0) > 0.3 * len(odd) and even.count(0) < 0.05 * len(even):
        return "utf-16-le", data.decode("utf-16-le", errors="replace")
    if len(sample) >= 4 and even.count(0) > 0.3 * len(even) and odd.count(0) < 0.05 * len(odd):
        return "utf-16-be", data.decode("utf-16-be", errors="replace")
    return "utf-8", data.decode("utf-8", errors="replace")


# A markdown or e-mail quote: "> File ...", ">     from x import y", "> ImportError: ..." (blind set 20: a
# traceback quoted that way got "No problem found")
_QUOTE = lazy(r"^(?:>(?!>>)[ \t]?)+")  # never a Python prompt (">>> import torch")


def _unquote(text: str) -> str:
    """Each block of two or more lines in a row that start with '>' loses its quote marks: what a program
    printed, quoted in an issue, is read as printed. A lone '>' line (a shell's continuation prompt, a reply's
    single quoted sentence) stays."""
    if "\n>" not in text and not text.startswith(">"):
        return text
    lines = text.split("\n")
    quoted = [bool(_QUOTE.match(line)) for line in lines]
    out = []
    for i, line in enumerate(lines):
        block = quoted[i] and ((i > 0 and quoted[i - 1]) or (i + 1 < len(lines) and quoted[i + 1]))
        out.append(_QUOTE.sub("", line, count=1) if block else line)
    return "\n".join(out)


def _mostly_control(text: str) -> bool:
    """Bytes that decode but are not text: many control characters, or mostly replacement characters."""
    sample = text[:_SAMPLE]
    if not sample:
        return False
    control = len(_CONTROL.findall(sample))
    replaced = sample.count("\ufffd")
    return control > 0.1 * len(sample) or replaced > 0.3 * len(sample)
