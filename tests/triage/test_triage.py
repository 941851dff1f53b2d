"""gpu-doctor triage on real collect_env reports (tests/triage/reports, provenance in SOURCES.md): each parses,
and each gets the diagnosis pinned in expected.json."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from torch_gpu_doctor.cli import main
from torch_gpu_doctor.triage.facts import report_facts
from torch_gpu_doctor.triage.parse import looks_like_collect_env, parse_report
from torch_gpu_doctor.triage.verdict import Kind, triage

HERE = Path(__file__).parent
REPORTS = sorted((HERE / "reports").glob("*.txt"))
EXPECTED: dict[str, dict[str, Any]] = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))


def test_every_report_has_an_expectation() -> None:
    assert sorted(p.stem for p in REPORTS) == sorted(EXPECTED)
    assert len(REPORTS) >= 12


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_report_parses(path: Path) -> None:
    parsed = parse_report(path.read_text(encoding="utf-8"))
    assert looks_like_collect_env(parsed)
    assert parsed.torch_version is not None or parsed.torch_missing


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_diagnosis_is_pinned(path: Path) -> None:
    expected = EXPECTED[path.stem]
    parsed = parse_report(path.read_text(encoding="utf-8"))
    result = triage(parsed, report_facts(parsed))
    shown = {
        v.finding.check_id: f"{v.kind}:{v.finding.status.value}"
        for v in result.verdicts
        if v.kind != Kind.NOT_APPLICABLE
    }
    assert shown == expected["checks"]
    assert (1 if result.exit_problem() else 0) == expected["exit_code"]
    by_id = {v.finding.check_id: v.finding for v in result.verdicts}
    for check_id, text in expected.get("summary_contains", {}).items():
        assert text in by_id[check_id].summary
    for check_id, text in expected.get("fix_contains", {}).items():
        fix = by_id[check_id].remediation
        assert fix is not None and text in fix.text and "driver" not in fix.text
    for check_id, commands in expected.get("fix_commands", {}).items():
        fix = by_id[check_id].remediation
        assert fix is not None and [c.display() for c in fix.commands] == commands
    rec = result.report.recommended_install
    if "install" in expected:
        assert rec is not None and " ".join(rec.pip_argv("python")) == expected["install"]


def test_missing_lines_are_unknown_never_failures() -> None:
    """The WSL paste stops at the platform line: gpu.present would say "no GPU" on these facts."""
    parsed = parse_report((HERE / "reports" / "wsl-cu111-truncated.txt").read_text(encoding="utf-8"))
    result = triage(parsed, report_facts(parsed))
    gpu = next(v for v in result.verdicts if v.finding.check_id == "gpu.present")
    assert gpu.kind == Kind.UNKNOWN and gpu.missing == ("GPU models",) and gpu.find_out == "nvidia-smi -L"
    assert not any(v.kind == Kind.PROBLEM for v in result.verdicts)


def test_no_platform_line_names_the_missing_line_not_the_driver() -> None:
    """Without its `OS:` and `Python platform:` lines the RTX 4080 paste (CPU torch, driver 551.86) gives no
    wheel platform: the fix says which lines are missing instead of telling a working driver to be replaced."""
    text = (HERE / "reports" / "windows-cpu-torch-rtx4080.txt").read_text(encoding="utf-8")
    kept = "\n".join(line for line in text.splitlines() if not line.startswith(("OS:", "Python platform:")))
    parsed = parse_report(kept)
    result = triage(parsed, report_facts(parsed))
    build = next(v.finding for v in result.verdicts if v.finding.check_id == "torch.cpu_build")
    assert build.status.value == "fail" and build.remediation is not None
    assert build.remediation.text == (
        "gpu-doctor cannot choose a torch wheel: the machine architecture of python is unknown "
        "(not recorded: the collect_env report has no `OS:` or `Python platform:` line)."
    )
    assert not build.remediation.commands and result.report.recommended_install is None


def test_platform_line_without_machine_is_quoted() -> None:
    text = (HERE / "reports" / "windows-cpu-torch-rtx4080.txt").read_text(encoding="utf-8")
    kept = "\n".join(
        "OS: Microsoft Windows 11 Education" if line.startswith("Python version") else line
        for line in text.splitlines()
        if not line.startswith(("OS:", "Python platform:"))
    )
    parsed = parse_report(kept)
    build = next(
        v.finding
        for v in triage(parsed, report_facts(parsed)).verdicts
        if v.finding.check_id == "torch.cpu_build"
    )
    assert build.remediation is not None
    assert "does not name the machine: line " in build.remediation.text
    assert "(`OS: Microsoft Windows 11 Education`)" in build.remediation.text


def test_driver_cuda_comes_from_torchs_warning_not_nvcc() -> None:
    parsed = parse_report(
        (HERE / "reports" / "gke-driver470-cu121-truncated.txt").read_text(encoding="utf-8")
    )
    facts = report_facts(parsed)
    assert parsed.warnings.driver_cuda == "11.4"
    assert not isinstance(facts.driver, type(None)) and getattr(facts.driver, "cuda_version", None) == "11.4"
    windows = parse_report((HERE / "reports" / "windows-cpu-torch-rtx4080.txt").read_text(encoding="utf-8"))
    assert windows.cuda_runtime == "12.4.99"  # nvcc's, never taken for the driver's
    assert getattr(report_facts(windows).driver, "cuda_version_source", None) == "compat table"


def test_variants_parse() -> None:
    mangled = parse_report(
        (HERE / "reports" / "p100-torch150-driver410-mangled.txt").read_text(encoding="utf-8")
    )
    assert (
        mangled.torch_version == "1.5.0" and mangled.cuda_available is False
    )  # "PyTorch version 1.5.0", "No"
    assert mangled.gpus is not None and len(mangled.gpus) == 4  # "GPU 0： ..." with fullwidth colons
    rocm = parse_report((HERE / "reports" / "rocm63-gfx1010-details.txt").read_text(encoding="utf-8"))
    assert rocm.torch_version == "2.7.0.dev20250123+rocm6.3"  # joined to the header line, inside <details>
    assert rocm.gpus is not None and rocm.gpus[0].name == "AMD Radeon RX 5700 XT (gfx1010:xnack-)"
    sm120 = parse_report((HERE / "reports" / "rtx5090d-cu126-sm120.txt").read_text(encoding="utf-8"))
    assert sm120.warnings.arch_list[-1] == "sm_90"
    conda = parse_report((HERE / "reports" / "t4-conda-torch130-driver410.txt").read_text(encoding="utf-8"))
    assert conda.libraries is not None and any(
        lib.build and "cuda10.1" in lib.build for lib in conda.libraries
    )


def test_cli_text_and_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["triage", str(HERE / "reports" / "windows-cpu-torch-rtx4080.txt")])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL  torch.cpu_build" in out and "--index-url https://download.pytorch.org/whl/cu121" in out
    assert "Not in a collect_env report" in out


def test_cli_json_is_one_document(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["triage", "--json", str(HERE / "reports" / "gke-driver470-cu121-truncated.txt")])
    document = json.loads(capsys.readouterr().out)
    assert code == 1 and document["summary"]["exit_code"] == 1
    assert document["report"]["torch_version"] == "2.1.0+cu121"
    assert {u["check_id"] for u in document["unknown"]} >= {"gpu.present", "driver.installed"}
    assert document["recommended_install"] is None  # no GPU in the report: no wheel is chosen blind


def test_cli_reads_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    data = (HERE / "reports" / "windows-cu117-gtx1050ti.txt").read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["triage", "-"]) == 0
    assert "No problem found" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "does not look like collect_env output"),
        (b"hello world\nthis is a bug report without versions\n", "does not look like collect_env output"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00", "binary data"),
    ],
    ids=["empty", "garbage", "binary"],
)
def test_unreadable_input_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, message: str
) -> None:
    path = tmp_path / "report.txt"
    path.write_bytes(data)
    assert main(["triage", str(path)]) == 2
    assert message in capsys.readouterr().err
    assert main(["triage", "--json", str(path)]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["error"]["kind"] == "unreadable_input"


def test_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["triage", str(tmp_path / "nope.txt")]) == 2
    assert "cannot read" in capsys.readouterr().err
