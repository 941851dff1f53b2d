from __future__ import annotations

import argparse
import gc
import json
import shutil
import sys
from pathlib import Path

import jsonschema
import pytest

from torch_gpu_doctor import cli
from torch_gpu_doctor.cli import main
from torch_gpu_doctor.exit_codes import ExitCode
from torch_gpu_doctor.schemas import report_schema_text

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
    # without --python, the interpreter found by discovery (commands/interpreter.py), and why
    assert document["facts"]["python"]["executable"] == document["interpreter"]["path"]
    assert document["interpreter"]["chosen"].startswith(
        ("the active", "the project's", "the interpreter", "python3")
    )


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
    assert out.splitlines()[0].split()[0] == "amd.gfx_target"  # sorted by id
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


def test_fail_on_and_strict_reach_the_exit_code(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # A healthy RTX 4090 box whose nouveau module is loaded but holds no GPU: one WARN, nothing failed.
    warned = tmp_path / "warned"
    shutil.copytree(FIXTURES / "rtx4090-workstation-healthy", warned, symlinks=True)
    modules = warned / "root" / "proc" / "modules"
    modules.write_text(modules.read_text() + "nouveau 2793472 0 - Live 0x0000000000000000\n")
    code, out, _ = run(capsys, "--root", str(warned), "--json")
    assert code == ExitCode.OK
    assert [f["status"] for f in json.loads(out)["findings"] if f["check_id"] == "driver.nouveau"] == ["warn"]
    assert run(capsys, "--root", str(warned), "--json", "--strict")[0] == ExitCode.FINDINGS
    assert run(capsys, "--root", str(warned), "--plain", "--fail-on", "warn")[0] == ExitCode.FINDINGS


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
    code, _, err = run(capsys, "--root", str(evil), "capture", str(tmp_path / "out"))
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


def test_data_is_never_read_as_rich_markup(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    capture = tmp_path / "cap[old]"
    shutil.copytree(FIXTURES / "ci-no-gpu-cuda-toolkit", capture, symlinks=True)
    meta = json.loads((capture / "host.json").read_text())
    meta["description"] = "lab [/] box [bold]x[/bold]"
    (capture / "host.json").write_text(json.dumps(meta))
    code, out, _ = run(capsys, "--root", str(capture), "--plain")
    assert code == ExitCode.FINDINGS
    assert "lab [/] box [bold]x[/bold]" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["--json", "--check", "no.such"],
        ["--json", "--root", "/nonexistent-capture"],
        ["--json", "--bogus-flag"],
    ],
)
def test_json_mode_errors_still_print_one_valid_json_document(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == ExitCode.USAGE
    document = json.loads(out)
    jsonschema.validate(document, json.loads(report_schema_text()))
    assert document["error"]["kind"] == "usage" and document["summary"]["exit_code"] == 2
    assert len(err.strip().splitlines()) == 1


def test_list_checks_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--list-checks", "--json")
    rows = {row["id"]: row for row in json.loads(out)["checks"]}
    assert code == 0
    assert rows["driver.nvml"]["area"] == "driver" and rows["driver.nvml"]["required"] is True
    assert rows["driver.nouveau"]["required"] is False


def test_the_parser_lives_in_cli_parser_and_cli_re_exports_it() -> None:
    """Tools and tests build the parser through torch_gpu_doctor.cli; the usage error is one class for both."""
    from torch_gpu_doctor import cli, cli_parser

    assert cli.build_parser is cli_parser.build_parser and cli.UsageError is cli_parser.UsageError
    with pytest.raises(cli.UsageError):
        cli.build_parser().parse_args(["--no-plug"])  # abbreviations are refused, not completed


def test_an_abbreviated_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--list-ch"]) == ExitCode.USAGE
    assert "unrecognized arguments: --list-ch" in capsys.readouterr().err


def test_the_console_entry_keeps_the_collector_off_only_while_the_command_loads(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`entry` (the console script) turns the cyclic collector off for start-up, freezes what start-up built
    once the command's module is in, and turns it back on for the run; `main` alone never touches it."""
    seen: list[tuple[str, bool, bool]] = []
    monkeypatch.setattr(
        gc,
        "freeze",
        lambda: seen.append(("freeze", gc.isenabled(), "torch_gpu_doctor.commands.explain" in sys.modules)),
    )
    monkeypatch.setattr(sys, "argv", ["gpu-doctor", "explain", "torch.arch_compat"])
    sys.modules.pop("torch_gpu_doctor.commands.explain", None)
    assert cli.entry() == 0
    assert seen == [("freeze", False, True)]  # off while loading, frozen after the command's module came in
    assert gc.isenabled()
    assert "torch.arch_compat" in capsys.readouterr().out
    seen.clear()
    assert main(["explain", "torch.arch_compat"]) == 0
    assert seen == [] and gc.isenabled()


def test_only_the_commands_the_arguments_name_get_the_shared_options() -> None:
    """Adding the ~20 shared options to all 15 commands was 20 ms of every start; the full parser stays for
    help and completion."""

    def options(parser: argparse.ArgumentParser, command: str) -> set[str]:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return {flag for action in sub.choices[command]._actions for flag in action.option_strings}

    some = cli.build_parser({"triage", "x.txt"})
    assert "--json" in options(some, "triage") and "--json" not in options(some, "explain")
    assert "--json" in options(cli.build_parser(), "explain")
    assert some.parse_args(["triage", "x.txt", "--json"]).json is True
