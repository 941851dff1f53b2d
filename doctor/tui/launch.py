"""Start the interactive doctor from the command line, and leave the useful bits in the scrollback."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from gpu_doctor import TOOL_NAME
from gpu_doctor.exit_codes import ExitCode
from gpu_doctor.model import Status
from gpu_doctor.smoke.model import SmokeMode
from gpu_doctor.tui.session import Session

if TYPE_CHECKING:
    from gpu_doctor.host.base import Host


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
    from gpu_doctor.tui.app import DoctorApp

    session = Session(host, python, data_dir, plugins, fail_on, only, skip, can_apply=not replay)
    if smoke is not None:
        session.smoke_mode = smoke
        start = "smoke" if start == "doctor" else start
    app = DoctorApp(session, start=start)
    app.run()
    if app.copied:
        print(f"Commands you copied in {TOOL_NAME}:")
        for line in dict.fromkeys(app.copied):
            print(f"  {line}")
    report = app.last_report
    if report is None:
        return ExitCode.INTERRUPTED
    summary = report.summary()
    c = summary.counts
    print(
        f"{TOOL_NAME}: {c.fail} fail, {c.warn} warn, {c.passed} pass · exit code {summary.exit_code}",
        file=sys.stderr,
    )
    return summary.exit_code
