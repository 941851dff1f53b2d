"""Which lines of a paste are what kind of text: the person's own words, a logging framework's warning the
program went on after, a Python exception's last line. The rules that weigh one hit against another read them."""

from __future__ import annotations

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText


def words_only_lines(pasted: PastedText) -> frozenset[int]:
    """The lines where only a words signature (the person's sentence, "_in_words") was read."""
    words = {h.line for h in pasted.hits if h.signature.id.endswith("_words")}
    shown = {h.line for h in pasted.hits if not h.signature.id.endswith("_words")}
    return frozenset(words - shown)


# A logging framework's warning line ("WARNING 08-27 13:59:59 _custom_ops.py:15] ...", "WARNING:root:...",
# "[WARN] ..."): the program went on after it. Never Python's own "UserWarning: ...", which torch uses for its
# driver and capability warnings
_LOGGED_WARNING = lazy(r"^\s*\[?(?:WARNING|WARN)\b[\] :]")


# A Python exception's last line, as a traceback ends or a title quotes it ("# ValueError: Bfloat16 is only ...")
_EXCEPTION = lazy(r"^\s*(?:#+\s*)?(?:[\w.]+\.)?\w*(?:Error|Exception)(?:\[\w+\])?: \S")


def logged_warning_lines(pasted: PastedText) -> frozenset[int]:
    """The lines with a known error that a logger printed as a warning."""
    return frozenset(h.line for h in pasted.hits if _LOGGED_WARNING.match(h.text))


# Python's warnings.warn() line ("torch/cuda/__init__.py:52: UserWarning: CUDA initialization: ..."): printed, and
# the program went on
_PYTHON_WARNING = lazy(r"\b\w*Warning: ")


def warned_and_went_on(pasted: PastedText, bugs: frozenset[str]) -> frozenset[int]:
    """The lines of warnings (a logger's, or Python's own) that come before a known bug of the program's (`bugs`:
    catalogue ids): the program went on from them and stopped on the bug."""
    bug_lines = [h.line for h in pasted.hits if h.signature.id in bugs]
    if not bug_lines:
        return frozenset()
    first_bug = min(bug_lines)
    return frozenset(
        h.line
        for h in pasted.hits
        if h.line < first_bug and (_LOGGED_WARNING.match(h.text) or _PYTHON_WARNING.search(h.text))
    )


def exception_lines(pasted: PastedText) -> frozenset[int]:
    """The lines with a known error that are a Python exception's own line: what stopped the program."""
    return frozenset(h.line for h in pasted.hits if _EXCEPTION.match(h.text))


def only_words(verdict: Verdict, said: frozenset[int]) -> bool:
    return bool(verdict.lines) and all(line in said for line in verdict.lines)


def shown_by_a_program(verdict: Verdict, said: frozenset[int]) -> bool:
    """The verdict rests on a line a program printed (not only the person's words, nor the tables alone)."""
    return any(line not in said for line in verdict.lines)
