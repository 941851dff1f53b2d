"""platform.wsl_gpu and platform.wsl_linux_driver with in-memory Facts, and on real-format trees."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.factories import facts, os_facts, torch_runtime
from tests.facts.platform_tree import tree
from torch_gpu_doctor.checks.platform_wsl import wsl_gpu, wsl_linux_driver
from torch_gpu_doctor.facts.driver_libraries import LibraryFile
from torch_gpu_doctor.facts.model import NOT_GATHERED, Facts
from torch_gpu_doctor.facts.platform import gather_os
from torch_gpu_doctor.facts.torch import MappedLibrary, TorchRuntime
from torch_gpu_doctor.facts.wsl import WslFacts, gather_wsl
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.model import Finding, Status
from torch_gpu_doctor.unavailable import Reason, Unavailable

WSL2_HOST = Path(__file__).resolve().parents[1] / "fixtures" / "hosts" / "wsl2"
PROJECTED = LibraryFile(
    "libcuda.so.1",
    "/usr/lib/wsl/lib/libcuda.so.1",
    "/usr/lib/wsl/lib/libcuda.so.1",
    False,
    Unavailable(Reason.NOT_SUPPORTED, "no driver version in the name libcuda.so.1"),
)
LINUX_CUDA = LibraryFile(
    "libcuda.so.1",
    "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
    "/usr/lib/x86_64-linux-gnu/libcuda.so.470.57.02",
    True,
    "470.57.02",
)
NO_PACKAGES = Unavailable(Reason.NOT_FOUND, "/var/lib/pacman/local")


def healthy() -> WslFacts:
    return WslFacts(
        version=2,
        distro_name="Ubuntu",
        has_dxg=True,
        projected=("libcuda.so", "libcuda.so.1", "libcuda.so.1.1", "libnvidia-ml.so.1", "nvidia-smi"),
        projected_libcuda=PROJECTED,
        linux_libraries=(),
        nvidia_smi="/usr/lib/wsl/lib/nvidia-smi",
        nvidia_smi_target="/usr/lib/wsl/lib/nvidia-smi",
        driver_packages=(),
        dkms_nvidia=False,
    )


def machine(w: WslFacts | Unavailable, **kw: object) -> Facts:
    return facts(os=kw.pop("os", os_facts(wsl=True)), wsl=w, **kw)


def runtime(error: str | None = None, libcuda: str | None = None) -> TorchRuntime:
    mapped = (MappedLibrary("libcuda", libcuda, libcuda),) if libcuda else ()
    return torch_runtime(cuda_available=error is None, cuda_init_error=error, mapped_libraries=mapped)


def commands(f: Finding) -> list[str]:
    assert f.remediation is not None
    return [c.display() for c in f.remediation.commands]


# --- platform.wsl_gpu -------------------------------------------------------------------------------------------


def test_healthy_wsl2_passes_and_explains_the_ldconfig_message() -> None:
    f = wsl_gpu(machine(healthy()))
    assert f.status is Status.PASS
    assert f.summary == "WSL 2 with /dev/dxg and the Windows driver's libcuda.so.1 in /usr/lib/wsl/lib."
    assert "is not a symbolic link" in f.details and "harmless" in f.details


def test_symlinked_projection_needs_no_explanation() -> None:
    w = replace(healthy(), projected_libcuda=replace(PROJECTED, is_symlink=True))
    assert wsl_gpu(machine(w)).details == ""


@pytest.mark.parametrize(
    ("value", "status"), [(NOT_GATHERED, Status.SKIP), (Unavailable(Reason.TIMED_OUT, "x"), Status.UNKNOWN)]
)
def test_not_wsl_or_unreadable(value: Unavailable, status: Status) -> None:
    assert wsl_gpu(machine(value)).status is status
    assert wsl_linux_driver(machine(value)).status is status


def test_wsl1_fails_with_the_conversion_command() -> None:
    f = wsl_gpu(machine(replace(healthy(), version=1, has_dxg=False)))
    assert f.status is Status.FAIL and "WSL 1" in f.summary
    assert commands(f) == ["wsl.exe --set-version Ubuntu 2"]


def test_wsl1_without_a_distro_name_uses_a_placeholder() -> None:
    f = wsl_gpu(machine(replace(healthy(), version=1, has_dxg=False, distro_name=None)))
    assert commands(f) == ["wsl.exe --set-version DISTRO 2"]


def test_missing_dxg_fails_with_wsl_update() -> None:
    f = wsl_gpu(machine(replace(healthy(), has_dxg=False)))
    assert f.status is Status.FAIL and f.summary.startswith("/dev/dxg is missing")
    assert commands(f) == ["wsl.exe --update", "wsl.exe --shutdown"]


def test_nothing_projected_means_no_windows_driver() -> None:
    w = replace(
        healthy(), projected=Unavailable(Reason.NOT_FOUND, "/usr/lib/wsl/lib"), projected_libcuda=None
    )
    f = wsl_gpu(machine(w))
    assert f.status is Status.FAIL and "projects no CUDA" in f.summary


def test_denied_projection_is_unknown() -> None:
    w = replace(
        healthy(), projected=Unavailable(Reason.PERMISSION_DENIED, "/usr/lib/wsl/lib"), projected_libcuda=None
    )
    assert wsl_gpu(machine(w)).status is Status.UNKNOWN


def test_torch_that_cannot_load_libcuda_warns() -> None:
    error = "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU"
    f = wsl_gpu(machine(healthy(), torch=runtime(error=error)))
    assert f.status is Status.WARN and "could not load libcuda" in f.summary
    assert commands(f) == ["sudo ldconfig"]


def test_other_cuda_errors_are_not_blamed_on_the_projection() -> None:
    f = wsl_gpu(machine(healthy(), torch=runtime(error="RuntimeError: CUDA error 999")))
    assert f.status is Status.PASS


# --- platform.wsl_linux_driver ------------------------------------------------------------------------------------


def test_clean_wsl_passes() -> None:
    f = wsl_linux_driver(machine(healthy()))
    assert f.status is Status.PASS and f.remediation is None


def test_linux_libcuda_fails_with_the_purge_command() -> None:
    w = replace(
        healthy(),
        linux_libraries=(LINUX_CUDA,),
        driver_packages=("libnvidia-compute-470", "nvidia-utils-470"),
    )
    f = wsl_linux_driver(machine(w))
    assert f.status is Status.FAIL
    assert f.summary.startswith("A Linux NVIDIA driver 470.57.02 is installed inside WSL")
    assert commands(f) == ["sudo apt-get purge libnvidia-compute-470 nvidia-utils-470"]
    assert f.remediation is not None and f.remediation.destructive and f.remediation.requires_root


def test_torch_loading_the_windows_libcuda_softens_it_to_a_warning() -> None:
    w = replace(healthy(), linux_libraries=(LINUX_CUDA,), driver_packages=NO_PACKAGES)
    f = wsl_linux_driver(machine(w, torch=runtime(libcuda="/usr/lib/wsl/lib/libcuda.so.1.1")))
    assert f.status is Status.WARN and "torch still loaded the Windows driver's libcuda" in f.summary


def test_unknown_packages_on_fedora_ask_rpm_for_the_owner() -> None:
    w = replace(
        healthy(),
        linux_libraries=(replace(LINUX_CUDA, path="/usr/lib64/libcuda.so.1"),),
        driver_packages=NO_PACKAGES,
    )
    f = wsl_linux_driver(machine(w, os=os_facts("fedora", (), wsl=True)))
    assert f.status is Status.FAIL
    assert commands(f) == ["rpm -qf /usr/lib64/libcuda.so.1"]


def test_leftover_packages_without_libraries_warn() -> None:
    f = wsl_linux_driver(machine(replace(healthy(), driver_packages=("nvidia-utils-535",))))
    assert f.status is Status.WARN and "nvidia-utils-535" in f.summary


def test_a_linux_nvidia_smi_first_on_path_warns() -> None:
    w = replace(healthy(), nvidia_smi="/usr/bin/nvidia-smi", nvidia_smi_target="/usr/bin/nvidia-smi")
    f = wsl_linux_driver(machine(w))
    assert f.status is Status.WARN and "nvidia-smi at /usr/bin/nvidia-smi" in f.summary


def test_dkms_module_alone_warns() -> None:
    assert wsl_linux_driver(machine(replace(healthy(), dkms_nvidia=True))).status is Status.WARN


def test_denied_package_records_fall_back_to_asking_dpkg() -> None:
    denied = Unavailable(Reason.PERMISSION_DENIED, "/var/lib/dpkg/info")
    f = wsl_linux_driver(machine(replace(healthy(), linux_libraries=(LINUX_CUDA,), driver_packages=denied)))
    assert f.status is Status.FAIL
    assert commands(f) == ["dpkg -S /usr/lib/x86_64-linux-gnu/libcuda.so.1"]


def test_wsl1_skips_the_driver_question() -> None:
    assert wsl_linux_driver(machine(replace(healthy(), version=1, has_dxg=False))).status is Status.SKIP


# --- on trees -------------------------------------------------------------------------------------------------------


def _tree_facts(host: RecordedHost) -> Facts:
    os_ = gather_os(host)
    return facts(os=os_, wsl=gather_wsl(host, os_))


def test_trees_end_to_end() -> None:
    inside = _tree_facts(tree("wsl2-linux-driver-inside"))
    assert wsl_gpu(inside).status is Status.PASS
    f = wsl_linux_driver(inside)
    assert f.status is Status.FAIL and commands(f) == [
        "sudo apt-get purge libnvidia-compute-470 nvidia-utils-470"
    ]
    clean = _tree_facts(RecordedHost(WSL2_HOST))
    assert wsl_gpu(clean).status is Status.PASS and wsl_linux_driver(clean).status is Status.PASS
    old = _tree_facts(tree("wsl1"))
    assert wsl_gpu(old).status is Status.FAIL and wsl_linux_driver(old).status is Status.SKIP


def test_outside_wsl_both_checks_skip_with_a_plain_reason() -> None:
    outside = facts(wsl=gather_wsl(tree("ci-vm-dockerenv"), os_facts()))
    assert wsl_gpu(outside).summary == "Not running under WSL."
    assert wsl_linux_driver(outside).status is Status.SKIP
