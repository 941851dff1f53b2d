"""What the doctor and the wizard say about a fix before it runs: one wording, one rule for what may run."""

from __future__ import annotations

import shlex

from rich.text import Text

from torch_gpu_doctor.model import Command

IN_TERMINAL = (
    "On this system, in this terminal: gpu-doctor steps aside until it ends (sudo may ask for your password)"
)


def runs_in_terminal(command: Command) -> bool:
    """A system command gpu-doctor may hand the terminal to, once the person chose it and confirmed:
    not one fed input (that is for copying), not one meant for another machine or holding a placeholder."""
    return command.runs_here and not command.stdin


def confirm_body(why: str, argv: tuple[str, ...], where: str, tags: list[str]) -> Text:
    """What the confirm dialog says: why, the exact argv, where it runs, and its flags."""
    body = Text(why + "\n\n")
    body.append(
        "Command (run without a shell; each word below is one argument, quoted as you would type it):\n",
        "bold",
    )
    body.append(shlex.join(argv) + "\n\n", "bold cyan")
    body.append(where + "\n")
    if tags:
        body.append("[" + "] [".join(tags) + "]", "yellow")
    return body
