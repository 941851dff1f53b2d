from __future__ import annotations

from dataclasses import replace

import pytest

from tests.factories import GONE, driver, facts, gpu, kernel, nvml_device, nvml_error, nvml_ok, os_facts
from torch_gpu_doctor.checks.driver_installed import driver_installed
from torch_gpu_doctor.checks.driver_nouveau import driver_nouveau
from torch_gpu_doctor.checks.driver_nvml import driver_nvml
from torch_gpu_doctor.facts.driver import DriverVersionReading
from torch_gpu_doctor.model import Status, Target
from torch_gpu_doctor.unavailable import Reason, Unavailable

NO_DRIVER = driver(version=None, installed_module_version=Unavailable(Reason.NOT_FOUND, "modinfo"))


def test_installed_reports_version_flavour_and_cuda() -> None:
    f = driver_installed(facts())
    assert f.status is Status.PASS
    assert f.summary == "NVIDIA driver 550.54.15 (open kernel module) is loaded, supports CUDA up to 12.4."
    assert any(e.source == "/sys/module/nvidia/version" for e in f.evidence)


def test_jetson_is_named_as_l4t() -> None:
    f = driver_installed(facts(driver=driver("35.3.1", is_jetson=True)))
    assert f.status is Status.PASS
    assert "L4T" in f.summary


def test_no_driver_with_gpu_fails_with_the_distro_package() -> None:
    f = driver_installed(facts(driver=NO_DRIVER, nvml=nvml_error("LibraryNotFound", 12)))
    assert f.status is Status.FAIL
    assert f.remediation is not None
    assert f.remediation.commands[0].argv == ("sudo", "ubuntu-drivers", "install")
    assert f.remediation.requires_reboot and f.remediation.target is Target.SYSTEM


def test_no_driver_without_gpu_skips() -> None:
    assert driver_installed(facts(driver=NO_DRIVER, gpus=())).status is Status.SKIP


def test_installed_but_not_loaded_offers_modprobe() -> None:
    f = driver_installed(facts(driver=driver(version=None, installed_module_version="580.95.05")))
    assert f.status is Status.FAIL
    assert "580.95.05 is installed but its kernel module is not loaded" in f.summary
    assert f.remediation is not None
    assert ("sudo", "modprobe", "nvidia") in [c.argv for c in f.remediation.commands]


def test_wsl_without_driver_never_suggests_a_linux_driver() -> None:
    f = driver_installed(facts(driver=NO_DRIVER, os=os_facts(wsl=True)))
    assert f.status is Status.FAIL
    assert f.remediation is not None
    assert f.remediation.commands == ()
    assert "Windows" in f.remediation.text


def test_permission_denied_is_unknown() -> None:
    denied = Unavailable(Reason.PERMISSION_DENIED, "/proc/driver/nvidia/version")
    f = driver_installed(facts(driver=replace(NO_DRIVER, version=denied)))
    assert f.status is Status.UNKNOWN


def test_nvml_mismatch_names_both_versions_and_offers_reboot() -> None:
    d = driver(
        version="580.173.02",
        readings=(
            DriverVersionReading("nvml", "nvmlSystemGetDriverVersion", GONE),
            DriverVersionReading("sysfs", "/sys/module/nvidia/version", "580.173.02"),
        ),
        userspace_version="580.178.04",
    )
    f = driver_nvml(facts(driver=d, nvml=nvml_error("LibRmVersionMismatch", 18)))
    assert f.status is Status.FAIL
    assert "kernel module is 580.173.02, the installed library is 580.178.04" in f.details
    assert f.remediation is not None and f.remediation.requires_reboot and f.remediation.destructive


@pytest.mark.parametrize(
    ("name", "code", "phrase"),
    [
        ("DriverNotLoaded", 9, "kernel module is not loaded"),
        ("NoPermission", 4, "permission denied"),
        ("GpuIsLost", 15, "fallen off the bus"),
        ("Unknown", 999, "NVMLError_Unknown"),
    ],
)
def test_nvml_errors_are_explained(name: str, code: int, phrase: str) -> None:
    f = driver_nvml(facts(nvml=nvml_error(name, code)))
    assert f.status is Status.FAIL
    assert phrase in f.summary


def test_nvml_library_missing_with_module_loaded_points_at_user_space() -> None:
    f = driver_nvml(facts(nvml=nvml_error("LibraryNotFound", 12)))
    assert f.status is Status.FAIL
    assert "libnvidia-ml.so.1 is missing" in f.summary
    assert f.remediation is not None and "utility" in f.remediation.text


def test_nvml_notsupported_fields_pass_with_a_note() -> None:
    dev = nvml_device(persistence_mode=Unavailable(Reason.NOT_SUPPORTED, "NVMLError_NotSupported"))
    f = driver_nvml(facts(nvml=nvml_ok(devices=(dev,))))
    assert f.status is Status.PASS
    assert "persistence_mode" in f.details


def test_nvml_and_kernel_module_disagree_warns() -> None:
    d = driver(
        readings=(
            DriverVersionReading("nvml", "nvmlSystemGetDriverVersion", "550.54.15"),
            DriverVersionReading("sysfs", "/sys/module/nvidia/version", "550.54.14"),
        )
    )
    f = driver_nvml(facts(driver=d))
    assert f.status is Status.WARN
    assert "550.54.14" in f.summary


def test_nouveau_bound_fails_and_explains_the_initramfs_trap() -> None:
    f = driver_nouveau(
        facts(
            gpus=(gpu(kernel_driver="nouveau", nvml_index=None),),
            kernel=kernel(loaded=("nouveau",), blacklists=("/etc/modprobe.d/blacklist-nouveau.conf",)),
        )
    )
    assert f.status is Status.FAIL
    assert "initramfs" in f.details
    assert f.remediation is not None
    argvs = [c.argv for c in f.remediation.commands]
    assert ("sudo", "update-initramfs", "-u") in argvs  # Ubuntu
    assert f.remediation.commands[0].stdin.startswith("blacklist nouveau")


def test_nouveau_loaded_but_unbound_warns() -> None:
    f = driver_nouveau(facts(kernel=kernel(loaded=("nvidia", "nouveau"))))
    assert f.status is Status.WARN


def test_nouveau_absent_passes_and_unknown_modules_are_unknown() -> None:
    assert driver_nouveau(facts()).status is Status.PASS
    unreadable = replace(kernel(), modules=Unavailable(Reason.PERMISSION_DENIED, "/proc/modules"))
    assert driver_nouveau(facts(kernel=unreadable)).status is Status.UNKNOWN


def test_a_hung_driver_fails_with_the_kernel_log_first_then_reset_or_reboot() -> None:
    f = driver_nvml(
        facts(gpus=(gpu(),), nvml=Unavailable(Reason.TIMED_OUT, "nvmlInit did not return in 10 s"))
    )
    assert f.status is Status.FAIL and "seems hung" in f.summary
    assert f.remediation is not None
    argv = [c.argv for c in f.remediation.commands]
    assert argv[0][:3] == ("sudo", "journalctl", "-k")  # Xid / GSP lines say why
    assert ("sudo", "lsof", "/dev/nvidiactl") in argv  # who holds the GPU
    assert ("systemctl", "reboot") in argv


def test_nvml_refused_while_world_readable_driver_files_are_refused_too_is_a_confined_process() -> None:
    denied = Unavailable(Reason.PERMISSION_DENIED, "/proc/driver/nvidia/version")
    refused = replace(driver(version=None), version=denied)
    f = driver_nvml(facts(gpus=(gpu(),), nvml=nvml_error("NoPermission", 4), driver=refused))
    assert f.status is Status.FAIL and f.remediation is not None
    assert "confined" in f.remediation.text
    assert f.remediation.commands[0].argv == ("cat", "/proc/self/attr/current")


def test_nvml_refused_alone_points_at_the_device_nodes() -> None:
    f = driver_nvml(facts(gpus=(gpu(),), nvml=nvml_error("NoPermission", 4)))
    assert f.remediation is not None
    assert f.remediation.commands[0].argv[:2] == ("ls", "-l")


def test_nvml_unknown_error_in_a_container_restarts_it_first() -> None:
    """NVML's Unknown Error in a container that worked is the device cgroup lost to a host daemon-reload
    (NVIDIA/nvidia-container-toolkit#1227): restart the container, then the /dev/char links; on a machine of its
    own (no container runtime seen) the kernel log comes first."""
    from tests.checks.test_platform_container import container  # the container facts those tests build
    from torch_gpu_doctor.facts.container import ContainerRuntime

    inside = driver_nvml(facts(nvml=nvml_error("Unknown", 999), container=container(ContainerRuntime.DOCKER)))
    assert inside.remediation is not None
    assert inside.remediation.commands[0].argv[:2] == ("docker", "restart")
    assert any("create-dev-char-symlinks" in c.argv for c in inside.remediation.commands)
    host = driver_nvml(facts(nvml=nvml_error("Unknown", 999), container=container(runtime=None)))
    assert host.remediation is not None and host.remediation.commands[0].argv[:2] == ("sudo", "journalctl")


def test_a_python_exception_reported_as_unknown_is_not_a_lost_container() -> None:
    """host/nvml.py reports a binding's own exception as NVMLError_Unknown too: that is not the daemon-reload
    story (review of the NVML Unknown Error fix)."""
    from torch_gpu_doctor.facts.nvml import NvmlErrorInfo, NvmlFacts

    err = Unavailable(Reason.FAILED, "NVMLError_Unknown")
    nvml = NvmlFacts(NvmlErrorInfo("Unknown", 999, "TypeError: bad argument"), err, err, err, err, ())
    f = driver_nvml(facts(nvml=nvml))
    assert f.remediation is None or not any("docker" in c.argv for c in f.remediation.commands)


def test_nvml_reporting_a_cuda_above_the_drivers_branch_is_a_forward_compatibility_libcuda() -> None:
    """On the machine too: NVML's CUDA comes from the libcuda loaded, so a cuda-compat copy (12.4 over R470)
    shows there. A GeForce cannot use it (error 804): a failure; an unnamed or data-centre GPU: a warning.
    The driver's own CUDA, a driver of the same branch as the minimum, and the table's own figure pass."""
    compat = driver("470.82.01", cuda_version="12.4")
    f = driver_installed(facts(driver=compat))
    assert f.status is Status.FAIL and "CUDA reports 12.4, above the 11.4 of its branch" in f.summary
    assert f.remediation is not None and "compat" in f.remediation.text
    f = driver_installed(facts(driver=compat, gpus=(gpu(name="NVIDIA A10G", cc="8.6"),)))
    assert f.status is Status.WARN
    for version, cuda, source in (
        ("550.54.15", "12.4", "nvml"),
        ("535.43.02", "12.2", "nvml"),  # an early R535: below 12.2's 535.54.03, the same branch
        ("470.82.01", "11.4", "compat table"),
    ):
        f = driver_installed(facts(driver=driver(version, cuda_version=cuda, cuda_version_source=source)))
        assert f.status is Status.PASS, version
