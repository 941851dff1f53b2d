"""Linear in GPUs (issue 21): identical GPUs are judged once by the wheel recommendation, whose candidates were
checked against every GPU (0.7 s of 4.2 s at 128 GPUs). benchmarks/gpu_scaling.py measures the whole run."""

from __future__ import annotations

from tests.factories import facts, gpu
from torch_gpu_doctor.fixes.target import gpu_capabilities


def test_identical_gpus_are_one_capability_in_gpu_order() -> None:
    h100s = tuple(
        gpu(bdf=f"0000:{i:02x}:00.0", name="NVIDIA H100 80GB HBM3", cc="9.0", nvml_index=i)
        for i in range(128)
    )
    assert gpu_capabilities(facts(gpus=h100s)) == ["9.0"]
    mixed = (
        gpu(cc="8.9"),
        gpu(bdf="0000:02:00.0", cc="9.0", nvml_index=1),
        gpu(bdf="0000:03:00.0", cc="8.9", nvml_index=2),
    )
    assert gpu_capabilities(facts(gpus=mixed)) == ["8.9", "9.0"]
