"""A message that names its own remedy keeps it when a check turns it into a problem: the check's generic fix
(a torch reinstall, NCCL's P2P diagnosis) says less. Real pastes of blind set 7."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch_gpu_doctor.triage.pipeline import diagnose_paste

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize(
    ("name", "check", "summary", "first"),
    [
        # xFormers without CUDA kernels after a new GPU: uninstall it, not another torch
        (
            "pastes/e25_xformers_not_built_cuda_rtx5090_comfyui.txt",
            "torch.companions",
            "A package built for another torch or CUDA",
            ("python", "-m", "pip", "uninstall", "-y", "xformers"),
        ),
        # accelerate's stop on RTX 40xx names the two variables (the person misspelled them)
        (
            "pastes/e22_fluxgym_rtx4000_p2p_ib_disable_typo.txt",
            "nccl.communication",
            "NCCL failed",
            ("env", "NCCL_P2P_DISABLE=1", "NCCL_IB_DISABLE=1", "python", "SCRIPT.py"),
        ),
        # WinError 1114: the DLL was found and its start-up failed; the runtime, then the import order
        (
            "pastes/e17_winerror1114_c10dll_pyqt5_cpu.txt",
            "env.library_path",
            "Windows loaded torch's c10.dll, but its start-up failed (WinError 1114)",
            ("winget", "install", "Microsoft.VCRedist.2015+.x64"),
        ),
    ],
)
def test_the_messages_own_remedy_comes_first(
    name: str, check: str, summary: str, first: tuple[str, ...]
) -> None:
    d = diagnose_paste((HERE / name).read_bytes(), name)
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == check
    assert cause.finding.summary.startswith(summary)
    fix = cause.finding.remediation
    assert fix is not None and fix.commands and fix.commands[0].argv == first


def test_windows_without_nccl_is_the_programs_backend() -> None:
    name = "reports/c07_collect_env_windows_nccl_not_built_in.txt"
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert 'backend="gloo"' in cause.finding.remediation.text
