"""is_available() False with nothing in the paste that says why (blind set 11: "the paste does not say why"
as a cause, no step). The usual causes the paste leaves open are named, ranked by what it shows, with the
question that tells them apart; its confidence says it is the usual cause, not one the paste states."""

from __future__ import annotations

from pathlib import Path

from torch_gpu_doctor.triage.outcome import UNEXPLAINED_FALSE, Confidence
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste

PASTES = Path(__file__).parent / "pastes"
WORDS_ONLY = (
    "nas-wot-conda-env-cuda-false-words.txt"  # "torch.cuda.is_available() returning False." and no facts
)
OLD_DRIVER = "e11_docker_gpus_all_driver418_torchserve.txt"  # nvidia-smi of driver 418 (CUDA 10.1), no torch
BUILD_ONLY = (
    "../reports/windows11-powershell-nightly-cu118-cuda-false-cyrillic-path.txt"  # a cu118 build, no driver
)


def diagnosed(name: str, text: str | None = None) -> PasteDiagnosis:
    data = (PASTES / name).read_bytes() if text is None else text.encode()
    return diagnose_paste(data, name)


def cause_of(d: PasteDiagnosis) -> tuple[str, list[str], str | None]:
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "torch.cuda_init"
    fix = cause.finding.remediation
    return cause.finding.summary, [c.display() for c in fix.commands] if fix else [], cause.find_out


def test_with_nothing_shown_both_usual_causes_and_both_questions() -> None:
    d = diagnosed(WORDS_ONLY)
    summary, commands, find_out = cause_of(d)
    assert summary.startswith(UNEXPLAINED_FALSE)
    assert "CPU-only build" in summary and "driver is older" in summary
    assert (
        commands[0].startswith("python -c")
        and "torch.version.cuda" in commands[0]
        and "cuda.init()" in commands[0]
    )
    assert commands[1] == "nvidia-smi"
    assert find_out is None  # the fix is the question: not asked twice
    assert d.result.confidence == Confidence.LIKELY


def test_a_driver_older_than_every_known_build_comes_first() -> None:
    summary, commands, _ = cause_of(diagnosed(OLD_DRIVER))
    said = summary.split("most often ", 1)[1]
    assert said.startswith("the NVIDIA driver, which runs CUDA ≤ 10.1, is older than")
    assert "CPU-only build" in said  # the build is not shown: still a candidate
    assert commands == [
        "python -c 'import torch; print(torch.__version__, torch.version.cuda); torch.cuda.init()'"
    ]


def test_a_driver_that_still_runs_an_older_cuda_build_is_not_called_too_old_for_every_build() -> None:
    """Driver 456.71 runs CUDA ≤ 11.1, and under CUDA 11's minor-version compatibility it runs torch's cu118
    builds: the cause names the newer builds, and the command installs the one it runs (session 8's review, X3:
    the cause said no recent build runs while the command installed cu118 on that driver)."""
    text = "Windows 10, RTX 3060, driver 456.71, torch.cuda.is_available() returns False\n"
    summary, commands, _ = cause_of(diagnosed("x3.txt", text))
    said = summary.split("most often ", 1)[1]
    assert said.startswith(
        "torch is built for a newer CUDA than the NVIDIA driver runs (CUDA ≤ 11.1; torch's CUDA 11.8"
    )
    assert "is older than the CUDA a torch build" not in summary
    assert commands[-1].endswith("--index-url https://download.pytorch.org/whl/cu118")
    assert "cu118" in commands[-1].split()[4]


def test_a_build_shown_leaves_the_driver_and_asks_nvidia_smi() -> None:
    summary, commands, _ = cause_of(diagnosed(BUILD_ONLY))
    assert "CPU-only" not in summary.split("most often ", 1)[1]  # the report shows a cu118 build
    assert commands == ["nvidia-smi"]


def test_with_build_and_driver_shown_torchs_own_reason_is_what_is_left() -> None:
    """A report whose build and driver are both fine: no usual cause is left to name."""
    text = (PASTES / WORDS_ONLY).read_text() + (
        "\nPyTorch version: 2.5.1+cu124\nIs CUDA available: False\nCUDA used to build PyTorch: 12.4\n"
        "Nvidia driver version: 560.35.03\nGPU models and configuration: GPU 0: NVIDIA GeForce RTX 4090\n"
    )
    summary, commands, find_out = cause_of(diagnosed("both.txt", text))
    assert summary.startswith(f"{UNEXPLAINED_FALSE}: its build and driver, as the paste shows them, fit")
    assert commands == [
        "python -c 'import torch; torch.cuda.init()'"
    ]  # its own reason, nothing it already showed
    assert find_out is None


def test_a_cpu_build_said_in_words_is_the_cause_and_the_cuda_build_the_fix() -> None:
    text = "torch.cuda.is_available() returns False. I checked and my torch is the cpu version.\n"
    summary, commands, _ = cause_of(diagnosed("cpu.txt", text))
    assert summary.startswith("torch.cuda.is_available() is False: torch is a CPU-only build (line 1")
    assert "--index-url https://download.pytorch.org/whl/cu" in commands[0]


def test_a_question_about_the_cpu_build_is_not_taken_as_said() -> None:
    text = "torch.cuda.is_available() returns False. How can I tell whether my torch is the cpu version?\n"
    summary, _, _ = cause_of(diagnosed("cpu.txt", text))
    assert summary.startswith(UNEXPLAINED_FALSE) and "paste says so" not in summary
