"""Saving a support bundle from the interactive doctor: what it will hold, and writing it (no UI here).

The same bundle as `gpu-doctor bundle` (redacted, secrets removed), previewed the same way before anything
is written; the screen asks, and writes only on a yes.
"""

from __future__ import annotations

import io
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from torch_gpu_doctor import TOOL_NAME

if TYPE_CHECKING:
    from torch_gpu_doctor.bundle.build import Bundle


def bundle_path(bundle: Bundle, folder: Path | None = None) -> Path:
    from torch_gpu_doctor.bundle.build import default_name

    created: datetime = bundle.created_at
    return (folder or Path.cwd()) / default_name(created)


def preview(bundle: Bundle, output: Path) -> str:
    """What `gpu-doctor bundle` shows before it asks: each file, its size, what was redacted."""
    from torch_gpu_doctor.bundle.contents import show_contents

    out = io.StringIO()
    show_contents(bundle, output, out)
    return out.getvalue().rstrip("\n")


def write_bundle(bundle: Bundle, output: Path) -> str:
    """Write it (0600, never over a file or through a link); returns what to tell the person. Raises
    BundleError when it cannot be written."""
    from torch_gpu_doctor.bundle.contents import redaction_line
    from torch_gpu_doctor.bundle.model import human_size
    from torch_gpu_doctor.bundle.write import write_archive

    size = write_archive(output, bundle.members, int(bundle.created_at.timestamp()))
    files = sum(1 for m in bundle.members if m.data is not None)
    return (
        f"{output} ({human_size(size)}, {files} files; {redaction_line(bundle)}). "
        f"Replay it anywhere with: {TOOL_NAME} --replay {output.name}"
    )
