"""Hand the terminal to a system command the person chose and confirmed (sudo may ask for a password)."""

from __future__ import annotations

import contextlib
import shlex
import sys

from textual.app import App, SuspendNotSupported

from torch_gpu_doctor.host.process import run_in_terminal


def run_system_command(app: App[object], argv: tuple[str, ...]) -> str:
    """Suspend the UI, run `argv` with the terminal, wait for Enter, come back. Returns how it ended."""
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(app.suspend())
        except (
            SuspendNotSupported
        ):  # e.g. the headless driver of a test, or a terminal Textual cannot hand over
            return "not run: this terminal cannot be handed over (copy the command and run it yourself)"
        print(f"\n$ {shlex.join(argv)}\n", flush=True)
        code = run_in_terminal(argv)
        ended = "timed out or could not start" if code is None else f"exit code {code}"
        print(f"\n[{ended}] Press Enter to return to gpu-doctor.", flush=True)
        with contextlib.suppress(OSError, ValueError):  # a closed stdin: return at once
            sys.stdin.readline()
    return ended
