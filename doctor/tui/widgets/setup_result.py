"""The wizard's last word: the counts after checking again, the driver and torch verdicts, the smoke test."""

from __future__ import annotations

from rich.text import Text

from torch_gpu_doctor.model import Finding, Status
from torch_gpu_doctor.render.styles import style_of
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.runner import SMOKE_LOAD_CHECKS
from torch_gpu_doctor.tui.tokens import tally, token

SHOWN_AREAS = ("driver.", "torch.")
HEADLINE = "smoke.run"


def counts_line(report: Report) -> Text:
    return tally(report.summary().counts)


def verify_summary(before: Report, after: Report) -> Text:
    """What the checks and the quick smoke test say now, with each driver/torch status beside its old one."""
    old = {f.check_id: f.status for f in before.findings}
    out = Text.assemble(
        ("Checked again: ", "bold"), counts_line(after), "\n\nDriver and torch now (skipped checks left out):"
    )
    for finding in after.findings:
        was = old.get(finding.check_id)
        if finding.check_id.startswith(SHOWN_AREAS) and _changed_or_applies(finding, was):
            out.append("\n")
            out.append_text(_line(finding, was))
    out.append("\n\nQuick smoke test:")
    for finding in after.findings:
        if _smoke_verdict(finding):
            out.append("\n")
            out.append_text(_line(finding, None))
    for figure in after.smoke_figures:
        out.append(f"\n  {figure.sentence}", style_of(figure.status))
    return out


def _changed_or_applies(finding: Finding, was: Status | None) -> bool:
    """A check that does not apply (skip) is worth a line only when it did before: "was FAIL" matters."""
    return finding.status is not Status.SKIP or was not in (None, Status.SKIP)


def _smoke_verdict(finding: Finding) -> bool:
    """The smoke test's headline always (it says why nothing ran), its other checks when they have a verdict."""
    if finding.check_id == HEADLINE:
        return True
    smoke = finding.check_id.startswith("smoke.") or finding.check_id in SMOKE_LOAD_CHECKS
    return smoke and finding.status is not Status.SKIP


def _line(finding: Finding, was: Status | None) -> Text:
    line = Text.assemble("  ", token(finding.status), " ", (finding.check_id, "bold"))
    if was is not None and was is not finding.status:
        line.append(f" (was {was.value.upper()})", "italic")
    line.append(f": {finding.summary}")
    return line
