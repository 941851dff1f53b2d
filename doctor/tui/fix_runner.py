"""Confirm, then run: the one way the doctor and the setup wizard run a fix, and how it ended as a typed result.

A python-env fix (`python -m pip ...` in the target interpreter) runs in FixRunScreen, its output streaming
in; a system command the person chose gets the terminal (the app steps aside, sudo may ask for a password).
Nothing runs without the ConfirmScreen's yes. Whether it worked is read from the exit code, never from text.
"""

from __future__ import annotations

import contextlib
import shlex
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import App, SuspendNotSupported
from textual.screen import Screen

from torch_gpu_doctor.host.process import run_in_terminal
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.tui.screens.confirm import ConfirmScreen

if TYPE_CHECKING:
    from torch_gpu_doctor.fixing.apply import ApplyResult

NOT_HANDED_OVER = "not run: this terminal cannot be handed over (copy the command and run it yourself)"


@dataclass(frozen=True)
class RunOutcome:
    """How a confirmed command ended."""

    argv: tuple[str, ...]
    exit_code: int | None  # None: it did not start, or did not end in time
    said: str  # how it ended, in words: pip's error lines, or "exit code 100" for a terminal command
    cancelled: bool = False  # the person stopped it (pip got a Ctrl-C)
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.cancelled and not self.timed_out

    @property
    def stopped_part_way(self) -> bool:
        """Stopped before it ended by itself: what it changes may be half done."""
        return self.cancelled or self.timed_out or (self.exit_code or 0) < 0


def pip_outcome(result: ApplyResult) -> RunOutcome:
    return RunOutcome(
        result.argv, result.returncode, result.failure_message(), result.cancelled, result.timed_out
    )


def run_system_command(app: App[Any], argv: tuple[str, ...]) -> RunOutcome:
    """Suspend the UI, run `argv` with the terminal, wait for Enter, come back."""
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(app.suspend())
        except SuspendNotSupported:  # the headless driver of a test, or a terminal Textual cannot hand over
            return RunOutcome(argv, None, NOT_HANDED_OVER)
        print(f"\n$ {shlex.join(argv)}\n", flush=True)
        code = run_in_terminal(argv)
        ended = "timed out or could not start" if code is None else f"exit code {code}"
        print(f"\n[{ended}] Press Enter to return to gpu-doctor.", flush=True)
        with contextlib.suppress(OSError, ValueError):  # a closed stdin: return at once
            sys.stdin.readline()
    return RunOutcome(argv, code, ended)


class FixRunner:
    """Runs fixes for one screen: it asks, runs, and calls back with the RunOutcome."""

    def __init__(self, screen: Screen[Any]) -> None:
        self.screen = screen

    def pip(
        self,
        argv: tuple[str, ...],
        title: str,
        body: Text,
        on_done: Callable[[RunOutcome | None], None],
        on_start: Callable[[], None] = lambda: None,
    ) -> None:
        """After a yes, `argv` runs in FixRunScreen; `on_done` gets None when no result came back."""
        from torch_gpu_doctor.tui.screens.fix_run import FixRunScreen  # the fix runner: only when asked

        def ran(result: ApplyResult | None) -> None:
            on_done(None if result is None else pip_outcome(result))

        def confirmed(yes: bool | None) -> None:
            if yes:
                on_start()
                self.screen.app.push_screen(FixRunScreen(argv), ran)

        self.screen.app.push_screen(ConfirmScreen(title, body, "Run it"), confirmed)

    def terminal(
        self,
        argv: tuple[str, ...],
        body: Text,
        on_done: Callable[[RunOutcome], None],
        on_start: Callable[[], None] = lambda: None,
    ) -> None:
        """After a yes, the app steps aside and `argv` gets the terminal."""

        def confirmed(yes: bool | None) -> None:
            if yes:
                on_start()
                on_done(run_system_command(self.screen.app, argv))

        self.screen.app.push_screen(ConfirmScreen("Run this system command?", body, "Run it"), confirmed)
