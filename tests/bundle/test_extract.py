"""Hostile archives are refused with one clear sentence, and nothing is written outside the private folder."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from torch_gpu_doctor.bundle.extract import extract_bundle
from torch_gpu_doctor.bundle.model import BundleError, Limits
from torch_gpu_doctor.cli import main

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
    from torch_gpu_doctor.bundle.extract import _copy

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
        # lexically inside (root/l/l), but l is root/ itself: followed, `..` leaves root/
        ({"root/l": ".", "root/zz": "l/l/l/.."}, "resolves outside the capture"),
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


def _extended_header(kind: bytes, size: int) -> bytes:
    """One 512-byte header block of a pax (`x`) or GNU long-name (`L`) header claiming `size` bytes."""
    info = tarfile.TarInfo("././@PaxHeader" if kind == tarfile.XHDTYPE else "././@LongLink")
    info.type = kind
    info.size = size
    return info.tobuf(tarfile.GNU_FORMAT)


def _pax_of_nines(path: Path) -> Path:
    """1.1 KB: a pax header whose body is 1 MiB of '9' (CPython's pax parser is quadratic on it)."""
    body = b"9" * (1 << 20)
    path.write_bytes(gzip.compress(_extended_header(tarfile.XHDTYPE, len(body)) + body + bytes(1024)))
    return path


def _huge_long_name(path: Path, kind: bytes) -> Path:
    """~400 KB on disk, a 400 MiB header body: gzip members of 1 MiB each, compressed once and repeated."""
    mib = gzip.compress(b"a" * (1 << 20))
    with path.open("wb") as out:
        out.write(gzip.compress(_extended_header(kind, 400 << 20)))
        for _ in range(400):
            out.write(mib)
        out.write(gzip.compress(bytes(1024)))
    return path


_REPLAY_IN_A_CHILD = """
import resource, sys
from torch_gpu_doctor.cli import main
rc = main(["--replay", sys.argv[1], "--plain", "--no-plugins"])
print(rc, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


@pytest.mark.parametrize("case", ["pax-of-nines", "pax-400MiB", "longname-400MiB"])
def test_hostile_tar_headers_are_refused_quickly_in_bounded_memory(tmp_path: Path, case: str) -> None:
    archive = tmp_path / f"{case}.tar.gz"
    if case == "pax-of-nines":
        _pax_of_nines(archive)
        assert archive.stat().st_size < 2048
    else:
        _huge_long_name(archive, tarfile.XHDTYPE if case == "pax-400MiB" else tarfile.GNUTYPE_LONGNAME)
        assert archive.stat().st_size < 600_000
    done = subprocess.run(  # the timeout is a hang guard only; what shows the body was never read is the RSS
        [sys.executable, "-c", _REPLAY_IN_A_CHILD, str(archive)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    rc, max_rss_mib = (int(word) for word in done.stdout.split())
    assert rc == 2
    assert max_rss_mib < 200  # the 400 MiB body was never read
    assert done.stderr.count("\n") == 1
    what = "a GNU long-name header" if case == "longname-400MiB" else "a pax header"
    assert f"{what} of " in done.stderr and ": refused" in done.stderr


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"30 path=" + b"1" * 40 + b"\n", "more than 32 digits"),
        (b"99 path=root/x\n", "malformed pax record"),
        (b"12 pathroot\n", "malformed pax record"),
        (b"22 GNU.sparse.major=1\n", "sparse file"),
    ],
)
def test_a_small_but_hostile_pax_header_is_refused(tmp_path: Path, body: bytes, message: str) -> None:
    block = -len(body) % tarfile.BLOCKSIZE
    archive = tmp_path / "pax.tar.gz"
    archive.write_bytes(
        gzip.compress(_extended_header(tarfile.XHDTYPE, len(body)) + body + bytes(block) + bytes(1024))
    )
    (tmp_path / "into").mkdir()
    with pytest.raises(BundleError, match=message):
        extract_bundle(archive, tmp_path / "into")


def test_a_bundle_with_long_pax_paths_still_unpacks(tmp_path: Path) -> None:
    """The guard lets through what write_archive itself writes: pax headers for paths over 100 bytes."""
    deep = "root/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0/" + "x" * 60
    files = {deep: b"1\n", "host.json": b"{}"}
    with tarfile.open(tmp_path / "ok.tar.gz", "w:gz", format=tarfile.PAX_FORMAT) as tar:
        _file(tar, "manifest.json", _manifest(files))
        for name, data in files.items():
            _file(tar, name, data)
    (tmp_path / "into").mkdir()
    extract_bundle(tmp_path / "ok.tar.gz", tmp_path / "into")
    assert (tmp_path / "into" / deep).read_bytes() == b"1\n"


def test_a_bundle_without_a_capture_names_the_bundle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = _archive(tmp_path / "empty.tar.gz", lambda t: None)  # manifest.json and host.json, no root/
    assert main(["--replay", str(archive), "--plain"]) == 2
    err = capsys.readouterr().err
    assert f"--replay {archive}: the bundle holds no root/ folder: not a capture" in err
    assert "gpu-doctor-replay-" not in err
