"""torch_gpu_doctor.pattern_cache: the console script keeps the package's compiled patterns between runs.

What must hold: a pattern from the file is the pattern `re.compile` makes (CPython compares two patterns by
their flags and their engine code, so `==` checks the code itself); the cache is off unless the console script
turns it on; anything wrong with the file costs speed, never a wrong answer or an error; nothing a user pasted
lands in it."""

from __future__ import annotations

import importlib
import marshal
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.test_architecture import modules
from tests.test_lazy_re import _lazies
from torch_gpu_doctor import pattern_cache
from torch_gpu_doctor.checks.support.signatures import load_catalogue
from torch_gpu_doctor.compat import load_matrix

pytestmark = pytest.mark.skipif(pattern_cache.cache_path({}) is None, reason="CPython 3.11-3.13 only")


def _package_patterns() -> list[tuple[str | bytes, int]]:
    """Every pattern the package sends through the cache: module-level ones, signatures, GPU families."""
    found: list[Any] = []
    for name in modules():
        if ".tui" in name or name.endswith("__main__"):  # the TUI's imports are its own tests' cost
            continue
        seen: set[int] = set()
        for value in vars(importlib.import_module(name)).values():
            found.extend(_lazies(value, seen))
    sources = [lazy._source for lazy in found]
    sources += [(s.regex, int(re.IGNORECASE)) for s in load_catalogue()]
    sources += [(f.regex, int(re.IGNORECASE)) for f in load_matrix().families]
    return sources


@pytest.fixture
def cache_dir(tmp_path: Path) -> Any:
    folder = tmp_path / "cache"
    pattern_cache.enable({"GPU_DOCTOR_CACHE_DIR": str(folder)})
    yield folder
    pattern_cache.disable()


def _reopen(folder: Path) -> None:
    """A new process's view: the file as written, nothing in memory."""
    pattern_cache.enable({"GPU_DOCTOR_CACHE_DIR": str(folder)})


def test_every_package_pattern_read_back_from_the_file_is_re_compiles_own(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    patterns = _package_patterns()
    assert len(patterns) > 300  # module-level patterns, 175 signatures, the families: not an empty walk
    for pattern, flags in patterns:
        pattern_cache.compile(pattern, flags)
    pattern_cache.save()
    _reopen(cache_dir)

    def no_parse(pattern: str, flags: int) -> Any:
        raise AssertionError(f"parsed again: {pattern!r}")

    monkeypatch.setattr(pattern_cache, "_generate", no_parse)
    for pattern, flags in patterns:
        assert pattern_cache.compile(pattern, flags) == re.compile(pattern, flags), pattern


def test_matching_and_groups_behave_as_re_compiles_pattern(cache_dir: Path) -> None:
    source = r"Driver Version:\s*(?P<driver>\d+\.\d+)(?:\.(?P<patch>\d+))?|(?i:cuda) (\d+)"
    pattern_cache.compile(source)
    pattern_cache.save()
    _reopen(cache_dir)
    cached, reference = pattern_cache.compile(source), re.compile(source)
    for text in ("Driver Version: 550.54.15", "CUDA 12", "nothing"):
        ours, theirs = cached.search(text), reference.search(text)
        assert (ours and (ours.groupdict(), ours.groups(), ours.span())) == (
            theirs and (theirs.groupdict(), theirs.groups(), theirs.span())
        )
    assert (cached.groups, cached.groupindex, cached.flags) == (
        reference.groups,
        reference.groupindex,
        reference.flags,
    )


def test_off_unless_enabled_and_off_by_the_environment(tmp_path: Path) -> None:
    pattern_cache.disable()
    pattern_cache.compile(r"off\d")
    pattern_cache.save()
    assert list(tmp_path.iterdir()) == []
    assert (
        pattern_cache.cache_path({"GPU_DOCTOR_NO_CACHE": "1", "GPU_DOCTOR_CACHE_DIR": str(tmp_path)}) is None
    )
    assert pattern_cache.cache_path({"XDG_CACHE_HOME": "/x/cache"}) is not None
    assert str(pattern_cache.cache_path({"XDG_CACHE_HOME": "/x/cache"})).startswith("/x/cache/gpu-doctor/")
    assert str(pattern_cache.cache_path({"HOME": "/home/u"})).startswith("/home/u/.cache/gpu-doctor/")


def test_an_invalid_pattern_raises_re_error_as_re_compile_does(cache_dir: Path) -> None:
    with pytest.raises(re.error):
        pattern_cache.compile(r"(unclosed")
    pattern_cache.save()
    assert not cache_dir.exists() or not any(cache_dir.iterdir())


def test_bytes_patterns_are_compiled_by_re_and_never_stored(cache_dir: Path) -> None:
    assert pattern_cache.compile(rb"\x00+").search(b"a\x00\x00") is not None
    pattern_cache.save()
    assert not cache_dir.exists()


def _written(folder: Path) -> Path:
    (path,) = folder.glob(
        f"patterns-*-{pattern_cache.FORMAT}.marshal"
    )  # the folder is shared with data_cache's files
    return path


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"\x00garbage\xff" * 100,
        marshal.dumps([1, 2, 3]),
        marshal.dumps((pattern_cache.FORMAT + 1, sys.version, {})),
        marshal.dumps((pattern_cache.FORMAT, "another interpreter", {})),
    ],
    ids=["empty", "garbage", "not-a-tuple", "another-layout", "another-python"],
)
def test_a_damaged_or_foreign_file_costs_only_speed(cache_dir: Path, damage: bytes) -> None:
    pattern_cache.compile(r"(?P<n>\d+) GiB")
    pattern_cache.save()
    _written(cache_dir).write_bytes(damage)
    _reopen(cache_dir)
    found = pattern_cache.compile(r"(?P<n>\d+) GiB").search("80 GiB")
    assert found is not None and found["n"] == "80"
    pattern_cache.save()  # rewritten whole
    _reopen(cache_dir)
    assert pattern_cache.compile(r"(?P<n>\d+) GiB") == re.compile(r"(?P<n>\d+) GiB")


@pytest.mark.parametrize(
    "code",
    [b"\xe7\x03\x00\x00" * 3, b"\x01\x02\x03", [999, 999]],
    ids=["not-engine-code", "not-whole-words", "a-list"],
)
def test_an_entry_the_engine_refuses_is_compiled_again(cache_dir: Path, code: Any) -> None:
    source = r"sm_(\d+)"
    pattern_cache.compile(source)
    pattern_cache.save()
    path = _written(cache_dir)
    layout, version, entries = marshal.loads(path.read_bytes())
    final_flags, _code, groups, groupindex, indexgroup = entries[(source, 0)]
    entries[(source, 0)] = (final_flags, code, groups, groupindex, indexgroup)
    path.write_bytes(marshal.dumps((layout, version, entries)))
    _reopen(cache_dir)
    assert pattern_cache.compile(source) == re.compile(source)


def test_a_file_others_may_write_is_never_read(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pattern_cache.compile(r"trust\d")
    pattern_cache.save()
    path = _written(cache_dir)
    path.chmod(0o666)
    _reopen(cache_dir)
    read: list[str] = []
    real = pattern_cache._generate

    def counting(pattern: str, flags: int) -> Any:
        read.append(pattern)
        return real(pattern, flags)

    monkeypatch.setattr(pattern_cache, "_generate", counting)
    pattern_cache.compile(r"trust\d")
    assert read == [r"trust\d"]  # compiled anew: the file was ignored


def test_a_folder_it_cannot_write_is_not_an_error(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x")
    pattern_cache.enable({"GPU_DOCTOR_CACHE_DIR": str(blocked / "cache")})
    try:
        assert pattern_cache.compile(r"blocked\d").match("blocked1")
        pattern_cache.save()  # cannot make the folder: silent
    finally:
        pattern_cache.disable()


def test_the_console_script_uses_it_and_stores_none_of_the_paste(tmp_path: Path) -> None:
    paste = tmp_path / "paste.txt"
    marker = "ZQXJ-unique-marker-7731"
    paste.write_text(
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
        f"NVIDIA GeForce GTX 680 {marker}\nDriver Version: 470.82.01\n"
    )
    env = {**os.environ, "GPU_DOCTOR_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("GPU_DOCTOR_NO_CACHE", None)
    argv = [sys.executable, "-m", "torch_gpu_doctor", "triage", str(paste)]
    first = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    stored = _written(tmp_path / "cache").read_bytes()
    again = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert (first.returncode, first.stdout) == (again.returncode, again.stdout)
    assert first.returncode == 1 and "compute capability 3.0" in first.stdout
    assert marker.encode() not in stored and b"GTX 680" not in stored
    assert b"no kernel image is available" in stored  # the signature's own pattern is there
    assert oct((tmp_path / "cache").stat().st_mode & 0o777) == oct(0o700)
    assert oct(_written(tmp_path / "cache").stat().st_mode & 0o777) == oct(0o600)


def test_the_file_is_private_whatever_the_umask(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fedora's and RHEL's user umask is 002: a file written group-writable would never be trusted again."""
    previous = os.umask(0o002)
    try:
        pattern_cache.compile(r"umask(\d)")
        pattern_cache.save()
    finally:
        os.umask(previous)
    path = _written(cache_dir)
    assert path.stat().st_mode & 0o777 == 0o600
    _reopen(cache_dir)

    def no_parse(pattern: str, flags: int) -> Any:
        raise AssertionError(f"parsed again: {pattern!r}")

    monkeypatch.setattr(pattern_cache, "_generate", no_parse)
    assert pattern_cache.compile(r"umask(\d)").match("umask2") is not None


def test_an_older_layouts_file_is_neither_read_nor_rewritten(cache_dir: Path) -> None:
    """An older install beside this one (a venv not upgraded) writes layout 1 under the name it always used: the
    two never take turns rewriting one file, which made each of them compile every pattern on every run."""
    import _sre  # type: ignore[import-not-found]  # the engine's magic is in both names

    older = cache_dir / f"patterns-{sys.implementation.cache_tag}-{_sre.MAGIC}.marshal"
    cache_dir.mkdir(mode=0o700, parents=True)
    written = marshal.dumps((1, sys.version, {(r"older\d", 0): (0, [1, 2], 0, {}, ())}))
    older.write_bytes(written)
    older.chmod(0o600)
    pattern_cache.compile(r"newer\d")
    pattern_cache.save()
    assert older.read_bytes() == written
    assert _written(cache_dir).name.endswith(f"-{pattern_cache.FORMAT}.marshal")
