"""Every real paste of the corpus (tests/triage/reports and pastes, sources in their MANIFEST.json) keeps the
answer pinned in corpus_expected.json: its most likely cause, its first command and every problem found.

A pin is not a claim that the answer is right: each carries an expert's judgement of it (cause and first
step right, partly, or not; the right answer; whether the thread itself was wrong, and why). When a change
moves an answer, this test fails; re-pin with `python tools/triage_corpus.py --pin FILE` and revisit the
judgement of that file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from torch_gpu_doctor.triage.outcome import Kind
from torch_gpu_doctor.triage.pipeline import diagnose_paste
from torch_gpu_doctor.triage.whose import lists_torchs_stack, mentions_torch

HERE = Path(__file__).parent
PINS: dict[str, dict[str, Any]] = json.loads((HERE / "corpus_expected.json").read_text(encoding="utf-8"))
FILES = sorted(p for folder in ("reports", "pastes") for p in (HERE / folder).glob("*.txt"))
JUDGED = ("yes", "partly", "no")


def _key(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def test_every_corpus_file_is_pinned_and_judged() -> None:
    assert sorted(_key(p) for p in FILES) == sorted(PINS)
    assert sum(1 for p in FILES if p.parent.name == "reports") >= 60
    assert sum(1 for p in FILES if p.parent.name == "pastes") >= 60
    for key, pin in PINS.items():
        judgement = pin["judgement"]
        assert judgement["cause_right"] in JUDGED and judgement["next_step_right"] in JUDGED, key
        assert judgement["right_answer"].strip(), key
        assert not judgement["thread_wrong"] or judgement["thread_wrong_why"].strip(), key


def test_every_corpus_file_has_its_source() -> None:
    sources: dict[str, Any] = {}
    for folder in ("reports", "pastes"):
        for entry in json.loads((HERE / folder / "MANIFEST.json").read_text(encoding="utf-8")):
            sources[f"{folder}/{entry['file']}"] = entry
    old = (HERE / "reports" / "SOURCES.md").read_text(encoding="utf-8")
    for path in FILES:
        entry = sources.get(_key(path))
        assert (entry is not None and entry["url"].startswith("https://")) or f"`{path.name}`" in old, (
            path.name
        )


@pytest.mark.parametrize("path", FILES, ids=_key)
def test_the_answer_is_the_pinned_one(path: Path) -> None:
    pin = PINS[_key(path)]
    d = diagnose_paste(path.read_bytes(), path.name)
    cause = d.result.cause
    fix = cause.finding.remediation if cause is not None else None
    assert (None if cause is None else f"{cause.finding.check_id}:{cause.finding.status.value}") == pin[
        "cause"
    ]
    assert (fix.commands[0].display() if fix is not None and fix.commands else None) == pin["first_command"]
    problems = sorted(
        f"{v.finding.check_id}:{v.finding.status.value}" for v in d.result.verdicts if v.kind == Kind.PROBLEM
    )
    assert problems == pin["problems"]
    shown = d.result.unrecognised
    assert (None if shown is None else {"line": shown.line, "cut": shown.cut}) == pin["unrecognised"]


@pytest.mark.parametrize(
    "path",
    [p for p in FILES if not mentions_torch(p.read_text(encoding="utf-8", errors="replace"))],
    ids=_key,
)
def test_another_programs_error_is_never_answered_with_a_torch_install(path: Path) -> None:
    """A paste that never mentions torch, by name or by its own wording of a CUDA error, is another program's
    (a CUDA binary, llama.cpp, a container): no verdict may tell it to install torch, which changes nothing
    there (CHIA-Network/bladebit#431). A question in words alone ("can a new version support the Tesla
    K40m?", pytorch#44253) has no other program in it: pasted into a PyTorch doctor, it is about torch; so is
    a package list of torch's stack (accelerate, bitsandbytes) cut before torch's own row (LLaMA-Factory#5113)."""
    d = diagnose_paste(path.read_bytes(), path.name)
    if d.pasted.words_only or lists_torchs_stack(d.pasted):
        return
    for verdict in d.result.verdicts:
        fix = verdict.finding.remediation
        argv = [arg for c in fix.commands for arg in c.argv] if fix is not None else []
        assert not any(a == "torch" or a.startswith("torch==") for a in argv), (
            verdict.finding.check_id,
            argv,
        )


@pytest.mark.parametrize("path", FILES, ids=_key)
def test_each_line_of_a_verdict_is_named_once(path: Path) -> None:
    """Two signatures of one check on one line (a torch >= 2.1 out-of-memory line) name it once."""
    for verdict in diagnose_paste(path.read_bytes(), path.name).result.verdicts:
        assert len(verdict.lines) == len(set(verdict.lines)), verdict.finding.check_id
