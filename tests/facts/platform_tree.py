"""Small captured machines built in a test's tmp_path, for variations of tests/fixtures/platform-trees."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path

from torch_gpu_doctor.host.recorded import RecordedHost

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "platform-trees"


def build(
    where: Path,
    files: Mapping[str, str | bytes] | None = None,
    links: Mapping[str, str] | None = None,
    dirs: tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
    file_errors: Mapping[str, str] | None = None,
    base: str | None = None,
) -> RecordedHost:
    """A capture at `where`: `base` (a platform-trees folder) copied first, then files, symlinks, empty folders."""
    if base is not None:
        shutil.copytree(TREES / base, where, symlinks=True, dirs_exist_ok=True)
    root = where / "root"
    root.mkdir(parents=True, exist_ok=True)
    for path, content in (files or {}).items():
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
    for path, to in (links or {}).items():
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink() or target.exists():
            target.unlink()
        target.symlink_to(to)
    for path in dirs:
        (root / path.lstrip("/")).mkdir(parents=True, exist_ok=True)
    meta_path = where / "host.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    if env is not None:
        meta["env"] = dict(env)
    if file_errors is not None:
        meta["file_errors"] = dict(file_errors)
    meta_path.write_text(json.dumps(meta))
    return RecordedHost(where)


def tree(name: str) -> RecordedHost:
    return RecordedHost(TREES / name)
