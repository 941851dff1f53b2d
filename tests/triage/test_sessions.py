"""What a pasted Python session shows of torch (`>>> torch.cuda.is_available()` then `False`; IPython's `In [2]:` /
`Out[2]:`), the Windows build a WSL report names, and a container started without the GPUs. Real pastes."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch_gpu_doctor.triage.pipeline import diagnose_paste
from torch_gpu_doctor.triage.tool_output import parse_session, parse_xformers_info, run_without_gpus_line

HERE = Path(__file__).resolve().parent


def _lines(name: str) -> list[str]:
    return (HERE / name).read_text(encoding="utf-8").split("\n")


def test_an_ipython_session_answers_is_available() -> None:
    session = parse_session(_lines("pastes/floydhub-3-docker-no-nvidia-runtime.txt"))  # floydhub/dl-docker#3
    assert session is not None and session.available is False and session.version is None


def test_a_repl_session_answers_the_version() -> None:
    session = parse_session(_lines("pastes/clover-edition-128-old-torch-in-user-site.txt"))
    assert session is not None and session.version == "1.1.0"


@pytest.mark.parametrize(
    ("lines", "field", "value"),
    [
        ([">>> torch.version.cuda", ">>> import os"], "cuda", None),  # no answer: the next prompt
        ([">>> torch.version.cuda", "None"], "cuda", ""),  # a CPU build
        ([">>> print(torch.__version__)", "2.1.0+cu121"], "version", "2.1.0+cu121"),
        (
            [">>> torch.cuda.get_device_name(0)", "'NVIDIA GeForce RTX 3060'"],
            "device_name",
            "NVIDIA GeForce RTX 3060",
        ),
        ([">>> torch.cuda.is_available()", "Traceback (most recent call last):"], "available", None),
    ],
)
def test_answers_are_typed_or_left_out(lines: list[str], field: str, value: object) -> None:
    session = parse_session(lines)
    assert (getattr(session, field) if session is not None else None) == value


def test_a_session_with_a_cpu_build_and_a_gpu_name_is_the_cpu_build() -> None:
    text = b">>> import torch\n>>> torch.__version__\n'2.3.1+cpu'\n>>> torch.cuda.is_available()\nFalse\n"
    cause = diagnose_paste(text, "x").result.cause
    assert cause is not None and cause.finding.check_id == "torch.cpu_build"


def test_a_container_started_without_gpus_is_the_cause() -> None:
    name = "pastes/floydhub-3-docker-no-nvidia-runtime.txt"
    assert run_without_gpus_line(_lines(name)) == 2
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and "started without the GPUs" in cause.finding.summary
    fix = cause.finding.remediation
    # their own command (sudo, options, image, program), the GPUs passed in: no IMAGE placeholder to fill in
    assert fix is not None and fix.commands[0].argv == (
        "sudo", "docker", "run", "--gpus", "all", "-t", "-i", "floydhub/pytorch:latest-gpu-py3", "ipython"
    )  # fmt: skip


def test_a_docker_run_with_a_substitution_keeps_the_placeholder() -> None:
    """`-v $(pwd):/data` quoted again would no longer expand: the command is not rebuilt from it."""
    name = "pastes/e22_docker_gpu_flag_after_image_cactus.txt"
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    fix = cause.finding.remediation if cause is not None else None
    assert fix is not None and fix.commands[0].argv == ("docker", "run", "--gpus", "all", "IMAGE")


@pytest.mark.parametrize(
    "line",
    [
        "docker run --gpus all -it img",
        "docker run --runtime=nvidia img",
        "nvidia-docker run img",
        "sudo apt update",
    ],
)
def test_a_start_that_passes_gpus_is_not_without(line: str) -> None:
    assert run_without_gpus_line([line]) is None


def test_a_start_continued_over_lines_is_read_whole() -> None:
    """pytorch/serve#478: `docker run --rm ... \\` with `--gpus all \\` seven lines on (blind set 10, e11)."""
    name = "pastes/e11_docker_gpus_all_driver418_torchserve.txt"
    assert run_without_gpus_line(_lines(name)) is None
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is None or "started without the GPUs" not in cause.finding.summary
    continued = ["docker run --rm \\", "  -p 80:80 `", "  img"]  # no --gpus on any of its lines
    assert run_without_gpus_line(continued) == 1
    assert run_without_gpus_line(["docker run --rm ^", "  --gpus all ^", "  img"]) is None


def test_wsl_on_a_windows_build_without_gpu_support() -> None:
    """microsoft/WSL#7056: Windows 10.0.19042 with WSL 2: no GPU paravirtualisation before build 19044."""
    name = "pastes/e13_wsl_old_windows_build.txt"
    d = diagnose_paste((HERE / name).read_bytes(), name)
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "platform.wsl_gpu"
    assert cause.finding.summary.startswith("Windows build 19042 has no GPU support for WSL 2")
    newer = (HERE / name).read_bytes().replace(b"10.0.19042.1052", b"10.0.22631.3593")
    cause = diagnose_paste(newer, name).result.cause
    assert cause is None or cause.finding.check_id != "platform.wsl_gpu"


@pytest.mark.parametrize(
    ("name", "works", "problem"),
    [
        # every operator unavailable while torch's CUDA works (Kaggle P100): a wheel for another torch
        ("reports/c01_xformers_info_kaggle_p100_all_unavailable.txt", False, True),
        # ck* and fa3 unavailable on a Windows NVIDIA GPU, cutlass and fa2 available: healthy
        ("reports/c03_xformers_info_win11_healthy_diffusers.txt", True, False),
        # a ROCm build: ck* available, cutlass never built there: healthy
        ("reports/c04_xformers_info_rocm_ck_available.txt", True, False),
    ],
)
def test_xformers_info_is_read(name: str, works: bool, problem: bool) -> None:
    info = parse_xformers_info(_lines(name))
    assert info is not None and info.attention_works is works
    d = diagnose_paste((HERE / name).read_bytes(), name)
    cause = d.result.cause
    assert (cause is not None and cause.finding.check_id == "torch.companions") is problem
    assert not d.pasted.empty


def test_cuda_visible_devices_all_in_a_compose_file_hides_every_gpu() -> None:
    """YanWenKun/ComfyUI-Docker#60: `CUDA_VISIBLE_DEVICES: all` in docker-compose.yml, "No CUDA GPUs are
    available": 'all' is NVIDIA_VISIBLE_DEVICES's word, CUDA reads no device from it."""
    name = "pastes/e24_compose_cuda_visible_devices_all_comfyui_docker.txt"
    d = diagnose_paste((HERE / name).read_bytes(), name)
    assert d.facts.env.get("CUDA_VISIBLE_DEVICES") == "all"
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "env.cuda_visible_devices"
    assert cause.finding.summary.startswith("CUDA_VISIBLE_DEVICES='all' hides every GPU")


def test_windows_nvidia_smi_wording_makes_a_windows_paste_with_windows_steps() -> None:
    """Only Windows' nvidia-smi adds "...and NVIDIA GPU is in WDDM mode." to its failure (blind set 10, c09;
    actions/partner-runner-images#54): the driver is the Windows installer's, and no step asks for
    `modprobe`, `sudo dmesg` or L4T's release file there."""
    name = "pastes/c09_nvidia_smi_no_driver_windows.txt"
    d = diagnose_paste((HERE / name).read_bytes(), name)
    assert d.pasted.windows_line == 3
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "driver.installed"
    assert "Windows" in cause.finding.summary
    fix = cause.finding.remediation
    assert fix is not None and "nvidia.com/Download" in fix.text and not fix.commands
    asked = [v.find_out or "" for v in d.result.verdicts] + [
        c.display()
        for v in d.result.verdicts
        if v.finding.remediation
        for c in v.finding.remediation.commands
    ]
    assert not any(
        word in line for line in asked for word in ("dmesg", "modprobe", "nv_tegra_release", "lspci")
    )


def test_a_windows_path_drops_the_linux_only_checks_a_linux_paste_keeps() -> None:
    windows = "pastes/e27_comfyui_update_torch_cpu.txt"
    linux = "pastes/floydhub-3-docker-no-nvidia-runtime.txt"
    ids = {
        name: {v.finding.check_id for v in diagnose_paste((HERE / name).read_bytes(), name).result.verdicts}
        for name in (windows, linux)
    }
    assert "driver.xid_errors" in ids[linux]
    assert "platform.jetson" not in ids[linux]  # nothing there says ARM or Jetson: no L4T release to ask
    assert not ids[windows] & {"driver.xid_errors", "platform.jetson", "driver.nvml", "driver.secure_boot"}


def test_a_windows_docker_run_is_rebuilt_with_its_ports_and_no_driver_inside_is_the_container() -> None:
    """facepoke#12: `D:\\FacePoke>docker run -p 8080:8080 facepoke` and NVIDIA's image's "driver was not
    detected": the same command with the GPUs, and "no driver" is the container's view, not Windows'."""
    name = "pastes/facepoke-12-container-no-gpu.txt"
    result = diagnose_paste((HERE / name).read_bytes(), name).result
    fix = result.cause.finding.remediation if result.cause is not None else None
    assert fix is not None and fix.commands[0].argv == (
        "docker",
        "run",
        "--gpus",
        "all",
        "-p",
        "8080:8080",
        "facepoke",
    )
    driver = next(v for v in result.verdicts if v.finding.check_id == "driver.installed")
    assert "inside the container" in driver.finding.summary and "Windows" not in driver.finding.summary


def test_a_docker_run_inside_a_sentence_keeps_the_placeholder() -> None:
    """Words after the command on the same line would become the container's arguments."""
    text = (
        "When I do docker run -p 8080:8080 facepoke it prints this and stops\n"
        "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.\n"
    )
    cause = diagnose_paste(text.encode(), "inline.txt").result.cause
    fix = cause.finding.remediation if cause is not None else None
    assert fix is not None and fix.commands[0].argv[-1] == "IMAGE"
