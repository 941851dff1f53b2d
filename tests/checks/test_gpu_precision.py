"""gpu.precision on captured machines (H100, RTX 4090, Quadro RTX on a Pi, K80, a GPU-less VM), on GeForce
Pascal, with GPUs of two generations, and against smoke-test figures that confirm or contradict the table."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.factories import facts, gpu
from tests.fixes.hosts import diagnose_fixture
from tests.smoke.lines import H100, gpu_steps, header, streamed
from torch_gpu_doctor.checks.gpu_precision import TF32_LINE, gpu_precision
from torch_gpu_doctor.facts.smoke import SmokeMode, SmokeRun, parse_smoke
from torch_gpu_doctor.model import Status


def _finding(name: str) -> tuple[Status, str, str]:
    (found,) = [f for f in diagnose_fixture(name).findings if f.check_id == "gpu.precision"]
    return found.status, found.summary, found.details


@pytest.mark.parametrize(
    ("host", "train_in", "formats"),
    [
        ("h100-sxm-x8-server", "bf16 on 8x NVIDIA H100 80GB HBM3", "tf32, fp16, bf16, fp8"),
        ("rtx4090-workstation-healthy", "bf16 on 8x NVIDIA GeForce RTX 4090", "tf32, fp16, bf16, fp8"),
        ("gpu-x1-link", "fp16 on Quadro RTX 6000/8000", "fp16"),  # Turing: no bf16
        ("legacy-gpu-new-driver", "fp32 on Tesla K80", None),  # Kepler: no tensor cores
    ],
)
def test_each_captured_gpu_gets_the_format_to_train_in(host: str, train_in: str, formats: str | None) -> None:
    status, summary, details = _finding(host)
    assert status is Status.PASS
    assert summary.startswith(f"Train in {train_in} (compute capability ")
    assert (f"tensor cores run {formats})" in summary) if formats else ("no tensor cores" in summary)
    assert (TF32_LINE in details) == (formats is not None and "tf32" in formats)


def test_no_gpu_is_a_skip() -> None:
    assert _finding("virtio-vm-no-gpu")[0] is Status.SKIP


def test_geforce_pascal_trains_in_fp32_because_fp16_is_slow() -> None:
    found = gpu_precision(facts(gpus=(gpu(name="NVIDIA GeForce GTX 1080 Ti", cc="6.1"),)))
    assert found.summary.startswith("Train in fp32 on NVIDIA GeForce GTX 1080 Ti")
    assert "1/64" in found.details


def test_two_generations_the_slowest_decides() -> None:
    gpus = (gpu(name="NVIDIA GeForce RTX 4090", cc="8.9"), gpu(bdf="0000:02:00.0", name="Tesla T4", cc="7.5"))
    found = gpu_precision(facts(gpus=gpus))
    assert "train in fp16 on Tesla T4" in found.summary and "the slowest decides: fp16" in found.details


def _with_smoke(**figures: float) -> SmokeRun:
    items = header([H100]) + gpu_steps() + [{"event": "done"}]
    for item in items:
        if item.get("step") == "matmul" and item.get("variant") in figures and "values" in item:
            item["values"]["tflops"] = figures[item["variant"]]
    run = parse_smoke(streamed(items), SmokeMode.STANDARD)
    assert isinstance(run, SmokeRun)
    return run


def test_smoke_figures_that_agree_keep_it_a_pass() -> None:
    h100 = gpu(name="NVIDIA H100 80GB HBM3", cc="9.0")
    assert gpu_precision(replace(facts(gpus=(h100,)), smoke=_with_smoke())).status is Status.PASS


def test_a_tensor_core_format_no_faster_than_fp32_is_a_warning_with_where_to_look() -> None:
    h100 = gpu(name="NVIDIA H100 80GB HBM3", cc="9.0")
    found = gpu_precision(replace(facts(gpus=(h100,)), smoke=_with_smoke(bf16=48.0)))
    assert found.status is Status.WARN
    assert found.summary == (
        "GPU 0 (NVIDIA H100 80GB HBM3) ran bf16 matmuls at 48.0 TFLOPS, no faster than fp32's 51.0, though it "
        "has bf16 tensor cores."
    )
    assert found.remediation is not None and "gpu.throttle" in found.remediation.text
