"""Sizing advice (issue 20, item 5): DataLoader workers against CPUs and /dev/shm, PCIe links for multi-GPU
training. Advice with its arithmetic, added to memory.shm and pcie.link, never a verdict of its own."""

from __future__ import annotations

from tests.checks.test_memory_checks import limits_of
from tests.factories import facts, gpu
from torch_gpu_doctor.checks.memory import shm
from torch_gpu_doctor.checks.support.sizing import multi_gpu_link_advice, worker_advice, workers_per_gpu
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.platform import CpuFacts
from torch_gpu_doctor.model import Status


def machine(cpus: int, gpus: int) -> Facts:
    return facts(
        cpu=CpuFacts("AMD EPYC 7543", cpus),
        gpus=tuple(gpu(bdf=f"0000:{i + 1:02x}:00.0") for i in range(gpus)),
    )


def test_workers_leave_one_cpu_to_each_training_process() -> None:
    assert workers_per_gpu(machine(16, 2)) == (2, 16, 7)
    assert workers_per_gpu(machine(128, 8)) == (8, 128, 15)
    assert workers_per_gpu(facts(cpu=CpuFacts("x", 8), gpus=())) is None  # no GPU: nothing to advise


def test_shm_is_divided_among_the_prefetched_batches() -> None:
    # 2 GPUs x 7 workers x prefetch_factor 2 = 28 batches; 8 GiB / 28 = 293 MiB each
    text = worker_advice(machine(16, 2), 8 << 30)
    assert "up to 7 DataLoader workers for each of 2 GPUs (num_workers=7)" in text
    assert "up to 28 batches in /dev/shm" in text
    assert "batches of up to 293 MiB each" in text
    assert "take 147 MiB" in text  # 256 x 3 x 224 x 224 x 4 bytes


def test_too_few_cpus_per_gpu_is_said_with_what_to_do() -> None:
    text = worker_advice(machine(4, 4), 1 << 30)
    assert text.startswith("4 logical CPUs for 4 GPUs: no CPU is left for DataLoader workers")
    assert "DALI" in text


def test_memory_shm_carries_the_advice() -> None:
    finding = shm(facts(memory_limits=limits_of("nvme-ext4-root"), cpu=CpuFacts("x", 32)))
    assert finding.status is Status.PASS
    assert "32 logical CPUs: up to 31 DataLoader workers for GPU" in finding.details
    assert "/dev/shm at once" in finding.details


def test_link_advice_names_the_narrowest_link_unless_nvlink_carries_the_traffic() -> None:
    rates = [("0000:0a:00.0", 15.75), ("0000:0b:00.0", 7.88)]
    text = multi_gpu_link_advice(rates, all_nvlink=False)
    assert "7.9 to 15.8 GB/s per direction under load (the narrowest: 0000:0b:00.0)" in text
    assert "paces every all-reduce" in text
    nvlinked = multi_gpu_link_advice(rates, all_nvlink=True)
    assert nvlinked.endswith("PCIe carries only the data loading.")
    assert multi_gpu_link_advice(rates[:1], all_nvlink=False) == ""


def test_a_bus_error_warning_does_not_also_say_there_are_no_workers() -> None:
    """Review finding: the warning said workers will die while its details said no CPU is left for any."""
    finding = shm(facts(memory_limits=limits_of("docker-overlay"), cpu=CpuFacts("x", 1)))
    assert finding.status is Status.WARN and "bus error" in finding.summary
    assert "no CPU is left" not in finding.details
