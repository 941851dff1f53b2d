"""DESIGN §4: the TUI opens only on a terminal, never with --json or --plain, never with TERM=dumb."""

from __future__ import annotations

import io
from typing import Any

import pytest

from tests.tui.conftest import HOSTS
from torch_gpu_doctor.cli import main
from torch_gpu_doctor.facts.smoke import SmokeMode

ROOT = str(HOSTS / "wsl2")


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    def fake_run_tui(host: object, python: str, **kwargs: Any) -> int:
        calls.append({"python": python, **kwargs})
        return 0

    monkeypatch.setattr("torch_gpu_doctor.tui.launch.run_tui", fake_run_tui)
    monkeypatch.setenv("TERM", "xterm-256color")
    return calls


def _on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """In the test body: pytest's output capture puts its own sys.stdout back after fixtures ran."""
    monkeypatch.setattr("sys.stdin", _Tty())
    monkeypatch.setattr("sys.stdout", _Tty())


def test_a_terminal_opens_the_tui_on_a_replay_that_runs_nothing(
    launched: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    _on_a_terminal(monkeypatch)
    assert main(["--root", ROOT]) == 0
    assert len(launched) == 1
    assert launched[0]["replay"] is True
    assert launched[0]["start"] == "doctor"
    assert launched[0]["smoke"] is None


def test_setup_and_smoke_open_their_screens(
    launched: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    _on_a_terminal(monkeypatch)
    main(["--root", ROOT, "setup"])
    main(["--root", ROOT, "--smoke", "quick"])
    assert [c["start"] for c in launched] == ["setup", "doctor"]
    assert launched[1]["smoke"] is SmokeMode.QUICK


@pytest.mark.parametrize("flag", ["--plain", "--json"])
def test_plain_and_json_never_open_it(
    launched: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, flag: str
) -> None:
    _on_a_terminal(monkeypatch)
    main(["--root", ROOT, flag])
    assert launched == []


def test_a_dumb_terminal_gets_text(launched: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    _on_a_terminal(monkeypatch)
    monkeypatch.setenv("TERM", "dumb")
    main(["--root", ROOT])
    assert launched == []


def test_without_a_terminal_the_report_is_text(
    launched: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    _on_a_terminal(monkeypatch)
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)  # a pipe: not a TTY
    main(["--root", ROOT])
    assert launched == []
    assert "torch.cpu_build" in out.getvalue()


def test_setup_without_a_terminal_prints_the_wizards_plan(
    launched: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    assert main(["--root", str(HOSTS / "nvidia-gpu-no-driver"), "setup"]) == 0
    assert launched == []
    text = out.getvalue()
    assert text.index("Install the NVIDIA driver") < text.index("Install torch") < text.index("Reboot")
    assert "sudo apt install nvidia-driver-" in text
