"""What "Unknown from this paste" asks must be a question that machine can answer about this problem (blind
set 17: nvidia-smi offered to settle torch's build in a Java program's paste, `dmesg | grep NVRM` on AMD and WSL
machines, `pip check` for a DLL that does not load). Real pastes."""

from __future__ import annotations

from pathlib import Path

from torch_gpu_doctor.triage.outcome import Kind
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste

HERE = Path(__file__).parent
JAVA_ON_WSL = "pastes/wsl-8447-wsl-multigpu-cuda-init.txt"  # cudaGetDeviceCount through JNA: no torch
ROCM = "pastes/invokeai-5738-rocm-version-mismatch.txt"
WINDOWS_DLL = "pastes/diffusers-5247-windows-dll.txt"  # WinError 126 loading c10.dll


def diagnosed(name: str) -> PasteDiagnosis:
    return diagnose_paste((HERE / name).read_bytes(), name)


def _asked(d: PasteDiagnosis) -> dict[str, str | None]:
    return {v.finding.check_id: v.find_out for v in d.result.verdicts if v.kind == Kind.UNKNOWN}


def test_a_program_without_torch_is_not_asked_about_torch() -> None:
    asked = _asked(diagnosed(JAVA_ON_WSL))
    assert asked, "the driver is still unknown from this paste"
    assert not [c for c in asked if c.startswith("torch.") or c == "compat.data_age"]


def test_no_nvidia_kernel_log_or_jetson_question_on_wsl_or_an_amd_gpu() -> None:
    for name in (JAVA_ON_WSL, ROCM):
        checks = {v.finding.check_id for v in diagnosed(name).result.verdicts}
        assert "driver.xid_errors" not in checks, name
    assert "platform.jetson" not in {v.finding.check_id for v in diagnosed(JAVA_ON_WSL).result.verdicts}


def test_pip_check_is_no_question_for_a_library_that_does_not_load() -> None:
    verdict = next(
        v for v in diagnosed(WINDOWS_DLL).result.verdicts if v.finding.check_id == "env.library_path"
    )
    assert verdict.kind == Kind.PROBLEM and verdict.find_out is None


def test_an_x86_machine_is_not_asked_for_a_jetson_file_nor_a_jetson_for_nvidia_smi() -> None:
    x86 = {
        v.finding.check_id for v in diagnosed("pastes/vllm-19018-no-kernel-image-sm120.txt").result.verdicts
    }
    assert "platform.jetson" not in x86 and "driver.installed" in x86  # collect_env's platform: x86_64
    jetson = {
        v.finding.check_id for v in diagnosed("pastes/isaac-gr00t-343-jetson-missing-lib.txt").result.verdicts
    }
    assert "platform.jetson" in jetson
    assert not jetson & {"driver.installed", "driver.nvml", "torch.driver_compat"}


def test_a_torch_that_does_not_import_is_not_asked_to_import() -> None:
    asked = _asked(diagnosed("pastes/isaac-gr00t-343-jetson-missing-lib.txt"))  # ImportError: libcudss.so.0
    assert asked["torch.installed"] == "python -m pip show torch"
    assert not any("import torch" in (q or "") for q in asked.values())
