"""verify's gates on fixture hosts: each with its observed value, unobservable ones failing with the reason."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.fleet.reports import EGPU, H100, HEALTHY, HOSTS, X4, report_of
from tests.smoke.lines import H100 as H100_DEVICE
from tests.smoke.lines import end, gpu_steps, header, start, step, streamed
from torch_gpu_doctor.cli import main
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.smoke import SmokeMode
from torch_gpu_doctor.facts.torch import TorchPackages
from torch_gpu_doctor.fleet.expectations import Expectations
from torch_gpu_doctor.fleet.verify import Gate, evaluate
from torch_gpu_doctor.host.base import StreamedRun
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.runner import diagnose
from torch_gpu_doctor.smoke.run import SmokeRequest


def gates(name: str, **expect: Any) -> dict[str, Gate]:
    return {g.name: g for g in evaluate(Expectations(**expect), report_of(name))}


def test_a_healthy_workstation_passes_its_gates_with_the_observed_values() -> None:
    found = gates(
        HEALTHY,
        gpus=8,
        gpu_name="rtx 4090",
        min_driver="550.54.15",
        torch_cuda="12",
        min_pcie_gen=4,
        min_pcie_width=16,
    )
    assert [g.status for g in found.values()] == [Status.PASS] * 6
    assert found["gpus"].observed == 8
    assert found["gpu_name"].observed == "NVIDIA GeForce RTX 4090"
    assert found["min_driver"].observed == "550.127.05"  # numerically newer than 550.54.15, not as text
    assert found["torch_cuda"].observed == "12.4"
    assert (found["min_pcie_gen"].observed, found["min_pcie_width"].observed) == (4, 16)


@pytest.mark.parametrize(
    ("expect", "name", "observed"),
    [
        ({"gpus": 4}, "gpus", 8),
        ({"gpu_name": "H100"}, "gpu_name", "NVIDIA GeForce RTX 4090"),
        ({"min_driver": "550.128"}, "min_driver", "550.127.05"),
        ({"torch_cuda": "12.1"}, "torch_cuda", "12.4"),
        ({"torch_cuda": "11"}, "torch_cuda", "12.4"),
        ({"min_pcie_gen": 5}, "min_pcie_gen", 4),
    ],
)
def test_a_missed_gate_fails_and_still_shows_what_it_saw(
    expect: dict[str, Any], name: str, observed: object
) -> None:
    gate = gates(HEALTHY, **expect)[name]
    assert gate.status is Status.FAIL and gate.observed == observed


def test_a_gpu_trained_x4_fails_the_width_gate_naming_it() -> None:
    gate = gates(X4, min_pcie_width=8, min_pcie_gen=4)
    assert gate["min_pcie_gen"].passed
    width = gate["min_pcie_width"]
    assert width.status is Status.FAIL and width.observed == 4
    assert "0000:03:00.0 x4 (sysfs)" in width.detail and "0000:09:00.0 x8 (sysfs)" in width.detail


def test_nvml_answers_where_sysfs_has_no_link_files() -> None:
    gate = gates(H100, min_pcie_gen=5, min_pcie_width=16, torch_cuda="12.4")
    assert gate["min_pcie_gen"].passed and "Gen5 (NVML)" in gate["min_pcie_gen"].detail
    assert gate["torch_cuda"].observed == "13.0" and not gate["torch_cuda"].passed


def test_without_a_driver_every_gate_fails_with_the_reason_not_a_guess() -> None:
    found = gates(EGPU, gpus=1, gpu_name="RTX", min_driver="550", min_pcie_width=16)
    assert all(g.status is Status.FAIL for g in found.values())
    assert all(g.observed is None for n, g in found.items() if n != "gpus")
    # no driver and an empty PCI bus (the eGPU is not authorized): 0 GPUs is what is there
    assert found["gpus"].observed == 0
    assert "NVMLError_LibraryNotFound" in found["gpus"].detail
    assert "no NVIDIA GPU on the PCI bus" in found["gpus"].detail
    assert "no NVIDIA kernel module is loaded" in found["min_driver"].detail
    assert found["min_pcie_width"].detail.startswith("no NVIDIA GPU found")


@pytest.mark.parametrize(
    ("name", "observed", "passed"),
    [
        ("ci-no-gpu-cuda-toolkit", 0, True),  # no NVML library, no NVIDIA GPU on the bus: 0 is observed
        ("virtio-vm-no-gpu", 0, True),
        ("nvidia-gpu-no-driver", None, False),  # a GPU on the bus without its driver: not "0 GPUs"
        ("permission-denied", None, False),  # NVML refused: the count is unknown
        (HEALTHY, 8, False),
    ],
)
def test_gpus_0_passes_only_where_no_gpu_is_observed(name: str, observed: int | None, passed: bool) -> None:
    gate = gates(name, gpus=0)["gpus"]
    assert (gate.observed, gate.passed) == (observed, passed)


def test_a_cpu_build_fails_the_torch_cuda_gate() -> None:
    report = report_of(HEALTHY)
    packages = report.facts.torch_packages
    assert isinstance(packages, TorchPackages)
    cpu = replace(packages, version="2.5.1+cpu", cuda=None)
    facts: Facts = replace(report.facts, torch_packages=cpu)
    (gate,) = evaluate(Expectations(torch_cuda="12.4"), replace(report, facts=facts))
    assert gate.observed == "none" and "CPU build" in gate.detail and not gate.passed


def test_the_smoke_gates_fail_when_the_smoke_test_did_not_run() -> None:
    found = gates(HEALTHY, smoke=True, nccl=True)
    assert all(not g.passed and g.observed is None for g in found.values())
    assert "the smoke test was not run" in found["smoke"].detail


def with_smoke(monkeypatch: pytest.MonkeyPatch, run: StreamedRun, name: str = H100) -> Report:
    monkeypatch.setattr(RecordedHost, "run_smoke", lambda *_args: run)
    host = RecordedHost(HOSTS / name)
    return diagnose(host, host.python or "python3", plugins=False, smoke=SmokeRequest(SmokeMode.QUICK))


PEERS: dict[str, Any] = {"0->1": True, "1->0": True}


def two_gpus(all_reduce: dict[str, Any]) -> StreamedRun:
    second = {**H100_DEVICE, "pci_bus_id": "0000:2a:00.0", "uuid": "GPU-1"}
    items = header([H100_DEVICE, second]) + gpu_steps(0) + gpu_steps(1)
    items += [start("peer_access"), end("peer_access", **PEERS)]
    items += step("peer_copy", 0, "to 1", gbytes_per_s=360.0) + step(
        "peer_copy", 1, "to 0", gbytes_per_s=355.0
    )
    items += step("all_reduce", **all_reduce)
    return streamed([*items, {"event": "done"}])


HEALTHY_ALL_REDUCE = {
    "world_size": 2,
    "backend": "nccl",
    "busbw_gbytes_per_s": 140.0,
    "algbw_gbytes_per_s": 140.0,
    "correct": True,
}


def test_a_healthy_two_gpu_smoke_run_passes_smoke_and_nccl(monkeypatch: pytest.MonkeyPatch) -> None:
    report = with_smoke(monkeypatch, two_gpus(HEALTHY_ALL_REDUCE))
    smoke, nccl = evaluate(Expectations(smoke=True, nccl=True), report)
    assert smoke.passed and smoke.observed == "completed"
    assert nccl.passed and nccl.detail == "nccl all-reduce over 2 GPUs, bus bandwidth 140 GB/s"


@pytest.mark.parametrize(
    ("all_reduce", "says"),
    [
        (
            {"status": "error", "message": "rank 1: NCCL error: unhandled system error"},
            "unhandled system error",
        ),
        ({**HEALTHY_ALL_REDUCE, "correct": False}, "wrong sum"),
    ],
)
def test_a_failing_all_reduce_fails_nccl(
    monkeypatch: pytest.MonkeyPatch, all_reduce: dict[str, Any], says: str
) -> None:
    report = with_smoke(monkeypatch, two_gpus(all_reduce))
    (nccl,) = evaluate(Expectations(nccl=True), report)
    assert not nccl.passed and says in nccl.detail


def test_nccl_on_one_gpu_cannot_be_observed(monkeypatch: pytest.MonkeyPatch) -> None:
    run = streamed(header([H100_DEVICE]) + gpu_steps(0) + [{"event": "done"}])
    smoke, nccl = evaluate(Expectations(smoke=True, nccl=True), with_smoke(monkeypatch, run))
    assert smoke.passed
    assert nccl.observed is None and "needs 2 or more GPUs; the smoke test saw 1" in nccl.detail


def test_a_hung_smoke_test_fails_the_smoke_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    items = [*header([H100_DEVICE]), start("memory", 0)]
    run = streamed(items, watchdog="memory on GPU 0 ran past its 20 s budget")
    (smoke,) = evaluate(Expectations(smoke=True), with_smoke(monkeypatch, run))
    assert not smoke.passed and str(smoke.observed).startswith("hung")
    assert "ran past its 20 s budget" in smoke.detail


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_verify_prints_one_line_per_gate_and_exits_0_when_all_pass(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "--root", str(HOSTS / HEALTHY), "verify", "--gpus", "8", "--min-driver", "550")
    assert code == 0
    assert "gpus: expected 8, observed 8 — pass" in out
    assert "min_driver: expected ≥ 550, observed 550.127.05 — pass" in out
    assert "all pass (exit code 0)" in out


def test_verify_json_lists_each_expectation_and_carries_the_report(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(
        capsys, "verify", "--root", str(HOSTS / X4), "--gpus", "2", "--min-pcie-width", "8", "--json"
    )
    document = json.loads(out)
    assert code == 1 == document["exit_code"] and document["status"] == "fail"
    assert document["expectations"][0] == {
        "name": "gpus",
        "expected": 2,
        "observed": 2,
        "status": "pass",
        "detail": "",
    }
    width = document["expectations"][1]
    assert (width["name"], width["observed"], width["status"]) == ("min_pcie_width", 4, "fail")
    assert document["report"]["summary"]["exit_code"] == 0  # the diagnosis itself found nothing wrong


def test_verify_refuses_prometheus(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(
        capsys, "--format", "prometheus", "--root", str(HOSTS / HEALTHY), "verify", "--gpus", "8"
    )
    assert code == 2 and "--format prometheus is for the diagnosis" in err
