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


def test_the_help_lists_every_key_of_the_doctor_from_its_bindings() -> None:
    from textual.binding import Binding

    from torch_gpu_doctor.tui.app import DoctorApp
    from torch_gpu_doctor.tui.screens.help import help_text
    from torch_gpu_doctor.tui.screens.main import MainScreen

    keys = [b for b in [*MainScreen.BINDINGS, *DoctorApp.BINDINGS] if isinstance(b, Binding)]
    assert all(b.tooltip for b in keys), "every key says what it does: the help is made from the tooltips"
    text = help_text(MainScreen.BINDINGS, DoctorApp.BINDINGS)
    for binding in MainScreen.BINDINGS:
        assert isinstance(binding, Binding)
        assert f"- `{binding.key}`: {binding.tooltip}" in text
    assert "`?` this help" in text and "`q` quit" in text
    extra = Binding("x", "nothing", "X", tooltip="a key added later shows up by itself")
    assert "- `x`: a key added later shows up by itself" in help_text([*MainScreen.BINDINGS, extra], [])
