"""Hostile archives are refused with one clear sentence, and nothing is written outside the private folder."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from gpu_doctor.bundle.extract import extract_bundle
from gpu_doctor.bundle.model import BundleError, Limits
from gpu_doctor.cli import main

Add = Callable[[tarfile.TarFile], None]


def _manifest(files: dict[str, bytes]) -> bytes:
    rows = [
        {"path": p, "type": "file", "size": len(d), "sha256": hashlib.sha256(d).hexdigest()}
        for p, d in files.items()
    ]
    return json.dumps({"members": rows}).encode()


def _file(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def _archive(path: Path, add: Add, files: dict[str, bytes] | None = None) -> Path:
    files = {"host.json": b"{}"} if files is None else files
    with tarfile.open(path, "w:gz") as tar:
        _file(tar, "manifest.json", _manifest(files))
        for name, data in files.items():
            _file(tar, name, data)
        add(tar)
    return path


def _special(name: str, kind: bytes, linkname: str = "") -> Add:
    def add(tar: tarfile.TarFile) -> None:
        info = tarfile.TarInfo(name)
        info.type = kind
        info.linkname = linkname
        tar.addfile(info)

    return add


HOSTILE: dict[str, tuple[Add, str]] = {
    "traversal": (lambda t: _file(t, "root/../../evil", b"x"), "'..' would leave"),
    "absolute": (lambda t: _file(t, "/tmp/evil-absolute", b"x"), "an absolute path"),
    "symlink": (_special("root/etc/passwd", tarfile.SYMTYPE, "/etc/passwd"), "a symbolic link"),
    "hardlink": (_special("root/etc/shadow", tarfile.LNKTYPE, "host.json"), "a hard link"),
    "chardev": (_special("root/dev/mem", tarfile.CHRTYPE), "a character device"),
    "blockdev": (_special("root/dev/sda", tarfile.BLKTYPE), "a block device"),
    "fifo": (_special("root/fifo", tarfile.FIFOTYPE), "a FIFO"),
    "unlisted": (lambda t: _file(t, "root/extra", b"x"), r"not in manifest\.json"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_members_are_refused(tmp_path: Path, case: str) -> None:
    add, message = HOSTILE[case]
    archive = _archive(tmp_path / "bad.tar.gz", add)
    into = tmp_path / "into"
    into.mkdir()
    with pytest.raises(BundleError, match=message):
        extract_bundle(archive, into)
    outside = sorted(p.name for p in tmp_path.iterdir())
    assert outside == ["bad.tar.gz", "into"]  # nothing beside the private folder
    assert not Path("/tmp/evil-absolute").exists()


def test_a_manifest_mismatch_is_refused(tmp_path: Path) -> None:
    files = {"host.json": b"{}"}
    with tarfile.open(tmp_path / "b.tar.gz", "w:gz") as tar:
        _file(tar, "manifest.json", _manifest(files))
        _file(tar, "host.json", b"{ }")  # altered after the manifest was written
    (tmp_path / "into").mkdir()
    with pytest.raises(BundleError, match="does not match its sha256"):
        extract_bundle(tmp_path / "b.tar.gz", tmp_path / "into")


def test_a_missing_manifest_is_refused(tmp_path: Path) -> None:
    with tarfile.open(tmp_path / "b.tar.gz", "w:gz") as tar:
        _file(tar, "host.json", b"{}")
    (tmp_path / "into").mkdir()
    with pytest.raises(BundleError, match=r"no manifest\.json"):
        extract_bundle(tmp_path / "b.tar.gz", tmp_path / "into")


def test_a_huge_zero_member_is_stopped_while_counting(tmp_path: Path) -> None:
    """A 2 GB member of zeros, scaled down: the limit is met while reading, not from the header."""
    big = {"root/zeros": bytes(4 << 20)}
    archive = _archive(tmp_path / "zeros.tar.gz", lambda t: None, files=big)
    assert archive.stat().st_size < 64 << 10  # zeros compress: the archive itself looks harmless
    (tmp_path / "into").mkdir()
    with pytest.raises(BundleError, match="limit for one member"):
        extract_bundle(archive, tmp_path / "into", Limits(max_member_bytes=1 << 20))
    (tmp_path / "into2").mkdir()
    with pytest.raises(BundleError, match="unpacks to more than"):
        extract_bundle(archive, tmp_path / "into2", Limits(max_total_bytes=2 << 20))


def test_a_header_that_lies_about_its_size_is_still_counted(tmp_path: Path) -> None:
    from gpu_doctor.bundle.extract import _copy

    target = tmp_path / "out"
    with pytest.raises(BundleError, match="limit for one member"):
        _copy(io.BytesIO(bytes(3000)), target, "x", 10_000, Limits(max_member_bytes=2048))


def test_a_hundred_thousand_members_are_refused(tmp_path: Path) -> None:
    archive = tmp_path / "many.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo("d")
        info.type = tarfile.DIRTYPE
        for _ in range(100_000):
            tar.addfile(info)
    (tmp_path / "into").mkdir()
    with pytest.raises(BundleError, match="more than 20000 members"):
        extract_bundle(archive, tmp_path / "into")


@pytest.mark.parametrize(
    ("links", "message"),
    [
        ({"root/a": "/etc"}, "is absolute"),
        ({"root/a": "../../.."}, "points outside the capture"),
        ({"host.json.lnk": "root"}, "outside root/"),
        # each link stays inside on paper; followed, the chain leaves root/
        ({"root/d/x": "../..", "root/d/y": "x/../.."}, "outside the capture"),
    ],
)
def test_links_json_cannot_point_outside(tmp_path: Path, links: dict[str, str], message: str) -> None:
    files = {"links.json": json.dumps({"links": links}).encode(), "root/d/f": b""}
    archive = _archive(tmp_path / "l.tar.gz", lambda t: None, files=files)
    (tmp_path / "into").mkdir()
    with pytest.raises(BundleError, match=message):
        extract_bundle(archive, tmp_path / "into")


def test_the_cli_says_one_line_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = _archive(tmp_path / "bad.tar.gz", HOSTILE["traversal"][0])
    assert main(["--replay", str(archive), "--plain"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "'..' would leave the bundle's folder" in err
    assert "Traceback" not in err
    (tmp_path / "junk.tar.gz").write_bytes(b"not a tarball")
    assert main(["--replay", str(tmp_path / "junk.tar.gz"), "--json"]) == 2
    out = capsys.readouterr().out
    assert json.loads(out)["error"]["kind"] == "usage"
