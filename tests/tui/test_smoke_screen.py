"""The smoke test screen as a person uses it: steps stream in, then every figure beside what this GPU should reach.

The machine is the `rtx4090-riser-idle` capture (one RTX 4090 whose sysfs shows a Gen4 x16 link); its smoke
run is replayed in the child's protocol (tests/smoke/lines.py) through `Host.run_smoke`, so the real progress,
parse, checks and figures code runs. The figures are chosen to be what a healthy 4090 measures (about 80% of
the link for pinned copies, of the datasheet's 1008 GB/s for the device copy, and of its dense peaks for
matmuls) except where a test wants a warning.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import ContentSwitcher, DataTable, ProgressBar, Static

from tests.smoke.lines import end, header, progress, start, step, streamed
from tests.tui.conftest import HOSTS, report_of
from tests.tui.pilot import text_of
from torch_gpu_doctor.facts.smoke import SmokeMode, StepStatus
from torch_gpu_doctor.host.base import StepBudgets, StreamedRun
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.tui import app as tui_app
from torch_gpu_doctor.tui.app import DoctorApp
from torch_gpu_doctor.tui.screens.smoke import STILL_RUNNING, SmokeScreen, mode_words
from torch_gpu_doctor.tui.session import Session
from torch_gpu_doctor.tui.widgets.smoke_results import SmokeResults
from torch_gpu_doctor.tui.widgets.smoke_step_row import StepRow
from torch_gpu_doctor.tui.widgets.smoke_steps import SmokeSteps

MACHINE = "rtx4090-riser-idle"
NO_TORCH = "ci-no-gpu-cuda-toolkit"  # a real capture: torch is not installed for its interpreter
RTX4090 = {
    "name": "NVIDIA GeForce RTX 4090",
    "capability": "8.9",
    "total_memory_bytes": 25757220864,  # 24564 MiB, as the capture's NVML says
    "free_memory_bytes": 25302401024,
    "pci_bus_id": "0000:01:00.0",
    "uuid": "GPU-8ee5f1e0-e705-aac5-6d6e-b97ad59601ef",
}
OOM = (  # torch 2.x's words, shortened after the free memory
    "OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of "
    "23.64 GiB of which 301.06 MiB is free"
)
MATMUL_BF16_WRONG = (
    "bf16 matmul differs from the float64 CPU result (worst element: 52.1 times its error bound)"
)


def rtx4090_steps(fp16_tflops: float = 150.0, bf16: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """GPU 0's standard-mode steps; `bf16` replaces the bf16 matmul's end line fields."""
    items = step("memory", 0, tested_bytes=12651200512, mismatches=0, first_bad_offset=None)
    items += step(
        "transfer",
        0,
        "h2d_pinned",
        gbytes_per_s=24.6,
        bytes=268435456,
        copies=10,
        link_speed_under_load="16.0 GT/s PCIe",
        link_width_under_load="16",
        link_samples=40,
    )
    items += step("transfer", 0, "d2h_pinned", gbytes_per_s=26.3)
    items += step("transfer", 0, "h2d_pageable", gbytes_per_s=11.8)
    items += step("transfer", 0, "d2h_pageable", gbytes_per_s=12.9)
    items += step("device_copy", 0, gbytes_per_s=905.0)
    for precision, tflops in (("fp32", 52.4), ("tf32", 71.0), ("fp16", fp16_tflops), ("bf16", 151.0)):
        fields: dict[str, Any] = {"n": 8192, "tflops": tflops, "worst_error_ratio": 0.02, "correct": True}
        if precision == "bf16" and bf16 is not None:
            fields.update(bf16)
        items += step("matmul", 0, precision, **fields)
    items += step("conv", 0, forward_error=2e-4, backward_error=3e-4, cudnn_version=90100)
    items += step("train", 0, steps=30, dtype="bfloat16", first_loss=60.1, last_loss=1.2)
    return items


def healthy_run(fp16_tflops: float = 150.0) -> StreamedRun:
    return streamed(header([RTX4090]) + rtx4090_steps(fp16_tflops) + [{"event": "done"}])


class ReplayHost(RecordedHost):
    """The capture, with `run` replayed line by line as the smoke child would print it.

    `hold_after`: stop after that many lines until `gate` is set (the test looks at a run in progress)."""

    def __init__(self, run: StreamedRun | Exception, hold_after: int | None = None) -> None:
        super().__init__(HOSTS / MACHINE)
        self.replayed = run
        self.hold_after = hold_after
        self.gate = threading.Event()
        self.holding = threading.Event()
        self.runs = 0

    def run_smoke(
        self, python: str, config: str, budgets: StepBudgets, on_line: Callable[[str], None] | None
    ) -> StreamedRun:
        self.runs += 1
        if isinstance(self.replayed, Exception):
            raise self.replayed
        for i, line in enumerate(self.replayed.lines):
            if i == self.hold_after and self.runs == 1:
                self.holding.set()
                assert self.gate.wait(20), "the test never let the smoke run go on"
            if on_line is not None:
                on_line(line)
        return self.replayed


class Harness(App[None]):
    """Only the smoke screen, on the app's stylesheet; records what it dismisses with."""

    CSS_PATH = Path(tui_app.__file__).parent / "app.tcss"

    def __init__(self, session: Session, report: Report) -> None:
        super().__init__()
        self.session, self.report = session, report
        self.dismissed: list[Report | None] = []

    def compose(self) -> ComposeResult:
        yield from ()

    def on_mount(self) -> None:
        self.push_screen(SmokeScreen(self.session, self.report), self.dismissed.append)


async def held(pilot: Pilot[Any], host: ReplayHost) -> None:
    """Wait until the replay stops at its `hold_after` line, and the lines before it are on screen."""
    for _ in range(100):
        if host.holding.is_set():
            break
        await pilot.pause(0.05)
    await pilot.pause(0.1)


async def settle(pilot: Pilot[Any]) -> None:
    """Let the smoke worker finish and its messages be handled."""
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def notes(app: App[Any]) -> list[str]:
    return [str(n.message) for n in app._notifications]


def session_for(host: RecordedHost) -> Session:
    return Session(host, host.python or "python3", can_apply=False, plugins=False)


def harness(run: StreamedRun | Exception, hold_after: int | None = None) -> tuple[Harness, ReplayHost]:
    host = ReplayHost(run, hold_after)
    return Harness(session_for(host), report_of(MACHINE)), host


def smoke_screen(app: App[Any]) -> SmokeScreen:
    screen = app.screen
    assert isinstance(screen, SmokeScreen)
    return screen


def rows(app: App[Any]) -> list[list[str]]:
    table: DataTable[Text] = app.screen.query_one("#smoke-figures", DataTable)
    return [[str(cell).strip() for cell in table.get_row_at(i)] for i in range(table.row_count)]


def step_line(app: App[Any], label: str) -> str:
    steps = app.screen.query_one(SmokeSteps)
    return steps.line(label).plain


def verdicts(app: App[Any]) -> str:
    return text_of(app.screen.query_one("#smoke-verdicts", Static))


def test_a_healthy_run_fills_the_bar_and_shows_each_figure_against_its_expectation() -> None:
    app, _ = harness(healthy_run(fp16_tflops=52.0))  # fp16 below 40% of the 4090's 165 TFLOPS: a warning

    async def scenario() -> None:
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, SmokeScreen) and not screen.running
            bar = screen.query_one("#smoke-bar", ProgressBar)
            assert (bar.progress, bar.total) == (14, 14)
            steps = screen.query_one(SmokeSteps)
            assert len(steps.states) == 14
            assert {s.status for s in steps.states.values()} == {StepStatus.OK}
            assert step_line(app, "matmul fp16 on GPU 0").startswith("OK      matmul fp16 on GPU 0")
            # the results open by themselves, with the figures focused; t shows the steps and back
            views = screen.query_one(ContentSwitcher)
            assert views.current == "smoke-results" and app.focused is screen.query_one("#smoke-figures")
            await pilot.press("t")
            assert views.current == "smoke-steps" and app.focused is steps
            await pilot.press("t")
            assert views.current == "smoke-results" and app.focused is screen.query_one("#smoke-figures")
            table = rows(app)
            assert table == [
                ["host→device (pinned)", "0", "24.6 GB/s", "≥ 20.5 GB/s", "PASS"],
                ["device→host (pinned)", "0", "26.3 GB/s", "≥ 20.5 GB/s", "PASS"],
                ["host→device (pageable)", "0", "11.8 GB/s", "no reference", "PASS"],
                ["device→host (pageable)", "0", "12.9 GB/s", "no reference", "PASS"],
                ["device memory copy (read + write)", "0", "905 GB/s", "≥ 504 GB/s", "PASS"],
                ["fp32 matmul", "0", "52.4 TFLOPS", "≥ 33 TFLOPS", "PASS"],
                ["tf32 matmul", "0", "71 TFLOPS", "≥ 33 TFLOPS", "PASS"],
                ["fp16 matmul", "0", "52 TFLOPS", "≥ 66.1 TFLOPS", "WARN"],
                ["bf16 matmul", "0", "151 TFLOPS", "≥ 66.1 TFLOPS", "PASS"],
            ]
            # the note explains the highlighted figure; moving the cursor changes it
            note = screen.query_one("#smoke-figure-note", Static)
            assert "Expected from: a PCIe Gen4 x16 link carries 31.5 GB/s per direction" in text_of(note)
            await pilot.press("down", "down")
            assert text_of(note).startswith("host→device (pageable) 11.8 GB/s, 48% of pinned: use pin_memory")
            assert "No reference: pageable copies go through a staging buffer" in text_of(note)
            said = verdicts(app)
            assert said.startswith("PASS    The smoke test ran 14 steps on 1 GPU in 8.1 s (standard mode)")
            assert (
                "WARN    smoke.matmul: GPU 0: fp16 matmul 52 TFLOPS; the RTX 4090 peak is 165 (expect ≥ 66.1)"
                in said
            )
            assert text_of(screen.query_one("#smoke-status", Static)) == "Finished after 8.1 s: 14 OK"
            shown = screen.query_one(SmokeResults).figures
            await pilot.press("escape")
            assert app.dismissed and app.dismissed[0] is not None
            figures = app.dismissed[0].smoke_figures
            assert len(figures) == 9 and figures == shown
            assert {f.status for f in figures} == {Status.PASS, Status.WARN}

    asyncio.run(scenario())


def wrong_bf16_run() -> StreamedRun:
    """A standard run whose bf16 matmul is wrong (a snapshot shows it too)."""
    bad = {"tflops": 151.0, "worst_error_ratio": 52.1, "correct": False}
    items = header([RTX4090]) + rtx4090_steps(bf16=bad) + [{"event": "done"}]
    for item in items:  # the bf16 matmul's end line says it was wrong, and why
        if item.get("event") == "end" and item.get("variant") == "bf16":
            item.update(status="wrong", message=MATMUL_BF16_WRONG)
    return streamed(items)


def test_a_wrong_result_is_a_fail_with_the_childs_message() -> None:
    app, _ = harness(wrong_bf16_run())

    async def scenario() -> None:
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            line = step_line(app, "matmul bf16 on GPU 0")
            assert line == f"FAIL    matmul bf16 on GPU 0: {MATMUL_BF16_WRONG}"
            assert step_line(app, "matmul fp16 on GPU 0").startswith("OK ")
            said = verdicts(app)
            assert "1 step(s) gave wrong results or errors" in said
            assert (
                "\nFAIL    smoke.matmul: Matmul failed on GPU 0 (NVIDIA GeForce RTX 4090): bf16 matmul differs"
            ) in said
            # a wrong result measures nothing worth comparing: no bf16 figure
            assert [r[0] for r in rows(app)][-1] == "fp16 matmul"

    asyncio.run(scenario())


def test_a_hang_stopped_by_the_watchdog_names_the_step_and_keeps_the_bar_where_it_stopped() -> None:
    items = header([RTX4090]) + rtx4090_steps()[:14] + [start("matmul", 0, "fp16")]
    watchdog = "matmul fp16 on GPU 0 did not finish within 60 s"
    app, _ = harness(streamed(items, watchdog=watchdog))

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            assert step_line(app, "matmul fp16 on GPU 0") == f"STOPPED matmul fp16 on GPU 0: {watchdog}"
            bar = app.screen.query_one("#smoke-bar", ProgressBar)
            assert (bar.progress, bar.total) == (9, 14)
            status = text_of(app.screen.query_one("#smoke-status", Static))
            assert status == "Stopped by the watchdog after 8.1 s: 9 OK · 1 STOPPED"
            said = verdicts(app)
            assert said.startswith("FAIL    The GPU stopped answering during matmul fp16 on GPU 0")
            assert "$ gpu-doctor smoke --mode quick" in said  # smoke.run's remedy for a hang
            # the checks of the steps it never reached say so once, not once each
            assert said.count("The smoke test stopped before this step") == 1
            assert "UNKNOWN smoke.cudnn, smoke.training: The smoke test stopped before this step" in said
            await pilot.press("escape")
            assert app.dismissed[0] is not None  # it finished (badly): the report goes back to the doctor

    asyncio.run(scenario())


def test_without_torch_nothing_runs_and_the_screen_says_why_and_what_to_install() -> None:
    host = RecordedHost(HOSTS / NO_TORCH)
    app = Harness(session_for(host), report_of(NO_TORCH))

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            said = verdicts(app)
            assert said.startswith("FAIL    The smoke test could not run: torch is not installed for ")
            assert "\n        $ " in said and "torch" in said.split("$ ", 1)[1]  # the install command
            assert app.screen.query_one(SmokeSteps).states == {}
            assert not app.screen.query_one("#smoke-figures", DataTable).display
            assert not app.screen.query_one("#smoke-progress").display  # no "0%" of nothing
            note = text_of(app.screen.query_one("#smoke-figure-note", Static))
            assert note == "No figures: the smoke test measured nothing on a GPU."
            await pilot.press("q")
            assert app.dismissed[0] is not None and app.dismissed[0].smoke_figures == ()

    asyncio.run(scenario())


def test_a_capture_without_a_smoke_run_says_so() -> None:
    app = Harness(session_for(RecordedHost(HOSTS / MACHINE)), report_of(MACHINE))

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            said = verdicts(app)
            # nothing says whether that GPU works: unknown (exit 3), with the command that records a run
            assert said.startswith("UNKNOWN This captured machine has no smoke-test run"), said
            assert "$ gpu-doctor capture DIR --smoke" in said
            status = text_of(app.screen.query_one("#smoke-status", Static))
            assert status == "Nothing ran on the GPU."

    asyncio.run(scenario())


def test_it_cannot_be_closed_while_running_and_r_runs_it_again_once_finished() -> None:
    app, host = harness(healthy_run(), hold_after=9)  # held once "transfer h2d_pinned" has started

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = smoke_screen(app)
            try:
                await held(pilot, host)
                assert screen.running
                bar = screen.query_one("#smoke-bar", ProgressBar)
                assert (bar.progress, bar.total) == (3, 14)
                assert step_line(app, "memory on GPU 0").startswith("OK ")
                assert (
                    step_line(app, "transfer h2d_pinned on GPU 0") == "…       transfer h2d_pinned on GPU 0…"
                )
                status = text_of(screen.query_one("#smoke-status", Static))
                assert status == "Running transfer h2d_pinned on GPU 0… (3 of 14 steps done)"
                await pilot.press("escape")
                await pilot.press("q")
                assert app.screen is screen and app.dismissed == []
                assert notes(app).count(STILL_RUNNING) == 2
                await pilot.press("r")
                assert "The smoke test is already running." in notes(app)
            finally:
                host.gate.set()
            await settle(pilot)
            assert not screen.running and screen.result is not None
            first = screen.result
            await pilot.press("r")  # a second run, from the start
            await settle(pilot)
            assert host.runs == 2 and screen.result is not first
            assert (bar.progress, bar.total) == (14, 14)
            assert len(rows(app)) == 9
            await pilot.press("escape")
            assert app.dismissed == [screen.result]

    asyncio.run(scenario())


def test_a_bug_in_the_run_is_reported_and_the_screen_can_be_closed() -> None:
    app, _ = harness(RuntimeError("replay exploded"))

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            status = text_of(app.screen.query_one("#smoke-status", Static))
            assert status.startswith("The smoke test itself failed (RuntimeError: replay exploded)")
            await pilot.press("escape")
            assert app.dismissed == [None]  # it never finished: nothing new for the doctor

    asyncio.run(scenario())


def test_the_doctor_opens_it_and_gets_the_smoke_figures_back() -> None:
    host = ReplayHost(healthy_run())
    app = DoctorApp(session_for(host), start="smoke")

    async def scenario() -> None:
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            assert isinstance(app.screen, SmokeScreen)
            await pilot.press("escape")
            await settle(pilot)
            assert not isinstance(app.screen, SmokeScreen)
            assert app.last_report is not None and len(app.last_report.smoke_figures) == 9
            assert any(
                f.check_id == "smoke.matmul" and f.status is Status.PASS for f in app.last_report.findings
            )

    asyncio.run(scenario())


def test_the_mode_line_says_what_each_mode_runs() -> None:
    assert mode_words(SmokeMode.QUICK) == (
        "A few seconds: checks 10% of free memory; pinned copies; fp32/fp16 matmuls against the CPU."
    )
    assert mode_words(SmokeMode.STANDARD) == (
        "About 15 s a GPU: checks 50% of free memory; pinned and pageable copies; "
        "fp32/tf32/fp16/bf16 matmuls against the CPU; cuDNN; 30 training steps."
    )
    deep = mode_words(SmokeMode.DEEP)
    assert deep.startswith("Minutes, with longer timings: checks 85% of free memory;")
    assert deep.endswith("; copies between every pair of GPUs.")


def test_out_of_memory_is_marked_oom_once_the_run_is_in() -> None:
    items = header([RTX4090]) + rtx4090_steps() + [{"event": "done"}]
    for item in items:  # the child's message for torch's OutOfMemoryError (doctor/probes/smoke.py `step`)
        if item.get("event") == "end" and item.get("variant") == "fp16":
            item.update(status="error", message=OOM, oom=True, values={})
    app, _ = harness(streamed(items))

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            steps = app.screen.query_one(SmokeSteps)
            assert list(steps.states)[:4] == [
                "import",
                "cuda_init",
                "memory on GPU 0",
                "transfer h2d_pinned on GPU 0",
            ]
            assert (
                len(steps.states) == 14 and len(steps.query(StepRow)) == 14
            )  # a row per step, updated in place
            assert steps.line("matmul fp16 on GPU 0").plain == f"OOM     matmul fp16 on GPU 0: {OOM}"
            assert "WARN    smoke.matmul: Matmul failed on GPU 0" in verdicts(app)
            assert "fp16 matmul" not in [r[0] for r in rows(app)]

    asyncio.run(scenario())


def bar_of(app: App[Any], label: str) -> tuple[float | None, float | None, set[str]]:
    row = app.screen.query_one(SmokeSteps).rows[label]
    return row.bar.total, row.bar.progress, set(row.classes) - {"smoke-step"}


def time_of(app: App[Any], label: str) -> str:
    return text_of(app.screen.query_one(SmokeSteps).rows[label].time)


def test_each_step_has_its_own_bar_which_the_steps_progress_fills() -> None:
    memory = "memory on GPU 0"
    items = [*header([RTX4090]), start("memory", 0), progress("memory", 0, None, 0.25)]
    items += [progress("memory", 0, None, 0.5)]  # held here: memory is half done
    items += [end("memory", 0, tested_bytes=12651200512, mismatches=0, first_bad_offset=None)]
    items += [start("transfer", 0, "h2d_pinned")]  # held here too: a step that never says how far it is
    later = rtx4090_steps()[3:]  # from the end of transfer h2d_pinned
    for item in later:  # the bf16 matmul is wrong: its bar ends red
        if item.get("event") == "end" and item.get("variant") == "bf16":
            item.update(status="wrong", message=MATMUL_BF16_WRONG, duration_ms=1840.0)
    app, host = harness(streamed(items + later + [{"event": "done"}]), hold_after=len(header([RTX4090])) + 3)

    async def scenario() -> None:
        async with app.run_test(size=(100, 32)) as pilot:
            screen = smoke_screen(app)
            try:
                await held(pilot, host)
                assert bar_of(app, "import") == (100, 100, {"-ok"})
                assert time_of(app, "import") == "12 ms"
                assert bar_of(app, memory) == (100, 50, set())  # running, half done
                assert time_of(app, memory) == ""
                status = text_of(screen.query_one("#smoke-status", Static))
                assert status == "Running memory on GPU 0… (2 of 14 steps done)"
            finally:
                host.gate.set()
            await settle(pilot)
            assert not screen.running
            assert bar_of(app, memory) == (100, 100, {"-ok"})
            assert bar_of(app, "matmul bf16 on GPU 0") == (100, 100, {"-failed"})
            assert time_of(app, "matmul bf16 on GPU 0") == "1.8 s"
            assert bar_of(app, "transfer h2d_pinned on GPU 0") == (100, 100, {"-ok"})

    asyncio.run(scenario())


def test_a_step_without_progress_pulses_until_it_ends() -> None:
    items = [*header([RTX4090]), start("transfer", 0, "h2d_pinned")]
    app, host = harness(streamed([*items, {"event": "done"}]), hold_after=len(items))

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            try:
                await held(pilot, host)
                total, _, classes = bar_of(app, "transfer h2d_pinned on GPU 0")
                assert total is None and classes == set()  # indeterminate: Textual animates it
            finally:
                host.gate.set()
            await settle(pilot)
            # the run ended with the step unfinished: the bar stops, full and red, and says STOPPED
            assert bar_of(app, "transfer h2d_pinned on GPU 0") == (100, 100, {"-failed"})
            assert step_line(app, "transfer h2d_pinned on GPU 0").startswith("STOPPED ")

    asyncio.run(scenario())


def test_the_mode_line_says_what_runs_without_a_gpu() -> None:
    """No GPU is visible: the GPU steps do not run, the child checks torch and CUDA and times a CPU matmul."""
    host = ReplayHost(healthy_run())
    app = Harness(session_for(host), report_of("virtio-vm-no-gpu"))
    with_gpu, _ = harness(healthy_run())

    async def scenario() -> None:
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            line = text_of(app.screen.query_one("#smoke-mode", Static))
            assert "No GPU is visible here" in line and "matmuls against the CPU" not in line
        async with with_gpu.run_test(size=(100, 32)) as pilot:
            await settle(pilot)
            line = text_of(with_gpu.screen.query_one("#smoke-mode", Static))
            assert "matmuls against the CPU" in line and "No GPU is visible" not in line

    asyncio.run(scenario())
