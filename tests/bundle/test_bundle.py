"""`gpu-doctor bundle` on this machine replays to the same findings; no planted secret survives in any member."""

from __future__ import annotations

import json
import re
import shutil
import stat
import tarfile
from pathlib import Path

import pytest

from torch_gpu_doctor.bundle import identifiers
from torch_gpu_doctor.bundle.build import bundle_capture
from torch_gpu_doctor.bundle.extract import extract_bundle
from torch_gpu_doctor.bundle.identifiers import IdentitySources
from torch_gpu_doctor.bundle.model import BundleError, Limits
from torch_gpu_doctor.bundle.write import write_archive
from torch_gpu_doctor.cli import main
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.runner import diagnose

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hosts"
GHP = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
SECRETS = {
    "PIP_INDEX_URL": "https://alice:pipT0kenSecret@pypi.example.com/simple",
    "HF_TOKEN": "hf_PlantedHuggingFaceToken1234567",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMIplantedK7MDENGbPxRfiCY",
    "CUDA_FOO": GHP,
    "NCCL_DEBUG_FILE": "https://bob:ncclUrlSecret42@logs.example.com/x",
}
SECRET_VALUES = (
    "pipT0kenSecret",
    "hf_PlantedHuggingFaceToken",
    "wJalrXUtnFEMIplanted",
    GHP,
    "ncclUrlSecret42",
)


def _members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive, "r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isreg()}  # type: ignore[union-attr]


def _grep(members: dict[str, bytes], needle: str) -> list[str]:
    """A plain substring search: the redactor's own edge rules must not decide what counts as a leak."""
    raw = needle.encode()
    return [name for name, data in members.items() if raw in data or raw in name.encode()]


# Identifiers of "this machine", planted through the live sources; distinctive, so that a plain substring
# search finds every leak (this machine's real host name may be `vm`, which /proc/sys/vm contains anyway).
PLANTED = {"HOST": "gd-planted-host7", "MAC": "02:5e:7a:11:22:33", "ACCOUNT": "plantedacct7"}
PLANTED_IP = "198.51.100.77"


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Secrets in the environment, and planted machine identifiers in allow-listed variables."""
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    sources = IdentitySources(
        hostnames=lambda: (PLANTED["HOST"],),
        interfaces=lambda: {"eth0": [("mac", PLANTED["MAC"]), ("ipv4", PLANTED_IP)]},
        current_user=lambda: PLANTED["ACCOUNT"],
    )
    monkeypatch.setattr(identifiers, "IdentitySources", lambda: sources)
    for kind, value in PLANTED.items():
        monkeypatch.setenv(f"CUDA_PLANTED_{kind}", value)
    monkeypatch.setenv("NCCL_COMM_ID", f"{PLANTED_IP}:29500")
    return {**PLANTED, "IP": PLANTED_IP}


def env_of(members: dict[str, bytes]) -> dict[str, str]:
    env: dict[str, str] = json.loads(members["host.json"])["env"]
    return env


def _bundle(tmp_path: Path, name: str, *extra: str) -> Path:
    out = tmp_path / name
    assert main(["--no-plugins", "bundle", "-o", str(out), "--yes", *extra]) == 0
    return out


def test_bundle_replays_to_the_findings_in_its_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], planted: dict[str, str]
) -> None:
    archive = _bundle(tmp_path, "b.tar.gz")
    capsys.readouterr()
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600
    members = _members(archive)
    assert {"manifest.json", "facts.json", "report.json", "report.txt", "host.json", "commands.json"} <= set(
        members
    )
    inside = json.loads(members["report.json"])
    assert inside["host"]["identifiers_included"] is False
    assert main(["--replay", str(archive), "--json", "--no-plugins"]) in (0, 1, 3)
    replayed = json.loads(capsys.readouterr().out)
    assert [(f["check_id"], f["status"]) for f in replayed["findings"]] == [
        (f["check_id"], f["status"]) for f in inside["findings"]
    ]
    assert [f["summary"] for f in replayed["findings"]] == [f["summary"] for f in inside["findings"]]


def test_no_secret_and_no_identifier_in_any_member(tmp_path: Path, planted: dict[str, str]) -> None:
    members = _members(_bundle(tmp_path, "b.tar.gz"))
    for secret in SECRET_VALUES:
        assert _grep(members, secret) == [], secret
    assert "HF_TOKEN" not in members["host.json"].decode()
    assert planted  # this machine has a host name at least
    for kind, value in planted.items():
        assert _grep(members, value) == [], (kind, value)
    assert env_of(members)["NCCL_COMM_ID"] == "ip-1:29500"
    env = json.loads(members["host.json"])["env"]
    assert env["CUDA_PLANTED_HOST"] == "host-1"
    assert "CUDA_FOO" not in env  # an allow-listed name with a token for a value is dropped, not kept
    manifest = json.loads(members["manifest.json"])
    assert manifest["pseudonyms"]["host-1"] == "hostname"
    host_row = next(r for r in manifest["members"] if r["path"] == "host.json")
    assert set(host_row["redaction"]["redacted"]) >= {"hostname", "secret"}


def test_include_identifiers_keeps_identifiers_never_secrets(tmp_path: Path, planted: dict[str, str]) -> None:
    members = _members(_bundle(tmp_path, "b.tar.gz", "--include-identifiers"))
    for secret in SECRET_VALUES:
        assert _grep(members, secret) == [], secret
    env = json.loads(members["host.json"])["env"]
    for kind, value in PLANTED.items():
        assert env[f"CUDA_PLANTED_{kind}"] == value
    assert json.loads(members["report.json"])["host"]["identifiers_included"] is True


def test_an_existing_file_or_a_symlink_at_the_output_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    existing = tmp_path / "exists.tar.gz"
    existing.write_text("keep me")
    assert main(["--no-plugins", "bundle", "-o", str(existing), "--yes"]) == 2
    assert existing.read_text() == "keep me"
    target = tmp_path / "elsewhere"
    link = tmp_path / "link.tar.gz"
    link.symlink_to(target)
    assert main(["--no-plugins", "bundle", "-o", str(link), "--yes"]) == 2
    assert not target.exists()
    err = capsys.readouterr().err
    assert "a file is already there" in err
    assert "a symbolic link is already there" in err


def test_bundle_refuses_a_capture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(FIXTURES / "rtx3090-x8-slots"), "bundle", "--yes"]) == 2
    assert "records this machine" in capsys.readouterr().err


def _crafted(tmp_path: Path) -> Path:
    """The eGPU fixture with credentials planted in files the capture holds, as a user's machine might."""
    capture = tmp_path / "capture"
    shutil.copytree(FIXTURES / "egpu-razer-core-authorized", capture, symlinks=True)
    (capture / "expected.json").unlink()
    proc = capture / "root" / "proc" / "4242"
    proc.mkdir(parents=True)
    (proc / "environ").write_bytes(
        b"HF_TOKEN=hf_FileHuggingFaceToken12345678\x00AWS_SECRET_ACCESS_KEY=fileAwsSecretKey0123456789\x00"
    )
    etc = capture / "root" / "etc"
    etc.mkdir(exist_ok=True)
    (etc / "pip.conf").write_text(
        "[global]\nindex-url = https://carol:pipConfToken77@pypi.corp.example/simple\n"
    )
    (capture / "root" / "home" / "alice").mkdir(parents=True)
    (capture / "root" / "home" / "alice" / ".netrc").write_text(
        "machine pypi.corp.example login alice password netrcSecret99\n"
    )
    return capture


def test_a_crafted_capture_loses_file_secrets_and_device_ids(tmp_path: Path) -> None:
    capture = _crafted(tmp_path)
    report = diagnose(RecordedHost(capture), "python3", plugins=False)
    sources = IdentitySources(hostnames=lambda: ("egpu-box",), interfaces=dict, current_user=lambda: "alice")
    bundle = bundle_capture(
        capture, report, RecordedHost(capture), include_identifiers=False, sources=sources
    )
    archive = tmp_path / "c.tar.gz"
    write_archive(archive, bundle.members, 0)
    members = _members(archive)
    for secret in ("hf_FileHuggingFaceToken", "fileAwsSecretKey", "pipConfToken77", "netrcSecret99"):
        assert _grep(members, secret) == [], secret
    unique_ids = [
        p.read_text().strip() for p in (capture / "root/sys/bus/thunderbolt/devices").glob("*/unique_id")
    ]
    assert unique_ids
    for value in unique_ids:
        assert _grep(members, value) == [], value
    assert "tb-uuid-1" in members["facts.json"].decode()
    assert "root/home/user-1/.netrc" in members  # the user's name is gone from paths too
    assert _grep(members, "alice") == []
    # the pseudonyms are stable: the same capture bundled again gives the same bytes
    again = bundle_capture(capture, report, RecordedHost(capture), False, sources=sources)
    assert [m.data for m in again.members[1:]] == [m.data for m in bundle.members[1:]]


def test_the_size_bound_names_the_member(tmp_path: Path) -> None:
    capture = _crafted(tmp_path)
    (capture / "root" / "big.log").write_bytes(b"x" * 100_000)
    report = diagnose(RecordedHost(capture), "python3", plugins=False)
    with pytest.raises(BundleError, match=r"root/big\.log is 97\.7 KiB, over the 64\.0 KiB limit"):
        bundle_capture(capture, report, None, False, limits=Limits(max_member_bytes=64 << 10))
    with pytest.raises(BundleError, match=r"over the 1\.0 KiB limit; largest members"):
        bundle_capture(capture, report, None, False, limits=Limits(max_total_bytes=1024))


def test_gpu_uuids_become_stable_pseudonyms(tmp_path: Path) -> None:
    capture = tmp_path / "h100"
    shutil.copytree(FIXTURES / "h100-sxm-x8-server", capture, symlinks=True)
    report = diagnose(RecordedHost(capture), "python3", plugins=False)
    bundle = bundle_capture(capture, report, None, include_identifiers=False)
    archive = tmp_path / "h.tar.gz"
    write_archive(archive, bundle.members, 0)
    members = _members(archive)
    assert _grep(members, "GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1") == []
    nvml = json.loads(members["nvml.json"])
    facts = json.loads(members["facts.json"])
    first = nvml["devices"][0]["uuid"]
    assert re.fullmatch(r"GPU-uuid-\d", first)
    assert first in json.dumps(facts)  # the same GPU, the same pseudonym in every file
    into = tmp_path / "replay"
    into.mkdir()
    extract_bundle(archive, into)
    replayed = diagnose(RecordedHost(into), "python3", plugins=False)
    # redaction changes no verdict on a GPU server, and the summaries only by the pseudonyms
    assert [(f.check_id, f.status) for f in replayed.findings] == [
        (f.check_id, f.status) for f in report.findings
    ]


@pytest.mark.parametrize(
    ("fixture", "hostname", "user"),
    [("h100-sxm-x8-server", "ubuntu", "dev"), ("ci-no-gpu-cuda-toolkit", "ubuntu", "local")],
)
def test_common_words_as_names_replay_to_the_same_findings(
    tmp_path: Path, fixture: str, hostname: str, user: str
) -> None:
    """Host `ubuntu` must not turn os-release's ID=ubuntu into host-1; user `dev`/`local` must keep
    root/dev/nvidia0 and /usr/local; the bundle replays to the findings of the machine itself."""
    capture = tmp_path / "capture"
    shutil.copytree(FIXTURES / fixture, capture, symlinks=True)
    report = diagnose(RecordedHost(capture), "python3", plugins=False)
    sources = IdentitySources(hostnames=lambda: (hostname,), interfaces=dict, current_user=lambda: user)
    bundle = bundle_capture(capture, report, RecordedHost(capture), False, sources=sources)
    assert "host-1" not in bundle.redactor.legend() and "user-1" not in bundle.redactor.legend()
    archive = tmp_path / "b.tar.gz"
    write_archive(archive, bundle.members, 0)
    into = tmp_path / "replay"
    into.mkdir()
    extract_bundle(archive, into)
    replayed = diagnose(RecordedHost(into), "python3", plugins=False)
    assert [(f.check_id, f.status, f.summary) for f in replayed.findings] == [
        (f.check_id, f.status, f.summary) for f in report.findings
    ]
