"""diff: the differences that matter between two reports, and none of the noise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fleet.reports import H100, HEALTHY, envelope_of, write_report
from torch_gpu_doctor.cli import main
from torch_gpu_doctor.fleet.diff import Difference, diff_reports


def by_key(differences: tuple[Difference, ...]) -> dict[tuple[str, str], tuple[str, str]]:
    return {(d.area, d.key): (d.before, d.after) for d in differences}


def test_two_runs_of_the_same_machine_differ_in_nothing_that_matters() -> None:
    a, b = envelope_of(HEALTHY), envelope_of(HEALTHY)
    b["generated_at"], b["duration_ms"] = "2031-01-01T00:00:00Z", 99999.0
    b["facts"]["nvml"]["devices"][0]["pcie_link_gen_current"] = 4  # idle Gen1 vs loaded Gen4 is noise
    assert diff_reports(a, b) == ()


def test_two_identical_nodes_do_not_differ_by_their_gpu_uuids() -> None:
    """Node A and node B of one model: every GPU's UUID differs, and that is no difference that matters."""
    a, b = envelope_of(HEALTHY), envelope_of(HEALTHY)
    b["host"] = b["facts"]["host"] = "node-b"
    for number, gpu in enumerate(b["facts"]["gpus"]):
        gpu["uuid"] = f"GPU-5d1f6c4e-0000-4000-8000-{number:012d}"
    for number, device in enumerate(b["facts"]["nvml"]["devices"]):
        device["uuid"] = f"GPU-5d1f6c4e-0000-4000-8000-{number:012d}"
    assert [d for d in diff_reports(a, b) if d.area == "gpus"] == []


def test_an_upgrade_shows_driver_torch_arch_list_libraries_environment_and_checks() -> None:
    a, b = envelope_of(HEALTHY), envelope_of(HEALTHY)
    facts = b["facts"]
    facts["driver"]["version"] = "565.57.01"
    facts["torch_packages"]["version"] = "2.6.0+cu126"
    facts["torch"]["arch_list"] = ["sm_80", "sm_90"]
    facts["torch"]["mapped_libraries"][0]["realpath"] = "/opt/cuda/lib64/libcudart.so.12.6.77"
    facts["env"]["LD_LIBRARY_PATH"] = "/opt/cuda/lib64"
    facts["os"]["container"] = "docker"
    facts["nvml"]["devices"][1]["pcie_link_width_current"] = 8
    b["findings"][0]["status"] = "fail"
    changed = by_key(diff_reports(a, b))
    assert changed[("driver", "version")] == ("550.127.05", "565.57.01")
    assert changed[("torch", "installed")] == ("2.5.1+cu124", "2.6.0+cu126")
    assert changed[("torch", "arch list")] == ("sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90", "sm_80 sm_90")
    library = a["facts"]["torch"]["mapped_libraries"][0]["name"]
    assert changed[("libraries", f"loaded {library}")][1] == "/opt/cuda/lib64/libcudart.so.12.6.77"
    assert changed[("environment", "LD_LIBRARY_PATH")] == ("absent", "/opt/cuda/lib64")
    assert changed[("platform", "container")] == ("none", "docker")
    second = a["facts"]["nvml"]["devices"][1]["bdf"]
    assert changed[("pcie", f"{second} (NVML)")] == ("x16 of x16, max Gen4", "x8 of x16, max Gen4")
    first_check = a["findings"][0]["check_id"]
    assert changed[("checks", first_check)] == ("pass", "fail")
    assert len(changed) == 8  # nothing else


def test_a_fact_that_became_unreadable_is_a_difference_with_its_reason() -> None:
    a, b = envelope_of(HEALTHY), envelope_of(HEALTHY)
    b["facts"]["driver"]["version"] = None
    b["facts"]["driver"]["unavailable"]["version"] = {"reason": "permission_denied", "detail": "/proc"}
    assert by_key(diff_reports(a, b))[("driver", "version")] == ("550.127.05", "unknown (permission_denied)")


def test_two_different_servers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_report(tmp_path, "ws", envelope_of(HEALTHY))
    b = write_report(tmp_path, "h100", envelope_of(H100))
    assert main(["diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "driver\n  cuda_version: 12.4 → 12.7\n" in out
    assert "  torch.driver_compat: pass → fail" in out
    assert main(["diff", str(a), str(b), "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert {"area": "driver", "key": "version", "a": "550.127.05", "b": "565.57.01"} in document[
        "differences"
    ]
    assert document["exit_code"] == 1


def test_same_reports_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_report(tmp_path, "a", envelope_of(HEALTHY))
    assert main(["diff", str(a), str(a)]) == 0
    assert "No difference that matters" in capsys.readouterr().out


def test_a_verify_document_is_read_through_its_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = write_report(tmp_path, "a", envelope_of(HEALTHY))
    b = write_report(tmp_path, "b", {"command": "verify", "expectations": [], "report": envelope_of(HEALTHY)})
    assert main(["diff", str(a), str(b)]) == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not JSON"),
        ("[1, 2]", "not a gpu-doctor report (a JSON list)"),
        ('{"schema_version": 1}', "no 'summary'"),
        ('{"error": {"kind": "usage", "message": "bad flag"}, "summary": {}}', "did not produce a report"),
    ],
)
def test_a_file_that_is_not_a_report_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    good = write_report(tmp_path, "good", envelope_of(HEALTHY))
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    assert main(["diff", str(good), str(bad)]) == 2
    assert message in capsys.readouterr().err
    assert main(["diff", str(good), str(tmp_path / "missing.json"), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["kind"] == "usage"
