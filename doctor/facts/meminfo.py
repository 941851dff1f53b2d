"""The /proc/meminfo parser, on its own so that low-level modules can use it without the Facts model."""

from __future__ import annotations


def parse_meminfo(text: str) -> dict[str, int]:
    """`Key:   12345 kB` lines → bytes. Lines that do not parse are skipped."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        key, sep, rest = line.partition(":")
        words = rest.split()
        # ASCII digits only ("²".isdigit() is True but int() rejects it), and few enough for int().
        if not sep or not words or not (words[0].isascii() and words[0].isdigit()) or len(words[0]) > 30:
            continue
        scale = 1024 if len(words) > 1 and words[1].lower() == "kb" else 1
        values[key.strip()] = int(words[0]) * scale
    return values
