"""The smoke checks and figures on runs written in the child's protocol (tests/smoke/lines.py): what a person
reads for a healthy GPU, a hang, a crash, wrong results, out of memory, a slow or Gen1 link, and several GPUs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.factories import facts, gpu, torch_packages
from tests.smoke.lines import H100, end, gpu_steps, header, healthy_h100, start, step, streamed
from torch_gpu_doctor.checks.pcie_link_under_load import pcie_link_under_load
from torch_gpu_doctor.checks.smoke_gpu import (
    smoke_gpu_memory,
    smoke_matmul,
    smoke_memory_bandwidth,
    smoke_transfer,
)
from torch_gpu_doctor.checks.smoke_multi_gpu import smoke_multi_gpu
from torch_gpu_doctor.checks.smoke_run import smoke_previous_run, smoke_run
from torch_gpu_doctor.checks.smoke_training import smoke_cudnn, smoke_training
from torch_gpu_doctor.checks.support.smoke_figures import smoke_figures
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.pcie_link import gather_pcie_links
from torch_gpu_doctor.facts.smoke import (
    SmokeMode,
    SmokeOutcome,
    SmokeRun,
    StepStatus,
    UnfinishedRun,
    parse_smoke,
)
from torch_gpu_doctor.facts.thunderbolt import gather_thunderbolt
from torch_gpu_doctor.fixes.torch_wheel import fix_for_torch
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.serialize import from_json, to_json
from torch_gpu_doctor.smoke.run import expected_steps
from torch_gpu_doctor.unavailable import Reason, Unavailable

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "sysfs-trees"
RTX4090 = {
    **H100,
    "name": "NVIDIA GeForce RTX 4090",
    "capability": "8.9",
    "total_memory_bytes": 25757220864,
    "pci_bus_id": "0000:01:00.0",
}


def run_of(items: list[dict[str, Any]], **kw: Any) -> SmokeRun:
    run = parse_smoke(streamed(items, **kw), SmokeMode.STANDARD)
    assert isinstance(run, SmokeRun)
    return run


def with_run(run: SmokeRun | Unavailable, tree: str | None = None, bdf: str = "0000:01:00.0") -> Facts:
    base = facts(smoke=run)
    if tree is None:
        return base
    host = RecordedHost(TREES / tree)
    return replace(
        base, gpus=(gpu(bdf=bdf),), pcie=gather_pcie_links(host, [bdf]), thunderbolt=gather_thunderbolt(host)
    )


def test_a_healthy_h100_passes_every_check_and_facts_round_trip() -> None:
    run = parse_smoke(healthy_h100(), SmokeMode.STANDARD)
    assert isinstance(run, SmokeRun) and run.outcome is SmokeOutcome.COMPLETED
    assert from_json(SmokeRun, to_json(run)) == run
    f = with_run(run)
    for fn in (
        smoke_run,
        smoke_gpu_memory,
        smoke_matmul,
        smoke_memory_bandwidth,
        smoke_cudnn,
        smoke_training,
    ):
        assert fn(f).status is Status.PASS, fn(f)
    assert "ran 14 steps on 1 GPU in 8.1 s (standard mode); all 14 that apply passed" in smoke_run(f).summary
    # the datasheet expectations: 2650 of 3350 GB/s, 610 of 989.4 TFLOPS
    sentences = {fig.key: fig.sentence for fig in smoke_figures(f)}
    assert sentences["device_copy"] == (
        "device memory copy (read + write) 2650 GB/s; the H100 SXM5 80GB datasheet says 3350 GB/s (expect ≥ 1675)"
    )
    assert sentences["matmul_fp16"] == "fp16 matmul 610 TFLOPS; the H100 SXM5 80GB peak is 989 (expect ≥ 396)"
    assert smoke_multi_gpu(f).status is Status.SKIP


def test_not_asked_is_a_skip_and_asked_without_torch_fails_with_the_install_command() -> None:
    assert smoke_run(facts()).status is Status.SKIP
    assert "not run" in smoke_matmul(facts()).summary
    missing = facts(
        smoke=Unavailable(Reason.NOT_FOUND, "torch is not installed for /usr/bin/python3"),
        torch_packages=torch_packages(version=None),
    )
    finding = smoke_run(missing)
    # asked for and impossible: `gpu-doctor smoke && train` must stop, so it fails
    assert finding.status is Status.FAIL and "torch is not installed for /usr/bin/python3" in finding.summary
    # what 2/6 recommends for this machine (here a driver, since no wheel fits CUDA 12.4 and sm_89)
    assert finding.remediation is not None and finding.remediation == fix_for_torch(missing)


def test_a_hang_names_the_step_and_offers_the_quick_mode() -> None:
    items = header([H100]) + gpu_steps()[:10] + [start("matmul", 0, "fp16")]
    run = run_of(items, watchdog="matmul fp16 on GPU 0 did not finish within 60 s")
    assert run.outcome is SmokeOutcome.HUNG and run.stopped_in == "matmul fp16 on GPU 0"
    assert run.steps[-1].status is StepStatus.UNFINISHED
    finding = smoke_run(with_run(run))
    assert finding.status is Status.FAIL
    assert finding.summary.startswith("The GPU stopped answering during matmul fp16 on GPU 0")
    assert finding.remediation is not None and finding.remediation.commands[0].argv[-1] == "quick"
    # the steps before the hang are still judged; the ones after it are unknown, not "pass"
    assert smoke_gpu_memory(with_run(run)).status is Status.PASS
    assert smoke_cudnn(with_run(run)).status is Status.UNKNOWN
    assert smoke_matmul(with_run(run)).status is Status.FAIL  # the unfinished fp16 matmul


def test_a_segfault_is_a_crash_in_the_step_it_happened_in() -> None:
    run = run_of(
        [*header([H100]), start("memory", 0)], returncode=-11, stderr="Fatal Python error: Segmentation fault"
    )
    assert run.outcome is SmokeOutcome.CRASHED
    finding = smoke_run(with_run(run))
    assert finding.summary == "The smoke test crashed during memory on GPU 0: killed by SIGSEGV (signal 11)."
    assert any("Segmentation fault" in e.value for e in finding.evidence)


def test_an_interpreter_that_never_speaks_the_protocol_failed_to_start() -> None:
    run = run_of(
        [], returncode=1, stderr="Traceback ...\nImportError: libpython3.9.so.1.0: cannot open shared object"
    )
    assert run.outcome is SmokeOutcome.FAILED_TO_START
    assert smoke_run(with_run(run)).summary.endswith("cannot open shared object")


def test_wrong_matmul_results_fail_and_name_the_gpu() -> None:
    items = header([H100]) + gpu_steps()
    bad = end(
        "matmul",
        0,
        "bf16",
        status="wrong",
        message="bf16 matmul differs from the float64 CPU result (worst element: 52.1 times its error bound)",
        n=8192,
        tflops=640.0,
        worst_error_ratio=52.1,
        correct=False,
    )
    items = [bad if (i.get("event") == "end" and i.get("variant") == "bf16") else i for i in items]
    finding = smoke_matmul(with_run(run_of([*items, {"event": "done"}])))
    assert finding.status is Status.FAIL
    assert finding.summary.startswith("Matmul failed on GPU 0 (NVIDIA H100 80GB HBM3): bf16 matmul differs")


def test_out_of_memory_warns_instead_of_failing() -> None:
    items = [
        *header([H100]),
        start("memory", 0),
        end(
            "memory",
            0,
            status="error",
            message="out of memory allocating 40283 MiB of the 80577 MiB reported free",
            requested_bytes=42240000000,
            oom=True,
        ),
    ]
    finding = smoke_gpu_memory(with_run(run_of([*items, {"event": "done"}])))
    assert finding.status is Status.WARN
    assert "another process holds GPU memory" in finding.details


def test_bad_memory_words_fail() -> None:
    items = header([H100]) + step(
        "memory",
        0,
        status="wrong",
        message="3 of 10485760 words read back wrong",
        mismatches=3,
        first_bad_offset=123456,
    )
    finding = smoke_gpu_memory(with_run(run_of([*items, {"event": "done"}])))
    assert finding.status is Status.FAIL and "3 of 10485760 words read back wrong" in finding.summary


def test_a_slow_matmul_warns_with_the_datasheet_figure() -> None:
    items = header([H100]) + gpu_steps(tflops_fp16=120.0) + [{"event": "done"}]
    finding = smoke_matmul(with_run(run_of(items)))
    assert finding.status is Status.WARN
    assert finding.summary == (
        "GPU 0: fp16 matmul 120 TFLOPS; the H100 SXM5 80GB peak is 989 (expect ≥ 396): the GPU computes slowly "
        "— see gpu.throttle (clocks, power cap, temperature)"
    )


def test_an_unknown_gpu_gets_its_figures_without_a_verdict() -> None:
    items = header([{**H100, "name": "NVIDIA H100 NVL"}]) + gpu_steps() + [{"event": "done"}]
    figures = smoke_figures(with_run(run_of(items)))
    matmul = next(f for f in figures if f.key == "matmul_fp16")
    assert matmul.expected_min is None and matmul.status is Status.PASS
    assert "no datasheet figure" in matmul.sentence


def rtx4090(h2d: float, speed: str) -> list[dict[str, Any]]:
    return header([RTX4090]) + gpu_steps(h2d=h2d, speed=speed) + [{"event": "done"}]


def test_copies_on_a_healthy_gen4_x16_link_pass() -> None:
    f = with_run(run_of(rtx4090(24.6, "16.0 GT/s PCIe")), "rtx4090-riser-idle-gen1")
    assert smoke_transfer(f).status is Status.PASS
    under_load = pcie_link_under_load(f)
    assert under_load.status is Status.PASS
    assert under_load.summary == (
        "GPU 0 (NVIDIA GeForce RTX 4090)'s link trains up to Gen4 x16 under load (16.0 GT/s PCIe while copying)."
    )


def test_a_link_stuck_at_gen1_under_load_warns_in_both_checks() -> None:
    # the example from the issue: 3.1 GB/s on a Gen4 x16 link
    f = with_run(run_of(rtx4090(3.1, "2.5 GT/s PCIe")), "rtx4090-riser-idle-gen1")
    transfer = smoke_transfer(f)
    assert transfer.status is Status.WARN
    assert transfer.summary.startswith(
        "GPU 0: host→device (pinned) 3.1 GB/s on a PCIe Gen4 x16 link (expect ≥ 20.5 GB/s): the link is the bottleneck"
    )
    under_load = pcie_link_under_load(f)
    assert under_load.status is Status.WARN
    assert "stays stuck at Gen1 under load (2.5 GT/s PCIe while copying at 3.1 GB/s)" in under_load.summary
    assert under_load.remediation is not None and under_load.remediation.requires_reboot


def with_best(items: list[dict[str, Any]], best: float) -> list[dict[str, Any]]:
    for item in items:
        if item.get("variant") == "h2d_pinned" and item["event"] == "end":
            item["values"]["best_gbytes_per_s"] = best
    return items


def test_a_link_whose_best_copy_reaches_the_rate_is_not_the_bottleneck() -> None:
    """Copies that varied (median 14.0, best 24.6 GB/s on a Gen4 x16 link that should give ≥ 20.5): the link
    carried the rate, so no 'the link is the bottleneck' warning; a best copy as slow as the median still warns."""
    varied = with_run(run_of(with_best(rtx4090(14.0, "16.0 GT/s PCIe"), 24.6)), "rtx4090-riser-idle-gen1")
    transfer = smoke_transfer(varied)
    assert transfer.status is Status.PASS, transfer.summary
    assert "14 GB/s on a PCIe Gen4 x16 link (expect ≥ 20.5 GB/s); the best copy ran at 24.6 GB/s" in (
        transfer.summary
    )
    assert "bottleneck" not in transfer.summary
    slow = with_run(run_of(with_best(rtx4090(14.0, "16.0 GT/s PCIe"), 15.1)), "rtx4090-riser-idle-gen1")
    assert smoke_transfer(slow).status is Status.WARN
    assert "the link is the bottleneck" in smoke_transfer(slow).summary


def test_without_a_link_sample_the_bandwidth_tells_gen1() -> None:
    items = rtx4090(3.4, "ignored")
    for item in items:
        if item.get("variant") == "h2d_pinned" and item["event"] == "end":
            del item["values"]["link_speed_under_load"], item["values"]["link_width_under_load"]
    f = with_run(run_of(items), "rtx4090-riser-idle-gen1")
    finding = pcie_link_under_load(f)
    assert finding.status is Status.WARN
    assert "no faster than a Gen1 x16 link (4 GB/s)" in finding.summary
    fast = run_of(rtx4090(24.0, "x"))
    assert pcie_link_under_load(with_run(fast, "rtx4090-riser-idle-gen1")).status is Status.PASS
    # a link whose best copy ran far above Gen1 is not stuck there, however slow the median
    varied = run_of(with_best(items, 22.0))
    assert pcie_link_under_load(with_run(varied, "rtx4090-riser-idle-gen1")).status is Status.PASS


def test_an_egpu_is_measured_against_the_thunderbolt_tunnel() -> None:
    device = {**RTX4090, "pci_bus_id": None}  # an old torch that does not report bus ids: the only GPU is it
    items = header([device]) + gpu_steps(h2d=2.6, speed="8.0 GT/s PCIe") + [{"event": "done"}]
    f = with_run(run_of(items), "egpu-thunderbolt-authorized", bdf="0000:66:00.0")
    figure = next(fig for fig in smoke_figures(f) if fig.key == "h2d_pinned")
    assert figure.status is Status.PASS
    assert figure.sentence == "host→device (pinned) 2.6 GB/s on a Thunderbolt/USB4 tunnel (expect ≥ 2 GB/s)"
    assert "judged by egpu.* instead" in pcie_link_under_load(f).summary


def test_no_usable_gpu_fails_with_the_cpu_figure() -> None:
    items = [{"event": "hello", "protocol": 1}, *step("import", version="2.9.1+cu128", cuda="12.8")]
    items += step(
        "cuda_init",
        status="error",
        message="RuntimeError: Found no NVIDIA driver on your system.",
        cuda_available=False,
    )
    items += [*step("cpu_matmul", n=1024, gflops=98.5, threads=2, correct=True), {"event": "done"}]
    f = with_run(run_of(items))
    finding = smoke_run(f)
    assert finding.status is Status.FAIL
    assert finding.summary == (
        "No usable GPU: RuntimeError: Found no NVIDIA driver on your system.. The CPU ran a float32 matmul at "
        "98.5 GFLOPS instead."
    ) or finding.summary.startswith("No usable GPU: RuntimeError: Found no NVIDIA driver on your system.")
    assert "98.5 GFLOPS" in finding.summary
    assert smoke_matmul(f).status is Status.SKIP


def two_gpus(fault_on_1: bool = False, peer: bool = True, busbw: float = 140.0) -> SmokeRun:
    second = {**H100, "pci_bus_id": "0000:3b:00.0", "uuid": "GPU-1"}
    items = header([H100, second]) + gpu_steps(0)
    if fault_on_1:
        illegal = "RuntimeError: CUDA error: an illegal memory access was encountered"
        items += step("memory", 1, status="error", message=illegal)
        items += step(
            "transfer", 1, "h2d_pinned", status="skipped", message="GPU 1 failed earlier: " + illegal
        )
    else:
        items += gpu_steps(1)
    peers: dict[str, Any] = {"0->1": peer, "1->0": peer}
    items += [start("peer_access"), end("peer_access", **peers)]
    items += step("peer_copy", 0, "to 1", gbytes_per_s=360.0) + step(
        "peer_copy", 1, "to 0", gbytes_per_s=355.0
    )
    if fault_on_1:
        items += step(
            "all_reduce", status="error", message="rank 1: RuntimeError: CUDA error: an illegal memory access"
        )
    else:
        items += step(
            "all_reduce",
            world_size=2,
            backend="nccl",
            busbw_gbytes_per_s=busbw,
            algbw_gbytes_per_s=busbw,
            correct=True,
        )
    return run_of([*items, {"event": "done"}])


def test_two_healthy_gpus_report_the_all_reduce() -> None:
    finding = smoke_multi_gpu(with_run(two_gpus()))
    assert finding.status is Status.PASS
    assert finding.summary == "All 2 GPUs reach each other directly; all-reduce bus bandwidth 140 GB/s."


def test_a_partial_multi_gpu_failure_names_the_failing_gpu_only() -> None:
    f = with_run(two_gpus(fault_on_1=True))
    memory = smoke_gpu_memory(f)
    assert memory.status is Status.FAIL
    assert memory.summary.startswith(
        "The memory test failed on GPU 1 (NVIDIA H100 80GB HBM3): RuntimeError: CUDA error"
    )
    assert memory.summary.endswith("It worked on the other 1 GPU(s).")
    assert smoke_multi_gpu(f).status is Status.FAIL
    assert "all_reduce failed: rank 1" in smoke_multi_gpu(f).summary


def test_peer_access_off_warns() -> None:
    finding = smoke_multi_gpu(with_run(two_gpus(peer=False)))
    assert finding.status is Status.WARN and "0->1, 1->0" in finding.summary


@pytest.mark.parametrize(
    ("rebooted", "says"), [(True, "rebooted since"), (False, "has not rebooted"), (None, "")]
)
def test_an_unfinished_previous_run_warns_with_its_step(rebooted: bool | None, says: str) -> None:
    previous = UnfinishedRun(
        "standard", "2026-11-21T09:12:03Z", "matmul fp16 on GPU 0", rebooted, "/venv/bin/python"
    )
    run = parse_smoke(healthy_h100(), SmokeMode.QUICK, previous)
    assert isinstance(run, SmokeRun) and run.previous == previous
    finding = smoke_previous_run(with_run(run))
    assert finding.status is Status.WARN
    assert (
        "(standard mode, started 2026-11-21T09:12:03Z) never finished: it stopped in matmul fp16 on GPU 0."
        in finding.summary
    )
    assert says in finding.summary
    assert smoke_previous_run(with_run(parse_smoke(healthy_h100(), SmokeMode.QUICK))).status is Status.PASS


def test_lines_from_libraries_and_a_start_without_an_end_are_handled() -> None:
    items = [
        *header([H100]),
        start("memory", 0),
        *step("device_copy", 0, gbytes_per_s=2600.0),
        {"event": "done"},
    ]
    run = run_of(items, extra=["NCCL INFO Bootstrap : Using eth0", "{not json"])
    assert [s.status for s in run.steps if s.device == 0] == [StepStatus.UNFINISHED, StepStatus.OK]
    assert run.outcome is SmokeOutcome.COMPLETED


def test_the_progress_bar_length_is_the_number_of_steps_a_run_has() -> None:
    run = parse_smoke(healthy_h100(), SmokeMode.STANDARD)
    assert isinstance(run, SmokeRun)
    assert expected_steps(SmokeMode.STANDARD, 1) == len(run.steps) == 14
    assert expected_steps(SmokeMode.QUICK, 2) == 2 + 2 * 6 + 2 + 2  # peer access, 2 ring copies, all-reduce
    assert expected_steps(SmokeMode.DEEP, 3) == 2 + 3 * 12 + 2 + 6  # every ordered pair in deep mode
