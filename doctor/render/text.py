"""The plain-text report (Rich): grouped by area, a text token on every status, fixes at the end."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from typing import IO

from rich.console import Console
from rich.markup import escape
from rich.segment import Segment
from rich.text import Text

from torch_gpu_doctor import TOOL_NAME
from torch_gpu_doctor.checks.support.causes import PROBLEMS, first_cause, symptoms_of
from torch_gpu_doctor.facts.describe import gpu_inventory
from torch_gpu_doctor.model import Finding, Remediation, Status, escape_controls, flag_words
from torch_gpu_doctor.render.styles import AREA_TITLES, STYLES
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.unavailable import Reason, Unavailable


class _Console(Console):
    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        """Every piece of text is escaped on its way out; the report's own styles are not text (Rich writes
        them from each segment's style), so they pass."""
        safe = (seg if seg.control else Segment(escape_controls(seg.text), seg.style) for seg in buffer)
        return super()._render_buffer(safe)

    def on_broken_pipe(self) -> None:
        """Rich would exit with status 1 itself; the command line's own handling says 141, as for any output
        a reader stopped reading (cli.py)."""
        raise BrokenPipeError


def make_console(stream: IO[str]) -> Console:
    # Rich honours NO_COLOR, FORCE_COLOR and TERM=dumb itself; width stays readable in pipes.
    return _Console(file=stream, highlight=False, soft_wrap=False, width=None if stream.isatty() else 100)


def header_lines(report: Report) -> list[str]:
    facts = report.facts
    system = []
    if not isinstance(facts.os, Unavailable):
        if isinstance(facts.os.distro_name, str):
            system.append(facts.os.distro_name)
        if isinstance(facts.os.kernel_release, str):
            system.append(f"kernel {facts.os.kernel_release}")
    python = f"Python: unknown ({facts.python})"
    if not isinstance(facts.python, Unavailable):
        version = facts.python.version
        python = (
            f"Diagnosing Python {version} at {facts.python.executable}"
            if isinstance(version, str)
            else f"Diagnosing {facts.python.executable} (its version is unknown: {version})"
        )
        if report.python_choice and report.python_choice not in ("--python", "the capture's"):
            python += f": {report.python_choice}"
    gpus = gpu_inventory(facts.gpus) if facts.gpus else "none found"
    if not facts.gpus and facts.jetson_board is not None:
        gpus = facts.jetson_board.integrated_gpu()
    driver = "unknown"
    if not isinstance(facts.driver, Unavailable):
        d = facts.driver
        if isinstance(d.version, str):
            driver = d.version
        elif d.version.reason in (Reason.PERMISSION_DENIED, Reason.TIMED_OUT):
            driver = f"unreadable ({d.version.reason.value.replace('_', ' ')})"
        else:
            driver = "not loaded"
        if isinstance(d.cuda_version, str):
            driver += f" (CUDA ≤ {d.cuda_version})"
    lines = [f"{TOOL_NAME} {report.tool_version} · {facts.host}", " · ".join(system), python]
    if facts.jetson_board is not None:  # its driver is its L4T release, its CUDA the release's
        lines.append(f"GPUs: {gpus} · {facts.jetson_board.driver_words()}")
    else:
        lines.append(f"GPUs: {gpus} · NVIDIA driver: {driver}")
    return [line for line in lines if line]


def _hanging(console: Console, head: Text, text: str, style: str = "") -> None:
    """`head` then `text` wrapped so continuation lines start under the text, not at column 0."""
    indent = " " * head.cell_len
    pieces = textwrap.wrap(text, max(40, console.width - head.cell_len - 1)) or [""]
    console.print(Text.assemble(head, (pieces[0], style)), soft_wrap=True)
    for piece in pieces[1:]:
        console.print(Text(indent + piece, style), soft_wrap=True)


def _wrapped(console: Console, indent: str, text: str, style: str = "dim") -> None:
    width = max(40, console.width - len(indent) - 1)
    for line in text.splitlines():
        hanging = "  " if line.startswith(("- ", "· ")) else ""
        for piece in textwrap.wrap(line, width, subsequent_indent=hanging) or [""]:
            console.print(Text(indent + piece.rstrip(), style), soft_wrap=True)


def _verdict(console: Console, report: Report) -> None:
    """The answer first: the root problems, each with its fix and the problems it causes folded under it."""
    roots = report.roots()
    problems = [f for f in report.findings if f.status in PROBLEMS]
    console.print()
    if not roots:
        unsure = [f for f in report.findings if f.status in (Status.UNKNOWN, Status.CRASH)]
        words = "No problem found" + (
            f"; {len(unsure)} check{'s' if len(unsure) != 1 else ''} could not decide (listed below)."
            if unsure
            else "."
        )
        console.print(Text(words, STYLES[Status.PASS if not unsure else Status.UNKNOWN]))
        return
    causes = f"{len(roots)} cause{'s' if len(roots) != 1 else ''}"
    behind = f" behind {len(problems)} problems" if len(problems) > len(roots) else ""
    console.print(Text(f"{causes}{behind}, the first to fix first:", "bold"))
    for number, root in enumerate(roots, 1):
        token = Text(f"{root.status.value.upper():<5}", STYLES[root.status])
        head = Text.assemble(f"{number}. ", token, " ", (root.check_id, "bold"), "  ")
        _hanging(console, head, root.summary)
        if root.details:
            _wrapped(console, "     ", root.details)
        if root.remediation is not None:
            _fix(console, "     ", root.remediation)
        symptoms = symptoms_of(root.check_id, report.findings)
        if symptoms:
            console.print(Text("     It also causes:", "dim"))
            for symptom in symptoms:
                _hanging(console, Text(f"       {symptom.check_id}: ", "dim"), symptom.summary, "dim")


def _fix(console: Console, indent: str, fix: Remediation) -> None:
    _wrapped(console, indent, "Fix: " + fix.text, style="")
    for command in fix.commands:
        line = Text.assemble((f"{indent}$ ", "dim"), (command.display(), "bold cyan"))
        note = f"   # {command.note}" if command.note else ""
        if note and line.cell_len + len(note) <= console.width:
            line.append(note, "dim")
            note = ""
        console.print(line, soft_wrap=True)
        if note:
            _wrapped(console, indent + "  ", note.strip())
    flags = flag_words(fix)
    if flags:
        console.print(Text(indent + "[" + "] [".join(flags) + "]", "dim"))


# Statuses a default report counts instead of listing (-v lists them): a person reads the problems
QUIET = (Status.PASS, Status.SKIP)


def _tally(findings: list[Finding]) -> str:
    passed = sum(1 for f in findings if f.status is Status.PASS)
    skipped = len(findings) - passed
    parts = [f"{passed} pass"] if passed else []
    parts += [f"{skipped} skipped"] if skipped else []
    return ", ".join(parts) or "nothing to check"


def render_text(
    report: Report, stream: IO[str], verbose: bool = False, elapsed_s: float | None = None
) -> None:
    """`elapsed_s`: the whole run's time, start-up included, where the caller knows it (the command does);
    else the diagnosis's own."""
    console = make_console(stream)
    first, *rest = header_lines(report)
    console.print(Text(first, "bold"))
    for line in rest:
        console.print(Text(line))  # data (paths, descriptions) is never read as Rich markup
    _verdict(console, report)
    areas: dict[str, list[Finding]] = {}
    specs = {s.id: s for s in report.specs}
    for finding in report.findings:
        spec = specs.get(finding.check_id)
        areas.setdefault(spec.area if spec else finding.check_id.split(".")[0], []).append(finding)
    width = max((len(f.check_id) for f in report.findings), default=10)
    fine: list[tuple[str, list[Finding]]] = []
    for area, findings in areas.items():
        title = AREA_TITLES.get(area, area.capitalize())
        shown = findings if verbose else [f for f in findings if f.status not in QUIET]
        quiet = [f for f in findings if f not in shown]
        if not shown:  # nothing to say about this area: one line at the end (-v lists each check)
            fine.append((title, quiet))
            continue
        console.print()
        console.print(Text(title, "bold underline"))
        for f in shown:
            token = Text(f"{f.status.value.upper():<8}", STYLES[f.status])
            root = first_cause(f, report.findings)
            line = f.summary + (f"  (caused by {root.check_id})" if root is not None else "")
            _hanging(console, Text.assemble("  ", token, f"{f.check_id:<{width}}  "), line)
            indent = " " * (width + 12)
            if f.details and (verbose or f.status is Status.CRASH):  # a root's details are in the verdict
                _wrapped(console, indent, f.details)
            if verbose:
                for ev in f.evidence:
                    _wrapped(console, indent, f"· {ev.label}: {ev.value}  [{ev.source}]")
                if f.traceback:
                    console.print(escape(f.traceback), style="dim")
        if quiet:
            console.print(Text(f"  and {_tally(quiet)}", "dim"))
    if fine:
        console.print()
        console.print(Text("Nothing to report", "bold underline"))
        for title, quiet in fine:
            token = Text(f"{'OK':<8}", STYLES[Status.PASS])
            console.print(Text.assemble("  ", token, (f"{title}: ", "bold"), _tally(quiet)))
    if report.smoke_figures:
        console.print()
        console.print(Text("Smoke test figures", "bold underline"))
        for fig in report.smoke_figures:
            token = Text(f"{fig.status.value.upper():<8}", STYLES[fig.status])
            where = f"GPU {fig.device}: " if fig.device is not None and not fig.key.startswith("peer") else ""
            _hanging(console, Text.assemble("  ", token), where + fig.sentence)
    summary = report.summary()
    counts = [words for words, _ in summary.counts.labelled()]
    console.print()
    console.print(
        Text.assemble(
            (", ".join(counts) or "no checks ran", STYLES[summary.status]),
            f" · exit code {summary.exit_code} · "
            f"{elapsed_s if elapsed_s is not None else report.duration_ms / 1000:.1f} s",
        )
    )
    console.print(
        Text("`gpu-doctor explain ID` explains a check; -v shows the evidence behind each line.", "dim")
    )
