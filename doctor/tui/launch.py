"""Start the interactive doctor from the command line, and leave the useful bits in the scrollback."""

from __future__ import annotations

import contextlib
import signal
import sys
from typing import TYPE_CHECKING, Any

from torch_gpu_doctor import TOOL_NAME
from torch_gpu_doctor.exit_codes import ExitCode
from torch_gpu_doctor.facts.smoke import SmokeMode
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.tui.session import Session

if TYPE_CHECKING:
    from types import FrameType

    from torch_gpu_doctor.host.base import Host
    from torch_gpu_doctor.tui.app import DoctorApp


# the early child's SIGTERM grace and its reaping (tui/early.py), waited for on the way out
EARLY_STOP_S = 4.0


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
    previous = _closing_on(session, signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
    try:
        session.start_early()  # the first diagnosis runs in a child while Textual loads (before its import)
        from torch_gpu_doctor.tui.app import DoctorApp  # Textual: after the fork, so the child never loads it

        app = DoctorApp(session, start=start)
        app.run()
    finally:  # quitting during a probe or the smoke test leaves nothing running
        session.close(wait_s=EARLY_STOP_S)
        for sig, handler in previous.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(sig, handler)
        # after the app: the first paint waits for nothing
        from torch_gpu_doctor.host.process import stop_all_children

        stop_all_children(final=False)
    if app.copied:
        print(f"Commands you copied in {TOOL_NAME}:")
        for line in dict.fromkeys(app.copied):
            print(f"  {line}")
    return _exit_code(app)


def _closing_on(session: Session, *signals: signal.Signals) -> dict[signal.Signals, Any]:
    """SIGTERM, SIGHUP and SIGINT stop the early child first: Textual waits for the worker blocked on it before the
    app ends, so the handler the run had (an interrupt, cli.py) would otherwise come only when the child ends.
    The handlers replaced, to put back."""
    previous: dict[signal.Signals, Any] = {}
    for sig in signals:
        with contextlib.suppress(ValueError, OSError):  # not the main thread (a test): left as it is
            before = signal.getsignal(sig)

            def handler(signum: int, frame: FrameType | None, before: Any = before) -> None:
                session.close()
                if callable(before):
                    before(signum, frame)
                else:
                    raise KeyboardInterrupt(signal.Signals(signum).name)

            previous[sig] = signal.signal(sig, handler)
    return previous


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
