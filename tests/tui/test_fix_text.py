"""The confirm dialog's command: the exact argv, in a form that splits back into it."""

from __future__ import annotations

import shlex

from torch_gpu_doctor.tui.fix_text import confirm_body


def test_the_shown_command_splits_back_into_the_exact_argv() -> None:
    argv = (
        "/home/a b/.venv/bin/python",
        "-m",
        "pip",
        "install",
        "torch==2.5.1",
        "--index-url",
        "https://x/$y",
    )
    body = confirm_body("why", argv, "where", ["needs network"]).plain
    shown = body.split("quoted as you would type it):\n", 1)[1].splitlines()[0]
    assert tuple(shlex.split(shown)) == argv
    assert "[needs network]" in body
