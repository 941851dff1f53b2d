"""Saving a support bundle from the interactive doctor: what it will hold, a confirmation, and writing it.

The same bundle as `gpu-doctor bundle` (redacted, secrets removed), previewed the same way before anything
is written; it is written only on a yes.
"""

from __future__ import annotations

import io
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.screen import Screen

from torch_gpu_doctor import TOOL_NAME
from torch_gpu_doctor.bundle.build import Bundle, default_name
from torch_gpu_doctor.bundle.contents import redaction_line, show_contents
from torch_gpu_doctor.bundle.model import BundleError, human_size
from torch_gpu_doctor.bundle.write import write_archive
from torch_gpu_doctor.tui.screens.confirm import ConfirmScreen


def bundle_path(bundle: Bundle, folder: Path | None = None) -> Path:
    created: datetime = bundle.created_at
    return (folder or Path.cwd()) / default_name(created)


def preview(bundle: Bundle, output: Path) -> str:
    """What `gpu-doctor bundle` shows before it asks: each file, its size, what was redacted."""
    out = io.StringIO()
    show_contents(bundle, output, out)
    return out.getvalue().rstrip("\n")


def write_bundle(bundle: Bundle, output: Path) -> str:
    """Write it (0600, never over a file or through a link); returns what to tell the person. Raises
    BundleError when it cannot be written."""
    size = write_archive(output, bundle.members, int(bundle.created_at.timestamp()))
    files = sum(1 for m in bundle.members if m.data is not None)
    return (
        f"{output} ({human_size(size)}, {files} files; {redaction_line(bundle)}). "
        f"Replay it anywhere with: {TOOL_NAME} --replay {output.name}"
    )


def offer_bundle(screen: Screen[Any], bundle: Bundle, folder: Path | None = None) -> None:
    """Preview the recorded bundle in a confirmation; write it only on yes, and say where (or why not)."""
    output = bundle_path(bundle, folder)

    def confirmed(yes: bool | None) -> None:
        if not yes:
            screen.notify("Nothing written.")
            return
        try:
            said = write_bundle(bundle, output)
        except BundleError as exc:
            screen.notify(f"Could not write the bundle: {exc}", severity="error")
            return
        screen.notify(said, title="Support bundle saved", timeout=15)

    body = Text(preview(bundle, output))
    screen.app.push_screen(ConfirmScreen("Write this support bundle?", body, "Write it"), confirmed)
