"""torch_gpu_doctor.data_cache: the console script keeps the parsed package data between runs.

What must hold: what comes back from the file equals what the loaders build from the data files; the cache is
off unless the console script turns it on; a changed data file or module is built again, never served stale;
a damaged, foreign or untrusted file costs speed, never a wrong answer, an error or code run from it."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from torch_gpu_doctor import cache_files, data_cache
from torch_gpu_doctor.checks.support import signatures
from torch_gpu_doctor.compat import _shipped_matrix, torch_parse
from torch_gpu_doctor.model import Command, Remediation, Target

LOADERS: dict[str, Callable[[], Any]] = {
    "error-signatures": signatures._shipped_catalogue,
    "cuda-matrix": _shipped_matrix,
    "torch-releases": torch_parse._shipped_torch_releases,
}


@pytest.fixture
def cache_dir(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "cache"
    data_cache.enable({"GPU_DOCTOR_CACHE_DIR": str(folder)})
    yield folder
    data_cache.disable()


def _reopen(folder: Path) -> None:
    """A new process's view: the files as written, no stamps asked yet."""
    data_cache.enable({"GPU_DOCTOR_CACHE_DIR": str(folder)})


class _Counting:
    """A build that counts its calls."""

    def __init__(self, value: Any) -> None:
        self.value, self.calls = value, 0

    def __call__(self) -> Any:
        self.calls += 1
        return self.value


def _entry(name: str) -> str:
    return f"data-{name}-{sys.implementation.cache_tag}-{data_cache._INSTALL}.pickle"


def _source(tmp_path: Path, text: str = '{"a": 1}') -> Path:
    path = tmp_path / "data.json"
    path.write_text(text)
    return path


VALUE = Remediation(
    "Install the driver.", (Command(("apt", "install", "x"), "the package"),), target=Target.SYSTEM
)


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_each_shipped_file_read_back_equals_what_its_loader_builds(cache_dir: Path, name: str) -> None:
    build = LOADERS[name]
    shipped = Path(signatures.__file__).parent / signatures.CATALOGUE  # any real file: a source to stamp
    built = data_cache.cached(name, build, (shipped,))
    _reopen(cache_dir)
    calls: list[int] = []

    def not_again() -> Any:
        calls.append(1)
        return build()

    assert data_cache.cached(name, not_again, (shipped,)) == built
    assert calls == []  # it came from the file
    assert built == build()  # and equals a fresh build


def test_off_unless_enabled_and_off_by_the_environment(tmp_path: Path) -> None:
    data_cache.disable()
    build = _Counting(VALUE)
    data_cache.cached("off", build, (_source(tmp_path),))
    data_cache.cached("off", build, (_source(tmp_path),))
    assert build.calls == 2
    data_cache.enable({"GPU_DOCTOR_NO_CACHE": "1", "GPU_DOCTOR_CACHE_DIR": str(tmp_path / "c")})
    try:
        data_cache.cached("off", build, (_source(tmp_path),))
    finally:
        data_cache.disable()
    assert build.calls == 3 and not (tmp_path / "c").exists()


def test_a_changed_data_file_is_built_again(cache_dir: Path, tmp_path: Path) -> None:
    source = _source(tmp_path)
    build = _Counting(VALUE)
    data_cache.cached("changed", build, (source,))
    _reopen(cache_dir)
    data_cache.cached("changed", build, (source,))
    assert build.calls == 1
    source.write_text('{"a": 2, "b": 3}')  # another size, another time
    _reopen(cache_dir)
    data_cache.cached("changed", build, (source,))
    assert build.calls == 2


def test_a_changed_module_of_the_package_is_built_again(cache_dir: Path, tmp_path: Path) -> None:
    """An editable install whose parser was edited: the entry names every package module loaded at its build."""
    source = _source(tmp_path)
    build = _Counting(VALUE)
    data_cache.cached("code", build, (source,))
    stored = pickle.loads((cache_dir / _entry("code")).read_bytes())
    files = [stamp[0] for stamp in stored[2]]
    assert data_cache.__file__ in files and str(source) in files
    _, _, stamps, payload = stored
    aged = tuple(
        (path, size, mtime - 1) if path == data_cache.__file__ else (path, size, mtime)
        for path, size, mtime in stamps
    )
    (cache_dir / _entry("code")).write_bytes(pickle.dumps((data_cache.FORMAT, stored[1], aged, payload)))
    _reopen(cache_dir)
    data_cache.cached("code", build, (source,))
    assert build.calls == 2


def _evil_payload() -> bytes:
    """A pickle that would run a command when loaded by a plain unpickler."""

    class Evil:
        def __reduce__(self) -> tuple[Any, ...]:
            return (os.system, ("touch /tmp/gpu-doctor-data-cache-pwned",))

    return pickle.dumps(Evil())


@pytest.mark.parametrize(
    "damage",
    [b"", b"garbage", pickle.dumps("text"), pickle.dumps((data_cache.FORMAT, "0.0.0", (), b""))],
    ids=["empty", "garbage", "another-shape", "another-version"],
)
def test_a_damaged_or_foreign_file_costs_only_speed(cache_dir: Path, tmp_path: Path, damage: bytes) -> None:
    source = _source(tmp_path)
    build = _Counting(VALUE)
    data_cache.cached("damaged", build, (source,))
    (cache_dir / _entry("damaged")).write_bytes(damage)
    _reopen(cache_dir)
    assert data_cache.cached("damaged", build, (source,)) == VALUE
    assert build.calls == 2


def test_a_file_that_would_run_code_is_refused_and_nothing_runs(cache_dir: Path, tmp_path: Path) -> None:
    source = _source(tmp_path)
    build = _Counting(VALUE)
    data_cache.cached("evil", build, (source,))
    path = cache_dir / _entry("evil")
    _, version, stamps, _ = pickle.loads(path.read_bytes())
    marker = Path("/tmp/gpu-doctor-data-cache-pwned")
    marker.unlink(missing_ok=True)
    for outer in (_evil_payload(), pickle.dumps((data_cache.FORMAT, version, stamps, _evil_payload()))):
        path.write_bytes(outer)
        _reopen(cache_dir)
        assert data_cache.cached("evil", build, (source,)) == VALUE
    assert not marker.exists()
    assert build.calls == 3


def test_a_file_others_may_write_is_never_read(cache_dir: Path, tmp_path: Path) -> None:
    source = _source(tmp_path)
    build = _Counting(VALUE)
    data_cache.cached("trust", build, (source,))
    (cache_dir / _entry("trust")).chmod(0o666)
    _reopen(cache_dir)
    data_cache.cached("trust", build, (source,))
    assert build.calls == 2


def test_a_folder_it_cannot_write_or_a_value_that_does_not_pickle_is_not_an_error(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x")
    data_cache.enable({"GPU_DOCTOR_CACHE_DIR": str(blocked / "cache")})
    try:
        assert data_cache.cached("blocked", lambda: VALUE, (_source(tmp_path),)) == VALUE
    finally:
        data_cache.disable()
    data_cache.enable({"GPU_DOCTOR_CACHE_DIR": str(tmp_path / "cache")})
    try:
        unpicklable = (lambda: 1,)
        assert data_cache.cached("lambda", lambda: unpicklable, (_source(tmp_path),)) is unpicklable
    finally:
        data_cache.disable()


def test_the_console_script_uses_it_and_its_files_are_private(tmp_path: Path) -> None:
    paste = tmp_path / "paste.txt"
    paste.write_text(
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\nqzxv-host-7\n"
    )
    env = {**os.environ, "GPU_DOCTOR_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("GPU_DOCTOR_NO_CACHE", None)
    script = "import sys; from torch_gpu_doctor.cli import entry; sys.exit(entry())"
    outputs = [
        subprocess.run(
            [sys.executable, "-c", script, "triage", str(paste)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        for _ in range(2)
    ]
    assert outputs[0].stdout == outputs[1].stdout and outputs[0].returncode == outputs[1].returncode == 1
    written = sorted(p.name for p in (tmp_path / "cache").glob("data-*.pickle"))
    names = {_entry(name): name for name in LOADERS}
    assert "error-signatures" in [names[w] for w in written]  # every triage reads the catalogue
    for path in (tmp_path / "cache").glob("data-*.pickle"):
        assert path.stat().st_mode & 0o077 == 0
        assert b"qzxv-host-7" not in path.read_bytes()  # package data only, nothing of the paste


def test_another_installs_entry_is_never_served(cache_dir: Path, tmp_path: Path) -> None:
    """Two installs of one version (a venv and an editable checkout) share the folder: an entry made from one's
    data files is not the other's, even where the first's files are unchanged."""
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    mine.mkdir()
    theirs.mkdir()
    build = _Counting(VALUE)
    data_cache.cached("installs", build, (_source(theirs),))
    _reopen(cache_dir)
    data_cache.cached("installs", build, (_source(mine),))
    assert build.calls == 2


def test_no_home_and_no_passwd_entry_turns_the_caches_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bare container's UID with no HOME: Path.home() raises; the command must start, without a cache."""

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert cache_files.cache_folder({}) is None
    assert cache_files.cache_folder({"XDG_CACHE_HOME": "/x"}) == Path("/x/gpu-doctor")
