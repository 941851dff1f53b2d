from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest

from gpu_doctor.cli import main
from gpu_doctor.exit_codes import ExitCode
from gpu_doctor.schemas import report_schema_text

FIXTURES = Path(__file__).parent / "fixtures" / "hosts"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_on_this_machine_validates_against_the_shipped_schema(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "--json")
    document = json.loads(out)  # exactly one JSON document on stdout
    jsonschema.validate(document, json.loads(report_schema_text()))
    assert document["summary"]["exit_code"] == code
    assert document["facts"]["python"]["executable"] == sys.executable


def test_exit_code_is_identical_in_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    json_code, _, _ = run(capsys, "--json")
    text_code, out, _ = run(capsys, "--plain")
    assert json_code == text_code
    assert f"exit code {text_code}" in out


def test_check_and_skip_select_checks(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(
        capsys, "--json", "--check", "driver.nvml", "--check", "gpu.present", "--skip", "gpu.present"
    )
    ids = [f["check_id"] for f in json.loads(out)["findings"]]
    assert ids == ["driver.nvml"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--check", "no.such"], "unknown check id 'no.such'"),
        (["explain", "no.such"], "unknown check id 'no.such'"),
        (["--python", "/nonexistent/python"], "no such file"),
        (["--python", "/bin/true"], "is not a working Python interpreter"),
        (["--fail-on", "sometimes"], "invalid choice"),
        (["--root", "/nonexistent-capture"], "is not a capture"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == ExitCode.USAGE
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert message in err


def test_list_checks(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--list-checks")
    assert code == 0
    assert out.splitlines()[0].split()[0] == "driver.installed"  # sorted
    assert any(line.startswith("gpu.present ") for line in out.splitlines())


def test_explain_prints_the_three_sections(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "explain", "driver.nouveau")
    assert code == 0
    assert out.startswith("driver.nouveau — ")
    for heading in ("What it checks", "Why it matters", "How to fix"):
        assert f"\n{heading}\n" in out
    assert "initramfs" in out


def test_schema_command_prints_valid_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "schema")
    assert code == 0
    jsonschema.Draft202012Validator.check_schema(json.loads(out))


def test_fail_on_and_strict_reach_the_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    # the nouveau fixture fails; --check driver.nouveau alone fails too, and --skip of every failing check passes
    fixture = str(FIXTURES / "nouveau-bound-nvidia-gpu")
    assert run(capsys, "--root", fixture, "--json")[0] == ExitCode.FINDINGS
    healthy = str(FIXTURES / "h100-sxm-x8-server")
    assert run(capsys, "--root", healthy, "--json", "--strict")[0] == ExitCode.OK
    assert run(capsys, "--root", healthy, "--json", "--fail-on", "warn")[0] == ExitCode.OK


def test_capture_refuses_root_so_capture_data_is_never_executed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    evil = tmp_path / "evil"
    (evil / "root").mkdir(parents=True)
    marker = tmp_path / "ran"
    script = tmp_path / "python"
    script.write_text(f"#!/bin/sh\necho pwned > {marker}\n")
    script.chmod(0o755)
    (evil / "host.json").write_text(json.dumps({"python": str(script)}))
    code, out, err = run(capsys, "--root", str(evil), "capture", str(tmp_path / "out"))
    assert code == ExitCode.USAGE and "cannot be combined with --root" in err
    assert not marker.exists()
    # and a replay never runs the recorded interpreter either
    run(capsys, "--root", str(evil), "--json")
    assert not marker.exists()


def test_probes_do_not_import_from_the_working_directory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "json.py").write_text("raise SystemExit('imported the json.py of the working directory')\n")
    monkeypatch.chdir(tmp_path)
    facts = json.loads(run(capsys, "--json")[1])["facts"]
    assert isinstance(facts["python"]["version"], str)  # the probe ran, unharmed by ./json.py
