"""What a person sees, as SVG screenshots of the app on captured machines (the README shows them).

Update after an intended change to the looks: `pytest tests/tui/test_snapshots.py --snapshot-update`, then
look at the SVGs (tests/tui/__snapshots__/) before committing them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from tests.tui.conftest import live_session, replay_session
from tests.tui.pilot import settle
from torch_gpu_doctor.tui.app import DoctorApp
from torch_gpu_doctor.tui.widgets.check_list import CheckList

SnapCompare = Callable[..., bool]


def _settled(*keys: str) -> Callable[[Pilot[Any]], Any]:
    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        if keys:
            await pilot.press(*keys)
        await settle(pilot)

    return run_before


@pytest.mark.parametrize(
    ("fixture", "keys"),
    [
        pytest.param("rtx4090-workstation-healthy", (), id="healthy"),
        # the driver is too old for the installed torch
        pytest.param("h100-sxm-x8-server", (), id="driver-too-old"),
        # the enclosure, after the "no GPU" it causes
        pytest.param("egpu-not-authorized", ("n",), id="egpu-not-authorized"),
        pytest.param("wsl2", (), id="cpu-only-torch"),
        pytest.param("virtio-vm-no-gpu", (), id="no-gpu"),
    ],
)
def test_main_states(snap_compare: SnapCompare, fixture: str, keys: tuple[str, ...]) -> None:
    app = DoctorApp(replay_session(fixture))
    assert snap_compare(app, terminal_size=(100, 32), run_before=_settled(*keys))


def test_smallest_terminal(snap_compare: SnapCompare) -> None:
    app = DoctorApp(replay_session("egpu-not-authorized"))
    assert snap_compare(app, terminal_size=(80, 24), run_before=_settled("n"))


def test_help(snap_compare: SnapCompare) -> None:
    app = DoctorApp(replay_session("rtx4090-workstation-healthy"))
    assert snap_compare(app, terminal_size=(100, 32), run_before=_settled("question_mark"))


def test_the_fix_dialog_fits_80x24(snap_compare: SnapCompare) -> None:
    """The exact command, where it runs, and both buttons visible on the smallest terminal."""
    session, _ = live_session("wsl2", python="/home/user/venv/bin/python")

    async def open_the_dialog(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        pilot.app.screen.query_one(CheckList).select_check("torch.cpu_build")
        await pilot.press("f")
        await settle(pilot)

    assert snap_compare(DoctorApp(session), terminal_size=(80, 24), run_before=open_the_dialog)


def test_the_setup_wizard_at_80x24(snap_compare: SnapCompare) -> None:
    app = DoctorApp(replay_session("nvidia-gpu-no-driver"), start="setup")
    assert snap_compare(app, terminal_size=(80, 24), run_before=_settled())


@pytest.mark.parametrize("view", ["steps", "results"])
def test_the_smoke_test_view(snap_compare: SnapCompare, view: str) -> None:
    """A finished standard run on the RTX 4090 capture, one matmul wrong: each step's bar and time, then the
    figures against what this GPU should reach."""
    from tests.tui.test_smoke_screen import harness, wrong_bf16_run

    app, _ = harness(wrong_bf16_run())
    keys = ("t",) if view == "steps" else ()
    assert snap_compare(app, terminal_size=(100, 32), run_before=_settled(*keys))


def test_the_paste_view_at_80x24(snap_compare: SnapCompare) -> None:
    """A real paste (torch's "driver too old, found version 11060") and its verdict below the text area."""
    from tests.tui.test_paste_screen import TOO_OLD, _shown
    from torch_gpu_doctor.tui.screens.paste import PasteScreen

    async def paste(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("t")
        assert isinstance(pilot.app.screen, PasteScreen)
        area = pilot.app.screen.query_one(TextArea)
        area.insert(TOO_OLD)
        await _shown(pilot, area.text)
        area.move_cursor((0, 0))
        # the cursor blinks every 0.5 s: the picture must not depend on how long triage took
        area.cursor_blink = False
        await pilot.pause()

    app = DoctorApp(replay_session("rtx4090-workstation-healthy"))
    assert snap_compare(app, terminal_size=(80, 24), run_before=paste)


def test_the_fit_view_at_80x24(snap_compare: SnapCompare) -> None:
    """`m` on the 8x RTX 4090 workstation: 7B full fine-tuning does not fit, and what does."""
    from tests.tui.test_fit_screen import _shown

    async def fit(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("m")
        await _shown(pilot, "7B --train")
        pilot.app.screen.query_one(Input).cursor_blink = False  # the picture must not depend on the blink
        await pilot.pause()

    app = DoctorApp(replay_session("rtx4090-workstation-healthy"))
    assert snap_compare(app, terminal_size=(80, 24), run_before=fit)
