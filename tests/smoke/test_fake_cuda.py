"""The real smoke script, run by the real CPU torch under a simulated torch.cuda
(tests/fixtures/fake_cuda/sitecustomize.py): success, wrong results, a hang, a segfault, out of memory and a
partial multi-GPU failure, each through the watchdog and the checks exactly as on a GPU machine."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.factories import facts
from torch_gpu_doctor.checks.smoke_gpu import smoke_gpu_memory, smoke_matmul
from torch_gpu_doctor.checks.smoke_multi_gpu import smoke_multi_gpu
from torch_gpu_doctor.checks.smoke_run import smoke_run
from torch_gpu_doctor.checks.support.smoke_figures import smoke_figures
from torch_gpu_doctor.cli import main
from torch_gpu_doctor.facts.smoke import SmokeMode, SmokeOutcome, SmokeRun, StepStatus
from torch_gpu_doctor.host.base import StepBudgets
from torch_gpu_doctor.host.real import RealHost
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.runner import diagnose
from torch_gpu_doctor.schemas import report_schema_text
from torch_gpu_doctor.smoke.breadcrumb import Breadcrumb
from torch_gpu_doctor.smoke.plan import GpuAddress
from torch_gpu_doctor.smoke.run import SmokeProgress, SmokeRequest, gather_smoke
from torch_gpu_doctor.unavailable import Reason, Unavailable

pytestmark = pytest.mark.slow

SHIM = Path(__file__).resolve().parents[1] / "fixtures" / "fake_cuda"
TINY = {
    "transfer_bytes": 1 << 20,
    "copy_bytes": 1 << 20,
    "matmul_n": 96,
    "matmul_check_n": 64,
    "matmul_min_s": 0.005,
    "memory_share": 0.0,
    "peer_bytes": 1 << 20,
    "allreduce_bytes": 1 << 16,
    "allreduce_iters": 3,
    "cpu_n": 128,
}
GPU = {"name": "NVIDIA GeForce RTX 4090", "capability": "8.9", "total": 25757220864, "free": 25000000000}
QUICK_BUDGETS = StepBudgets(
    startup_s=60.0, steps={"import": 120.0, "matmul": 4.0}, default_step_s=60.0, total_s=300.0
)


def simulate(monkeypatch: pytest.MonkeyPatch, devices: int = 1, fault: dict[str, Any] | None = None) -> None:
    config = {
        "devices": [dict(GPU, pci_bus_id=f"0000:{i + 1:02x}:00.0") for i in range(devices)],
        "sizes": TINY,
    }
    if fault:
        config["fault"] = fault
    monkeypatch.setenv("PYTHONPATH", str(SHIM))
    monkeypatch.setenv("GPU_DOCTOR_FAKE_CUDA", json.dumps(config))


def smoke(python: str, mode: SmokeMode = SmokeMode.STANDARD, gpus: int = 1) -> SmokeRun:
    run = gather_smoke(
        RealHost(),
        python,
        SmokeRequest(mode, budgets=QUICK_BUDGETS),
        Unavailable(Reason.NOT_APPLICABLE),
        gpus,
    )
    assert isinstance(run, SmokeRun), run
    return run


def test_every_step_passes_on_a_healthy_simulated_gpu(
    torch_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    simulate(monkeypatch)
    run = smoke(torch_python)
    assert run.outcome is SmokeOutcome.COMPLETED, run.message
    assert run.torch_version == "2.13.0+cpu" and run.torch_cuda == "12.8"
    assert [d.name for d in run.devices] == ["NVIDIA GeForce RTX 4090"]
    assert run.devices[0].pci_bus_id == "0000:01:00.0"
    names = [(s.name, s.variant) for s in run.steps]
    assert names == [
        ("import", None),
        ("cuda_init", None),
        ("memory", None),
        ("transfer", "h2d_pinned"),
        ("transfer", "d2h_pinned"),
        ("transfer", "h2d_pageable"),
        ("transfer", "d2h_pageable"),
        ("device_copy", None),
        ("matmul", "fp32"),
        ("matmul", "tf32"),
        ("matmul", "fp16"),
        ("matmul", "bf16"),
        ("conv", None),
        ("train", None),
    ]
    assert all(s.status is StepStatus.OK for s in run.steps), [(s.label, s.message) for s in run.steps]
    assert run.find("memory", 0) is not None and run.find("memory", 0).numbers["mismatches"] == 0  # type: ignore[union-attr]
    for step in run.named("matmul"):
        assert step.flags["correct"] is True and step.numbers["worst_error_ratio"] < 1
        assert step.numbers["tflops"] > 0
    train = run.find("train", 0)
    assert train is not None and train.numbers["last_loss"] < 0.5 * train.numbers["first_loss"]
    assert smoke_run(facts(smoke=run)).status is Status.PASS


def test_a_wrong_matmul_is_caught_against_the_float64_reference(
    torch_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    simulate(monkeypatch, fault={"op": "matmul", "action": "wrong"})
    run = smoke(torch_python, SmokeMode.QUICK)
    assert run.outcome is SmokeOutcome.COMPLETED
    wrong = [s for s in run.named("matmul") if s.status is StepStatus.WRONG]
    assert [s.variant for s in wrong] == ["fp32", "fp16"]
    assert wrong[0].numbers["worst_error_ratio"] > 1000
    assert smoke_matmul(facts(smoke=run)).status is Status.FAIL


def test_a_kernel_that_never_returns_is_stopped_by_the_watchdog(
    torch_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    simulate(monkeypatch, fault={"op": "matmul", "action": "hang"})
    run = smoke(torch_python, SmokeMode.QUICK)
    assert run.outcome is SmokeOutcome.HUNG
    assert run.stopped_in == "matmul fp32 on GPU 0"
    assert run.message == "matmul fp32 on GPU 0 did not finish within 4 s"
    assert run.find("memory", 0) is not None  # what ran before the hang is kept
    assert smoke_run(facts(smoke=run)).status is Status.FAIL


def test_a_segfault_is_attributed_to_its_step(torch_python: str, monkeypatch: pytest.MonkeyPatch) -> None:
    simulate(monkeypatch, fault={"op": "synchronize", "action": "segfault"})
    run = smoke(torch_python, SmokeMode.QUICK)
    assert run.outcome is SmokeOutcome.CRASHED
    assert run.stopped_in == "memory on GPU 0"
    assert run.message == "killed by SIGSEGV (signal 11)"


def test_out_of_memory_is_reported_as_such(torch_python: str, monkeypatch: pytest.MonkeyPatch) -> None:
    simulate(monkeypatch, fault={"op": "empty", "action": "oom"})
    run = smoke(torch_python, SmokeMode.QUICK)
    assert run.outcome is SmokeOutcome.COMPLETED
    memory = run.find("memory", 0)
    assert memory is not None and memory.status is StepStatus.ERROR and memory.oom
    assert memory.message is not None and memory.message.startswith("out of memory allocating")
    finding = smoke_gpu_memory(facts(smoke=run))
    assert finding.status is Status.WARN


def test_one_failing_gpu_of_two(torch_python: str, monkeypatch: pytest.MonkeyPatch) -> None:
    simulate(monkeypatch, devices=2, fault={"op": "empty", "action": "error", "device": 1})
    monkeypatch.setenv(
        "GPU_DOCTOR_FAKE_CUDA",
        json.dumps({**json.loads(__import__("os").environ["GPU_DOCTOR_FAKE_CUDA"])}),
    )
    run = smoke(torch_python, SmokeMode.QUICK, gpus=2)
    assert run.outcome is SmokeOutcome.COMPLETED, run.message
    gpu0 = [s.status for s in run.steps if s.device == 0 and s.name != "peer_copy"]
    gpu1 = [s.status for s in run.steps if s.device == 1 and s.name != "peer_copy"]
    assert set(gpu0) == {StepStatus.OK}
    assert gpu1[0] is StepStatus.ERROR and set(gpu1[1:]) == {
        StepStatus.SKIPPED
    }  # sticky: the rest is skipped
    assert "illegal memory access" in (run.steps[[s.device for s in run.steps].index(1)].message or "")
    reduce = run.find("all_reduce")
    assert (
        reduce is not None and reduce.status is StepStatus.OK
    )  # the fault hits allocations, not the workers
    memory = smoke_gpu_memory(facts(smoke=run))
    assert memory.status is Status.FAIL and "GPU 1 (NVIDIA GeForce RTX 4090)" in memory.summary
    assert "GPU 0" not in memory.summary
    verdict = smoke_run(facts(smoke=run))  # the per-GPU count, as "7 of 8 GPUs passed" on a big node
    assert "; 1 of 2 GPUs passed every step; 1 step(s) gave wrong results or errors" in verdict.summary


def test_a_gpu_that_cannot_be_used_is_named_and_the_others_are_tested(
    torch_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22, defect 2: GPU 2 of 4 is taken in exclusive-process mode, so creating its context fails
    (cudaErrorDevicesUnavailable). Before, cuda_init asked every GPU in one step: one error made the whole
    step fail, the run fell back to the CPU matmul and no GPU was tested."""
    simulate(monkeypatch, devices=4, fault={"op": "mem_get_info", "action": "busy", "device": 2})
    run = smoke(torch_python, SmokeMode.QUICK, gpus=4)
    assert run.outcome is SmokeOutcome.COMPLETED, run.message
    init = run.find("cuda_init")
    assert init is not None and init.status is StepStatus.OK
    assert [d.error is not None for d in run.devices] == [False, False, True, False]
    assert run.devices[2].error == (
        "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable"
    )
    for index in (0, 1, 3):
        memory = run.find("memory", index)
        assert memory is not None and memory.status is StepStatus.OK, index
    skipped = run.find("memory", 2)
    assert skipped is not None and skipped.status is StepStatus.SKIPPED
    assert skipped.message is not None and skipped.message.startswith("GPU 2 failed earlier: RuntimeError")
    finding = smoke_run(facts(smoke=run))
    assert finding.status is Status.FAIL
    assert finding.summary.startswith(
        "3 of 4 GPUs could be used: GPU 2 (NVIDIA GeForce RTX 4090 at 0000:03:00.0) failed: RuntimeError: "
        "CUDA error: CUDA-capable device(s) is/are busy or unavailable."
    )
    assert finding.remediation is not None
    assert finding.remediation.commands[0].argv == (
        "nvidia-smi",
        "-i",
        "2",
        "-q",
        "-d",
        "COMPUTE,MEMORY,PIDS",
    )


def test_when_no_gpu_can_be_used_the_run_says_why_for_each(
    torch_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    simulate(monkeypatch, devices=2, fault={"op": "mem_get_info", "action": "busy"})
    run = smoke(torch_python, SmokeMode.QUICK, gpus=2)
    init = run.find("cuda_init")
    assert init is not None and init.status is StepStatus.ERROR
    assert init.message is not None and init.message.startswith(
        "no GPU could be used: GPU 0: RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or "
        "unavailable; GPU 1: RuntimeError"
    )
    assert run.find("cpu_matmul") is not None


def test_a_peer_path_that_corrupts_data_fails_instead_of_passing_as_fast(
    torch_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22, defect 9: the peer copy was timed and never compared, so a P2P path that corrupts data (an
    IOMMU or ACS setting in the way) passed as "fast"."""
    simulate(monkeypatch, devices=2, fault={"op": "peer_copy", "action": "wrong"})
    config = json.loads(os.environ["GPU_DOCTOR_FAKE_CUDA"])
    config["sizes"]["peer_bytes"] = 3 << 20  # apart from the transfers' and device copies' 1 MiB
    monkeypatch.setenv("GPU_DOCTOR_FAKE_CUDA", json.dumps(config))
    run = smoke(torch_python, SmokeMode.QUICK, gpus=2)
    copy = run.find("peer_copy", 0)
    assert copy is not None and copy.status is StepStatus.WRONG, copy
    assert copy.message == "1 of 3145728 bytes copied from GPU 0 to GPU 1 arrived wrong"
    finding = smoke_multi_gpu(facts(smoke=run))
    assert finding.status is Status.FAIL, finding.summary
    assert finding.details is not None and "NCCL_P2P_DISABLE=1" in finding.details


def test_ranks_that_log_megabytes_do_not_block_on_a_full_pipe(
    torch_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22, defect 7: the workers' output went to pipes read only at exit, and NCCL logs to stdout; with
    the NCCL_DEBUG=INFO our own advice recommends, a rank blocked on its full pipe and read as a hang."""
    simulate(monkeypatch, devices=2)
    config = json.loads(os.environ["GPU_DOCTOR_FAKE_CUDA"])
    config["worker_log_bytes"] = 4 << 20  # 64 times a Linux pipe's buffer
    monkeypatch.setenv("GPU_DOCTOR_FAKE_CUDA", json.dumps(config))
    run = smoke(torch_python, SmokeMode.QUICK, gpus=2)
    reduce = run.find("all_reduce")
    assert reduce is not None and reduce.status is StepStatus.OK, reduce
    assert reduce.numbers["world_size"] == 2


def test_a_rendezvous_port_taken_in_between_is_tried_again(
    torch_python: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 22, defect 10: the port is found free, released, and bound again by rank 0 seconds later; another
    program can take it in between (c10d's TCPStore then says EADDRINUSE). The all-reduce tries a new port."""
    simulate(monkeypatch, devices=2)
    config = json.loads(os.environ["GPU_DOCTOR_FAKE_CUDA"])
    config["port_taken_once"] = str(tmp_path / "taken")
    monkeypatch.setenv("GPU_DOCTOR_FAKE_CUDA", json.dumps(config))
    run = smoke(torch_python, SmokeMode.QUICK, gpus=2)
    reduce = run.find("all_reduce")
    assert (tmp_path / "taken").exists()  # the first attempt did meet a taken port
    assert reduce is not None and reduce.status is StepStatus.OK, reduce


@pytest.mark.parametrize(
    ("shape", "order", "found"),
    [
        ("2.11", None, ["0000:01:00.0", "0000:02:00.0"]),  # the PCI fields
        ("2.4", None, ["0000:01:00.0", "0000:02:00.0"]),  # no PCI fields: NVML's address of the same UUID
        ("2.1", None, [None, None]),  # neither: two GPUs in CUDA's fastest-first order cannot be told apart
        ("2.1", "PCI_BUS_ID", ["0000:01:00.0", "0000:02:00.0"]),  # ... unless torch numbers them in PCI order
    ],
)
def test_each_gpus_pci_address_on_older_torch(
    torch_python: str, monkeypatch: pytest.MonkeyPatch, shape: str, order: str | None, found: list[str | None]
) -> None:
    """Issue 22, defect 6: pci_domain_id/pci_bus_id/pci_device_id are recent fields of torch's device
    properties; without them the link sampler never ran and multi-GPU hosts lost their transfer expectation.
    The parent now passes NVML's UUIDs and addresses, and the UUID gets NVML's "GPU-" prefix."""
    simulate(monkeypatch, devices=2)
    config = json.loads(os.environ["GPU_DOCTOR_FAKE_CUDA"])
    config["shape"] = shape
    monkeypatch.setenv("GPU_DOCTOR_FAKE_CUDA", json.dumps(config))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    if order:
        monkeypatch.setenv("CUDA_DEVICE_ORDER", order)
    else:
        monkeypatch.delenv("CUDA_DEVICE_ORDER", raising=False)
    nvml = [
        GpuAddress(f"GPU-8ee5f1e0-e705-aac5-6d6e-b97ad596{i:04x}", f"0000:{i + 1:02x}:00.0") for i in (1, 0)
    ]
    run = gather_smoke(
        RealHost(),
        torch_python,
        SmokeRequest(SmokeMode.QUICK, budgets=QUICK_BUDGETS),
        Unavailable(Reason.NOT_APPLICABLE),
        2,
        nvml,
    )
    assert isinstance(run, SmokeRun) and run.outcome is SmokeOutcome.COMPLETED, run
    assert [d.pci_bus_id for d in run.devices] == found
    uuids = [d.uuid for d in run.devices]
    if shape == "2.1":
        assert uuids == [None, None]
    else:
        assert uuids == [
            "GPU-8ee5f1e0-e705-aac5-6d6e-b97ad5960000",
            "GPU-8ee5f1e0-e705-aac5-6d6e-b97ad5960001",
        ]


def test_the_child_names_its_step_on_disk_before_it_touches_the_gpu(
    torch_python: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 22, defect 4: the breadcrumb's step was written by the parent when it read the child's "start"
    line; a machine that locks up within milliseconds of that line left the previous step named. The child
    now writes the step itself first. Here the parent's own writes are switched off, as a lock-up would, and
    the crash still has its step."""
    simulate(monkeypatch, fault={"op": "matmul", "action": "segfault"})
    monkeypatch.setattr(Breadcrumb, "step", lambda self, label: None)
    monkeypatch.setattr(Breadcrumb, "clear", lambda self: None)
    crumb = Breadcrumb(tmp_path)
    run = gather_smoke(
        RealHost(),
        torch_python,
        SmokeRequest(SmokeMode.QUICK, budgets=QUICK_BUDGETS, breadcrumb=crumb),
        Unavailable(Reason.NOT_APPLICABLE),
        1,
    )
    assert isinstance(run, SmokeRun) and run.outcome is SmokeOutcome.CRASHED
    monkeypatch.setattr("torch_gpu_doctor.smoke.breadcrumb._pid_alive", lambda pid: False)
    left = crumb.unfinished()
    assert left is not None and left.step == "matmul fp32 on GPU 0"


def test_matmul_timing_leaves_out_the_launch(torch_python: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22, defect 5: each call was timed alone after a synchronize, so its start event fired on an idle
    stream and the interval counted Python's launch of the call (on an H200, quick mode's fp16 n=2048 read
    478 TFLOPS; now 686-694, the standard mode's rate). The fake's timeline: kernels of 30 us, launches of
    20 us; the figure must be the kernel's."""
    simulate(monkeypatch)
    config = json.loads(os.environ["GPU_DOCTOR_FAKE_CUDA"])
    config.update({"matmul_us": 30.0, "launch_us": 20.0})
    monkeypatch.setenv("GPU_DOCTOR_FAKE_CUDA", json.dumps(config))
    run = smoke(torch_python, SmokeMode.QUICK)
    n = TINY["matmul_n"]
    kernel = 2 * n**3 / 30e-6 / 1e12  # TFLOPS of a 30 us kernel
    for step in run.named("matmul"):
        assert step.numbers.get("tflops") == pytest.approx(kernel, rel=0.01), (step, run.message)


def test_an_asynchronous_sticky_error_surfaces_at_the_next_synchronize(
    torch_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CUDA reports a kernel's fault at a later call: the fp32 matmul on GPU 0 "returns", the illegal memory
    access comes at its synchronize, and the context is lost: GPU 0's later steps are skipped, GPU 1 runs."""
    simulate(monkeypatch, devices=2, fault={"op": "matmul", "action": "async", "device": 0})
    run = smoke(torch_python, SmokeMode.QUICK, gpus=2)
    fp32 = run.find("matmul", 0, "fp32")
    assert fp32 is not None and fp32.status is StepStatus.ERROR
    assert fp32.message is not None and "illegal memory access" in fp32.message
    fp16 = run.find("matmul", 0, "fp16")
    assert fp16 is not None and fp16.status is StepStatus.SKIPPED
    assert all(s.status is StepStatus.OK for s in run.steps if s.device == 1 and s.name != "peer_copy")
    finding = smoke_matmul(facts(smoke=run))
    assert finding.status is Status.FAIL and "GPU 0" in finding.summary


def test_nccls_real_cause_reaches_the_finding(torch_python: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """ProcessGroupNCCL puts the cause after "Last error:" on a later line (defect 8); through the whole chain,
    the multi-GPU finding must say it."""
    simulate(monkeypatch, devices=2, fault={"op": "worker", "action": "nccl", "device": 1})
    run = smoke(torch_python, SmokeMode.QUICK, gpus=2)
    reduce = run.find("all_reduce")
    assert reduce is not None and reduce.status is StepStatus.ERROR
    finding = smoke_multi_gpu(facts(smoke=run))
    assert finding.status is Status.FAIL
    assert "last error: Error while creating shared memory segment /dev/shm/nccl-1YsMbG" in finding.summary


def test_the_pageable_copy_reads_written_memory(torch_python: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22, defect 12: the pageable host buffer was allocated and never written, so host-to-device copies
    read the kernel's shared zero page and the pageable figure came out high (on the H200: 18.2 GB/s, and
    8.6-8.9 once written), which can hide the pin_memory advice. In the fake an untouched buffer copies at
    twice the rate; the figure must be the written buffer's: bytes / (launch + bytes at 25 GB/s)."""
    simulate(monkeypatch)
    config = json.loads(os.environ["GPU_DOCTOR_FAKE_CUDA"])
    config.update({"launch_us": 20.0, "copy_gbytes_per_s": 25.0})
    monkeypatch.setenv("GPU_DOCTOR_FAKE_CUDA", json.dumps(config))
    run = smoke(torch_python, SmokeMode.STANDARD)
    step = run.find("transfer", 0, "h2d_pageable")
    assert step is not None and step.status is StepStatus.OK, step
    nbytes = TINY["transfer_bytes"]
    written = nbytes / ((20.0 + 2.0) + nbytes / 25e3) / 1e3  # GB/s: a launch and an event, then the copy
    assert step.numbers["gbytes_per_s"] == pytest.approx(written, rel=0.02), step.numbers


def test_copies_that_slow_down_for_a_while_are_timed_after_they_recover(
    torch_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The third real H200 (2026-11-27): host-to-device copies read 45 GB/s against 55 in one run of three, the
    link at Gen5 x16 throughout. The warm-up stopped at two alike rounds although both were slower than one
    before them. Here the first round copies at 25 GB/s, the next forty copies at 10: the timed copies must be
    the recovered 25, not the slow phase's 10."""
    simulate(monkeypatch)
    config = json.loads(os.environ["GPU_DOCTOR_FAKE_CUDA"])
    config.update({"launch_us": 20.0, "copy_gbytes_per_s": 25.0, "copy_phases": [[10, 25.0], [40, 10.0]]})
    monkeypatch.setenv("GPU_DOCTOR_FAKE_CUDA", json.dumps(config))
    run = smoke(torch_python, SmokeMode.STANDARD)
    step = run.find("transfer", 0, "h2d_pinned")
    assert step is not None and step.status is StepStatus.OK, step
    assert step.numbers["gbytes_per_s"] > 20.0, step.numbers
    assert step.numbers["warm_up_rounds"] >= 6, step.numbers  # one fast round, four slow, two fast again


def test_an_all_reduce_rank_that_dies_fails_the_multi_gpu_check(
    torch_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    simulate(monkeypatch, devices=2, fault={"op": "worker", "action": "error", "device": 1})
    run = smoke(torch_python, SmokeMode.QUICK, gpus=2)
    reduce = run.find("all_reduce")
    assert reduce is not None and reduce.status is StepStatus.ERROR
    assert (
        reduce.message is not None
        and "rank 1: RuntimeError: CUDA error: an illegal memory access" in reduce.message
    )
    assert smoke_multi_gpu(facts(smoke=run)).status is Status.FAIL


def test_the_real_cpu_torch_gets_a_cpu_smoke_and_a_clear_verdict(torch_python: str) -> None:
    run = gather_smoke(
        RealHost(), torch_python, SmokeRequest(SmokeMode.QUICK), Unavailable(Reason.NOT_APPLICABLE), 0
    )
    assert isinstance(run, SmokeRun) and run.outcome is SmokeOutcome.COMPLETED
    init = run.find("cuda_init")
    assert (
        init is not None
        and init.status is StepStatus.SKIPPED
        and init.message == "this torch is a CPU-only build"
    )
    cpu = run.find("cpu_matmul")
    assert cpu is not None and cpu.flags["correct"] and cpu.numbers["gflops"] > 0.5
    finding = smoke_run(facts(smoke=run))
    assert finding.status is Status.FAIL and finding.summary.startswith(
        "No usable GPU: this torch is a CPU-only build."
    )


def test_the_smoke_command_end_to_end(
    torch_python: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    simulate(monkeypatch)
    monkeypatch.setenv("GPU_DOCTOR_STATE_DIR", str(tmp_path))
    code = main(["smoke", "--mode", "quick", "--json", "--python", torch_python])
    out, err = capsys.readouterr()
    document = json.loads(out)
    jsonschema.validate(document, json.loads(report_schema_text()))
    assert document["smoke"]["outcome"] == "completed"
    keys = [f["key"] for f in document["smoke"]["figures"]]
    assert keys[:3] == ["h2d_pinned", "d2h_pinned", "device_copy"]
    assert {f["check_id"] for f in document["findings"]} >= {
        "smoke.run",
        "smoke.matmul",
        "pcie.link_under_load",
    }
    assert not any(f["check_id"].startswith("torch.") for f in document["findings"])
    progress = [json.loads(line)["smoke_progress"] for line in err.splitlines() if line.startswith("{")]
    assert progress[-1]["ended"] == progress[-1]["expected"] == 8  # import, init, 6 quick steps
    starts = [p["step"] for p in progress if p["event"] == "start"]
    ends = [p for p in progress if p["event"] == "end"]
    assert starts == [p["step"] for p in ends] and len(ends) == 8  # one start and one end a step
    assert all(p["status"] is not None and p["duration_ms"] >= 0 for p in ends)
    assert all(0 <= p["done"] <= 1 and p["status"] is None for p in progress if p["event"] == "progress")
    assert code in (0, 1)
    assert not (tmp_path / "smoke-in-progress.json").exists()  # the breadcrumb is gone after a finished run


def test_long_steps_say_how_far_they_are_between_their_start_and_end(
    torch_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child's progress lines for the TUI's per-step bars: from the steps that wait for the GPU as they go
    (memory passes, timed matmuls, training steps), rising, within 0..1, at most ten a second."""
    simulate(monkeypatch)
    sizes = dict(TINY, matmul_min_s=0.45, train_steps=60)  # long enough to say how far they are
    # 2 ms a matmul: 1000 calls would take 2 s, so each timed matmul runs until min_s on any CPU (a CPU with
    # AVX512-FP16 multiplies the tiny fp16 matrices so fast that 1000 calls end before one progress line)
    monkeypatch.setenv(
        "GPU_DOCTOR_FAKE_CUDA",
        json.dumps(
            {"devices": [dict(GPU, pci_bus_id="0000:01:00.0")], "sizes": sizes, "matmul_delay_s": 0.002}
        ),
    )
    seen: list[SmokeProgress] = []
    run = gather_smoke(
        RealHost(),
        torch_python,
        SmokeRequest(SmokeMode.STANDARD, on_progress=seen.append, budgets=QUICK_BUDGETS),
        Unavailable(Reason.NOT_APPLICABLE),
        1,
    )
    assert isinstance(run, SmokeRun) and run.outcome is SmokeOutcome.COMPLETED, run
    running: str | None = None
    fractions: dict[str, list[float]] = {}
    for p in seen:
        if p.status is None and p.done is None:  # a start
            running = p.label
        elif p.done is not None:  # progress: only for the step now running
            assert p.status is None and p.label == running and 0.0 <= p.done <= 1.0
            fractions.setdefault(p.label, []).append(p.done)
        else:
            assert p.label == running and p.duration_ms is not None and p.duration_ms >= 0
            running = None
    matmul = fractions["matmul fp16 on GPU 0"]
    assert len(matmul) >= 3 and matmul == sorted(matmul) and matmul[-1] > 0.6
    assert len(matmul) <= 0.45 / 0.1 + 2  # at most ten a second
    train = fractions.get("train on GPU 0", [])
    assert train == sorted(train) and len(train) > 0 and train[-1] <= 1.0
    # copies are queued and timed by CUDA events: they cannot say how far they are, so they do not
    assert not any(label.startswith(("transfer", "device_copy")) for label in fractions)
    plain = [p for p in seen if p.done is None]  # what a plain-text progress line sees is as before
    assert [p.label for p in plain if p.status is not None][-1] == run.steps[-1].label


def test_the_smoke_test_runs_on_a_jetson_and_is_judged_without_a_pcie_link(
    torch_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 20: a Jetson's integrated GPU (Orin: compute capability 8.7, no PCI address, its memory the board's
    RAM) runs every step, and the figures are judged with the Jetson's own facts, where no GPU is on a PCIe bus
    and NVML lists none: no link expectation is claimed, nothing is called slow against one."""
    orin = {"name": "Orin", "capability": "8.7", "total": 7801405 * 1024, "free": 4 << 30, "sms": 8}
    monkeypatch.setenv("PYTHONPATH", str(SHIM))
    monkeypatch.setenv("GPU_DOCTOR_FAKE_CUDA", json.dumps({"devices": [orin], "sizes": TINY}))
    run = smoke(torch_python, gpus=0)  # facts.gpus is empty on a Jetson
    assert run.outcome is SmokeOutcome.COMPLETED, run.message
    assert [d.name for d in run.devices] == ["Orin"] and run.devices[0].pci_bus_id is None
    assert all(s.status is StepStatus.OK for s in run.steps), [(s.label, s.message) for s in run.steps]
    host = RecordedHost(Path(__file__).parents[1] / "fixtures" / "hosts" / "jetson-orin-jp6-pypi-torch")
    jetson = dataclasses.replace(diagnose(host, "python3", plugins=False).facts, smoke=run)
    assert smoke_run(jetson).status is Status.PASS
    for figure in smoke_figures(jetson):
        assert figure.status is Status.PASS, figure.sentence
        if figure.key.startswith(("h2d", "d2h")):
            assert figure.expected_min is None  # no PCIe link on a Jetson: nothing to compare with
