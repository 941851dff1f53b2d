"""memory.* over facts read from the storage trees (real mountinfo/limits captures, see their README) and
in-memory facts for the numbers a capture cannot vary."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.factories import facts, gpu, os_facts
from torch_gpu_doctor.checks.memory import bandwidth, locked_limit, ram, shm
from torch_gpu_doctor.facts.measurements import ROUTINE_NON_TEMPORAL, Measurements, RamBandwidth
from torch_gpu_doctor.facts.memory import MemoryFacts
from torch_gpu_doctor.facts.memory_limits import LockedMemoryLimit, MemoryLimitsFacts, gather_memory_limits
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.pcie_link import gather_pcie_links
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.unavailable import Reason, Unavailable

STORAGE = Path(__file__).resolve().parents[1] / "fixtures" / "storage-trees"
SYSFS = Path(__file__).resolve().parents[1] / "fixtures" / "sysfs-trees"
GIB = 1 << 30
DENIED = Unavailable(Reason.PERMISSION_DENIED, "/proc/self/limits")


def limits_of(tree: str) -> MemoryLimitsFacts:
    return gather_memory_limits(RecordedHost(STORAGE / tree))


def with_gpus(total: int, available: int, gpu_bytes: int, count: int = 1) -> Facts:
    gpus = tuple(replace(gpu(bdf=f"0000:0{i + 1}:00.0"), memory_total_bytes=gpu_bytes) for i in range(count))
    return facts(memory=MemoryFacts(total, available, 0), gpus=gpus)


# -- memory.ram ---------------------------------------------------------------------------------------------


def test_enough_ram_passes_and_names_the_gpu_memory() -> None:
    finding = ram(with_gpus(64 * GIB, 60 * GIB, 24 * GIB))
    assert finding.status is Status.PASS
    assert finding.summary == "64 GiB of RAM, 60 GiB available, no swap, for 24 GiB of GPU memory."


def test_less_ram_than_all_gpus_memory_warns() -> None:
    # 8x H100 80GB (81559 MiB each, samples/nvidia-smi-q/thamada-H100SXMx8-q.txt) with 512 GiB of RAM
    finding = ram(with_gpus(512 * GIB, 500 * GIB, 81559 << 20, count=8))
    assert finding.status is Status.WARN
    assert "Less RAM than GPU memory: 512 GiB of RAM" in finding.summary
    assert "637 GiB of GPU memory" in finding.summary


def test_little_available_ram_warns() -> None:
    finding = ram(with_gpus(32 * GIB, 1 * GIB, 8 * GIB))
    assert finding.status is Status.WARN
    assert finding.summary.startswith("Only 1 GiB of 32 GiB RAM is available")


def test_unreadable_meminfo_is_unknown() -> None:
    gone = Unavailable(Reason.PERMISSION_DENIED, "/proc/meminfo")
    assert ram(facts(memory=MemoryFacts(gone, gone, gone))).status is Status.UNKNOWN
    assert ram(facts(memory=gone)).status is Status.UNKNOWN


# -- memory.shm ---------------------------------------------------------------------------------------------


def test_dockers_64_mib_shm_warns_with_the_run_flag() -> None:
    container = replace(os_facts(), container="docker")
    finding = shm(facts(memory_limits=limits_of("docker-overlay"), os=container))
    assert finding.status is Status.WARN
    assert "holds only 64 MiB (Docker's default)" in finding.summary
    assert finding.remediation is not None and "--shm-size=8g" in finding.remediation.text


def test_small_shm_on_kubernetes_gets_an_emptydir() -> None:
    pod = replace(os_facts(), container="kubernetes")
    finding = shm(facts(memory_limits=limits_of("docker-overlay"), os=pod))
    assert finding.remediation is not None and "medium: Memory" in finding.remediation.text


def test_small_shm_on_a_host_gets_a_remount_command() -> None:
    finding = shm(facts(memory_limits=limits_of("docker-overlay")))
    assert finding.remediation is not None
    assert [c.argv for c in finding.remediation.commands] == [
        ("sudo", "mount", "-o", "remount,size=8G", "/dev/shm")
    ]
    assert finding.remediation.requires_root


def test_default_sized_shm_passes() -> None:
    # Fedora host mountinfo: /dev/shm without size=, so half of MemTotal
    finding = shm(facts(memory_limits=limits_of("nvme-ext4-root")))
    assert finding.status is Status.PASS
    assert "(the kernel default, half of RAM)" in finding.summary


def test_nearly_full_shm_warns() -> None:
    limits = limits_of("nvme-ext4-root")
    size = limits.shm.size_bytes
    assert isinstance(size, int)
    full = replace(limits, shm=replace(limits.shm, free_bytes=100 << 20))
    finding = shm(facts(memory_limits=full))
    assert finding.status is Status.WARN and "almost full: 100 MiB free" in finding.summary


def test_unreadable_mount_table_makes_shm_unknown() -> None:
    assert shm(facts(memory_limits=limits_of("permission-denied"))).status is Status.UNKNOWN
    assert shm(facts(memory_limits=limits_of("mountinfo-missing"))).status is Status.UNKNOWN


# -- memory.locked_limit ------------------------------------------------------------------------------------


def test_small_limit_without_rdma_passes() -> None:
    limits = limits_of("ci-vm-captured")  # 8388608 / 8388608, no /sys/class/infiniband
    assert limits.rdma_devices == ()
    finding = locked_limit(facts(memory_limits=limits))
    assert finding.status is Status.PASS
    assert "8 MiB; it matters only for RDMA" in finding.summary


def test_small_limit_with_rdma_warns() -> None:
    limits = replace(limits_of("docker-overlay"), rdma_devices=("mlx5_0", "mlx5_1"))
    finding = locked_limit(facts(memory_limits=limits))
    assert finding.status is Status.WARN
    assert "(mlx5_0, mlx5_1)" in finding.summary
    assert finding.remediation is not None and "memlock=-1:-1" in finding.remediation.text


def test_unlimited_passes_even_with_rdma() -> None:
    unlimited = LockedMemoryLimit(None, None, True, True)
    limits = replace(limits_of("ci-vm-captured"), locked_memory=unlimited, rdma_devices=("mlx5_0",))
    assert locked_limit(facts(memory_limits=limits)).status is Status.PASS


def test_unreadable_limits_or_rdma_class_is_unknown() -> None:
    limits = limits_of("permission-denied")
    assert locked_limit(facts(memory_limits=limits)).status is Status.UNKNOWN
    small = replace(limits_of("docker-overlay"), rdma_devices=DENIED)
    assert locked_limit(facts(memory_limits=small)).status is Status.UNKNOWN


# -- memory.bandwidth ---------------------------------------------------------------------------------------


def measured(rate: float | Unavailable) -> Measurements:
    result = RamBandwidth(rate, 1 << 28, 0.01, 10, 16, 64 << 20, 32 << 20, "test copy")
    return Measurements(result, Unavailable(Reason.NOT_APPLICABLE, "run with --measure"))


def gpu_on_link(scenario: str, bdf: str) -> Facts:
    return facts(gpus=(gpu(bdf=bdf),), pcie=gather_pcie_links(RecordedHost(SYSFS / scenario), [bdf]))


def test_bandwidth_is_skipped_without_measure() -> None:
    finding = bandwidth(facts())
    assert finding.status is Status.SKIP
    not_asked = Unavailable(Reason.NOT_APPLICABLE, "run with --measure")
    finding = bandwidth(facts(measurements=Measurements(not_asked, not_asked)))
    assert finding.status is Status.SKIP and "run with --measure" in finding.summary


def test_ram_faster_than_the_gpu_link_passes() -> None:
    # club-3090#1095: the card at x8 of a Gen4 port: 15.8 GB/s under load
    finding = bandwidth(
        replace(gpu_on_link("rtx3090-x8-slot-idle", "0000:0b:00.0"), measurements=measured(40.0))
    )
    assert finding.status is Status.PASS
    assert (
        finding.summary
        == "RAM copies at 40.0 GB/s (16 threads), above the 15.8 GB/s of the fastest GPU link."
    )


def test_ram_slower_than_the_gpu_link_warns() -> None:
    finding = bandwidth(
        replace(gpu_on_link("rtx3090-x8-slot-idle", "0000:0b:00.0"), measurements=measured(12.0))
    )
    assert finding.status is Status.WARN
    assert "less than the 15.8 GB/s the GPU link at 0000:0b:00.0 can take" in finding.summary


def test_very_slow_ram_warns_without_any_gpu() -> None:
    finding = bandwidth(facts(gpus=(), measurements=measured(3.2)))
    assert finding.status is Status.WARN and "far below any dual-channel DDR4" in finding.summary


@pytest.mark.parametrize("reason", [Reason.TIMED_OUT, Reason.FAILED])
def test_a_measurement_that_failed_is_unknown(reason: Reason) -> None:
    finding = bandwidth(facts(measurements=measured(Unavailable(reason, "no timed copy"))))
    assert finding.status is Status.UNKNOWN


def test_arrays_under_streams_rule_are_said_to_be_perhaps_partly_the_cache() -> None:
    # the CI VM: a 480 MiB last-level cache (its Xeon host's), arrays cut to 576 MiB by slow fresh memory
    small = RamBandwidth(26.0, 1 << 28, 0.01, 10, 1, 576 << 20, 480 << 20, "test copy")
    finding = bandwidth(
        facts(gpus=(), measurements=Measurements(small, Unavailable(Reason.NOT_APPLICABLE, "not asked")))
    )
    assert finding.status is Status.PASS
    assert "1.2× the 480 MiB last-level cache (STREAM asks for 4×)" in finding.details
    assert any(e.label == "copied arrays" and "576 MiB, 1.2× the cache" in e.value for e in finding.evidence)


def test_a_low_figure_from_arrays_cut_short_is_unknown_not_a_warning() -> None:
    """Issue 21: under load, arrays cut below glibc's non-temporal threshold read 0.22-0.75 of a memcpy
    reference; such a figure is no evidence of slow RAM, and the caveat says which way the error goes."""
    small = RamBandwidth(3.2, 1 << 28, 0.01, 10, 1, 576 << 20, 480 << 20, "test copy")
    finding = bandwidth(
        facts(gpus=(), measurements=Measurements(small, Unavailable(Reason.NOT_APPLICABLE, "not asked")))
    )
    assert finding.status is Status.UNKNOWN and "more likely too low" in finding.summary
    assert "more likely too low than too high" in finding.details
    assert finding.remediation is not None
    assert finding.remediation.commands[0].argv == ("gpu-doctor", "--measure", "--check", "memory.bandwidth")


def cut_and_streamed(rate: float) -> Facts:
    """Arrays cut to 1.2× a 480 MiB cache, copied with glibc's non-temporal stores forced (the doctor's own
    measurement since the routine was made explicit)."""
    cut = RamBandwidth(rate, 1 << 28, 0.01, 10, 1, 576 << 20, 480 << 20, "test copy", ROUTINE_NON_TEMPORAL)
    return facts(gpus=(), measurements=Measurements(cut, Unavailable(Reason.NOT_APPLICABLE, "not asked")))


def test_streamed_copies_on_short_arrays_may_read_high_never_low() -> None:
    # non-temporal stores bypass the cache: only the reads can come from it, so the error can only be upward
    finding = bandwidth(cut_and_streamed(26.0))
    assert finding.status is Status.PASS
    assert "make this figure higher than the RAM's, never lower" in finding.details
    assert "too low" not in finding.details


def test_a_low_streamed_figure_on_short_arrays_still_warns() -> None:
    """A figure that can only be too high and is still low is evidence of slow RAM: no "measure again"."""
    finding = bandwidth(cut_and_streamed(3.2))
    assert finding.status is Status.WARN and "far below any dual-channel DDR4" in finding.summary
    assert "higher than the RAM's, never lower" in finding.details


def test_arrays_that_follow_streams_rule_carry_no_cache_caveat() -> None:
    finding = bandwidth(facts(gpus=(), measurements=measured(40.0)))  # 16 × 64 MiB against 32 MiB: 32×
    assert finding.status is Status.PASS and finding.details == ""
    assert [e.label for e in finding.evidence] == ["copy bandwidth"]
