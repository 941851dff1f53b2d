"""--format prometheus: the text exposition format, read back by a small parser written from the format's
specification (HELP/TYPE lines, `name{label="value",...} number`, `\\`, `"` and newline escaped)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from tests.fleet.reports import EGPU, H100, HOSTS, X4, report_of
from torch_gpu_doctor.cli import main
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.render.prometheus import render_prometheus

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_SAMPLE = re.compile(rf"^({_NAME})(?:\{{(.*)\}})? (\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)')


@dataclass
class Parsed:
    help: dict[str, str] = field(default_factory=dict)
    type: dict[str, str] = field(default_factory=dict)
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = field(default_factory=dict)


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), value)


def parse_exposition(text: str) -> Parsed:
    """Strict: every line is HELP, TYPE or a sample of a family declared above it; a series appears once."""
    parsed = Parsed()
    assert text.endswith("\n")
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name, _, doc = line[7:].partition(" ")
            assert name not in parsed.help, f"second HELP for {name}"
            parsed.help[name] = doc
        elif line.startswith("# TYPE "):
            name, _, kind = line[7:].partition(" ")
            assert kind in ("gauge", "counter", "untyped") and name in parsed.help
            parsed.type[name] = kind
        else:
            match = _SAMPLE.match(line)
            assert match, f"not a sample line: {line!r}"
            name, raw_labels, value = match.groups()
            assert name in parsed.type, f"{name} has no TYPE line before its samples"
            labels: list[tuple[str, str]] = []
            rest = raw_labels or ""
            while rest:
                label = _LABEL.match(rest)
                assert label, f"bad labels in {line!r}"
                labels.append((label.group(1), _unescape(label.group(2))))
                rest = rest[label.end() :]
            key = (name, tuple(sorted(labels)))
            assert key not in parsed.samples, f"duplicate series {key}"
            parsed.samples[key] = float(value)
    return parsed


def value(parsed: Parsed, metric: str, **labels: str) -> float:
    return parsed.samples[(f"gpu_doctor_{metric}", tuple(sorted(labels.items())))]


def test_every_family_has_help_and_type_and_every_check_is_one_hot() -> None:
    report = report_of(H100)
    parsed = parse_exposition(render_prometheus(report))
    assert set(parsed.type.values()) == {"gauge"}
    assert set(parsed.help) == set(parsed.type)
    for finding in report.findings:
        series = [value(parsed, "check_status", check=finding.check_id, status=s.value) for s in Status]
        assert sorted(series) == [0] * (len(Status) - 1) + [1]
        assert value(parsed, "check_status", check=finding.check_id, status=finding.status.value) == 1
    assert value(parsed, "check_status", check="torch.driver_compat", status="fail") == 1
    assert value(parsed, "checks", status="fail") == 2
    assert value(parsed, "exit_code") == 1
    assert value(parsed, "gpus") == 8 and value(parsed, "nvml_gpus") == 8
    assert value(parsed, "driver_info", version="565.57.01", cuda_version="12.7", flavor="open") == 1
    assert value(parsed, "torch_info", version="2.13.0+cu130", cuda="13.0") == 1
    assert value(parsed, "pcie_link_width", gpu="0000:18:00.0") == 16
    assert value(parsed, "pcie_link_max_generation", gpu="0000:18:00.0") == 5


def test_links_and_the_run_time_of_a_workstation_with_an_x4_slot() -> None:
    report = report_of(X4)
    parsed = parse_exposition(render_prometheus(report))
    assert value(parsed, "pcie_link_width", gpu="0000:03:00.0") == 4
    assert value(parsed, "pcie_link_max_width", gpu="0000:03:00.0") == 8
    assert value(parsed, "pcie_link_width", gpu="0000:09:00.0") == 8
    assert value(parsed, "exit_code") == 0
    assert value(parsed, "run_duration_seconds") == pytest.approx(report.duration_ms / 1000)
    stamp = value(parsed, "last_run_timestamp_seconds")
    assert stamp > 1.7e9  # Unix seconds, not milliseconds, not an ISO string


def test_without_a_driver_the_unknown_facts_are_absent_not_zero() -> None:
    parsed = parse_exposition(render_prometheus(report_of(EGPU)))
    names = {name for name, _ in parsed.samples}
    assert "gpu_doctor_driver_info" not in names and "gpu_doctor_nvml_gpus" not in names
    assert "gpu_doctor_pcie_link_width" not in names
    assert value(parsed, "gpus") == 0
    assert value(parsed, "check_status", check="egpu.authorized", status="fail") == 1


def test_label_values_are_escaped() -> None:
    report = report_of(X4)
    hostile = 'RTX "4060" Ti\\mod\nline'
    gpus = tuple(replace(g, name=hostile) for g in report.facts.gpus)
    text = render_prometheus(replace(report, facts=replace(report.facts, gpus=gpus)))
    assert 'name="RTX \\"4060\\" Ti\\\\mod\\nline"' in text
    parsed = parse_exposition(text)
    assert value(parsed, "gpu_info", gpu="0000:03:00.0", name=hostile) == 1


def test_format_prometheus_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--root", str(HOSTS / X4), "--format", "prometheus"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert value(parse_exposition(out), "gpus") == 2


def test_format_json_is_json_and_conflicts_with_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(HOSTS / X4), "--format=json"]) == 0
    assert capsys.readouterr().out.startswith('{\n  "schema_version": 1')
    assert main(["--root", str(HOSTS / X4), "--format", "json", "--json"]) == 2
    out, err = capsys.readouterr()
    assert "not allowed with argument" in err and '"kind": "usage"' in out


def test_the_tui_never_opens_with_format(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)

    def no_tui(*_args: object, **_kwargs: object) -> int:
        raise AssertionError("the TUI opened")

    monkeypatch.setattr("torch_gpu_doctor.tui.launch.run_tui", no_tui)
    assert main(["--root", str(HOSTS / X4), "--format", "prometheus"]) == 0
    assert "# TYPE gpu_doctor_gpus gauge" in capsys.readouterr().out


def test_output_writes_the_file_atomically_with_mode_0644(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "gpu_doctor.prom"
    target.write_text("the previous run\n")
    code = main(["--root", str(HOSTS / "wsl2"), "--format", "prometheus", "--output", str(target)])
    assert capsys.readouterr().out == ""  # the report went to the file
    text = target.read_text()
    assert text.startswith("# HELP gpu_doctor_info") and f"gpu_doctor_exit_code {code}" in text
    assert target.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpu_doctor.prom"]  # no temporary file left


def test_a_run_that_fails_before_its_report_still_writes_its_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A usage error with --output: the collector's file says exit 2 and when, instead of the last good run."""
    target = tmp_path / "gpu_doctor.prom"
    target.write_text("gpu_doctor_exit_code 0\n")  # the last good run
    code = main(["--format", "prometheus", "--output", str(target), "--python", str(tmp_path / "nope")])
    assert code == 2 and "no such file" in capsys.readouterr().err
    parsed = parse_exposition(target.read_text())
    assert value(parsed, "exit_code") == 2
    assert value(parsed, "run_failed", reason="usage") == 1
    assert value(parsed, "last_run_timestamp_seconds") > 1.7e9


def test_a_bug_is_exit_4_in_the_metrics_too(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*_args: object) -> int:
        raise RuntimeError("a bug")

    monkeypatch.setattr("torch_gpu_doctor.cli.run_command", broken)
    assert main(["--root", str(HOSTS / X4), "--format=prometheus"]) == 4
    out, err = capsys.readouterr()
    assert "internal error" in err
    assert value(parse_exposition(out), "exit_code") == 4
    assert value(parse_exposition(out), "run_failed", reason="internal") == 1


def test_a_run_with_a_report_says_it_did_not_fail() -> None:
    assert value(parse_exposition(render_prometheus(report_of(X4))), "run_failed", reason="") == 0
