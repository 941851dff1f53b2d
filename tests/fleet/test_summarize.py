"""summarize: hosts x failing checks, the worst first, unreadable files as rows that say why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fleet.reports import EGPU, H100, HEALTHY, X4, envelope_of, write_report
from torch_gpu_doctor.cli import main


@pytest.fixture
def fleet(tmp_path: Path) -> list[str]:
    paths = [
        write_report(tmp_path, f"node-{i}", envelope_of(name))
        for i, name in enumerate((HEALTHY, H100, EGPU, X4))
    ]
    broken = tmp_path / "node-9.json"
    broken.write_text("")  # the node died before writing its report
    return [str(p) for p in [*paths, broken]]


def test_the_table_puts_the_worst_hosts_first(fleet: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["summarize", *fleet]) == 1
    lines = capsys.readouterr().out.splitlines()
    header = lines[0].split()
    assert header[:3] == ["host", "fail", "warn"]
    assert set(header[3:]) == {"egpu.authorized", "gpu.present", "torch.cuda_init", "torch.driver_compat"}
    hosts = [line.split()[0] for line in lines[1:6]]
    assert hosts == ["node-9", "node-1", "node-2", "node-0", "node-3"]  # unreadable, 2 fail + 1 warn, 2 fail
    row = dict(zip(header, lines[2].split(), strict=True))
    assert row["torch.driver_compat"] == "FAIL" and row["gpu.present"] == "." and row["warn"] == "1"
    text = "\n".join(lines)
    assert "5 host(s), 2 with failing checks." in text
    assert "Unreadable: " in text and "node-9.json: not JSON" in text


def test_json_lists_hosts_and_counts_per_check(fleet: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["summarize", "--json", *fleet]) == 1
    document = json.loads(capsys.readouterr().out)
    hosts = {h["host"]: h for h in document["hosts"]}
    assert hosts["node-2"]["failing"] == {"egpu.authorized": "fail", "gpu.present": "fail"}
    assert hosts["node-1"]["warnings"] == ["python.env_kind"]
    assert hosts["node-9"]["error"] is not None and hosts["node-9"]["status"] is None
    assert document["checks"]["gpu.present"] == {"failing_hosts": 1, "warning_hosts": 0}
    assert document["checks"]["python.env_kind"] == {"failing_hosts": 0, "warning_hosts": 1}


def test_a_healthy_fleet_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = [str(write_report(tmp_path, n, envelope_of(HEALTHY))) for n in ("a", "b")]
    assert main(["summarize", *paths]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["host", "fail", "warn"]
    assert "2 host(s), 0 with failing checks." in out


def test_a_host_named_in_the_report_and_two_runs_of_one_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    named = envelope_of(HEALTHY)
    named["host"]["name"] = "gpu-a17"
    (tmp_path / "x").mkdir()
    paths = [
        write_report(tmp_path, "report", named),
        write_report(tmp_path, "gpu-b01", envelope_of(HEALTHY)),
        write_report(tmp_path / "x", "gpu-b01", envelope_of(HEALTHY)),
    ]
    assert main(["summarize", "--json", *map(str, paths)]) == 0
    hosts = sorted(h["host"] for h in json.loads(capsys.readouterr().out)["hosts"])
    assert hosts == ["gpu-a17", "gpu-b01", f"gpu-b01 ({paths[2]})"]
