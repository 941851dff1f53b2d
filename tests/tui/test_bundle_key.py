"""`b` in the doctor: the same redacted support bundle as `gpu-doctor bundle`, previewed, written only on yes."""

from __future__ import annotations

import asyncio
import json
import tarfile
from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.tui.conftest import live_session, replay_session
from tests.tui.pilot import notes, settle
from torch_gpu_doctor.tui.app import DoctorApp
from torch_gpu_doctor.tui.screens.confirm import ConfirmScreen


async def press_b(pilot: Pilot[None]) -> None:
    """The checks in, then `b`, and the bundle recorded (its worker done)."""
    await settle(pilot)
    await pilot.press("b")
    await settle(pilot)


def test_b_previews_the_bundle_and_writes_it_on_yes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    session, _ = live_session("egpu-not-authorized")

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(100, 32)) as pilot:
            await press_b(pilot)
            dialog = app.screen
            assert isinstance(dialog, ConfirmScreen), notes(app)
            preview = dialog.body.plain
            assert "gpu-doctor bundle → " in preview and "manifest.json" in preview
            assert "secrets removed" in preview
            assert list(tmp_path.glob("*.tar.gz")) == []  # nothing before the yes
            await pilot.press("y")
            await pilot.pause()
            (written,) = tmp_path.glob("gpu-doctor-bundle-*.tar.gz")
            assert written.stat().st_mode & 0o777 == 0o600
            with tarfile.open(written) as archive:
                names = archive.getnames()
                manifest = json.loads(archive.extractfile("manifest.json").read())  # type: ignore[union-attr]
            assert {"manifest.json", "facts.json", "report.json", "report.txt"} <= set(names)
            assert manifest["identifiers_included"] is False
            said = notes(app)[-1]
            assert str(written) in said and f"gpu-doctor --replay {written.name}" in said

    asyncio.run(scenario())


def test_no_at_the_preview_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    session, _ = live_session("wsl2")

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(100, 32)) as pilot:
            await press_b(pilot)
            assert isinstance(app.screen, ConfirmScreen)
            await pilot.press("n")
            await pilot.pause()
            assert not isinstance(app.screen, ConfirmScreen)
            assert list(tmp_path.glob("*.tar.gz")) == []
            assert "Nothing written." in notes(app)

    asyncio.run(scenario())


def test_a_bundle_that_cannot_be_made_is_said_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    session, _ = live_session("wsl2")

    def broken() -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(session, "bundle", broken)

    async def scenario() -> None:
        app = DoctorApp(session)
        async with app.run_test(size=(100, 32)) as pilot:
            await press_b(pilot)
            assert not isinstance(app.screen, ConfirmScreen)
            assert any("No bundle was made: OSError" in n and "No space left" in n for n in notes(app))

    asyncio.run(scenario())


def test_a_capture_is_not_bundled_from_the_tui() -> None:
    async def scenario() -> None:
        app = DoctorApp(replay_session("wsl2"))
        async with app.run_test(size=(100, 32)) as pilot:
            await press_b(pilot)
            assert not isinstance(app.screen, ConfirmScreen)
            assert any("a bundle records this machine" in n for n in notes(app))

    asyncio.run(scenario())
