"""The scenario table of issue 2/6: GPU compute capability x driver x installed torch x OS x Python, each with the
verdict of the torch checks, the exact command the doctor prints, and the fact it relies on.

Facts cite compat/cuda_matrix.json (built from shared/reference/compat.md and compat-errata.md) by section or
field. The table is evaluated through the public checks and `fix_for_torch`, the way `gpu-doctor` renders them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from tests.factories import driver, facts, gpu, nvml_error, nvml_ok, os_facts, python_facts, torch_packages
from torch_gpu_doctor.checks.torch_build import (
    torch_arch_compat,
    torch_cpu_build,
    torch_driver_compat,
    torch_installed,
)
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.torch_wheel import fix_for_torch
from torch_gpu_doctor.model import Status, Target

PIP = "/venv/bin/python -m pip install"
CU = "--index-url https://download.pytorch.org/whl/"
P, F, S = Status.PASS, Status.FAIL, Status.SKIP


@dataclass(frozen=True)
class Scenario:
    id: str
    ccs: tuple[str, ...]  # compute capability of each GPU the driver exposes
    driver_cuda: str | None  # the newest CUDA of the driver (nvidia-smi's "CUDA Version"); None: no driver
    torch: str | None  # torch.__version__; None: not installed
    torch_cuda: str | None  # torch.version.cuda
    verdict: tuple[Status, Status, Status, Status]  # installed, cpu_build, driver_compat, arch_compat
    command: str | None  # the exact command shown (pip for the env, the package manager for a driver)
    fact: str
    python: str = "3.12.3"
    machine: str = "x86_64"
    distro: str = "ubuntu"
    wsl: bool = False
    container: str | None = None
    says: str = ""  # a phrase the remediation must contain


def build(s: Scenario) -> Facts:
    os = os_facts(s.distro, ("debian",) if s.distro == "ubuntu" else (), wsl=s.wsl)
    packages = torch_packages(s.torch, s.torch_cuda) if s.torch else torch_packages(None, None, paths=0)
    if s.torch and "+rocm" in s.torch:
        packages = replace(packages, hip="6.2.41133-dd7f95766")
    return facts(
        os=replace(os, container=s.container),
        python=python_facts(version=s.python, machine=s.machine),
        gpus=tuple(gpu(bdf=f"0000:0{i + 1}:00.0", cc=cc, nvml_index=i) for i, cc in enumerate(s.ccs)),
        nvml=nvml_ok() if s.ccs else nvml_error("LibraryNotFound", 12),
        driver=driver(cuda_version=s.driver_cuda) if s.driver_cuda else driver(version=None),
        torch_packages=packages,
    )


def keep(torch: str, vision: str, audio: str, variant: str | None = None) -> str:
    """The installed build is right: the shown command is a repair of that build."""
    index = f" {CU}{variant}" if variant else ""
    return f"{PIP} --force-reinstall --no-cache-dir torch=={torch} torchvision=={vision} torchaudio=={audio}{index}"


def swap(torch: str, vision: str, audio: str, variant: str) -> str:
    """Another build is installed: the exact local versions from the variant's index, nothing reinstalled."""
    pins = f"torch=={torch}+{variant} torchvision=={vision}+{variant} torchaudio=={audio}+{variant}"
    return f"{PIP} {pins} {CU}{variant}"


def fresh(torch: str, vision: str, audio: str, variant: str | None = None) -> str:
    """Nothing installed: plain pins."""
    index = f" {CU}{variant}" if variant else ""
    return f"{PIP} torch=={torch} torchvision=={vision} torchaudio=={audio}{index}"


SCENARIOS = [
    # --- the installed torch is right: keep it ---------------------------------------------------------------
    Scenario("h100-565-cu124", ("9.0",), "12.7", "2.5.1+cu124", "12.4", (P, P, P, P),
             keep("2.5.1", "0.20.1", "2.5.1"), "pypi_default 2.5 linux_x86_64 = cu124; cu124 has sm_90"),
    Scenario("t4-580-cu130", ("7.5",), "13.0", "2.13.0+cu130", "13.0", (P, P, P, P),
             keep("2.13.0", "0.28.0", "2.11.0"), "2.13 cu130 arch list starts at sm_75 (CUDA 13: Turing and newer)"),
    Scenario("rtx3090-535-cu121", ("8.6",), "12.2", "2.1.0+cu121", "12.1", (P, P, P, P),
             keep("2.1.0", "0.16.0", "2.1.0"), "pypi_default 2.1 = cu121; Python 3.11 wheels", python="3.11.9"),
    Scenario("rtx2080-525-cu118", ("7.5",), "12.0", "2.0.1+cu118", "11.8", (P, P, P, P),
             keep("2.0.1", "0.15.2", "2.0.2", "cu118"), "companions 2.0.1 -> 0.15.2 / 2.0.2", python="3.10.12"),
    Scenario("h200-580-cu129", ("9.0",), "13.0", "2.8.0+cu129", "12.9", (P, P, P, P),
             keep("2.8.0", "0.23.0", "2.8.0", "cu129"), "the installed cu129 fits: no switch to the cu128 default"),
    Scenario("rtx3060-560-cu126", ("8.6",), "12.6", "2.6.0+cu126", "12.6", (P, P, P, P),
             keep("2.6.0", "0.21.0", "2.6.0", "cu126"), "2.6 cu126 has sm_86; driver CUDA 12.6 = wheel"),
    Scenario("rtx4090-595-cu132", ("8.9",), "13.2", "2.15.0", "13.2", (P, P, P, P),
             keep("2.15.0", "0.29.2", "2.11.0"), "pypi_default 2.15 linux_x86_64 = cu132"),
    Scenario("gb10-580-cu130", ("12.1",), "13.0", "2.13.0+cu130", "13.0", (P, P, P, P),
             keep("2.13.0", "0.28.0", "2.11.0"),
             "sm_120 cubins run on 12.1 (same major); torch's own warning is a known false positive (compat.md §6)"),
    Scenario("k80-470-cu117", ("3.7",), "11.4", "1.13.1+cu117", "11.7", (P, P, P, P),
             keep("1.13.1", "0.14.1", "0.13.1"), "1.13 cu117 keeps sm_37; 11.x MVC >= 450.80.02",
             python="3.10.12", says="Kepler GPUs were last supported by driver R470 (CUDA ≤ 11.4)"),
    # --- driver too old for the wheel: the same torch from an older CUDA index -----------------------------
    Scenario("rtx4090-550-cu130", ("8.9",), "12.4", "2.13.0+cu130", "13.0", (P, P, F, P),
             swap("2.13.0", "0.28.0", "2.11.0", "cu126"), "13.x needs R580; 12.x MVC >= 525.60.13 runs cu126"),
    Scenario("a100-470-cu121", ("8.0",), "11.4", "2.3.0+cu121", "12.1", (P, P, F, P),
             swap("2.3.0", "0.18.0", "2.3.0", "cu118"), "11.x MVC; 2.3 cu118 has sm_80"),
    Scenario("p100-535-cu130", ("6.0",), "12.2", "2.13.0+cu130", "13.0", (P, P, F, F),
             swap("2.13.0", "0.28.0", "2.11.0", "cu126"), "2.13 cu126 has sm_60; CUDA 13 dropped Pascal",
             says="Pascal GPUs were last supported by driver R580"),
    Scenario("wsl-rtx3090-550-cu130", ("8.6",), "12.4", "2.13.0+cu130", "13.0", (P, P, F, P),
             swap("2.13.0", "0.28.0", "2.11.0", "cu126"), "WSL2: the wheel fix is the same inside WSL", wsl=True),
    # --- no kernels for the GPU ------------------------------------------------------------------------------
    Scenario("gtx1080-580-cu130", ("6.1",), "13.0", "2.13.0+cu130", "13.0", (P, P, P, F),
             swap("2.13.0", "0.28.0", "2.11.0", "cu126"), "compat.md §7: GTX 1080 + 580 -> cu126, not cu130",
             says="the newest combination that still works is torch 2.14.1 (cu126) on the R580 driver"),
    Scenario("gtx980-580-cu128", ("5.2",), "13.0", "2.8.0+cu128", "12.8", (P, P, P, F),
             swap("2.8.0", "0.23.0", "2.8.0", "cu126"), "Maxwell removed from cu128 builds in 2.8 (pytorch#158301)",
             says="Maxwell GPUs"),
    Scenario("rtx3090-535-cu101-2020-project", ("8.6",), "12.2", "1.7.1+cu101", "10.1", (P, P, P, F),
             f"{PIP} torch==1.7.1+cu110 torchvision==0.8.2+cu110 torchaudio==0.7.2 -f https://download.pytorch.org/whl/torch_stable.html",
             "a 2020 project's 1.7.1 keeps its version: its cu110 build runs sm_86 through compute_80 PTX",
             python="3.8.18"),
    Scenario("v100-580-cu128", ("7.0",), "13.0", "2.11.0+cu128", "12.8", (P, P, P, F),
             swap("2.11.0", "0.26.0", "2.11.0", "cu126"), "compat.md §7: cu128 lost sm_70 in 2.11"),
    Scenario("v100-580-2.15", ("7.0",), "13.0", "2.15.0", "13.2", (P, P, P, F),
             swap("2.14.1", "0.29.1", "2.11.0", "cu126"), "2.15 cu126 is unconfirmed (errata §6): 2.14.1 cu126"),
    Scenario("rtx5090-570-cu124", ("12.0",), "12.8", "2.5.1+cu124", "12.4", (P, P, P, F),
             swap("2.8.0", "0.23.0", "2.8.0", "cu128"),
             "compat.md §7: RTX 5090 + 570 -> 2.7-2.11 cu128; the confirmed one closest to 2.5 (2.7 cu128 is unconfirmed)"),
    Scenario("rtx5090-580-cu126", ("12.0",), "13.0", "2.13.0+cu126", "12.6", (P, P, P, F),
             swap("2.13.0", "0.28.0", "2.11.0", "cu130"), "2.13 cu126 has no sm_120; the cu130 default has"),
    Scenario("b200-570-cu124", ("10.0",), "12.8", "2.6.0+cu124", "12.4", (P, P, P, F),
             swap("2.8.0", "0.23.0", "2.8.0", "cu128"), "the confirmed cu128 closest to 2.6 has sm_100"),
    Scenario("mixed-3080-1080-cu130", ("8.6", "6.1"), "13.0", "2.13.0+cu130", "13.0", (P, P, P, F),
             swap("2.13.0", "0.28.0", "2.11.0", "cu126"), "one wheel for both: cu126 has sm_61 and sm_86"),
    # --- a build that cannot use NVIDIA GPUs at all ----------------------------------------------------------
    Scenario("rtx4090-580-cpu", ("8.9",), "13.0", "2.13.0+cpu", None, (P, F, S, S),
             swap("2.13.0", "0.28.0", "2.11.0", "cu130"), "pypi_default 2.13 linux_x86_64 = cu130"),
    Scenario("t4-580-rocm", ("7.5",), "13.0", "2.5.1+rocm6.2", None, (P, F, S, S),
             swap("2.5.1", "0.20.1", "2.5.1", "cu124"), "a ROCm build on an NVIDIA-only machine; 2.5 default cu124"),
    # --- nothing installed: the best wheel for this Python, platform, driver and GPU ---------------------------
    Scenario("l4-550-none", ("8.9",), "12.4", None, None, (F, S, S, S),
             fresh("2.14.1", "0.29.1", "2.11.0", "cu126"), "2.14/2.15 defaults are 13.x (R580); 2.15 cu126 unconfirmed"),
    Scenario("a10-535-none-py39", ("8.6",), "12.2", None, None, (F, S, S, S),
             fresh("2.8.0", "0.23.0", "2.8.0"), "2.8 is the last release for Python 3.9; its default cu128 (MVC)",
             python="3.9.18"),
    Scenario("rtx4090-580-none-py38", ("8.9",), "13.0", None, None, (F, S, S, S),
             fresh("2.4.1", "0.19.1", "2.4.1"), "2.4 is the last release for Python 3.8; default cu121",
             python="3.8.18"),
    Scenario("rtx4090-580-none-py314", ("8.9",), "13.0", None, None, (F, S, S, S),
             fresh("2.15.0", "0.29.2", "2.11.0"), "2.15 has Python 3.14 wheels; default cu132 loads by 13.x MVC",
             python="3.14.0"),
    Scenario("gh200-aarch64-580-none", ("9.0",), "13.0", None, None, (F, S, S, S),
             fresh("2.15.0", "0.29.2", "2.11.0"), "2.15 linux_aarch64 default cu132", machine="aarch64"),
    Scenario("no-gpu-none", (), None, None, None, (F, S, S, S),
             fresh("2.15.0", "0.29.2", "2.11.0", "cpu"), "no GPU: the CPU index avoids GBs of CUDA libraries"),
    Scenario("no-gpu-cu130", (), None, "2.13.0+cu130", "13.0", (P, P, S, S),
             swap("2.13.0", "0.28.0", "2.11.0", "cpu"), "keeps the version, drops CUDA on a machine without GPU"),
    # --- no driver yet: the wheel for the driver these GPUs need, which comes first ----------------------------
    Scenario("t4-no-driver-none", ("7.5",), None, None, None, (F, S, S, S),
             fresh("2.15.0", "0.29.2", "2.11.0"), "Turing has no last branch: the newest wheel, after R580+",
             says="once the NVIDIA driver (≥ 580) is installed: install the driver first"),
    Scenario("p40-no-driver-cu124", ("6.1",), None, "2.5.1+cu124", "12.4", (P, P, S, P),
             keep("2.5.1", "0.20.1", "2.5.1"), "Pascal's last branch R580 runs 2.5.1 cu124 (sm_60 runs on 6.1)",
             says="the installed build already fits this machine, once the NVIDIA driver"),
    # --- no wheel can work with this driver: the driver, where it lives ---------------------------------------
    Scenario("rtx3080-390-ubuntu", ("8.6",), "9.1", "2.5.1+cu124", "12.4", (P, P, F, P),
             "sudo apt install nvidia-driver-595-open", "no wheel for CUDA < 11; open modules for Turing+",
             # the sentence is about the torch installed; the branch is the one for the newest torch
             says="torch 2.5.1 (cu124) needs driver ≥ 525.60.13; R595 or newer is best"),
    Scenario("k80-390-ubuntu", ("3.7",), "9.1", "2.5.1+cu124", "12.4", (P, P, F, F),
             "sudo apt install nvidia-driver-470", "Kepler's last branch is R470 (architecture_last_driver)",
             says="torch 2.5.1 (cu118) needs driver ≥ 450.80.02; install the R470 branch"),
    Scenario("gtx1080-390-fedora", ("6.1",), "9.1", "2.5.1+cu124", "12.4", (P, P, F, P),
             "sudo dnf install akmod-nvidia-580xx xorg-x11-drv-nvidia-580xx-cuda", "Pascal: proprietary R580, last",
             distro="fedora", says="Pascal GPUs need the proprietary kernel modules"),
    Scenario("rtx4090-390-arch-none", ("8.9",), "9.1", None, None, (F, S, S, S),
             "sudo pacman -S --needed nvidia-open", "Arch: nvidia-open for Turing+", distro="arch"),
    Scenario("rtx5090-390-debian", ("12.0",), "9.1", "2.5.1+cu124", "12.4", (P, P, F, F),
             "sudo apt install nvidia-open-kernel-dkms nvidia-driver firmware-misc-nonfree linux-headers-amd64",
             "Blackwell requires the open modules (NVIDIA, R560)", distro="debian",
             says="NVIDIA requires its open kernel modules"),
    Scenario("a100-450-rocky-none", ("8.0",), "11.0", None, None, (F, S, S, S),
             "sudo dnf install nvidia-open", "a CUDA 11.0 driver (< 450.80.02) cannot use 11.x MVC",
             distro="rocky"),
    Scenario("wsl-rtx3090-390", ("8.6",), "9.1", "2.5.1+cu124", "12.4", (P, P, F, P), None,
             "WSL2: the Windows driver", wsl=True, says="never install a Linux driver inside WSL"),
    Scenario("docker-rtx3090-390", ("8.6",), "9.1", "2.5.1+cu124", "12.4", (P, P, F, P), None,
             "containers use the host's driver", container="docker", says="update the NVIDIA driver on the host"),
]  # fmt: skip


@pytest.mark.parametrize("s", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_scenario(s: Scenario) -> None:
    f = build(s)
    checks = (torch_installed, torch_cpu_build, torch_driver_compat, torch_arch_compat)
    assert tuple(c(f).status for c in checks) == s.verdict, s.fact
    fix = fix_for_torch(f)
    shown = [c.display() for c in fix.commands]
    if s.command is None:
        assert shown == [], s.fact
    elif fix.target is Target.PYTHON_ENV:
        assert shown[0] == s.command, s.fact
        if " -f https://download.pytorch.org/whl/torch_stable.html" in s.command:  # pre-1.13: pip's page only
            assert len(shown) == 1, s.fact
            return
        assert shown[1].startswith("uv pip install --python /venv/bin/python "), s.fact
        # uv chooses PyTorch's index itself: the same variant, named
        assert ("--index-url" in shown[0]) == ("--torch-backend" in shown[1]), s.fact
        assert ("--force-reinstall" in shown[0]) == ("--reinstall" in shown[1]), s.fact
    else:
        assert shown[-1] == s.command, s.fact
        assert fix.requires_root and fix.requires_reboot, s.fact
    assert s.says in fix.text, fix.text


def test_the_table_is_as_wide_as_the_issue_asks() -> None:
    # issue 2/6: at least 30 scenarios over compute capability x driver x torch build x OS x Python
    assert len(SCENARIOS) >= 30
    assert len({s.id for s in SCENARIOS}) == len(SCENARIOS)
    assert len({s.ccs for s in SCENARIOS}) >= 15
    assert len({s.python for s in SCENARIOS}) >= 5
    assert len({(s.distro, s.wsl, s.container, s.machine) for s in SCENARIOS}) >= 6
