"""What a person says about the machine in words, where no tool output says it.

Bug reports name the hardware in prose or in a tool triage does not parse: "在5060ti上运行报错", "4xRTX 4090",
lshw's `product: GP107 [GeForce GTX 1050 Ti]`, `/proc/driver/nvidia/version`'s `NVRM version: ... Kernel Module
470.223.02`, a `Driver Version: 460.80` under a label of the person's own, "on WSL 2", a macOS home folder
(`/Users/name/...`). Each is a fact the checks need (the GPU's compute capability, the driver's CUDA, the
platform), and a first command that asks for what the paste already says wastes the person's turn. Only what
the paste says once and without contradiction is taken: two different GPU models named, and none is.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

# NVIDIA's consumer lines, as people write them: "RTX 4090", "rtx4090", "GTX 1050 Ti", "5060ti", "3080 Super".
# A bare number counts only with its Ti/Super suffix (a bare "4090" may be a port or a year). The patterns run
# on the lower-cased text and start with their literals, so that the regex engine skips ahead to them (a
# lookbehind first made it try every position: 8 s on a 100k-line paste); where a match starts is judged in
# _starts_a_name: ASCII only, so "在5060ti" names a card, "4xRTX 4090" four of them, and "0xa100" is hex.
_CONSUMER = re.compile(
    r"(?:geforce[ \t]+)?(?P<line>rtx|gtx|gts|gt|mx)[ \t-]?(?P<num>\d{3,4})(?!\d)(?:[ \t]?(?P<suf>ti|super|s)(?![a-z0-9]))?"
    r"(?:[ \t]?(?P<mobile>laptop|mobile|m)(?![a-z0-9]))?"
    r"|(?P<bare>[1-5]0[5-9]0)[ \t]?(?P<baresuf>ti|super)(?![a-z0-9])"
)
# Data-centre and workstation parts by their names; the short ones (T4, L4, A10, P40) only after NVIDIA or Tesla,
# where they cannot be a hex digit pair, a paper size or a row of a table.
_DATACENTER = re.compile(
    r"(?P<name>gb[23]00|gh200|b[12]00|h[12]00|h800|h20|a100|a800|l40s|l40|v100s?|p100|k80"
    r"|rtx[ \t]?(?:pro[ \t])?[456]000(?:[ \t]?ada)?|rtx[ \t]?a\d{4}|titan[ \t](?:rtx|v|xp))(?![\w-])"
    r"|(?:nvidia|tesla)[ \t](?P<short>[tlapkm]\d{1,2}[gs]?)\b"
)


def _starts_a_name(text: str, at: int, also: str = "") -> bool:
    """Nothing of a word (ASCII letter, digit, _ or -, and `also`) just before `at`, unless a count: "4x", "10x"."""
    before = text[at - 1] if at else " "
    if before in "x×" and at >= 2 and text[at - 2] in "123456789":
        return True
    if before in "x×" and at >= 3 and text[at - 2] == "0" and text[at - 3] in "123456789":
        return True
    return not (before.isascii() and (before.isalnum() or before in "_-" + also))


# The driver's version, said in words: the kernel module's banner, nvidia-smi's label anywhere, "driver 535.104.05"
_DRIVER = re.compile(
    r"NVRM version:.*?Kernel Module(?:[ \t]+for[ \t]+\w+)?[ \t]+(?P<nvrm>\d{3}\.\d{1,3}(?:\.\d{1,3})?)"
    r"|Driver Version[ \t]*[:：][ \t]*(?P<smi>\d{3}\.\d{1,3}(?:\.\d{1,3})?)"
    r"|\bdriver(?:[ \t]+version)?[ \t]*[:=]?[ \t]*(?P<said>[1-9]\d{2}\.\d{2,3}(?:\.\d{1,3})?)\b",
    re.IGNORECASE,
)
# A Jetson by its name or its software: "Jetson orin agx", "AGX Orin", "Jetpack 6.2", "L4T R35.3.1"
_JETSON = re.compile(
    r"\bJetson[ \t]+(?:AGX[ \t]+|NX[ \t]+)?(?P<model>Orin|Xavier|Nano|TX2|TX1|Thor)\b"
    r"|\b(?:AGX|NX)[ \t]+(?P<model2>Orin|Xavier|Thor)\b"
    r"|\bJet[Pp]ack[ \t]*(?P<jetpack>\d+(?:\.\d+){0,2})"
    r"|\bL4T[ \t]*R?(?P<l4t>\d{2}\.\d+(?:\.\d+)?)",
    re.IGNORECASE,
)
# An AMD card by name, for its gfx target (compat.rocm_gfx.PRODUCT_TARGETS knows which): "amd rx6600"
_AMD = re.compile(r"(?<![A-Za-z0-9])(?:RX[ \t]?\d{4}|Radeon[ \t]?\d{3,4}[MS]?)", re.IGNORECASE)
# The person says the machine has no NVIDIA GPU: an Intel GPU named, "I don't have any NVIDIA adapter", "I'm
# running on CPU" (and the same in Chinese). Never an error's own words ("No CUDA GPUs are available").
_NO_NVIDIA = re.compile(
    r"\bI[ \t]+(?:do[ \t]*n[o']?t|don'?t|dont)[ \t]+have[ \t]+(?:an?[ \t]+|any[ \t]+)?(?:nvidia|dedicated|discrete|cuda)?"
    r"[\w \t-]{0,12}?(?:gpus?|graphics|adapters?|cards?)\b"
    r"|\bintel[ \t]+(?:gpu|iris|uhd|hd[ \t]+graphics|arc)\b|\biris[ \t]+xe\b"
    r"|\bI(?:'?m|[ \t]+am)[ \t]+(?:running|using)[ \t]+(?:it[ \t]+)?on[ \t]+(?:the[ \t]+|my[ \t]+)?cpu\b"
    r"|使用的?是[ \t]*cpu|用的是[ \t]*cpu|没有(?:独立|nvidia[ \t]*)?显卡",
    re.IGNORECASE,
)
# A laptop's second GPU, said so ("NVIDIA GPU" alone is not: torch's own error says "you have an NVIDIA GPU")
_DUAL = re.compile(r"geforce|quadro|\b[rg]tx[ \t]?\d|dedicated[ \t]+gpu|discrete[ \t]+gpu|\bdgpu\b|optimus")
_WSL_WORDS = re.compile(r"\bWSL[ \t]?2?\b|microsoft-standard-WSL", re.IGNORECASE)
# A macOS home folder (`/Users/name/`, not `C:/Users/name/`), or the system named
_MACOS = re.compile(r"(?<![A-Za-z]:)(?<![\w.])/Users/[^/\s]+/|\bmacOS\b|\bMac\s?OS\s?X\b|\bdarwin\b")


@dataclass(frozen=True)
class Said:
    """One thing the paste says, and the line (1-based) that says it."""

    value: str
    line: int


@dataclass(frozen=True)
class ProseFacts:
    """What the paste's words say of the machine (None: not said, or said two ways)."""

    gpu: Said | None = None  # a GPU model, as the GPU table spells it ("GeForce RTX 5060 Ti", "H100")
    driver: Said | None = None  # the NVIDIA driver's version ("470.223.02")
    wsl: int | None = None  # the line that says WSL
    macos: int | None = None  # the line with a macOS path or name
    jetson: Said | None = None  # the Jetson's model as written ("Jetson orin agx"), or "Jetson"
    jetpack: Said | None = None  # its JetPack version ("6.2")
    l4t: Said | None = None  # or its L4T release ("35.3.1")
    amd_gpu: Said | None = None  # an AMD card as written ("rx6600", "Radeon 780M")
    no_nvidia: Said | None = None  # the person says there is no NVIDIA GPU ("integrated Intel GPU", "on CPU")


MAX_LINE = 2000  # a longer line is a flood (a base64 blob, a minified file), not a person's words
MAX_LINES = 5000  # a person's words come before the log they paste: a 100k-line log is not read for them


def read_prose(lines: list[str]) -> ProseFacts:
    """One pass of each pattern over the whole text (not one per line: a 100k-line paste is read in 0.1 s),
    each pattern only where a word it needs appears at all; lines are told by their offsets."""
    kept = [line if len(line) <= MAX_LINE else "" for line in lines[:MAX_LINES]]
    text = "\n".join(kept)
    lowered = text.lower()
    starts = list(itertools.accumulate((len(line) + 1 for line in kept[:-1]), initial=0))

    def line_of(found: re.Match[str]) -> int:
        return bisect.bisect_right(starts, found.start())

    gpus: dict[str, int] = {}
    for found in _CONSUMER.finditer(lowered):
        name = _consumer_name(found)
        if name is not None and _starts_a_name(lowered, found.start(), "." if found["bare"] else ""):
            gpus.setdefault(name, line_of(found))
    for found in _DATACENTER.finditer(lowered):
        if _starts_a_name(lowered, found.start()):
            gpus.setdefault(_datacenter_name(found), line_of(found))
    drivers: dict[str, int] = {}
    if "river" in lowered or "nvrm" in lowered:
        for found in _DRIVER.finditer(text):
            drivers.setdefault(next(v for v in found.groups() if v is not None), line_of(found))
    jetson: dict[str, dict[str, int]] = {"model": {}, "jetpack": {}, "l4t": {}}
    if any(word in lowered for word in ("jet", "l4t", "orin", "xavier")):
        for found in _JETSON.finditer(text):
            if found["jetpack"] or found["l4t"]:
                kind = "jetpack" if found["jetpack"] else "l4t"
                jetson[kind].setdefault(found[kind], line_of(found))
            else:
                jetson["model"].setdefault((found["model"] or found["model2"]).title(), line_of(found))
    amd: dict[str, int] = {}
    if "rx" in lowered or "radeon" in lowered:
        for found in _AMD.finditer(text):
            amd.setdefault(re.sub(r"\s+", " ", found[0]), line_of(found))
    no_nvidia = None
    if any(word in lowered for word in ("have", "intel", "iris", "cpu", "显卡")):
        said = _NO_NVIDIA.search(text)
        no_nvidia = Said(said[0], line_of(said)) if said is not None else None
        if (
            said is not None
            and ("intel" in said[0].lower() or "iris" in said[0].lower())
            and _DUAL.search(lowered)
        ):
            no_nvidia = None  # a laptop's Intel GPU beside its NVIDIA one
    wsl = _first_line(_WSL_WORDS, text, line_of) if "wsl" in lowered else None
    macos = (
        _first_line(_MACOS, text, line_of)
        if "/users/" in lowered or "mac" in lowered or "darwin" in lowered
        else None
    )
    return ProseFacts(
        _one(gpus),
        _one(drivers),
        wsl,
        macos,
        _one(jetson["model"])
        or (Said("Jetson", min(jetson["jetpack"].values())) if jetson["jetpack"] else None),
        _one(jetson["jetpack"]),
        _one(jetson["l4t"]),
        _one(amd),
        no_nvidia,
    )


def _first_line(pattern: re.Pattern[str], text: str, line_of: Callable[[re.Match[str]], int]) -> int | None:
    found = pattern.search(text)
    return line_of(found) if found is not None else None


def _one(said: dict[str, int]) -> Said | None:
    if len(said) != 1:
        return None
    value, line = next(iter(said.items()))
    return Said(value, line)


def _consumer_name(found: re.Match[str]) -> str | None:
    if found["bare"]:
        return f"GeForce RTX {found['bare']} {_suffix(found['baresuf'])}"
    line, num = found["line"].upper(), found["num"]
    if line == "RTX" and num in {"4000", "5000", "6000", "8000"}:  # workstation parts (_DATACENTER's)
        return None
    suffix = f" {_suffix(found['suf'])}" if found["suf"] else ""
    mobile = found["mobile"] or ""
    mobile = "M" if mobile.upper() == "M" else " Laptop GPU" if mobile else ""
    spaced = "" if line == "MX" else " "  # the MX parts are written MX150
    return f"GeForce {line}{spaced}{num}{suffix}{mobile}"


def _datacenter_name(found: re.Match[str]) -> str:
    name = re.sub(r"\s+", " ", found["name"] or found["short"]).upper()
    return name.replace("ADA", "Ada").replace("XP", "Xp").replace("RTXA", "RTX A")


def _suffix(text: str) -> str:
    return {"ti": "Ti", "super": "SUPER", "s": "SUPER"}[text.lower()]
