"""Blind set 20's classes, each on its real paste (tests/triage/pastes, MANIFEST.json), with what must stay as it
was: NVML's phrase quoted on its own, torch's 'CUDA unknown error' in a title, CUDA error 999 in a running
program, error 36, Docker's missing runtime under any name, an Xid line without NVRM's prefix, NCCL's own form of
error 217 and its missing NVML, SIGFPE in cuBLAS on H20, another program's driver too old on a vGPU guest."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste

PASTES = Path(__file__).parent / "pastes"


def diagnosed(name: str) -> PasteDiagnosis:
    return diagnose_paste((PASTES / name).read_bytes(), name)


def said(text: str) -> PasteDiagnosis:
    return diagnose_paste(text.encode(), "paste")


def cause_of(d: PasteDiagnosis) -> tuple[str, str, str]:
    """The cause's check, its summary, and its first command (or "" without one)."""
    cause = d.result.cause
    assert cause is not None
    fix = cause.finding.remediation
    first = fix.commands[0].display() if fix is not None and fix.commands else ""
    return cause.finding.check_id, cause.finding.summary, first


def test_nvmls_phrase_quoted_on_its_own_is_the_mismatch() -> None:
    """NVIDIA/ubuntu-packaging-nvidia-driver#3: 'we often face the `Driver/library version mismatch`'."""
    check, summary, first = cause_of(
        diagnosed("ubuntu-packaging-nvidia-driver-3-nvml-driver-library-mismatch.txt")
    )
    assert check == "driver.nvml" and summary.startswith("Driver/library version mismatch")
    assert "reboot" in first
    # the container toolkit's own form keeps its own entry
    hits = said(
        "nvidia-container-cli: initialization error: nvml error: driver/library version mismatch\n"
    ).pasted.hits
    assert [h.signature.id for h in hits] == ["driver_library_container_cli_nvml_mismatch"]


def test_torchs_cuda_unknown_error_in_a_title_is_read() -> None:
    check, summary, _ = cause_of(
        diagnosed("comfyui-9713-cuda-unknown-error-vm.txt")
    )  # "# L20 RuntimeError: ..."
    assert check == "torch.cuda_init" and "CUDA unknown error" in summary


def test_error_999_in_a_running_program_is_a_lost_gpu_state_not_a_bad_install() -> None:
    """llama.cpp#3045: 'CUDA error 999 at ggml-cuda.cu:5146: unknown error' after sleep and an eGPU unplugged."""
    check, summary, first = cause_of(diagnosed("llama.cpp-3045-egpu-hotplug.txt"))
    assert check == "torch.cuda_init" and summary.startswith(
        "CUDA error 999 (unknown error) while the program ran"
    )
    assert first.startswith("nvidia-smi")
    assert said("CUDA error 9990 in a log\n").pasted.empty  # no other number


def test_error_36_from_another_program_on_a_vgpu_guest_is_the_hosts_vgpu_release() -> None:
    """FasterTransformer#406: 'API call is not supported in the installed CUDA driver' on GRID T4-8C, driver
    450.102.04 (CUDA 11.0): the program's CUDA is newer than the guest driver, which comes with the host's
    vGPU software; no torch is involved, so none is offered."""
    d = diagnosed("fastertransformer-406-vgpu-driver-too-old-for-runtime.txt")
    check, summary, first = cause_of(d)
    assert check == "torch.driver_compat"
    assert (
        summary
        == "The NVIDIA driver is older than the CUDA the program was built with: it supports CUDA ≤ 11.0."
    )
    cause = d.result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert (
        "vGPU profile GRID T4-8C" in cause.finding.remediation.text
        and "torch" not in cause.finding.remediation.text
    )
    assert first == "nvidia-smi -q"


def test_a_driver_too_old_on_bare_metal_keeps_the_distributions_driver() -> None:
    text = "[FT][ERROR] CUDA runtime error: API call is not supported in the installed CUDA driver\n"
    d = said(text)
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "torch.driver_compat"
    assert cause.finding.remediation is not None and "vGPU" not in cause.finding.remediation.text


def test_dockers_missing_runtime_is_read_under_any_driver_name() -> None:
    check, _, first = cause_of(diagnosed("gpu-hot-18-docker-missing-nvidia-runtime.txt"))  # driver "nvidia"
    assert check == "platform.container_gpus" and "nvidia-ctk runtime configure" in first


def test_an_xid_line_without_nvrms_prefix_is_read_as_the_kernel_logs() -> None:
    """open-gpu-kernel-modules#1030's title: 'Xid (PCI:0000:2b:00): 31 MMU Fault: ...': the Xid table's meaning."""
    d = diagnosed("open-gpu-kernel-modules-1030-xid31-mmu-fault.txt")
    assert d.pasted.kernel_log is not None and [e.xid for e in d.pasted.kernel_log.xid_events] == [31]
    check, summary, _ = cause_of(d)
    assert check == "driver.xid_errors" and summary.startswith("Xid 31")


def test_nccls_own_form_of_error_217_is_peer_to_peer() -> None:
    check, summary, first = cause_of(diagnosed("easyr1-579-p2p-not-supported.txt"))
    assert check == "nccl.communication" and "peer-to-peer" in summary
    assert "NCCL_P2P_DISABLE=1" in first


def test_nccl_that_cannot_open_nvml_is_the_drivers_library_not_shared_memory() -> None:
    """LlamaFactory#6161: 'unhandled system error' with 'Last error: Failed to open libnvidia-ml.so.1'."""
    check, summary, first = cause_of(diagnosed("llamafactory-6161-missing-libnvidia-ml.txt"))
    assert check == "nccl.communication" and "could not load NVML" in summary
    assert first.startswith("ldconfig -p") and "/dev/shm" not in first


@pytest.mark.parametrize(
    "name",
    [
        "vllm-4392-h20-cublas-sigfpe.txt",  # "Floating point exception (core dumped)" on H20, torch 2.2.1+cu121
        "llamafactory-6201-h20-sigfpe-exitcode-8.txt",  # torchrun "failed (exitcode: -8)" on H20
    ],
)
def test_sigfpe_is_cublas_on_h20(name: str) -> None:
    check, summary, first = cause_of(diagnosed(name))
    assert check == "torch.cuda_init" and summary.startswith("The process died of SIGFPE")
    assert first.endswith("-m pip install nvidia-cublas-cu12==12.4.5.8")


def test_pythons_floating_point_error_is_no_sigfpe() -> None:
    hits = said("FloatingPointError: overflow encountered in exp\nexitcode: -80\n").pasted.hits
    assert not any(h.signature.id == "sigfpe_cublas_gemm" for h in hits)
