"""Every captured machine in tests/fixtures/hosts/<scenario>/ gives the findings its expected.json names.

A fixture is a directory in the capture layout (docs/capture-format.md) plus `expected.json`:
{"exit_code": N, "findings": {check id: {"status": ..., "summary_contains": ..., "details_contains": ...}},
 "recommended_install": {"command": ..., "needed": bool} or null}
with one entry per check that runs (`details_contains` is optional). Provenance of each fixture's data is in
tests/fixtures/hosts/README.md and in its host.json description.
"""

from __future__ import annotations

import json
import os
import posixpath
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from torch_gpu_doctor.cli import main
from torch_gpu_doctor.host.base import DEFAULT_TIMEOUT_S, CommandResult
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.runner import diagnose
from torch_gpu_doctor.schemas import report_schema_text

HOSTS = Path(__file__).parent / "fixtures" / "hosts"
FIXTURES = sorted(p for p in HOSTS.iterdir() if p.is_dir()) if HOSTS.is_dir() else []
STATUSES = {s.value for s in Status}


def _expected(fixture: Path) -> dict[str, Any]:
    data = json.loads((fixture / "expected.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


class _TrackingHost(RecordedHost):
    """A RecordedHost that also remembers which commands were asked for (to find stale recordings)."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.asked: list[tuple[str, ...]] = []

    def run(self, argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT_S) -> CommandResult:
        self.asked.append(tuple(argv))
        return super().run(argv, timeout)


def test_there_are_fixture_hosts_and_each_is_complete() -> None:
    assert len(FIXTURES) >= 22, [p.name for p in FIXTURES]
    for fixture in FIXTURES:
        for name in ("root", "host.json", "commands.json", "expected.json"):
            assert (fixture / name).exists(), f"{fixture.name}: missing {name}"
        meta = json.loads((fixture / "host.json").read_text(encoding="utf-8"))
        assert meta.get("description"), f"{fixture.name}: host.json has no description"
        expected = _expected(fixture)
        assert isinstance(expected.get("exit_code"), int), fixture.name
        assert "recommended_install" in expected, f"{fixture.name}: pin recommended_install (or null)"
        assert isinstance(expected.get("root_causes"), list), f"{fixture.name}: pin root_causes (or [])"
        assert expected.get("findings"), fixture.name
        for check_id, want in expected["findings"].items():
            assert want.get("status") in STATUSES, (
                f"{fixture.name}: {check_id}: bad status {want.get('status')}"
            )
            assert want.get("summary_contains"), f"{fixture.name}: {check_id}: no summary_contains"


@pytest.mark.parametrize("fixture", FIXTURES, ids=[p.name for p in FIXTURES])
def test_symlinks_are_relative_and_stay_inside_the_root(fixture: Path) -> None:
    root = fixture / "root"
    links = [
        Path(d) / n for d, dirs, files in os.walk(root) for n in (*dirs, *files) if (Path(d) / n).is_symlink()
    ]
    for link in links:
        target = os.readlink(link)
        assert not target.startswith("/"), f"{link}: absolute symlink {target}"
        inside = posixpath.normpath(posixpath.join(str(link.parent.relative_to(root)), target))
        assert not inside.startswith(".."), f"{link} -> {target} leaves the root"
        assert link.exists(), f"{link} -> {target} dangles"
    pci = root / "sys" / "bus" / "pci" / "devices"
    if pci.is_dir():
        for entry in pci.iterdir():
            assert entry.is_symlink(), f"{entry} must be a symlink into /sys/devices, as on a real machine"


@pytest.mark.parametrize("fixture", FIXTURES, ids=[p.name for p in FIXTURES])
def test_cli_findings_match_expected(fixture: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = _expected(fixture)
    # "argv": more options, e.g. ["--smoke"] to replay the smoke run a capture made with `capture --smoke`
    code = main(["--root", str(fixture), "--json", *expected.get("argv", [])])
    out = capsys.readouterr().out
    document = json.loads(out)
    jsonschema.validate(document, json.loads(report_schema_text()))
    findings = {f["check_id"]: f for f in document["findings"]}
    assert len(findings) == len(document["findings"]), "one finding per check expected"

    missing = sorted(set(expected["findings"]) - set(findings))
    assert not missing, f"expected checks that did not run: {missing}"
    for check_id, got in findings.items():
        if check_id not in expected["findings"]:  # a check this fixture does not pin yet: it must not crash
            assert got["status"] != Status.CRASH.value, (
                f"{check_id}: {got['summary']}\n{got.get('traceback', '')}"
            )
    for check_id, want in expected["findings"].items():
        got = findings[check_id]
        where = f"{check_id}: {got['status']}: {got['summary']}"
        if want["status"] != Status.CRASH.value:
            assert got["status"] != Status.CRASH.value, f"{where}\n{got.get('traceback', '')}"
        assert got["status"] == want["status"], where
        assert want["summary_contains"] in got["summary"], where
        if "details_contains" in want:
            assert want["details_contains"] in got["details"], f"{where}\n{got['details']}"
        # the chain to the root cause: a problem names the problems that cause it, and nothing else does
        assert got["caused_by"] == want.get("caused_by", []), where
    assert document["root_causes"] == expected["root_causes"], "the root causes, first first"
    # the command a provisioning script would run (`jq -r .recommended_install.command`), and whether it must
    want_install = expected["recommended_install"]
    got_install = document["recommended_install"]
    if want_install is None:
        assert got_install is None
    else:
        assert got_install is not None
        assert (got_install["command"], got_install["needed"]) == (
            want_install["command"],
            want_install["needed"],
        )
    assert code == expected["exit_code"], (
        f"exit code {code}; findings: {[(k, f['status']) for k, f in findings.items()]}"
    )
    assert document["summary"]["exit_code"] == code


@pytest.mark.parametrize("fixture", FIXTURES, ids=[p.name for p in FIXTURES])
def test_every_command_is_recorded_and_every_recording_is_used(fixture: Path) -> None:
    host = _TrackingHost(fixture)
    report = diagnose(host, host.python or "python3", plugins=False)
    assert host.unexpected_commands == []
    recorded = [tuple(entry["argv"]) for entry in json.loads((fixture / "commands.json").read_text("utf-8"))]
    unused = [argv for argv in recorded if argv not in host.asked]
    assert unused == [], f"commands.json records commands the doctor never runs here: {unused}"
    assert not [f for f in report.findings if f.status is Status.CRASH and f.check_id.startswith("probe.")]
