"""Applications that run their own Python (compat/app_pythons.json): every row sourced and its patterns valid,
a malformed row refused, and a paste about one gets that application's Python, not PATH's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from torch_gpu_doctor.compat import CompatDataError
from torch_gpu_doctor.compat.app_pythons import app_in, load_app_pythons, parse_app_pythons
from torch_gpu_doctor.triage.pipeline import diagnose_paste

PASTES = Path(__file__).resolve().parents[1] / "triage" / "pastes"


def test_every_row_names_its_source_and_where_its_python_is() -> None:
    apps = load_app_pythons()
    assert len(apps) >= 5
    assert all(a.source and a.where for a in apps)
    cpu = {a.name: s.run for a in apps if (s := a.switch("cpu")) is not None}
    assert cpu["Fooocus"] == ("python", "entry_with_update.py", "--always-cpu")
    low = {a.name: s for a in apps if (s := a.switch("low_memory")) is not None}
    assert low["Stable Diffusion web UI"].argv(windows=True) == ("webui.bat", "--medvram")
    assert low["Stable Diffusion web UI"].words(windows=False) == "--medvram"
    assert all(s.note and s.source for a in apps for _, s in a.switches)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("D:\\ComfyUI_windows_portable> .\\python_embeded\\python.exe main.py", "ComfyUI"),
        ("Fooocus version: 2.5.5", "Fooocus"),
        ('venv "D:\\stable-diffusion-webui\\venv\\Scripts\\Python.exe"', "Stable Diffusion web UI"),
        ("Krita AI Diffusion 1.36, the local ComfyUI server", "Krita AI Diffusion"),  # before ComfyUI
        ("import torch fails in my own script", None),
    ],
)
def test_the_application_a_paste_names(text: str, name: str | None) -> None:
    found = app_in(text)
    assert (found.name if found is not None else None) == name


@pytest.mark.parametrize(
    "row",
    [
        {"name": "x", "words": "(", "where": "w", "source": "s"},  # not a regular expression
        {
            "name": "x",
            "words": "x",
            "portable_marker": "p",
            "where": "w",
            "source": "s",
        },  # a marker, no Python
        {"name": "x", "words": "x", "where": "w"},  # no source
        {
            "name": "x",
            "words": "x",
            "where": "w",
            "source": "s",
            "switches": {"gpu": {"run": ["x"], "note": "n", "source": "s"}},
        },  # no such purpose
        {
            "name": "x",
            "words": "x",
            "where": "w",
            "source": "s",
            "switches": {"cpu": {"run": ["python", ""], "note": "n", "source": "s"}},
        },  # an empty word
        {
            "name": "x",
            "words": "x",
            "where": "w",
            "source": "s",
            "switches": {"cpu": {"run": ["python", "--cpu"], "note": "n"}},
        },  # a switch without its source
    ],
)
def test_a_malformed_row_is_refused(row: dict[str, Any]) -> None:
    with pytest.raises(CompatDataError):
        parse_app_pythons({"apps": [row]})


def test_a_paste_about_an_app_with_its_own_python_asks_for_that_python_first() -> None:
    """Acly/krita-ai-diffusion#2396: a GTX 1060 and the plugin's server torch without sm_61; the install goes
    into the server's venv, which `python` on PATH is not."""
    name = "krita-ai-diffusion-2396-no-kernel-image-too-old.txt"
    cause = diagnose_paste((PASTES / name).read_bytes(), name).result.cause
    fix = cause.finding.remediation if cause is not None else None
    assert fix is not None and fix.text.startswith("Krita AI Diffusion runs its own Python")
    assert fix.commands[0].argv[1:3] == (
        "-c",
        "import sys, torch; print(sys.executable, torch.__version__, torch.__file__)",
    )
    assert "cu126" in fix.commands[1].argv[-1]
