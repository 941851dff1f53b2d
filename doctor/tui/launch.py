"""Start the interactive doctor from the command line, and leave the useful bits in the scrollback."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from torch_gpu_doctor import TOOL_NAME
from torch_gpu_doctor.exit_codes import ExitCode
from torch_gpu_doctor.facts.smoke import SmokeMode
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.tui.session import Session

if TYPE_CHECKING:
    from torch_gpu_doctor.host.base import Host
    from torch_gpu_doctor.tui.app import DoctorApp


def run_tui(
    host: Host,
    python: str,
    *,
    replay: bool,
    data_dir: str | None,
    plugins: bool,
    fail_on: Status,
    only: tuple[str, ...] = (),
    skip: tuple[str, ...] = (),
    start: str = "doctor",
    smoke: SmokeMode | None = None,
) -> int:
    """`start`: "doctor" or "setup" (the wizard opens once the checks are in); `smoke`: run it after them."""
    session = Session(host, python, data_dir, plugins, fail_on, only, skip, can_apply=not replay)
    if smoke is not None:
        session.smoke_mode = smoke
        start = "smoke" if start == "doctor" else start
    session.start_early()  # the first diagnosis runs in a child while Textual loads (before its import)
    try:
        from torch_gpu_doctor.tui.app import DoctorApp  # Textual: after the fork, so the child never loads it

        app = DoctorApp(session, start=start)
        app.run()
    finally:  # quitting during a probe or the smoke test leaves nothing running
        session.close()
        # after the app: the first paint waits for nothing
        from torch_gpu_doctor.host.process import stop_all_children

        stop_all_children(final=False)
    if app.copied:
        print(f"Commands you copied in {TOOL_NAME}:")
        for line in dict.fromkeys(app.copied):
            print(f"  {line}")
    return _exit_code(app)


def _exit_code(app: DoctorApp) -> int:
    """As in text mode; a crash of the app or of a diagnosis is an internal error, not a verdict."""
    if app.return_code not in (None, 0) or app.diagnosis_failed:
        print(f"{TOOL_NAME}: the interactive doctor failed (please report it as a bug)", file=sys.stderr)
        return ExitCode.INTERNAL
    report = app.last_report
    if report is None:  # quit before the first diagnosis ended
        return ExitCode.INTERRUPTED
    summary = report.summary()
    said = ", ".join(words for words, _ in summary.counts.labelled()) or "no checks ran"
    print(f"{TOOL_NAME}: {said} · exit code {summary.exit_code}", file=sys.stderr)
    return summary.exit_code
