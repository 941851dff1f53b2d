"""The real console script in a real terminal (tmux): start it, press keys, read the screen a person sees."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.tui.conftest import HOSTS

TMUX = shutil.which("tmux")
SCRIPT = Path(sys.executable).with_name("gpu-doctor")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed"),
    pytest.mark.skipif(not SCRIPT.exists(), reason="the gpu-doctor console script is not installed"),
]


class Terminal:
    """One tmux server of our own (-L): never the person's, never another test's."""

    def __init__(self, socket: str) -> None:
        assert TMUX is not None
        self.base = [TMUX, "-L", socket, "-f", os.devnull]

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            [*self.base, *args], capture_output=True, text=True, timeout=20, check=True
        ).stdout

    def start(self, argv: list[str], width: int, height: int, env: dict[str, str]) -> None:
        env_args = [a for k, v in env.items() for a in ("-e", f"{k}={v}")]
        self.tmux("new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height), *env_args, "--", *argv)
        self.tmux("set-option", "-t", "t", "remain-on-exit", "on")

    def screen(self, colours: bool = False, history: bool = False) -> str:
        extra = (["-e"] if colours else []) + (["-S", "-100"] if history else [])
        return self.tmux("capture-pane", "-p", *extra, "-t", "t")

    def keys(self, *keys: str) -> None:
        for key in keys:
            self.tmux("send-keys", "-t", "t", key)
            time.sleep(0.3)

    def wait_for(self, ready: Callable[[str], bool], timeout_s: float = 30.0) -> str:
        deadline = time.monotonic() + timeout_s
        while True:
            shown = self.screen()
            if ready(shown) or time.monotonic() > deadline:
                return shown
            time.sleep(0.2)

    def kill(self) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True, timeout=20, check=False)


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    term = Terminal(f"gpu-doctor-test-{os.getpid()}-{time.monotonic_ns()}")
    yield term
    term.kill()


def test_a_person_finds_the_egpu_fix_at_once(terminal: Terminal) -> None:
    fixture = HOSTS / "egpu-not-authorized"
    # sh only to print the exit status after the app (argv stays a list: "$0" "$@")
    argv = ["sh", "-c", '"$0" "$@"; echo "[exited $?]"', str(SCRIPT), "--root", str(fixture)]
    terminal.start(argv, 80, 24, {"TERM": "xterm-256color"})
    shown = terminal.wait_for(lambda s: "2 fail" in s)
    assert "2 fail · 6 unknown · 7 pass · 41 skip" in shown, shown
    # the header in one line at 80 columns: it says less (the short head, short names, the path cut)
    header = shown.splitlines()[0]
    assert header == " replay · no GPU found · no NVIDIA driver · torch 2.5.1+cu124 · …env/bin/python", header
    # the root cause is open at once: the enclosure, with its command (no key needed)
    shown = terminal.wait_for(lambda s: "boltctl enroll" in s)
    assert "FAIL    egpu.authorized" in shown, shown
    assert "$ boltctl enroll --policy auto" in shown
    assert "b Bundle ? Help q Quit" in shown  # the footer fits 80 columns
    terminal.keys("n")  # the symptom says where it comes from
    assert "Caused by egpu.authorized" in terminal.wait_for(lambda s: "Caused by" in s)
    terminal.keys("n")
    terminal.keys("?")
    assert "jump to the next check that fails or warns" in terminal.wait_for(lambda s: "jump to" in s)
    terminal.keys("Escape", "c", "q")
    terminal.wait_for(lambda s: "[exited" in s)
    shown = terminal.screen(history=True)  # what stays in the scrollback after the app
    assert "Commands you copied in gpu-doctor:" in shown, shown
    # the enclosure's command, not the FireWire adapter's that sysfs lists first
    assert (
        "boltctl enroll --policy auto dc010000-0000-8508-a22d-32ca6421cb16"
        in shown.split("Commands you copied")[1]
    )
    assert "gpu-doctor: 2 fail, 6 unknown, 7 pass, 41 skip · exit code 1" in shown  # as the status line said
    assert "[exited 1]" in shown  # the findings' exit code, as in text mode


# an SGR that turns reverse video on (7 among its numbers), then at most more SGRs, then the word
REVERSED_FAIL = re.compile(r"\x1b\[(?:[0-9;]*;)?7(?:;[0-9;]*)?m(?:\x1b\[[0-9;]*m)*FAIL")


def test_no_color_leaves_words_and_no_colours(terminal: Terminal) -> None:
    fixture = HOSTS / "wsl2"
    terminal.start(
        [str(SCRIPT), "--root", str(fixture)], 100, 30, {"TERM": "xterm-256color", "NO_COLOR": "1"}
    )
    terminal.wait_for(lambda s: "fail" in s and "pass" in s)
    coloured = terminal.screen(colours=True)
    assert "FAIL    torch.cpu_build" in terminal.screen()
    # Textual turns the app monochrome: every 256-colour index is a grey (232-255, or black/white).
    indexes = {int(n) for n in re.findall(r"\x1b\[(?:[0-9;]*;)?[34]8;5;(\d+)", coloured)}
    assert indexes, "tmux should report the greys it was sent"
    assert all(n >= 232 or n in (0, 7, 15, 16, 231) for n in indexes), sorted(indexes)
    assert ";2;" not in coloured  # no true colour either
    # ...and FAIL still stands out: in reverse video, not a dark grey on a dark grey (red's own grey)
    fail_rows = [line for line in coloured.splitlines() if "torch.cpu_build" in line and "FAIL" in line]
    assert fail_rows and all(REVERSED_FAIL.search(line) for line in fail_rows), fail_rows
    terminal.keys("q")


def test_the_same_screen_has_colours_without_no_color(terminal: Terminal) -> None:
    """Proves the test above can fail: the normal app does send colours, and a FAIL in the list (the one
    not under the cursor) is red, not reversed."""
    terminal.start([str(SCRIPT), "--root", str(HOSTS / "wsl2")], 100, 30, {"TERM": "xterm-256color"})
    terminal.wait_for(lambda s: "fail" in s and "pass" in s)
    coloured = terminal.screen(True)
    indexes = {int(n) for n in re.findall(r"\x1b\[(?:[0-9;]*;)?[34]8;5;(\d+)", coloured)}
    assert any(16 < n < 232 for n in indexes), sorted(indexes)
    pane_token = next(line for line in coloured.splitlines() if "FAIL" in line and "│" in line)
    assert not REVERSED_FAIL.search(pane_token.split("│", 1)[1]), pane_token
    terminal.keys("q")
