"""Run triage over the stored real pastes and show, for each, what the thread concluded beside what we say.

    python tools/triage_corpus.py                  # a table: file, the thread's cause, our cause and first step
    python tools/triage_corpus.py --pin FILE ...   # pin what triage answers now (all files: no names)
    python tools/triage_corpus.py --pin --review REVIEW.json   # and the expert judgement of each answer

The corpus is tests/triage/reports/ (collect_env reports) and tests/triage/pastes/ (errors, tool output), each
with a MANIFEST.json naming its source thread and the diagnosis the thread reached. A pin records what triage
answers (cause, first command, problems) beside a judgement: whether an expert found that cause and that first
step right, what the right answer is, and whether the thread itself was wrong and why. tests/triage/
test_corpus.py holds every answer to its pin, so a change of answer is seen and its judgement revisited.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from torch_gpu_doctor.triage.outcome import Kind  # noqa: E402
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste  # noqa: E402

CORPUS = (ROOT / "tests" / "triage" / "reports", ROOT / "tests" / "triage" / "pastes")
PINS = ROOT / "tests" / "triage" / "corpus_expected.json"


def manifest() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for folder in CORPUS:
        listing = folder / "MANIFEST.json"
        if listing.exists():
            for entry in json.loads(listing.read_text(encoding="utf-8")):
                found[f"{folder.name}/{entry['file']}"] = entry
    return found


def paste_files() -> list[Path]:
    return sorted(p for folder in CORPUS for p in folder.glob("*.txt"))


def observed(d: PasteDiagnosis) -> dict[str, Any]:
    """What triage concludes, in the shape of a pin."""
    cause = d.result.cause
    fix = cause.finding.remediation if cause is not None else None
    return {
        "cause": None if cause is None else f"{cause.finding.check_id}:{cause.finding.status.value}",
        "confidence": d.result.confidence,
        "first_command": fix.commands[0].display() if fix is not None and fix.commands else None,
        "to_be_sure": cause.find_out if cause is not None else None,
        "problems": sorted(
            f"{v.finding.check_id}:{v.finding.status.value}"
            for v in d.result.verdicts
            if v.kind == Kind.PROBLEM
        ),
        "signatures": sorted({h.signature.id for h in d.pasted.hits}),
        "unrecognised": unrecognised(d),
    }


def unrecognised(d: PasteDiagnosis) -> dict[str, Any] | None:
    """The failure shown that no signature knows, where no cause was found: its line and whether it is cut."""
    shown = d.result.unrecognised
    return None if shown is None else {"line": shown.line, "cut": shown.cut}


def _judgements(review: Path) -> dict[str, dict[str, Any]]:
    """An expert review's entries, keyed like the pins: whether the cause and the first step were right, the
    right answer, whether the thread was wrong (and why), and the general rule that would fix ours."""
    judged: dict[str, dict[str, Any]] = {}
    for entry in json.loads(review.read_text(encoding="utf-8")):
        rule = entry.get("rule", "")
        judged[entry["file"]] = {
            "cause_right": entry["verdict_ok"],
            "next_step_right": entry["next_step_ok"],
            "right_answer": entry["what_is_right"],
            "thread_wrong": entry["thread_wrong"],
            "thread_wrong_why": entry.get("thread_wrong_why", ""),
            "open_rule": rule.split(":", 1)[0]
            if entry["verdict_ok"] != "yes" or entry["next_step_ok"] != "yes"
            else "",
        }
    return judged


def key_of(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pin", nargs="*", metavar="FILE", help="propose pins for these files (all: no names)"
    )
    parser.add_argument("--review", metavar="JSON", help="an expert review: [{file, verdict_ok, ...}]")
    args = parser.parse_args(argv)
    notes = manifest()
    if args.pin is not None:
        pins = json.loads(PINS.read_text(encoding="utf-8")) if PINS.exists() else {}
        judged = _judgements(Path(args.review)) if args.review else {}
        chosen = [p for p in paste_files() if not args.pin or p.name in args.pin or key_of(p) in args.pin]
        for path in chosen:
            key = key_of(path)
            judgement = judged.get(key) or pins.get(key, {}).get("judgement")
            pins[key] = observed(diagnose_paste(path.read_bytes(), path.name))
            if judgement:
                pins[key]["judgement"] = judgement
        PINS.write_text(
            json.dumps(pins, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8"
        )
        print(
            f"{len(chosen)} pinned in {PINS.relative_to(ROOT)}: revisit the judgement of each answer that moved"
        )
        return 0
    for path in paste_files():
        d = diagnose_paste(path.read_bytes(), path.name)
        seen = observed(d)
        note = notes.get(key_of(path), {})
        expected = note.get("expected", {})
        thread = expected.get("cause") or expected.get("verdict") or ""
        print(
            f"{key_of(path)}\n  thread: {thread[:150]}\n  ours:   {seen['cause']} · {seen['first_command'] or '-'}"
        )
        cause = d.result.cause
        if cause is not None:
            print(f"          {cause.finding.summary[:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
