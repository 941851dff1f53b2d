"""What the screens' worker threads share: run a diagnosis and post how it ended."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.message import Message

from torch_gpu_doctor.tui.messages import DiagnosisFailed, DiagnosisFinished

# What showing a report loads (the header's machine line, the detail pane's runnable fix, the root cause's
# fix): imported in the worker before the report is posted, while the screen is idle, and not on the main
# thread, where those imports held the GIL between the report and the full screen (issue 21).
SHOWING_A_REPORT = (
    "torch_gpu_doctor.tui.machine_line",
    "torch_gpu_doctor.fixing.plan",
    "torch_gpu_doctor.checks.support.causes",
)

if TYPE_CHECKING:
    from torch_gpu_doctor.events import EventSink
    from torch_gpu_doctor.report import Report
    from torch_gpu_doctor.tui.session import Session


def diagnose_and_post(
    session: Session, post: Callable[[Message], object], on_event: EventSink
) -> Report | None:
    """In a worker thread: the diagnosis, then DiagnosisFinished, or DiagnosisFailed when it raised (the
    engine turns check bugs into findings; an exception here is a bug of its own). The report, or None."""
    from torch_gpu_doctor.tui.early import SessionClosed  # light: the session module's own companion

    try:
        report = session.diagnose(on_event)
        for name in SHOWING_A_REPORT:
            importlib.import_module(name)
    except SessionClosed:  # the app quit while the first diagnosis ran: nothing to show, nothing failed
        return None
    except Exception as exc:
        post(DiagnosisFailed(f"{type(exc).__name__}: {exc}"))
        return None
    post(DiagnosisFinished(report))
    return report
