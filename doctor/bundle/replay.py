"""`--replay BUNDLE_OR_DIR`: a directory is used as it is (like --root); a bundle is unpacked safely into a
private temporary directory that is removed when the process exits."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from torch_gpu_doctor.bundle.extract import extract_bundle
from torch_gpu_doctor.bundle.model import DEFAULT_LIMITS, BundleError, Limits
from torch_gpu_doctor.host import layout


def replay_directory(source: str, limits: Limits = DEFAULT_LIMITS) -> Path:
    path = Path(source)
    if path.is_dir():
        return path
    if not path.is_file():
        raise BundleError("no such bundle or directory")
    into = Path(tempfile.mkdtemp(prefix="gpu-doctor-replay-"))  # mode 0700
    try:
        extract_bundle(path, into, limits)
        if not (into / layout.ROOT_DIR).is_dir():  # said here: RecordedHost would name the temporary folder
            raise BundleError(f"the bundle holds no {layout.ROOT_DIR}/ folder: not a capture")
    except BaseException:
        shutil.rmtree(into, ignore_errors=True)
        raise
    atexit.register(shutil.rmtree, into, ignore_errors=True)
    return into
