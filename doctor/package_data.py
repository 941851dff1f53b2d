"""The data files shipped inside the package (specs.json, cuda_matrix.json, the signature catalogue, ...).

`importlib.resources` would also read them from a zip, which gpu-doctor is never installed as; importing it
brings tempfile, random and zipfile along, about 6 ms of every start on the slow machines this project is
measured on (issue 17's 300 ms budget). A package's files are beside its `__init__`.
"""

from __future__ import annotations

import importlib
from pathlib import Path


def package_file(package: str, name: str) -> Path:
    """The path of the file `name` in the (imported) package `package`."""
    module = importlib.import_module(package)
    return Path(module.__file__ or "").parent / name


def package_text(package: str, name: str) -> str:
    """The UTF-8 text of the file `name` in the (imported) package `package`."""
    return package_file(package, name).read_text(encoding="utf-8")
