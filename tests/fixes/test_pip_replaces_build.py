"""The recommended install command, run by a real pip in a real venv: pinning the exact local version from
the variant's index replaces the installed build of torch and leaves every other package as it was. And the
premise: a pin without the local version is satisfied by the wrong build, so pip would change nothing.

Wheels and the index are built here (no network): tiny `py3-none-any` wheels of "torch" in two builds, and an
unrelated package that must not be touched.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import quote

import pytest

from torch_gpu_doctor.fixes.recommendation import Recommendation

pytestmark = pytest.mark.slow
REAL_INDEX = "https://download.pytorch.org/whl/cu124"


def _wheel(folder: Path, name: str, version: str) -> Path:
    files = {
        f"{name}/__init__.py": f"__version__ = {version!r}\n",
        f"{name}-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{name}-{version}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = [
        f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},"
        f"{len(text.encode())}"
        for path, text in files.items()
    ]
    files[f"{name}-{version}.dist-info/RECORD"] = (
        "\n".join([*record, f"{name}-{version}.dist-info/RECORD,,"]) + "\n"
    )
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in files.items():
            archive.writestr(member, text)
    return path


def _index(root: Path, wheels: list[Path]) -> str:
    """A PEP 503 simple index over `wheels`, as a file:// URL."""
    for project in sorted({w.name.split("-")[0] for w in wheels}):
        page = root / "simple" / project
        page.mkdir(parents=True)
        links = "".join(
            f'<a href="{w.as_uri().replace(w.name, quote(w.name))}">{w.name}</a>\n'
            for w in wheels
            if w.name.split("-")[0] == project
        )
        (page / "index.html").write_text(f"<html><body>\n{links}</body></html>\n", encoding="utf-8")
    return (root / "simple").as_uri()


def _env() -> dict[str, str]:
    """pip on its own: no configuration file or PIP_* variable of this machine (a site-wide constraints file,
    extra indexes, find-links) takes part, only the index and wheels a test names."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    return {**kept, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}


def _pip(python: Path, *args: str) -> None:
    subprocess.run([str(python), "-m", "pip", "--quiet", *args], check=True, timeout=300, env=_env())


def _installed(python: Path, name: str) -> str:
    code = f"import importlib.metadata as m; print(m.version({name!r}))"
    return subprocess.run(
        [str(python), "-c", code], check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """A venv holding torch 2.6.0+cpu and an unrelated package; the folder of wheels; the cu124 index."""
    root = tmp_path_factory.mktemp("pip")
    wheels = root / "wheels"
    wheels.mkdir()
    cpu = _wheel(wheels, "torch", "2.6.0+cpu")
    cu124 = _wheel(wheels, "torch", "2.6.0+cu124")
    other = _wheel(wheels, "unrelated", "1.0")
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True, timeout=300)
    python = root / "venv" / "bin" / "python"
    _pip(python, "install", "--no-index", str(cpu), str(other))
    index = _index(root / "index", [cu124])
    return python, wheels, index


def test_a_pin_without_the_local_version_changes_nothing(venv: tuple[Path, Path, str]) -> None:
    python, _, index = venv
    before = _installed(python, "torch")  # 2.6.0+cpu (or +cu124 once the other test ran)
    _pip(python, "install", "torch==2.6.0", "--index-url", index)
    assert _installed(python, "torch") == before  # why the command pins "+cu124"


def test_the_recommended_command_swaps_the_build_and_nothing_else(venv: tuple[Path, Path, str]) -> None:
    python, _, index = venv
    other = next((python.parent.parent / "lib").glob("python3*/site-packages/unrelated-1.0.dist-info"))
    before = other.stat().st_mtime_ns
    rec = Recommendation(
        torch="2.6.0",
        torchvision=None,
        torchaudio=None,
        variant="cu124",
        index_url=None,  # the PyPI default build: the replacement still comes from the variant's index
        reason="test",
        confirmed=True,
        replaces=True,
    )
    argv = list(rec.pip_argv(str(python)))
    assert "--force-reinstall" not in argv
    assert argv[argv.index("--index-url") + 1] == REAL_INDEX
    argv[argv.index("--index-url") + 1] = index  # the same command against the local copy of the index
    subprocess.run([*argv, "--quiet"], check=True, timeout=300, env=_env())
    assert _installed(python, "torch") == "2.6.0+cu124"
    assert _installed(python, "unrelated") == "1.0"
    assert other.stat().st_mtime_ns == before, "an unrelated package was reinstalled"


def test_a_companion_with_one_wheel_for_every_variant_is_pinned_without_a_local_version(
    venv: tuple[Path, Path, str], tmp_path: Path
) -> None:
    """torchvision 0.29.2 is one `py3-none` wheel (compat-errata.md §3): `torchvision==0.29.2+cpu` names
    nothing pip can find, so the replacement of torch 2.15 pins it without the tag, as the data says."""
    from torch_gpu_doctor.compat.torch_parse import load_torch_releases

    python, wheels, _ = venv
    release = next(r for r in load_torch_releases().releases if r.version == "2.15.0")
    pair = release.companions.for_version("2.15.0")
    index = _index(
        tmp_path / "index",
        [_wheel(wheels, "torch", "2.15.0+cpu"), _wheel(wheels, "torchvision", pair.torchvision)],
    )
    rec = Recommendation(
        torch="2.15.0",
        torchvision=pair.torchvision,
        torchaudio=None,
        variant="cpu",
        index_url="https://download.pytorch.org/whl/cpu",
        reason="test",
        confirmed=True,
        replaces=True,
        untagged=tuple(sorted(pair.untagged)),
    )
    argv = list(rec.pip_argv(str(python)))
    assert "torchvision==0.29.2" in argv
    argv[argv.index("--index-url") + 1] = index
    subprocess.run([*argv, "--quiet"], check=True, timeout=300, env=_env())
    assert _installed(python, "torch") == "2.15.0+cpu"
    assert _installed(python, "torchvision") == "0.29.2"
