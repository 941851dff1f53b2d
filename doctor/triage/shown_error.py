"""An error a paste shows that no signature knows: a Python traceback's last exception, a traceback cut
before its exception, or the line a program prints when it fails ("collect2: error: ld returned 1 exit
status", "ERROR ... WorkerProc failed to start.", "Segmentation fault").

Where no check finds a cause, this is what triage reports, not "No problem found": a paste that shows a
failure is never fine, and the person learns which line was not understood and what to paste next (blind
set 12: 6 of 40 real pastes showed a failure, 3 of them a traceback cut before its last line, and got "No
problem found" or "found nothing it knows").

Log prefixes are kept apart from the traceback's own text: vLLM prints every line of a worker's traceback
behind "ERROR 03-02 19:49:00 [multiproc_executor.py:783] ", so the prefix of the "Traceback" line, with its
digits free, is taken off each line after it ("... core.py:294] EngineCore hit an exception: Traceback": the
longest part of that prefix the next line starts with).

An error of the environment collector itself (`python collect_env.py` under Python 2, vLLM's script beside
another vLLM) is not the person's problem: the report they then paste is what they wanted to show.
"""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass

_TRACEBACK = "Traceback (most recent call last):"
# The lines Python prints between two chained tracebacks
_CHAINED = ("During handling of the above exception", "The above exception was the direct cause")
# An exception as Python prints it last: "RuntimeError: ...", "torch.OutOfMemoryError: ...", "KeyboardInterrupt"
_EXCEPTION = lazy(r"^(?P<name>[A-Za-z_][\w.]*)(?::[ \t]*(?P<message>.*))?$")
_EXCEPTION_NAME = lazy(r"(?:Error|Exception|Exit|Interrupt|Fault|Failure|Timeout)$")  # a Warning is not one
# A program's own words for failing; not a word of a sentence about it ("I get no error", "error-free")
_FAILED_LINE = lazy(
    r"(?:^|[\s:\]])(?:fatal[ \t]+)?error[ \t]*:[ \t]*\S"  # "collect2: error: ld ...", "fatal error: cuda.h: ..."
    r"|^(?:\S+[ \t]+)?(?:ERROR|FATAL)\b"  # a log level: "ERROR 03-02 ... failed", "[rank0]: FATAL ..."
    r"|\bfailed[ \t]+to[ \t]+(?:start|import|initiali[sz]e|load|launch|open|allocate|create)\b"
    # "vllm start failed with CUDA driver error": a failure and the error it names, said in one clause
    r"|\bfailed[ \t]+with[ \t]+(?:an?[ \t]+)?(?:[\w-]+[ \t]+){0,3}(?:error|exception)\b"
    r"|\bSegmentation[ \t]+fault\b|\(core[ \t]+dumped\)|^Killed[ \t]*$|\bAborted[ \t]+\(core",
)
_DIGITS = lazy(r"\d+")
# a run of a script or module that collects the environment for a bug report (a mention is not a run)
_COLLECTOR = lazy(r"\bpython[\w.]*(?:[ \t]+-\w+)*[ \t]+(?:-m[ \t]+)?\S*collect_env\b|\bcollect_env\.py\b")
COLLECTOR_REACH = 5  # lines after a run of it whose error is its own


@dataclass(frozen=True)
class ShownError:
    line: int  # 1-based
    text: str  # the exception, or the failing line, as printed (without a log prefix)
    cut: bool = False  # a traceback that ends before its exception: `text` is its last frame
    first: int = 0  # 1-based: where its traceback starts (its "Traceback" line); 0: the line alone
    said: bool = False  # no program printed it: the person's own words say it fails (prose.fails)
    image: bool = False  # ... and the paste holds an image (the error as a screenshot)
    title: bool = False  # an issue title standing in for a traceback cut before its exception


def parse_shown_error(lines: list[str]) -> ShownError | None:
    """The last traceback's exception (or its cut end), else the last exception line on its own, else the
    last line a program prints when it fails; None when the paste shows none of them."""
    last_traceback: ShownError | None = None
    alone: ShownError | None = None
    failed: ShownError | None = None
    collector = -COLLECTOR_REACH - 1  # the last line that runs or names the environment collector
    index = 0
    while index < len(lines):
        line = lines[index]
        at = line.find(_TRACEBACK)
        if at >= 0:
            start = index
            shown, index = _traceback(lines, index, line[:at])
            own = start - collector <= COLLECTOR_REACH or any(
                _COLLECTOR.search(t) for t in lines[start:index]
            )
            shown = None if shown is None else dataclasses.replace(shown, first=start + 1)
            last_traceback = last_traceback if own else shown or last_traceback
            continue
        if "collect_env" in line and _COLLECTOR.search(line):
            collector = index
        stripped = line.strip()
        if index - collector <= COLLECTOR_REACH:
            pass  # the collector's own failure
        elif _is_exception(stripped, needs_message=True):
            alone = ShownError(index + 1, stripped)
        elif len(stripped) <= 500 and _FAILED_LINE.search(stripped) and not _said(stripped):
            failed = ShownError(index + 1, stripped)
        index += 1
    if last_traceback is not None and last_traceback.cut and lines and lines[0].startswith("# "):
        # a traceback cut before its exception, under an issue title that is one ("# module 'detectron2._C' has
        # no attribute 'get_cuda_version'"): the title says what the cut traceback does not (blind set 22 #34)
        title = lines[0][2:].strip()
        if _is_exception(title, needs_message=True) or _TITLE_ERROR.search(title):
            return ShownError(1, title, title=True)
    return last_traceback or alone or failed


# an exception's own words in an issue title, without its class: "module 'x' has no attribute 'y'",
# "No module named 'x'", "undefined symbol: ...", "cannot open shared object file"
_TITLE_ERROR = lazy(
    r"\bhas no attribute '|\bNo module named '|\bundefined symbol\b|cannot open shared object file"
    r"|\bCUDA error\b|\bnot compiled with\b"
)


def _traceback(lines: list[str], start: int, prefix: str) -> tuple[ShownError | None, int]:
    """The traceback that starts at lines[start]: its exception line, or its last frame when the paste ends (or
    turns to something else) before one; and the index to read on from."""
    strip = _prefix_pattern(prefix, lines[start + 1] if start + 1 < len(lines) else None)
    last_frame: ShownError | None = None
    after_frame = False  # the line before was a frame: this one may be its source, unindented in a paste
    index = start + 1
    while index < len(lines):
        raw = lines[index]
        body = _without(strip, raw)
        if body is None or not body.strip():
            if body is not None and last_frame is None:  # a blank line right after the header
                index += 1
                continue
            break
        frame = body.lstrip().startswith('File "')  # a paste that lost the indentation keeps these words
        if body.startswith((" ", "\t")) or frame or (after_frame and not _is_exception(body.strip(), False)):
            # a frame, its source line, Python 3.11's ^^^^ marks under it
            if frame or last_frame is None:
                last_frame = ShownError(index + 1, body.strip(), cut=True)
            after_frame = frame
        elif body.startswith(_CHAINED) or _TRACEBACK in body:
            return None, index  # the next traceback in the chain is read from here
        elif _is_exception(body.strip(), needs_message=False):
            return ShownError(index + 1, body.strip()), index + 1
        else:
            break
        index += 1
    if last_frame is None:  # cut right after its header: the header is all there is
        last_frame = ShownError(start + 1, lines[start].strip(), cut=True)
    return last_frame, index


# A person's sentence, not a program's line: "There is no error: it just runs slowly.", "The model failed to
# load.", "I get ERROR when..."; and pip's resolver notice, which is information ("ERROR: pip's dependency
# resolver does not currently take into account...")
_PERSON = lazy(
    r"\b(?:I|I'm|I've|my|me|we|our|you|there(?:'s| is| are))\b|\bno[ \t]+error\b|pip's dependency resolver"
)
_SENTENCE = lazy(r"^[A-Z][a-z]+(?:[ \t]+[A-Za-z'-]+){3,}[.!?]$")


def _said(line: str) -> bool:
    return _PERSON.search(line) is not None or _SENTENCE.match(line) is not None


def _is_exception(text: str, needs_message: bool) -> bool:
    """`text` is how Python prints an exception: a dotted name, then ": message" (on its own line, outside a
    traceback, only an Error/Exception name with a message counts: "Note: ..." is a sentence)."""
    found = _EXCEPTION.match(text)
    if found is None or len(text) > 2000:
        return False
    name = found["name"].rsplit(".", 1)[-1]
    named = _EXCEPTION_NAME.search(name) is not None
    if needs_message:
        return named and bool(found["message"])
    return named or (found["message"] is not None and name[:1].isupper())


MAX_PREFIX = 200  # a log header is short: a longer text before "Traceback" is a line of something else


def _prefix_pattern(prefix: str, following: str | None) -> re.Pattern[str] | None:
    """The log prefix before "Traceback", with its digits free (a timestamp moves on), anchored: the part of it
    the `following` line shares, cut back to a space ("ERROR ... core.py:294] EngineCore hit an exception: "
    is followed by "ERROR ... core.py:294]   File ..."). One comparison, one compile: a long line before
    "Traceback" is not a prefix at all (MAX_PREFIX)."""
    if not prefix.strip() or len(prefix) > MAX_PREFIX:
        return None
    shared = prefix
    if following is not None:
        same = 0
        for mine, theirs in zip(prefix, following, strict=False):
            if mine != theirs and not (mine.isdigit() and theirs.isdigit()):
                break
            same += 1
        shared = prefix if same == len(prefix) else prefix[: prefix.rfind(" ", 0, same) + 1]
    if not shared.strip():
        return None
    return re.compile(_DIGITS.sub(r"\\d+", re.escape(shared)))


def _without(prefix: re.Pattern[str] | None, line: str) -> str | None:
    """`line` without the traceback's log prefix; None when a prefixed traceback's line lacks it."""
    if prefix is None:
        return line
    found = prefix.match(line)
    return line[found.end() :] if found is not None else None
