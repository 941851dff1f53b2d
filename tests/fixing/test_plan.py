"""doctor/fixing/plan.py: the setup wizard's order, who runs what, and which findings each step answers."""

from __future__ import annotations

import dataclasses

import pytest

from tests import factories
from tests.fixes.hosts import diagnose_fixture, report_from_facts
from torch_gpu_doctor.fixes.kernel_modules import REBOOT, load_nvidia_module, reload_after_upgrade
from torch_gpu_doctor.fixing.plan import FixPlan, plan_fixes, runnable_argv
from torch_gpu_doctor.model import Command, Finding, Remediation, Status, Target
from torch_gpu_doctor.unavailable import Reason, Unavailable

PY = "/venv/bin/python"
PIP = (PY, "-m", "pip", "install", "--force-reinstall", "torch==2.13.0")


def keys(plan: FixPlan) -> list[str]:
    return [s.key for s in plan.steps]


def python_env(*commands: tuple[str, ...]) -> Remediation:
    return Remediation("reinstall", tuple(Command(c) for c in commands), target=Target.PYTHON_ENV)


# --- runnable_argv -----------------------------------------------------------------------------------------


def test_runnable_argv_is_the_first_command_when_it_is_pip_of_the_target_python() -> None:
    rem = python_env(PIP, ("uv", "pip", "install", "--python", PY, "torch==2.13.0"))
    assert runnable_argv(rem, PY) == PIP


@pytest.mark.parametrize(
    ("remediation", "python"),
    [
        (python_env(("uv", "pip", "install", "--python", PY, "torch")), PY),  # uv: shown, not run
        (python_env(("sudo", PY, "-m", "pip", "install", "torch")), PY),  # never sudo
        (python_env(PIP), "/other/bin/python"),  # another interpreter than the diagnosed one
        (python_env(PIP), ""),  # the target interpreter could not be read
        (python_env((PY, "-m", "venv", "/tmp/x")), PY),  # not pip
        (python_env((PY, "-m", "pip")), PY),  # pip with nothing to do
        (python_env(), PY),  # prose only
        (dataclasses.replace(python_env(PIP), target=Target.SYSTEM), PY),  # a system fix is never run
        (Remediation("x", (Command(PIP, stdin="y\n"),), target=Target.PYTHON_ENV), PY),  # fed input
    ],
)
def test_runnable_argv_refuses_everything_else(remediation: Remediation, python: str) -> None:
    assert runnable_argv(remediation, python) is None


# --- plans from in-memory facts ----------------------------------------------------------------------------


def test_cpu_torch_on_a_gpu_machine_gives_one_runnable_torch_step() -> None:
    facts = factories.facts(
        python=factories.python_facts(executable=PY),
        torch_packages=factories.torch_packages("2.13.0+cpu", cuda=None),
    )
    plan = plan_fixes(report_from_facts(facts))
    assert plan.python == PY
    assert keys(plan) == ["driver", "torch", "verify"]
    driver, torch, verify = plan.steps
    assert not driver.needed and driver.remediation is None
    assert (
        driver.why
        == "Nothing to do: NVIDIA driver 550.54.15 (open kernel module) is loaded, supports CUDA up to 12.4."
    )
    assert torch.needed
    assert torch.title == "Install torch 2.13.0 (cu126), torchvision 0.28.0 and torchaudio 2.11.0"
    assert torch.check_ids == ("torch.cpu_build",)
    # another build is installed: its exact local versions from the variant's index, no --force-reinstall
    assert torch.runnable_argv == (
        PY, "-m", "pip", "install", "torch==2.13.0+cu126", "torchvision==0.28.0+cu126",
        "torchaudio==2.11.0+cu126", "--index-url", "https://download.pytorch.org/whl/cu126",
    )  # fmt: skip
    assert torch.why.startswith("torch 2.13.0+cpu is a CPU-only build: it will not use the NVIDIA GPU here.")
    assert verify.needed and verify.runnable_argv is None
    assert verify.remediation is not None
    assert verify.remediation.commands[0].argv == ("gpu-doctor", "--smoke", "quick", "--python", PY)
    assert plan.changes_needed


def test_an_unreadable_interpreter_leaves_nothing_runnable() -> None:
    broken = Unavailable(Reason.FAILED, "python3: exit 2")
    plan = plan_fixes(report_from_facts(factories.facts(python=broken, torch_packages=broken)))
    assert plan.python == ""
    assert keys(plan) == ["driver", "torch", "verify"]
    torch = plan.steps[1]
    assert not torch.needed and torch.runnable_argv is None
    assert torch.why == "gpu-doctor has no torch wheel to recommend for this Python, platform and GPU."
    verify = plan.steps[2]
    assert verify.remediation is not None
    assert verify.remediation.commands[0].argv == ("gpu-doctor", "--smoke", "quick")


def _report_with(*findings: Finding, rec: bool = True) -> FixPlan:
    facts = factories.facts(
        python=factories.python_facts(executable=PY),
        torch_packages=factories.torch_packages("2.13.0+cpu", cuda=None),
    )
    report = report_from_facts(facts)
    return plan_fixes(
        dataclasses.replace(
            report,
            findings=(*findings,),
            recommended_install=report.recommended_install if rec else None,
        )
    )


DRIVER_FIX = Remediation(
    "Install Ubuntu's nvidia-driver-580 package, then reboot.",
    (Command(("sudo", "apt", "update")), Command(("sudo", "apt", "install", "nvidia-driver-580"))),
    requires_root=True,
    requires_reboot=True,
    needs_network=True,
    target=Target.SYSTEM,
)


def test_a_driver_too_old_for_every_wheel_makes_the_driver_the_first_step() -> None:
    too_old = Finding(
        "torch.arch_compat", Status.FAIL, "torch has no kernels for sm_120.", remediation=DRIVER_FIX
    )
    also = Finding("torch.driver_compat", Status.FAIL, "The driver is too old.", remediation=DRIVER_FIX)
    plan = _report_with(too_old, also, rec=False)
    assert keys(plan) == ["driver", "torch", "reboot", "verify"]
    driver, torch, reboot, _ = plan.steps
    assert driver.title == "Update the NVIDIA driver"
    assert driver.needed and driver.remediation == DRIVER_FIX and driver.runnable_argv is None
    assert driver.check_ids == ("torch.arch_compat", "torch.driver_compat")
    assert not torch.needed and torch.remediation is None
    assert torch.why == (
        "No torch wheel runs on the installed driver: update the driver first, then run `gpu-doctor fix` "
        "again to choose the wheel."
    )
    assert reboot.remediation is not None and reboot.remediation.commands == (REBOOT,)
    assert reboot.check_ids == ("torch.arch_compat", "torch.driver_compat")


def test_identical_fixes_become_one_step_and_prose_only_fixes_none() -> None:
    bolt = Remediation(
        "Authorize the enclosure.", (Command(("boltctl", "enroll", "--policy", "auto", "u-1")),)
    )
    plan = _report_with(
        Finding("torch.cpu_build", Status.FAIL, "CPU build."),
        Finding("egpu.authorized", Status.FAIL, "Not authorized: box.", remediation=bolt),
        Finding("egpu.tunnel", Status.WARN, "Same box.", remediation=bolt),
        Finding("gpu.throttle", Status.WARN, "Hot.", remediation=Remediation("Clean the fans.")),
        Finding("memory.shm", Status.PASS, "fine", remediation=bolt),  # a pass is never a step
    )
    bolt_steps = [s for s in plan.steps if s.remediation == bolt]
    assert len(bolt_steps) == 1
    step = bolt_steps[0]
    assert step.key == "egpu.authorized"
    assert step.title == "Authorize the Thunderbolt/USB4 enclosure"  # what hides the GPU: named for the act
    assert step.check_ids == ("egpu.authorized", "egpu.tunnel")
    assert step.why == "Not authorized: box. Same box. Authorize the enclosure."
    assert step.runnable_argv is None
    # a fix without a command is a step of its own too: a plan never says "nothing to do" over a warning
    throttle = plan.step("gpu.throttle")
    assert throttle is not None and throttle.needed and throttle.runnable_argv is None
    assert throttle.title == "Fix the GPU's cooling or power"


def test_another_python_env_pip_fix_is_runnable_and_comes_after_torch() -> None:
    other = (PY, "-m", "pip", "uninstall", "-y", "nvidia-cudnn-cu11")
    plan = _report_with(
        Finding("torch.cpu_build", Status.FAIL, "CPU build."),
        Finding("torch.nvidia_wheels", Status.WARN, "Stray wheel.", remediation=python_env(other)),
    )
    assert keys(plan) == ["driver", "torch", "torch.nvidia_wheels", "verify"]
    step = plan.steps[2]
    assert step.runnable_argv == other


def test_a_different_driver_fix_beside_the_driver_step_stays_its_own_step() -> None:
    load = load_nvidia_module()
    plan = _report_with(
        Finding("driver.installed", Status.FAIL, "Installed, not loaded.", remediation=load),
        Finding("driver.nvml", Status.FAIL, "NVML: DriverNotLoaded.", remediation=load),
        Finding("driver.reboot_pending", Status.WARN, "An update waits.", remediation=reload_after_upgrade()),
    )
    assert keys(plan) == ["driver", "torch", "driver.reboot_pending", "verify"]
    assert plan.steps[0].title == "Load the NVIDIA kernel module"
    assert plan.steps[0].check_ids == ("driver.installed", "driver.nvml")
    assert plan.steps[2].check_ids == ("driver.reboot_pending",)


def test_a_wheel_waiting_for_a_missing_driver_is_answered_by_installing_it() -> None:
    plan = _report_with(
        Finding("driver.installed", Status.FAIL, "No NVIDIA driver.", remediation=DRIVER_FIX),
        Finding("driver.nvml", Status.FAIL, "NVML is missing (see driver.installed)."),
        Finding("torch.arch_compat", Status.FAIL, "No wheel on this driver.", remediation=dataclasses.replace(
            DRIVER_FIX, text="No torch wheel supports this GPU with the installed driver."
        )),
        rec=False,
    )  # fmt: skip
    assert keys(plan) == ["driver", "torch", "reboot", "verify"]
    assert plan.steps[0].title == "Install the NVIDIA driver"
    assert plan.steps[0].check_ids == ("driver.installed", "driver.nvml", "torch.arch_compat")


# --- plans from captured machines ---------------------------------------------------------------------------


def test_nvidia_gpu_no_driver_installs_the_driver_first_then_torch_then_reboots() -> None:
    plan = plan_fixes(diagnose_fixture("nvidia-gpu-no-driver"))
    assert keys(plan) == ["driver", "torch", "reboot", "verify"]
    driver, torch, reboot, _ = plan.steps
    assert driver.title == "Install the NVIDIA driver"
    assert driver.needed and driver.runnable_argv is None
    assert driver.remediation is not None and driver.remediation.target is Target.SYSTEM
    assert [c.argv for c in driver.remediation.commands] == [
        ("sudo", "apt", "update"),
        ("sudo", "apt", "install", "nvidia-driver-580-open"),
    ]
    assert set(driver.check_ids) == {"driver.installed", "driver.nvml", "gpu.present"}
    # a fresh install: torch alone (neither companion is installed), nothing forced
    assert torch.runnable_argv == ("/usr/bin/python3", "-m", "pip", "install", "torch==2.14.1")
    assert torch.check_ids == ("torch.installed",)
    assert reboot.why.startswith("These steps take effect only after a restart: Install the NVIDIA driver.")
    assert reboot.runnable_argv is None


def test_egpu_not_authorized_shows_boltctl_and_runs_nothing() -> None:
    plan = plan_fixes(diagnose_fixture("egpu-not-authorized"))
    # the enclosure first: until it is authorized there is no GPU to plan a driver for
    assert keys(plan) == ["egpu.authorized", "driver", "torch", "verify"]
    bolt, driver, torch, _ = plan.steps
    assert not driver.needed
    assert driver.why.startswith(
        'Not yet: no NVIDIA GPU is visible until "Authorize the Thunderbolt/USB4 enclosure" is done.'
    )
    assert not torch.needed  # the CUDA build is kept for when the enclosure appears
    assert bolt.needed and bolt.runnable_argv is None
    assert bolt.remediation is not None
    assert [c.argv for c in bolt.remediation.commands] == [
        ("boltctl", "enroll", "--policy", "auto", "dc010000-0000-8508-a22d-32ca6421cb16"),  # the PCIe box
    ]
    assert all(s.runnable_argv is None for s in plan.steps)


def test_a_healthy_workstation_needs_nothing() -> None:
    plan = plan_fixes(diagnose_fixture("rtx4090-workstation-healthy"))
    assert keys(plan) == ["driver", "torch", "verify"]
    assert not plan.changes_needed
    assert [s.needed for s in plan.steps] == [False, False, True]
    assert plan.steps[1].why.startswith("Nothing to do: torch 2.5.1 (cu124) is installed already")


def test_wsl_cpu_torch_is_replaced_from_the_cuda_index() -> None:
    plan = plan_fixes(diagnose_fixture("wsl2"))
    torch = plan.step("torch")
    assert torch is not None and torch.needed
    assert torch.runnable_argv is not None
    assert torch.runnable_argv[0] == "/usr/bin/python3"
    assert torch.runnable_argv[-2:] == ("--index-url", "https://download.pytorch.org/whl/cu126")


def test_an_externally_managed_python_gets_a_venv_and_torch_goes_there() -> None:
    plan = plan_fixes(diagnose_fixture("h100-sxm-x8-server"))
    torch = plan.step("torch")
    assert torch is not None and torch.needed and torch.remediation is not None
    # python.env_kind's fix is the same recipe: one step, not two
    assert set(torch.check_ids) == {"torch.driver_compat", "python.env_kind", "torch.cuda_init"}
    assert "python.env_kind" not in keys(plan)
    assert [c.argv for c in torch.remediation.commands] == [
        ("sudo", "apt", "install", "python3-venv"),
        ("/usr/bin/python3", "-m", "venv", "venv"),
        ("venv/bin/python", "-m", "pip", "install", "torch==2.13.0", "--index-url", "https://download.pytorch.org/whl/cu126"),
    ]  # fmt: skip
    assert "--break-system-packages" in torch.why  # named as what not to do, never offered
    assert torch.runnable_argv is None  # shown for the person to run, never run against the system Python


def test_secure_boot_refusing_the_module_is_the_one_step_and_nothing_loads_the_module_before_it() -> None:
    plan = plan_fixes(diagnose_fixture("secure-boot-blocks-module"))
    assert keys(plan) == ["driver", "torch", "driver.secure_boot", "verify"]  # no second reboot step
    driver, _, signing = plan.steps[:3]
    assert not driver.needed  # `modprobe nvidia` would be refused until the module is signed
    assert "follows from driver.secure_boot" in driver.why
    assert signing.needed and signing.title.startswith("Let Secure Boot load the NVIDIA module")
    # applying the signing step is checked against its symptoms too
    assert set(signing.check_ids) >= {"driver.secure_boot", "driver.installed", "driver.nvml", "gpu.present"}
    commands = [c.argv for s in plan.steps if s.needed and s.remediation for c in s.remediation.commands]
    assert ("sudo", "modprobe", "nvidia") not in commands


def test_an_upgraded_driver_waiting_for_a_reboot_is_one_step() -> None:
    plan = plan_fixes(diagnose_fixture("driver-upgraded-no-reboot"))
    assert keys(plan) == ["driver", "torch", "verify"]
    driver = plan.steps[0]
    assert driver.title == "Reboot into the updated NVIDIA driver"
    assert set(driver.check_ids) == {"driver.nvml", "driver.reboot_pending", "gpu.present", "torch.cuda_init"}


def test_nouveau_and_no_driver_share_one_final_reboot() -> None:
    plan = plan_fixes(diagnose_fixture("nouveau-bound-nvidia-gpu"))
    assert keys(plan) == ["driver", "torch", "driver.nouveau", "reboot", "verify"]
    reboot = plan.steps[3]
    assert set(reboot.check_ids) >= {"driver.installed", "driver.nouveau"}
    # the final reboot is the only one: the nouveau step no longer reboots on its own
    rebooting = [
        s.key
        for s in plan.steps
        if s.remediation and ("systemctl", "reboot") in [c.argv for c in s.remediation.commands]
    ]
    assert rebooting == ["reboot"]


def test_a_cpu_torch_beside_an_amd_gpu_gets_the_rocm_build_once() -> None:
    plan = plan_fixes(diagnose_fixture("egpu-razer-core-authorized"))
    assert keys(plan) == ["driver", "torch", "verify"]  # amd.torch_rocm's identical command is folded in
    torch = plan.steps[1]
    assert torch.check_ids == ("amd.torch_rocm",)
    assert torch.title.startswith("Install torch 2.5.1 (rocm6.2)")
    assert torch.runnable_argv is not None
    assert torch.runnable_argv[-1] == "https://download.pytorch.org/whl/rocm6.2"
