"""Checks that judge errors a program reported (torch.out_of_memory, nccl.communication), on real pastes from
tests/triage/pastes (source in its MANIFEST.json): the same error text has different causes and fixes."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch_gpu_doctor.checks.torch_out_of_memory import oom_numbers
from torch_gpu_doctor.fixes.out_of_memory import HOLDER_QUERY
from torch_gpu_doctor.model import Finding, Status
from torch_gpu_doctor.triage.pipeline import diagnose_paste

PASTES = Path(__file__).parents[1] / "triage" / "pastes"
GIB, MIB = 1 << 30, 1 << 20


def finding(paste: str, check_id: str) -> Finding:
    result = diagnose_paste((PASTES / f"{paste}.txt").read_bytes(), paste).result
    return next(v.finding for v in result.verdicts if v.finding.check_id == check_id)


def test_old_wording_numbers() -> None:
    """torch < 2.1, and torch <= 1.4 whose last figure is the cache (reserved minus allocated)."""
    n = oom_numbers(
        "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity; 2.81 GiB already "
        "allocated; 25.38 MiB free; 3.06 GiB reserved in total by PyTorch)"
    )
    assert (n.tried, n.free) == (20 * MIB, int(25.38 * MIB))
    assert (n.total, n.allocated, n.reserved) == (int(7.93 * GIB), int(2.81 * GIB), int(3.06 * GIB))
    cached = oom_numbers(
        "Tried to allocate 338.00 MiB (GPU 0; 3.95 GiB total capacity; 1.62 GiB already allocated; 23.00 MiB "
        "free; 9.10 MiB cached)"
    )
    assert cached.reserved == int(1.62 * GIB) + int(9.10 * MIB)


def test_a_process_line_that_is_this_program_in_a_container_is_not_another_holder() -> None:
    """torch >= 2.1 names processes by PID; in a container its own PID is not NVML's, so it is "Process N":
    the one whose use is PyTorch's reservation plus a CUDA context is this program."""
    text = (
        "Tried to allocate 546.00 MiB. GPU 0 has a total capacity of 15.77 GiB of which 514.19 MiB is free. "
        "Process 562167 has 15.25 GiB memory in use. Of the allocated memory 13.73 GiB is allocated by PyTorch, "
        "with 46.00 MiB allocated in private pools (e.g., CUDA Graphs), and 736.86 MiB is reserved by PyTorch "
        "but unallocated."
    )
    assert oom_numbers(text).others is None
    other = text.replace(
        "Process 562167 has 15.25 GiB", "Process 4242 has 9.00 GiB memory in use. Process 1 has 15.25 GiB"
    )
    assert oom_numbers(other).others == 9 * GIB


@pytest.mark.parametrize(
    ("paste", "cause", "first"),
    [
        # thread: kill the leftover process on the GPU (nvidia-smi); torch <= 1.4 wording
        (
            "yolov3-erikguo-4-oom-other-process",
            "2.30 GiB of the GPU's 3.95 GiB is used outside",
            HOLDER_QUERY,
        ),
        ("monodepth2-236-oom-reserved", "4.85 GiB of the GPU's 7.93 GiB is used outside", HOLDER_QUERY),
        # 40.69 GiB reserved but unallocated, 35.60 GiB asked for: fragmentation, not another process
        ("mask2dit-4-oom-fragmentation", "the cache is fragmented", None),
        # 2.35 GiB free, 20 MiB asked (the person says expandable_segments cures it): not a job too big
        ("e14_oom_fragmentation_4gb_taggui", "2.35 GiB was free, far more than the 20 MiB asked for", None),
        # vLLM in Kubernetes: "Process 562167" is vLLM itself
        (
            "kaito-976-vllm-oom-expandable",
            "it holds 14.45 GiB of the GPU's 15.77 GiB, and 514 MiB was left",
            None,
        ),
        # vLLM's own words: the KV cache had no room, or others held the GPU when it started
        ("vllm-10439-no-cache-blocks", "no memory left for its KV cache", None),
        ("vllm-omni-276-free-memory-startup", "only 0.49 of 79.32 GiB was free", HOLDER_QUERY),
        # torch 2.1's "total capacty" (sic): 55.57 GiB asked of a 12 GiB GPU, no holder to stop
        ("neurolens-2-oom-55gib-on-12gib", "larger than the GPU's whole 12.00 GiB", None),
        # one 4.46 GiB request of an 8 GiB card after training ran: a large input (semantic-segmentation#151)
        ("semantic-segmentation-pytorch-151-oom", "it asked for 4.46 GiB at once", None),
        # 1.04 GiB of a 6 GiB card outside the program: its context and the desktop, not its to free
        ("pytorch-67971-oom-cuda-context", "1.04 GiB is held outside it", None),
        # "0 bytes is allocated by PyTorch" on a 4 GiB card: loading the model failed (blind set 17)
        ("ootdiffusion-167-out-of-memory", "its first allocation failed", None),
    ],
)
def test_out_of_memory_names_whose_memory_it_was(
    paste: str, cause: str, first: tuple[str, ...] | None
) -> None:
    f = finding(paste, "torch.out_of_memory")
    assert f.status is Status.FAIL and cause in f.summary
    assert f.remediation is not None
    assert (f.remediation.commands[0].argv if f.remediation.commands else None) == first
    if "fragmented" in cause or "not in one piece" in f.summary:
        assert "expandable_segments:True" in f.remediation.text
    if "KV cache" in cause:
        assert "--gpu-memory-utilization" in f.remediation.text
    elif "first allocation" in cause:  # nothing held yet: no smaller input helps
        assert "does not help" in f.remediation.text and "--lowvram" in f.remediation.text
    elif "at once" in cause:  # one allocation: the input, not the model
        assert f.remediation.text.startswith("One allocation of") and "image size" in f.remediation.text
    elif "held outside" in cause:
        assert "not the program's to use" in f.remediation.text and "batch size" in f.remediation.text
    elif "larger than the GPU's whole" in cause:  # one tensor: it must shrink
        fix = f.remediation.text
        assert fix.startswith("A single tensor of") and "attn_implementation" in fix
    elif first is None and "fragmented" not in cause and "was free" not in cause:
        assert "batch size" in f.remediation.text and "max_model_len" in f.remediation.text


@pytest.mark.parametrize(
    ("paste", "cause", "in_fix"),
    [
        ("nccl-342-shm-fallocate", "shared-memory segment", "--shm-size=16g"),
        ("torchtitan-853-nccl-shm", "shared-memory segment", "--ipc=host"),
        # status 12 is the fabric between the NICs, which the log names: located, not confirmed by disabling IB
        ("nccl-1405-net-ib-status12", "InfiniBand/RoCE", "ib_write_bw"),
        # creating verbs resources fails on a low memlock limit, not a port down (ibstat would show nothing)
        ("nccl-562-ib-create-qp-pyxis", "locked-memory limit is too low", "prlimit --memlock"),
        # shm_open refused: the mode of /dev/shm, not its size
        ("nccl-328-shm-open-permission-denied", "/dev/shm is not writable", "chmod 1777 /dev/shm"),
        ("skyrl-108-peer-access-217", "peer-to-peer", "NCCL_P2P_DISABLE=1"),
        ("nccl-442-wsl-pci-realpath", "WSL2", "current torch wheel"),
        ("ofa-271-watchdog-timeout", "waited for the whole timeout", "py-spy"),
        # thread: Docker's /dev/shm; the message alone says only "unhandled system error"
        ("nccl-473-tests-ipc-host", "unhandled system error", "--ipc=host"),
    ],
)
def test_nccl_errors_get_the_fix_of_their_kind(paste: str, cause: str, in_fix: str) -> None:
    f = finding(paste, "nccl.communication")
    assert f.status is Status.FAIL and cause in f.summary
    assert f.remediation is not None and in_fix in f.remediation.text + " ".join(
        c.display() for c in f.remediation.commands
    )
    # every NCCL answer says how to learn more, unless the paste holds NCCL's INFO log already
    logged = "] NCCL INFO " in (PASTES / f"{paste}.txt").read_text(encoding="utf-8")
    assert ("NCCL_DEBUG=INFO" in f.remediation.text + f.details) is not logged


def test_live_diagnosis_reads_no_program_output() -> None:
    from tests.factories import facts
    from torch_gpu_doctor.checks.nccl_communication import nccl_communication
    from torch_gpu_doctor.checks.torch_out_of_memory import torch_out_of_memory

    assert torch_out_of_memory(facts()).status is Status.SKIP
    assert nccl_communication(facts()).status is Status.SKIP


def test_an_xid_45_caused_by_an_nvlink_xid_is_judged_by_its_cause() -> None:
    """Xid 45 alone is cleanup; "caused by previous Xid 145/149" names NVLink faults on four GPUs."""
    f = finding("ogkm-1150-xid45-nvlink-145-149", "driver.xid_errors")
    assert f.status is Status.FAIL
    assert "Xid 145, 149, 45" in f.summary
    assert "named by Xid 45" in f.details and "NVLink" in f.details


def test_an_xid_the_table_now_names_is_explained() -> None:
    f = finding("pytorch-74235-xid109", "driver.xid_errors")
    assert f.status is Status.WARN and "Context Switch Timeout" in f.details


def test_a_toolkit_that_cannot_load_the_host_driver_asks_for_the_host_driver() -> None:
    """nvidia-container-cli ran, so the toolkit is installed: 'load library failed: libnvidia-ml.so.1' is the
    host's driver (pypa/manylinux#5 in the corpus), never 'install the toolkit' again."""
    f = finding("manylinux-5-container-nvml-load-failed", "platform.container_gpus")
    assert f.status is Status.FAIL and "host's NVIDIA driver library" in f.summary
    assert f.remediation is not None
    assert [c.argv for c in f.remediation.commands] == [("nvidia-smi",), ("sudo", "ldconfig")]
    assert all(not c.runs_here for c in f.remediation.commands)  # the host's, not the container's


@pytest.mark.parametrize(
    ("paste", "override"),
    [
        ("ollama-gfx1031-unsupported", "10.3.0"),  # RDNA2: the wheels have gfx1030
        ("llamacpp-19949-gfx1152-segfault", "11.5.0"),  # RDNA3.5: gfx1150
        ("rocblas-1398-gfx90c-ollama", "9.0.0"),  # a Vega APU: gfx900
    ],
)
def test_a_gfx_target_named_in_the_error_gives_its_override(paste: str, override: str) -> None:
    f = finding(paste, "amd.gfx_target")
    assert f.status is Status.FAIL and f.remediation is not None
    assert f.remediation.commands[0].argv == ("env", f"HSA_OVERRIDE_GFX_VERSION={override}", "PROGRAM")


def _oom_cause(text: str) -> Finding:
    cause = diagnose_paste(text.encode(), "oom.txt").result.cause
    assert cause is not None and cause.finding.check_id == "torch.out_of_memory"
    return cause.finding


def test_a_desktop_and_a_context_on_a_small_card_are_not_another_program() -> None:
    """Blind set 11's e29: 1.55 of a 6 GiB card outside torch is its CUDA context and a desktop; the job is too
    big for the card (a smaller batch), and no line says another program holds "most" of it."""
    text = (
        "RuntimeError: CUDA out of memory. Tried to allocate 60.00 MiB (GPU 0; 6.00 GiB total capacity; 4.11 GiB "
        "already allocated; 34.82 MiB free; 4.42 GiB reserved in total by PyTorch)"
    )
    finding = _oom_cause(text)
    assert "it holds 4.42 GiB of the GPU's 6.00 GiB" in finding.summary
    assert finding.remediation is not None and "lower the batch size" in finding.remediation.text
    held = _oom_cause(
        text.replace("4.11 GiB already", "2.11 GiB already").replace("4.42 GiB reserved", "2.42 GiB reserved")
    )
    assert "3.55 GiB of the GPU's 6.00 GiB is used outside this program" in held.summary
    assert held.remediation is not None and "holds most" not in held.remediation.text


def test_the_allocators_limit_report_is_read() -> None:
    """comfyui#3278: the report of torch's allocator when a limit stops it ("Allocation on device 0 would exceed
    allowed memory"): its figures, the next line's "Free" never taken for the limit's."""
    text = (
        "torch.cuda.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory) "
        "Currently allocated     : 21.55 GiB Requested               : 952.00 MiB Device limit            : "
        "24.00 GiB Free (according to CUDA): 0 bytes"
    )
    n = oom_numbers(text)
    assert (n.allocated, n.tried, n.total, n.free) == (int(21.55 * (1 << 30)), 952 << 20, 24 << 30, 0)


def test_a_memory_fraction_the_program_set_is_its_own_limit() -> None:
    """The allocator's report with "PyTorch limit (set by user-supplied memory fraction) : 12.00 GiB" on a
    23.65 GiB GPU with 11.90 GiB free: the program's own cap ran out, not the GPU (a reviewer's reproducer)."""
    from torch_gpu_doctor.triage.pipeline import diagnose_paste

    text = (
        "torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\n"
        "Currently allocated     : 11.50 GiB\nRequested               : 1.00 GiB\n"
        "Device limit            : 23.65 GiB\nFree (according to CUDA): 11.90 GiB\n"
        "PyTorch limit (set by user-supplied memory fraction)\n                        : 12.00 GiB\n"
    )
    cause = diagnose_paste(text.encode(), "oom.txt").result.cause
    assert cause is not None and "capped itself at 12.00 GiB" in cause.finding.summary
