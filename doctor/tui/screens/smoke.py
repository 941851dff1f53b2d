"""The GPU smoke test: starts at once, shows each step as it runs, then every measured figure beside its expectation.

The run happens in a worker thread (`Session.smoke`), which posts one message per step. It cannot be closed
while it runs: killing the child mid-step could leave the GPU in the middle of a kernel, and the engine's
watchdog ends a hung step anyway.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import ContentSwitcher, DataTable, ProgressBar, Static, Tab, Tabs

from torch_gpu_doctor.facts.smoke import SmokeMode, SmokeOutcome, SmokeRun, StepStatus
from torch_gpu_doctor.model import Finding
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.runner import SMOKE_LOAD_CHECKS
from torch_gpu_doctor.smoke.plan import SIZES
from torch_gpu_doctor.smoke.run import SmokeProgress
from torch_gpu_doctor.tui.messages import SmokeFailed, SmokeFinished, SmokeStepProgress
from torch_gpu_doctor.tui.session import Session
from torch_gpu_doctor.tui.widgets.footer import SteadyFooter
from torch_gpu_doctor.tui.widgets.smoke_results import HEADLINE, SmokeResults
from torch_gpu_doctor.tui.widgets.smoke_step_row import StepState
from torch_gpu_doctor.tui.widgets.smoke_steps import SmokeSteps, run_tally

STILL_RUNNING = "Still running: wait for it to end (the watchdog stops a hung step)."
DURATION = {
    SmokeMode.QUICK: "A few seconds",
    SmokeMode.STANDARD: "About 15 s a GPU",
    SmokeMode.DEEP: "Minutes, with longer timings",
}
STEPS, RESULTS = "smoke-steps", "smoke-results"  # the two views, and their tabs' ids with "-tab"


def mode_words(mode: SmokeMode) -> str:
    """What this mode does, from the sizes the child is sent (smoke/plan.py), so the words cannot drift."""
    sizes = SIZES[mode]
    pageable = any("pageable" in kind for kind in sizes["transfer_kinds"])
    parts = [
        f"checks {sizes['memory_share']:.0%} of free memory",
        "pinned and pageable copies" if pageable else "pinned copies",
        f"{'/'.join(sizes['precisions'])} matmuls against the CPU",
    ]
    if sizes["conv"]:
        parts.append("cuDNN")
    if sizes["train_steps"]:
        parts.append(f"{sizes['train_steps']} training steps")
    if sizes["all_pairs"]:
        parts.append("copies between every pair of GPUs")
    return f"{DURATION[mode]}: {'; '.join(parts)}."


def smoke_findings(report: Report) -> list[Finding]:
    """The smoke test's own verdicts in the report, headline first."""
    ids = {s.id for s in report.specs if s.area == "smoke"} | set(SMOKE_LOAD_CHECKS)
    found = [f for f in report.findings if f.check_id in ids]
    return sorted(found, key=lambda f: f.check_id != HEADLINE)


class SmokeScreen(Screen[Report | None]):
    """Dismisses with the report of the last finished run (smoke findings and figures), or None if none ended."""

    CSS_PATH = "smoke.tcss"  # loaded when this screen first opens: the first paint does not parse it

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding("r", "rerun", "Run again"),
        Binding("t", "toggle_view", "Steps / results"),
    ]

    def __init__(self, session: Session, report: Report) -> None:
        super().__init__()
        self.session = session
        self.report = report  # the diagnosis it runs on: every run re-judges only the smoke checks
        self.result: Report | None = None
        self.running = False

    def compose(self) -> ComposeResult:
        yield Static(self._mode_line(), id="smoke-mode")
        with Horizontal(id="smoke-progress"):
            yield ProgressBar(total=None, show_eta=False, id="smoke-bar")
        yield Static(Text("Starting…", "italic"), id="smoke-status")
        # Tabs and a switcher rather than TabbedContent, which opens the tab of whatever takes focus: a run
        # that ends within a frame would flip back to the steps the focus was on when it started.
        yield Tabs(Tab("Steps", id=f"{STEPS}-tab"), Tab("Results", id=f"{RESULTS}-tab"), id="smoke-tabs")
        with ContentSwitcher(initial=STEPS, id="smoke-views"):
            yield SmokeSteps(id=STEPS)
            yield SmokeResults(id=RESULTS)
        yield SteadyFooter()

    def _mode_line(self) -> Text:
        mode = self.session.smoke_mode
        line = Text.assemble(("GPU smoke test", "bold"), f" · {mode.value} mode · {self.session.python}")
        if not self.session.can_apply:
            line.append(" (replayed from a capture)", "dim")
        if self.report.facts.gpus:
            line.append(f"\n{mode_words(mode)}", "dim")
        else:  # what the child does without a GPU (doctor/probes/smoke.py run_all)
            line.append(
                "\nNo GPU is visible here: it checks that torch imports and asks CUDA for devices, then times "
                "a matmul on the CPU.",
                "dim",
            )
        return line

    def on_mount(self) -> None:
        self.start()

    # --- the run, in a worker ---------------------------------------------------------------------

    def start(self) -> None:
        if self.running:
            self.notify("The smoke test is already running.", severity="warning")
            return
        self.running = True
        self.query_one(SmokeSteps).reset()
        self.query_one(SmokeResults).clear_results()
        self.query_one("#smoke-bar", ProgressBar).update(total=None, progress=0)
        self.query_one("#smoke-progress").display = True
        self._status(Text("Starting the smoke test…", "italic"))
        self._show(STEPS)
        self._run(self.session.smoke_mode)

    @work(thread=True, exit_on_error=False, group="smoke")
    def _run(self, mode: SmokeMode) -> None:
        def on_progress(progress: SmokeProgress) -> None:
            self.post_message(SmokeStepProgress(progress))

        try:
            report = self.session.smoke(self.report, mode, on_progress)
        except Exception as exc:  # the engine reports GPU trouble as findings; this is a bug of its own
            self.post_message(SmokeFailed(f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(SmokeFinished(report))

    def on_smoke_step_progress(self, message: SmokeStepProgress) -> None:
        p = message.progress
        state = StepState(p.status, p.message, done=p.done, duration_ms=p.duration_ms)
        self.query_one(SmokeSteps).show_step(p.label, state)
        total = max(p.expected, p.ended)
        self.query_one("#smoke-bar", ProgressBar).update(total=total, progress=p.ended)
        running = f"Running {p.label}… " if p.status is None else ""
        self._status(Text(f"{running}({p.ended} of {total} steps done)", "italic"))

    def on_smoke_finished(self, message: SmokeFinished) -> None:
        self.running = False
        report = self.result = message.report
        run = report.facts.smoke
        if isinstance(run, SmokeRun):
            self.query_one(SmokeSteps).settle(run)
            bar = self.query_one("#smoke-bar", ProgressBar)
            done = sum(1 for s in run.steps if s.status is not StepStatus.UNFINISHED)
            # a completed run is complete; one that hung or crashed keeps its bar where it stopped
            total = done if run.outcome is SmokeOutcome.COMPLETED else max(int(bar.total or 0), done)
            bar.update(total=total, progress=done)
        else:  # nothing ran (no torch, not recorded): a bar would say "0%" or "100%" of nothing
            self.query_one("#smoke-progress").display = False
            self.query_one(SmokeSteps).note("No step ran: the results say why.")
        findings = smoke_findings(report)
        self.query_one(SmokeResults).show(report.smoke_figures, findings)
        self._status(run_tally(run) if isinstance(run, SmokeRun) else Text("Nothing ran on the GPU.", "bold"))
        self._show(RESULTS)

    def on_smoke_failed(self, message: SmokeFailed) -> None:
        self.running = False
        self._status(
            Text(
                f"The smoke test itself failed ({message.error}). This is a bug; please report it.",
                "bold red",
            )
        )

    def _status(self, text: Text) -> None:
        self.query_one("#smoke-status", Static).update(text)

    # --- keys ---------------------------------------------------------------------------------------

    def action_close(self) -> None:
        if self.running:
            self.notify(STILL_RUNNING, severity="warning")
            return
        self.dismiss(self.result)

    def action_rerun(self) -> None:
        self.start()

    def action_toggle_view(self) -> None:
        self._show(RESULTS if self.query_one(ContentSwitcher).current == STEPS else STEPS)

    @on(Tabs.TabActivated, "#smoke-tabs")
    def _tab_clicked(self, event: Tabs.TabActivated) -> None:
        if event.tab.id is not None:
            self.query_one(ContentSwitcher).current = event.tab.id.removesuffix("-tab")

    def _show(self, view: str) -> None:
        """Open a view and focus what scrolls in it."""
        self.query_one(ContentSwitcher).current = view
        self.query_one(Tabs).active = f"{view}-tab"
        figures = self.query_one("#smoke-figures", DataTable)
        if view == STEPS:
            target: Widget = self.query_one(SmokeSteps)
        else:
            target = figures if figures.display else self.query_one("#smoke-findings")
        target.focus()
