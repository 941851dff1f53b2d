"""Write each error signature's `needle`: a piece of plain text every line its pattern matches contains.

Triage reads every line of a paste against every signature (checks/support/error_signatures.json). With the
needle, a line that lacks it is passed over without the regular expression, and the expression is compiled only
when some line has it: compiling all of them was a tenth of `gpu-doctor triage`'s start-up (issue 17).

The needle is derived from the pattern's parse tree: the longest run of literal characters that every match
must contain (outside alternatives, optional parts and lookarounds), lower-cased, when it has at least
MIN_NEEDLE characters; otherwise none and the line is always searched. A needle is only a first test: the
pattern still decides. tests/triage/test_signatures.py fails when a needle differs from this derivation, so
after adding or changing a signature run `python tools/regen.py`.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

# The parser behind re.compile: private, but stable across 3.10-3.14 in what is used here, and used only by
# this generator and its test, never at run time.
if sys.version_info >= (3, 11):
    from re import _constants as constants
    from re import _parser as parser
else:  # pragma: no cover - 3.10
    import sre_constants as constants
    import sre_parse as parser

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "checks" / "support" / "error_signatures.json"
MIN_NEEDLE = 4
MIN_SHORT_NEEDLE = 3  # a needle per alternative, where none has MIN_NEEDLE characters
_REPEATS = (constants.MAX_REPEAT, constants.MIN_REPEAT, getattr(constants, "POSSESSIVE_REPEAT", None))


def _runs(items: Any) -> list[str]:
    """Every run of consecutive literal characters in a sequence that must match as a whole."""
    found: list[str] = []
    run: list[str] = []
    for op, av in items:
        if op is constants.LITERAL:
            run.append(chr(av))
            continue
        found.append("".join(run))
        run = []
        if op is constants.SUBPATTERN:  # a group: its content must match too
            found.extend(_runs(av[-1]))
        elif op in _REPEATS and av[0] >= 1:  # x+ or x{2,}: x matches at least once
            found.extend(_runs(av[2]))
    found.append("".join(run))
    return found


def derive(pattern: str) -> str | None:
    """The needle of a case-insensitive pattern, or None when it has no long enough literal run."""
    runs = [r.lower() for r in _runs(parser.parse(pattern, re.IGNORECASE)) if r.isascii()]
    best = max(runs, key=len, default="")
    return best if len(best) >= MIN_NEEDLE else None


def derive_any(pattern: str) -> list[str] | None:
    """For a pattern without a needle: a needle per alternative of an alternation every match goes through,
    when every alternative has one (or, itself an alternation, needles of its own); a line must contain at
    least one of them. Else None.

    The alternation need not be the whole pattern: what stands beside it may be a zero-width test (`\b`, `^`,
    a lookaround), an optional part, or text too short for a needle; re's parser also moves a prefix every
    alternative shares (`\ba|\bb`) out in front of it. A positive lookaround's alternation counts too: what
    it looks at is on the same line."""
    if derive(pattern) is not None:
        return None
    tree = parser.parse(pattern, re.IGNORECASE)
    found = _needles(tree, short=True)
    return sorted(set(found)) if found else None


def _needles(items: Any, short: bool) -> list[str] | None:
    """Text of which every match of this sequence contains at least one piece, or None. `short`: where no
    alternation has long enough needles, also shorter ones ("oom", "gpu") and two or more characters that
    have no case ("显存"): a few lines of a paste hold one, where without needles every line is searched."""
    if short:  # each part as selective as it can be: the long needles where it has them
        strict = _needles(items, short=False)
        if strict:
            return strict
    runs = [r.lower() for r in _runs(items) if r.isascii()]
    best = max(runs, key=len, default="")
    if len(best) >= MIN_NEEDLE:
        return [best]
    if short:
        uncased = [r for r in _runs(items) if not r.isascii() and r.casefold() == r == r.upper()]
        best = max([r for r in runs if len(r) >= MIN_SHORT_NEEDLE] + uncased, key=len, default="")
        if len(best) >= 2:
            return [best]
    for op, av in items:  # the parts every match goes through, in order: the first that yields needles
        if op is constants.BRANCH:
            each = [_needles(branch, short) for branch in av[1]]
            found = None if None in each else [n for needles in each if needles for n in needles]
        elif op is constants.SUBPATTERN:
            found = _needles(av[-1], short)
        elif op in _REPEATS and av[0] >= 1:
            found = _needles(av[2], short)
        elif op is constants.ASSERT:  # (?=...) or (?<=...): (direction, pattern)
            found = _needles(av[1], short)
        else:
            continue
        if found:
            return found
    return None


def with_needles(document: dict[str, Any]) -> dict[str, Any]:
    """The catalogue with each entry's needle or needles_any set (or removed), keys in their usual order."""
    entries = []
    for entry in document["signatures"]:
        fresh = {k: v for k, v in entry.items() if k not in ("needle", "needle_any")}
        needle, needle_any = derive(entry["pattern"]), derive_any(entry["pattern"])
        ordered: dict[str, Any] = {}
        for key, value in fresh.items():
            ordered[key] = value
            if key == "pattern" and needle is not None:
                ordered["needle"] = needle
            if key == "pattern" and needle_any is not None:
                ordered["needle_any"] = needle_any
        entries.append(ordered)
    return {**document, "signatures": entries}


def catalogue_text(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    document = json.loads(CATALOGUE.read_text(encoding="utf-8"))
    updated = with_needles(document)
    CATALOGUE.write_text(catalogue_text(updated), encoding="utf-8")
    count = sum(1 for e in updated["signatures"] if "needle" in e or "needle_any" in e)
    print(
        f"wrote {CATALOGUE.relative_to(ROOT)}: {count} of {len(updated['signatures'])} signatures have a needle"
        " (or one per alternative)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
