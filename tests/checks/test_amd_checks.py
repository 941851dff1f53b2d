"""amd.* checks on in-memory facts: AMD-only machines (MI300X gfx942, RX 6700 XT gfx1031 from the rocm-smi samples),
NVIDIA machines with and without an AMD integrated GPU, and missing or unreadable inputs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from tests.factories import (
    GONE,
    facts,
    gpu,
    kernel,
    nvml_error,
    os_facts,
    python_facts,
    torch_packages,
    torch_runtime,
)
from torch_gpu_doctor.checks.amd import amd_gfx_target, amd_rocm_stack, amd_torch_rocm
from torch_gpu_doctor.compat.rocm_gfx import gfx_of_product, override_for, wheel_targets
from torch_gpu_doctor.facts.gpus import Gpu
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.rocm import KfdAgent, RocmFacts
from torch_gpu_doctor.facts.torch import CompanionPackage, TorchPackages, TorchRuntime
from torch_gpu_doctor.model import Finding, Status, Target
from torch_gpu_doctor.unavailable import Reason, Unavailable

WHL = "https://download.pytorch.org/whl/"
ABSENT = Unavailable(Reason.NOT_FOUND, "test")


def amd_gpu(
    bdf: str = "0000:47:00.0", name: str = "AMD Instinct MI300X", driver: str | None = "amdgpu"
) -> Gpu:
    return replace(
        gpu(bdf=bdf, name=name, nvml_index=None, kernel_driver=driver, vendor="amd"),
        device_id=0x74A1,
        compute_capability=Unavailable(Reason.NOT_APPLICABLE, "AMD"),
        uuid=Unavailable(Reason.NOT_APPLICABLE, "AMD"),
    )


def agent(
    gfx: int = 90402, name: str | None = "gfx942", bdf: str = "0000:47:00.0", node: int = 2
) -> KfdAgent:
    return KfdAgent(
        node=node,
        gfx_target_version=gfx,
        gfx_target=name if name else Unavailable(Reason.UNPARSEABLE, str(gfx)),
        vendor_id=0x1002,
        device_id=0x74A1,
        bdf=bdf,
        drm_render_minor=128,
    )


def rocm(**fields: Any) -> RocmFacts:
    base = RocmFacts(
        version="6.2.0",
        version_source="/opt/rocm/.info/version",
        installs=(),
        amdgpu_loaded=True,
        amdgpu_version=ABSENT,
        kfd_present=True,
        render_nodes=("renderD128",),
        agents=(agent(),),
    )
    return replace(base, **fields)


def rocm_torch(version: str = "2.8.0+rocm6.4", hip: str = "6.4.43482") -> TorchPackages:
    return replace(torch_packages(version, None), hip=hip)


def runtime(arch: tuple[str, ...], hip: str = "6.4.43482") -> TorchRuntime:
    return torch_runtime(version="2.8.0+rocm6.4", cuda=None, hip=hip, arch_list=arch)


def amd_machine(**fields: Any) -> Facts:
    base = facts(
        python=python_facts(),
        gpus=(amd_gpu(),),
        nvml=nvml_error("LibraryNotFound", 12),
        driver=GONE,
        kernel=kernel(loaded=("amdgpu",)),
        torch_packages=rocm_torch(),
        rocm=rocm(),
    )
    return replace(base, **fields)


ALL = (amd_rocm_stack, amd_torch_rocm, amd_gfx_target)


# --- when the checks do not apply -----------------------------------------------------------------------------


@pytest.mark.parametrize("fn", ALL)
def test_nvidia_only_machine_skips(fn: Callable[[Facts], Finding]) -> None:
    finding = fn(facts(rocm=rocm(agents=ABSENT, kfd_present=False)))
    assert finding.status is Status.SKIP


@pytest.mark.parametrize("fn", ALL)
def test_amd_igpu_beside_an_nvidia_card_with_cuda_torch_skips(fn: Callable[[Facts], Finding]) -> None:
    igpu = amd_gpu(bdf="0000:0e:00.0", name="Raphael")
    f = facts(
        gpus=(gpu(), igpu), rocm=rocm(agents=(agent(110300, "gfx1036"),)), torch_packages=torch_packages()
    )
    assert fn(f).status is Status.SKIP


@pytest.mark.parametrize("fn", ALL)
def test_unreadable_pci_and_kfd_is_unknown_not_no_gpu(fn: Callable[[Facts], Finding]) -> None:
    denied = Unavailable(Reason.PERMISSION_DENIED, "/sys/bus/pci/devices")
    f = facts(pci=denied, gpus=(), rocm=rocm(agents=Unavailable(Reason.PERMISSION_DENIED, "nodes")))
    assert fn(f).status is Status.UNKNOWN


# --- amd.rocm_stack -------------------------------------------------------------------------------------------


def test_stack_passes_and_names_the_rocm_version() -> None:
    finding = amd_rocm_stack(amd_machine())
    assert finding.status is Status.PASS
    assert "ROCm 6.2.0 in /opt/rocm" in finding.summary and "render" in finding.details


def test_no_system_rocm_is_fine_for_pip_wheels() -> None:
    finding = amd_rocm_stack(amd_machine(rocm=rocm(version=ABSENT, version_source=None)))
    assert finding.status is Status.PASS
    assert "bring their own runtime" in finding.summary


def test_unbound_gpu_without_amdgpu_module_fails_with_modprobe() -> None:
    f = amd_machine(gpus=(amd_gpu(driver=None),), kernel=kernel(loaded=()), rocm=rocm(amdgpu_loaded=False))
    finding = amd_rocm_stack(f)
    assert finding.status is Status.FAIL and "not loaded" in finding.summary
    assert finding.remediation is not None
    assert finding.remediation.commands[0].argv == ("sudo", "modprobe", "amdgpu")


def test_unbound_gpu_with_amdgpu_loaded_points_at_firmware() -> None:
    finding = amd_rocm_stack(amd_machine(gpus=(amd_gpu(driver=None),)))
    assert finding.status is Status.FAIL and "firmware" in finding.summary


def test_gpu_on_vfio_is_a_warning() -> None:
    finding = amd_rocm_stack(amd_machine(gpus=(amd_gpu(driver="vfio-pci"),)))
    assert finding.status is Status.WARN and "vfio-pci" in finding.summary


def test_missing_kfd_in_a_container_says_which_devices_to_pass() -> None:
    f = amd_machine(rocm=rocm(kfd_present=False, render_nodes=()), os=replace(os_facts(), container="docker"))
    finding = amd_rocm_stack(f)
    assert finding.status is Status.FAIL
    assert "/dev/kfd and /dev/dri/renderD*" in finding.summary
    assert finding.remediation is not None and "--device=/dev/kfd" in finding.remediation.text


def test_missing_kfd_on_bare_metal_points_at_the_kernel() -> None:
    finding = amd_rocm_stack(amd_machine(rocm=rocm(kfd_present=False)))
    assert finding.status is Status.FAIL and finding.remediation is not None
    assert "CONFIG_HSA_AMD" in finding.remediation.text and finding.remediation.requires_reboot


def test_unreadable_dev_and_missing_rocm_facts_are_unknown() -> None:
    assert amd_rocm_stack(amd_machine(rocm=rocm(kfd_present=ABSENT))).status is Status.UNKNOWN
    assert amd_rocm_stack(amd_machine(rocm=Unavailable(Reason.TIMED_OUT, "probe"))).status is Status.UNKNOWN


# --- amd.torch_rocm -------------------------------------------------------------------------------------------


def test_rocm_torch_passes() -> None:
    finding = amd_torch_rocm(amd_machine())
    assert finding.status is Status.PASS and "ROCm 6.4.43482" in finding.summary


def test_cuda_torch_on_amd_fails_with_the_newest_rocm_index_for_that_release() -> None:
    finding = amd_torch_rocm(amd_machine(torch_packages=torch_packages("2.13.0+cu130", "13.0")))
    assert finding.status is Status.FAIL and "CUDA 13.0 build" in finding.summary
    fix = finding.remediation
    assert fix is not None and fix.target is Target.PYTHON_ENV
    assert fix.commands[0].argv == (
        "/venv/bin/python",
        "-m",
        "pip",
        "install",
        "torch==2.13.0+rocm7.2",
        "torchvision==0.28.0+rocm7.2",
        "torchaudio==2.11.0+rocm7.2",
        "--index-url",
        WHL + "rocm7.2",
    )


def test_cpu_torch_keeps_its_version_and_pins_the_companions_not_known_absent() -> None:
    """Companions are pinned to the ROCm build (a torchvision from PyPI would pull a CUDA torch in); only one
    known not to be installed is left out, and torchaudio's state is not known here."""
    packages = replace(
        torch_packages("2.8.0+cpu", None),
        companions=(CompanionPackage("torchvision", ("/site0/torchvision",), "0.23.0+cpu", None),),
    )
    finding = amd_torch_rocm(amd_machine(torch_packages=packages))
    assert finding.status is Status.FAIL and "CPU-only" in finding.summary
    assert finding.remediation is not None
    argv = finding.remediation.commands[0].argv
    assert "torch==2.8.0+rocm6.4" in argv and argv[-1] == WHL + "rocm6.4"
    assert "torchvision==0.23.0+rocm6.4" in argv and "torchaudio==2.8.0+rocm6.4" in argv


def test_torch_without_rocm_wheels_in_the_data_falls_back_to_the_newest_release_that_has_them() -> None:
    finding = amd_torch_rocm(amd_machine(torch_packages=torch_packages("2.15.0+cu132", "13.2")))
    assert finding.remediation is not None
    argv = finding.remediation.commands[0].argv
    assert argv[-1] == WHL + "rocm7.2" and any(a.startswith("torch==2.13.") for a in argv)
    assert "2.15.0 has none" in finding.remediation.text


def test_no_rocm_wheels_off_linux_x86_64() -> None:
    finding = amd_torch_rocm(
        amd_machine(python=python_facts(machine="aarch64"), torch_packages=torch_packages())
    )
    assert finding.status is Status.FAIL and finding.remediation is None
    assert "Linux x86_64" in finding.details


def test_torch_missing_or_unreadable() -> None:
    assert amd_torch_rocm(amd_machine(torch_packages=torch_packages(None, None, 0))).status is Status.SKIP
    unreadable = Unavailable(Reason.TIMED_OUT, "probe")
    assert amd_torch_rocm(amd_machine(torch_packages=unreadable)).status is Status.UNKNOWN


# --- amd.gfx_target -------------------------------------------------------------------------------------------


def test_mi300x_gfx942_is_supported() -> None:
    finding = amd_gfx_target(amd_machine())
    assert finding.status is Status.PASS and "gfx942 at 0000:47:00.0: CDNA3" in finding.summary


def test_rx_6700_xt_gfx1031_warns_with_the_override_explained() -> None:
    f = amd_machine(
        gpus=(amd_gpu(name="Navi 22 [Radeon RX 6700/6700 XT / 6800M]"),),
        rocm=rocm(agents=(agent(100301, "gfx1031"),)),
    )
    finding = amd_gfx_target(f)
    assert finding.status is Status.WARN
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in finding.details and "unsupported" in finding.details


def test_gfx_missing_from_the_running_torch_arch_list_fails() -> None:
    f = amd_machine(torch=runtime(("gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030", "gfx1100")))
    finding = amd_gfx_target(f)
    assert finding.status is Status.FAIL and "no kernels for gfx942" in finding.summary
    ok = amd_gfx_target(amd_machine(torch=runtime(("gfx90a", "gfx942:sramecc+:xnack-"))))
    assert ok.status is Status.PASS


def test_rdna4_on_a_rocm_older_than_6_4_warns() -> None:
    f = amd_machine(
        rocm=rocm(agents=(agent(120001, "gfx1201"),)), torch_packages=rocm_torch("2.7.1+rocm6.3", "6.3.42131")
    )
    finding = amd_gfx_target(f)
    assert finding.status is Status.WARN and "from ROCm 6.4" in finding.summary


def test_wheel_built_but_unofficial_target_passes_with_a_note() -> None:
    finding = amd_gfx_target(amd_machine(rocm=rocm(agents=(agent(110001, "gfx1101"),))))
    assert finding.status is Status.PASS and "not on AMD's official" in finding.summary


def test_unreadable_topology_or_undecodable_target_is_unknown() -> None:
    denied = rocm(agents=Unavailable(Reason.PERMISSION_DENIED, "nodes"))
    assert amd_gfx_target(amd_machine(rocm=denied)).status is Status.UNKNOWN
    assert amd_gfx_target(amd_machine(rocm=rocm(agents=(agent(91600, None),)))).status is Status.UNKNOWN


@pytest.mark.parametrize(
    ("rocm", "has", "lacks"),
    [
        ("6.2", "gfx1100", "gfx1102"),  # a `+rocm6.2` wheel: uv's table leaves out 1101 and 1102
        ("6.1", "gfx1101", "gfx1102"),
        ("6.2.4", "gfx1201", "gfx950"),
        ("7.0.2", "gfx950", "gfx1151"),  # no 7.0.2 row: its minor's
        ("7.2", "gfx1151", "gfx1103"),
        ("6.2.41133-dd7f95766", "gfx1102", "gfx1151"),  # a HIP version names the minor: any 6.2 variant's
        (None, "gfx1151", "gfx1103"),  # unknown: every variant's
        ("5.7", "gfx1151", "gfx1103"),  # before the table: every variant's
    ],
)
def test_each_rocm_variant_has_its_own_targets(rocm: str | None, has: str, lacks: str) -> None:
    assert has in wheel_targets(rocm) and lacks not in wheel_targets(rocm)


@pytest.mark.parametrize(
    ("target", "value"),
    [((10, 3, 1), "10.3.0"), ((11, 0, 3), "11.0.0"), ((9, 0, 12), "9.0.0"), ((8, 0, 3), None)],
)
def test_override_value_is_the_lowest_sibling_the_wheels_build(
    target: tuple[int, int, int], value: str | None
) -> None:
    assert override_for(target) == value


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("i have an rx 6600 and a i5 8400", "gfx1032"),
        ("AMD Radeon RX 6700 XT", "gfx1031"),
        ("AMD Radeon RX 6800M", "gfx1031"),  # the mobile part is Navi 22, not the desktop 6800's Navi 21
        ("AMD Radeon RX 6800 XT", "gfx1030"),
        ("Radeon RX 7900 XTX", "gfx1100"),
        ("AMD Radeon 780M", "gfx1103"),
        ("AMD Radeon RX 9070 XT", "gfx1201"),
        ("NVIDIA GeForce RTX 3060", None),
        ("RX 66000 units", None),
    ],
)
def test_a_card_named_without_its_target_gets_the_target(text: str, target: str | None) -> None:
    assert gfx_of_product(text) == target
