"""torch.* checks and the recommendation engine on in-memory facts; the scenario table is test_torch_scenarios.py."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.factories import driver, facts, gpu, nvml_error, os_facts, python_facts, torch_packages
from torch_gpu_doctor.checks.support.cuda_messages import explain
from torch_gpu_doctor.checks.torch_build import (
    torch_arch_compat,
    torch_cpu_build,
    torch_cuda_init,
    torch_driver_compat,
    torch_installed,
)
from torch_gpu_doctor.facts.gpus import Gpu
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.torch import Distribution, parse_runtime
from torch_gpu_doctor.fixes.torch_wheel import recommend
from torch_gpu_doctor.host.base import CommandResult, CommandStatus
from torch_gpu_doctor.model import Status, Target
from torch_gpu_doctor.unavailable import Reason, Unavailable

CU = "https://download.pytorch.org/whl/"


def machine(
    cc: str | None, driver_cuda: str | None, torch: str | None, torch_cuda: str | None, name: str = "GPU"
) -> Facts:
    return facts(
        python=python_facts(),
        gpus=(gpu(name=name, cc=cc),) if cc else (),
        nvml=nvml_error("LibraryNotFound", 12) if cc is None else facts().nvml,
        driver=driver(cuda_version=driver_cuda) if driver_cuda else driver(version=None),
        torch_packages=torch_packages(torch, torch_cuda) if torch else torch_packages(None, None, paths=0),
    )


def test_python_39_gets_the_last_release_that_supports_it() -> None:
    # 2.8 is the newest release with Python 3.9 wheels in the data
    rec = recommend(replace(machine(None, None, None, None), python=python_facts(version="3.9.18")))
    assert rec is not None and (rec.torch, rec.variant) == ("2.8.0", "cpu")


def test_grace_hopper_on_arm_gets_the_aarch64_default() -> None:
    # GH200 (9.0) on aarch64 with driver 580: 2.15's aarch64 PyPI default is cu132 (13.x MVC on R580)
    rec = recommend(replace(machine("9.0", "13.0", None, None), python=python_facts(machine="aarch64")))
    assert rec is not None and (rec.torch, rec.variant, rec.index_url) == ("2.15.0", "cu132", None)


def test_mixed_gpus_need_one_wheel_for_all() -> None:
    # an RTX 3080 (8.6) next to a GTX 1080 (6.1): cu130 has no Pascal kernels, cu126 serves both
    both = replace(
        machine("8.6", "13.0", "2.13.0+cu130", "13.0"),
        gpus=(gpu(cc="8.6"), gpu(bdf="0000:02:00.0", cc="6.1", nvml_index=1)),
    )
    rec = recommend(both)
    assert rec is not None and (rec.torch, rec.variant) == ("2.13.0", "cu126")


def test_no_wheel_for_a_driver_older_than_cuda_11_gives_none() -> None:
    assert recommend(machine("8.6", "10.2", "2.5.1+cu124", "12.4")) is None


def test_torch_missing_fails_with_a_python_env_remediation() -> None:
    f = torch_installed(machine("8.9", "12.4", None, None))
    assert f.status is Status.FAIL
    assert f.remediation is not None and f.remediation.target is Target.PYTHON_ENV
    assert f.remediation.commands[0].argv[0] == "/venv/bin/python"


def test_shadowing_copies_warn_and_name_the_winner() -> None:
    f = torch_installed(
        replace(
            machine("8.9", "12.4", "2.5.1+cu124", "12.4"),
            torch_packages=torch_packages("2.5.1+cu124", "12.4", paths=2),
        )
    )
    assert f.status is Status.WARN
    assert "/site0/torch wins" in f.summary


def test_capture_without_the_probe_skips() -> None:
    f = torch_installed(
        replace(facts(), torch_packages=Unavailable(Reason.NOT_RECORDED, "probe torch_packages"))
    )
    assert f.status is Status.SKIP


def test_cpu_build_on_a_gpu_machine_fails_and_on_a_cpu_machine_passes() -> None:
    assert torch_cpu_build(machine("8.9", "13.0", "2.13.0+cpu", None)).status is Status.FAIL
    assert torch_cpu_build(machine(None, None, "2.13.0+cpu", None)).status is Status.PASS


def test_driver_too_old_for_the_wheel() -> None:
    f = torch_driver_compat(machine("8.9", "12.4", "2.13.0+cu130", "13.0"))
    assert f.status is Status.FAIL
    assert "CUDA ≤ 12.4, torch needs CUDA 13.x" in f.summary
    assert f.remediation is not None and "cu126" in f.remediation.commands[0].display()


@pytest.mark.parametrize(
    "tied",
    [
        Distribution("vllm", "0.6.0", None, ("torch==2.13.0",)),  # pins torch by its requirement
        Distribution("xformers", "0.0.30", None, ()),  # compiled per torch: known by name
    ],
)
def test_driver_too_old_with_a_package_built_for_this_torch_is_fixed_at_the_driver(
    tied: Distribution,
) -> None:
    """Another torch build would break vLLM's or xformers' compiled code (a blind paste: a cu121 vLLM on a
    CUDA 11.4 driver was told to install a cu118 torch): the driver is the fix."""
    base = machine("8.9", "12.4", "2.13.0+cu130", "13.0")
    assert not isinstance(base.torch_packages, Unavailable)
    f = torch_driver_compat(replace(base, torch_packages=replace(base.torch_packages, distributions=(tied,))))
    assert f.status is Status.FAIL and f"{tied.name} is built for this torch" in f.details
    assert f.remediation is not None and f.remediation.target is Target.SYSTEM
    assert not any("torch==" in c.display() for c in f.remediation.commands)


def _with_vllm(base: Facts, *gpus: Gpu) -> Facts:
    assert not isinstance(base.torch_packages, Unavailable)
    listed = (Distribution("vllm", "0.6.1", None, ("torch==2.4.0",)),)
    return replace(base, torch_packages=replace(base.torch_packages, distributions=listed), gpus=gpus)


def test_vllm_installed_below_its_compute_capability_floor_fails_whatever_torch_has() -> None:
    """torch 2.4 has sm_60 kernels, so torch runs on a P100; vLLM's own kernels need 7.0 (its docs; compat data
    program_gpu_floors): no vLLM release runs, and no torch, driver or upgrade is offered."""
    base = machine("6.0", "12.4", "2.4.0+cu121", "12.1", name="Tesla P100-PCIE-16GB")
    f = torch_arch_compat(_with_vllm(base, gpu(name="Tesla P100-PCIE-16GB", cc="6.0")))
    assert f.status is Status.FAIL
    assert f.summary.startswith("vLLM 0.6.1 cannot run on") and "compute capability 7.0 or newer" in f.summary
    assert f.remediation is not None and f.remediation.commands == ()
    assert f.remediation.text.startswith("No vLLM release runs on this GPU")


def test_vllm_beside_one_gpu_below_its_floor_warns_about_that_gpu() -> None:
    base = machine("8.0", "12.4", "2.4.0+cu121", "12.1")
    mixed = _with_vllm(base, gpu(name="NVIDIA A100-SXM4-40GB", cc="8.0"), gpu(name="Tesla P40", cc="6.1"))
    f = torch_arch_compat(mixed)
    assert f.status is Status.WARN and "Tesla P40" in f.summary and "A100" not in f.summary
    assert f.remediation is not None and f.remediation.commands[0].argv[1].startswith("CUDA_VISIBLE_DEVICES=")
    assert "No vLLM release runs" not in f.remediation.text  # it runs on the A100


def test_vllm_on_a_gpu_at_its_floor_is_judged_as_torch_alone() -> None:
    base = machine("7.0", "12.4", "2.4.0+cu121", "12.1", name="Tesla V100-SXM2-32GB")
    f = torch_arch_compat(_with_vllm(base, gpu(name="Tesla V100-SXM2-32GB", cc="7.0")))
    assert f.status is Status.PASS


def test_minor_version_compatibility_passes_with_a_note() -> None:
    f = torch_driver_compat(machine("8.9", "12.4", "2.7.1+cu128", "12.8"))
    assert f.status is Status.PASS
    assert "minor-version compatibility" in f.summary


def test_arch_missing_from_the_published_list() -> None:
    f = torch_arch_compat(machine("6.1", "13.0", "2.13.0+cu130", "13.0", name="NVIDIA GeForce GTX 1080"))
    assert f.status is Status.FAIL
    assert "no kernels for NVIDIA GeForce GTX 1080" in f.summary
    assert any("compat data for 2.13.0 cu130 linux_x86_64" in e.source for e in f.evidence)


def test_arch_uses_the_runtime_list_when_torch_was_imported() -> None:
    result = CommandResult(
        ("python",),
        CommandStatus.OK,
        0,
        '{"result": {"version": "2.5.1+cu124", "arch_list": ["sm_80", "sm_90"]}}\n',
    )
    base = machine("8.6", "12.7", "2.5.1+cu124", "12.4")
    f = torch_arch_compat(replace(base, torch=parse_runtime(result)))
    assert f.status is Status.PASS  # sm_80 cubins run on 8.6 (same major, newer minor)
    assert f.evidence[0].source == "torch.cuda.get_arch_list()"


def test_cuda_init_reports_a_segfault_with_its_stage() -> None:
    crashed = parse_runtime(CommandResult(("python",), CommandStatus.NONZERO, -11, '{"stage": "import"}\n'))
    f = torch_cuda_init(replace(machine("8.9", "12.4", "2.5.1+cu124", "12.4"), torch=crashed))
    assert f.status is Status.FAIL
    assert f.summary == "Importing torch crashed during import: killed by SIGSEGV (signal 11)"


def test_when_no_wheel_fits_the_driver_the_fix_is_the_driver_where_it_lives() -> None:
    # Kepler-era driver 390 reports CUDA 9.1: no torch wheel in the data is built for CUDA < 11
    old = machine("8.6", "9.1", "2.5.1+cu124", "12.4")
    assert recommend(old) is None
    f = torch_driver_compat(old)
    assert f.status is Status.FAIL and f.remediation is not None
    assert f.remediation.target is Target.SYSTEM
    assert f.remediation.commands[-1].argv == ("sudo", "apt", "install", "nvidia-driver-595-open")
    wsl = torch_driver_compat(replace(old, os=os_facts(wsl=True)))
    assert wsl.remediation is not None and "never install a Linux driver inside WSL" in wsl.remediation.text
    boxed = torch_driver_compat(replace(old, os=replace(os_facts(), container="docker")))
    assert boxed.remediation is not None and "on the host" in boxed.remediation.text


def test_cuda_init_explains_a_known_message_and_keeps_the_raw_text() -> None:
    # the Error 803 text as torch prints it (CompVis/stable-diffusion#439, easydiffusion#379)
    raw = (
        "CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
        "calling NumCudaDevices() that might have already set an error? Error 803: system has unsupported display "
        "driver / cuda driver combination"
    )
    result = CommandResult(
        ("python",),
        CommandStatus.OK,
        0,
        '{"result": {"version": "2.9.1+cu126", "cuda_available": false, "cuda_warnings": ["' + raw + '"]}}\n',
    )
    base = machine("6.1", "13.0", "2.9.1+cu126", "12.6")
    f = torch_cuda_init(replace(base, torch=parse_runtime(result)))
    assert f.status is Status.FAIL
    assert f.summary == (
        "CUDA does not initialise: Error 803: system has unsupported display driver / cuda driver combination."
    )
    assert any(e.value == raw for e in f.evidence)  # the whole message, as torch printed it
    assert "driver update without a reboot" in f.details


@pytest.mark.parametrize(
    ("message", "meaning"),
    [
        ("The NVIDIA driver on your system is too old (found version 12070).", "torch.driver_compat"),
        ("CUDA initialization: Found no NVIDIA driver on your system.", "libcuda.so.1"),
        ("Error 804: forward compatibility was attempted on non supported HW", "cuda-compat"),
        ("Error 802: system not yet initialized", "nvidia-fabricmanager"),
        ("Error 100: no CUDA-capable device is detected", "CUDA_VISIBLE_DEVICES"),
        ("Error 34: CUDA driver is a stub library", "stub libcuda.so"),
        ("Torch not compiled with CUDA enabled", "CPU-only"),
    ],
)
def test_cuda_messages_have_plain_meanings(message: str, meaning: str) -> None:
    explained = explain(message)
    assert explained is not None and meaning in explained
    assert explain("something nobody has seen") is None


def test_an_unreadable_or_missing_driver_is_said_in_the_recommendation() -> None:
    denied = replace(
        machine("8.9", None, None, None),
        driver=replace(
            driver(version=None), version=Unavailable(Reason.PERMISSION_DENIED, "NVMLError_NoPermission")
        ),
    )
    guessed = recommend(denied)  # the driver is there but unreadable: say what the choice assumes
    assert guessed is not None and "its version could not be read here" in guessed.reason
    missing = recommend(machine("8.9", None, None, None))
    assert missing is not None and "install the driver first" in missing.reason


def test_torch_from_the_user_site_inside_a_venv_warns() -> None:
    user = "/home/u/.local/lib/python3.12/site-packages"
    packages = replace(torch_packages("2.5.1+cu124", "12.4"), torch_paths=(f"{user}/torch",), user_site=user)
    f = torch_installed(replace(machine("8.9", "12.4", "2.5.1+cu124", "12.4"), torch_packages=packages))
    assert f.status is Status.WARN and "comes from the user site" in f.summary
    outside = replace(machine("8.9", "12.4", "2.5.1+cu124", "12.4"), torch_packages=packages)
    system = replace(outside, python=replace(python_facts(), in_virtualenv=False))
    assert torch_installed(system).status is Status.PASS  # a system Python may use its user site


NOT_SHOWN = Unavailable(Reason.NOT_FOUND, "not in the paste")


def test_two_gpus_of_one_kind_are_named_once_with_their_count() -> None:
    base = machine("8.6", "12.4", "1.10.0+cu102", "10.2", name="NVIDIA GeForce RTX 3090")
    pasted = [replace(gpu(name="NVIDIA GeForce RTX 3090", cc="8.6"), bdf=NOT_SHOWN) for _ in range(2)]
    f = torch_arch_compat(replace(base, gpus=tuple(pasted)))  # a paste's two GPUs: no addresses
    assert f.status is Status.FAIL
    assert "2 × NVIDIA GeForce RTX 3090 (compute capability 8.6)" in f.summary
    assert f.summary.count("RTX 3090") == 1
    live = tuple(gpu(bdf=f"0000:0{n}:00.0", name="NVIDIA GeForce RTX 3090", cc="8.6") for n in (1, 2))
    assert torch_arch_compat(replace(base, gpus=live)).summary.count("RTX 3090") == 2  # told apart by address


def test_torchs_own_missing_kernels_come_before_vllms_floor() -> None:
    """An RTX 5090 beside a GTX 1080 Ti under vLLM, with torch 2.5.1+cu124: torch has no sm_120 kernels, which
    the floor (the 1080 Ti below vLLM's 7.0) must not hide (session 9's review, M1)."""
    base = machine("12.0", "12.8", "2.5.1+cu124", "12.4", name="NVIDIA GeForce RTX 5090")
    mixed = _with_vllm(
        base, gpu(name="NVIDIA GeForce RTX 5090", cc="12.0"), gpu(name="NVIDIA GeForce GTX 1080 Ti", cc="6.1")
    )
    f = torch_arch_compat(mixed)
    assert f.status is Status.FAIL and "has no kernels for" in f.summary and "RTX 5090" in f.summary
    assert "vLLM" not in f.summary
