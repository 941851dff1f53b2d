"""WSL facts from tests/fixtures/platform-trees (provenance in its README), the wsl2 fixture host, and variations."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from tests.factories import os_facts
from tests.facts.platform_tree import build, tree
from torch_gpu_doctor.facts.platform import gather_os
from torch_gpu_doctor.facts.wsl import (
    WslFacts,
    driver_packages_from_dpkg,
    driver_packages_from_pacman,
    gather_wsl,
    wsl_version,
)
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.serialize import from_json, to_json
from torch_gpu_doctor.unavailable import Reason, Unavailable

WSL2_HOST = Path(__file__).resolve().parents[1] / "fixtures" / "hosts" / "wsl2"
# microsoft/WSL#7314: the listing of C:\Windows\System32\lxss\lib, which WSL mounts at /usr/lib/wsl/lib.
WSL_7314 = (
    "libcuda.so",
    "libcuda.so.1",
    "libcuda.so.1.1",
    "libnvcuvid.so.1",
    "libnvidia-encode.so.1",
    "libnvidia-ml.so.1",
    "libnvidia-opticalflow.so.1",
    "libnvwgf2umx.so",
    "nvidia-smi",
)


def wsl(host: RecordedHost) -> WslFacts:
    facts = gather_wsl(host, gather_os(host))
    assert isinstance(facts, WslFacts), facts
    return facts


def reason(value: object) -> Reason:
    assert isinstance(value, Unavailable), value
    return value.reason


def test_linux_driver_installed_inside_wsl2() -> None:
    w = wsl(tree("wsl2-linux-driver-inside"))
    assert w.version == 2 and w.has_dxg and w.distro_name == "Ubuntu"
    assert w.projected == WSL_7314
    assert w.projected_libcuda is not None and not w.projected_libcuda.is_symlink
    assert reason(w.projected_libcuda.version) is Reason.NOT_SUPPORTED
    assert [(lib.path, lib.version) for lib in w.linux_libraries] == [
        ("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "470.57.02"),
        ("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "470.57.02"),
    ]
    # /usr/bin comes before /usr/lib/wsl/lib on WSL's PATH: the Linux nvidia-smi wins.
    assert w.nvidia_smi == "/usr/bin/nvidia-smi" and w.nvidia_smi_target == "/usr/bin/nvidia-smi"
    # The container toolkit and the CUDA toolkit belong in WSL: not listed.
    assert w.driver_packages == ("libnvidia-compute-470", "nvidia-utils-470")
    assert not w.dkms_nvidia


def test_clean_wsl2_fixture_host() -> None:
    w = wsl(RecordedHost(WSL2_HOST))
    assert w.version == 2 and w.has_dxg
    assert w.linux_libraries == ()
    assert w.projected_libcuda is not None and w.projected_libcuda.path == "/usr/lib/wsl/lib/libcuda.so.1"
    assert w.nvidia_smi == "/usr/lib/wsl/lib/nvidia-smi"
    # No Linux driver file, so the (large) package records are not read at all.
    assert reason(w.driver_packages) is Reason.NOT_APPLICABLE


def test_wsl1_has_no_dxg_and_nothing_projected() -> None:
    w = wsl(tree("wsl1"))
    assert w.version == 1 and not w.has_dxg
    assert reason(w.projected) is Reason.NOT_FOUND and w.projected_libcuda is None


def test_not_wsl_is_not_applicable() -> None:
    assert reason(gather_wsl(tree("ci-vm-dockerenv"), os_facts())) is Reason.NOT_APPLICABLE


def test_unreadable_os_facts_pass_through() -> None:
    gone = Unavailable(Reason.PERMISSION_DENIED, "/proc/version")
    assert gather_wsl(tree("wsl1"), gone) == gone


def test_a_link_to_the_projected_libcuda_is_not_a_linux_driver(tmp_path: Path) -> None:
    # The usual workaround for "libcuda.so not found" (microsoft/WSL#8587) links into /usr/lib/wsl/lib.
    host = build(
        tmp_path,
        links={"/usr/lib/x86_64-linux-gnu/libcuda.so.1": "/usr/lib/wsl/lib/libcuda.so.1"},
        base="wsl2-linux-driver-inside",
    )
    w = wsl(host)
    assert [lib.name for lib in w.linux_libraries] == ["libnvidia-ml.so.1"]


def test_arch_records_and_dkms(tmp_path: Path) -> None:
    host = build(
        tmp_path,
        files={
            "/var/lib/pacman/local/nvidia-utils-550.78-1/desc": "",
            "/var/lib/pacman/local/nvidia-dkms-550.78-4/desc": "",
            "/var/lib/pacman/local/nvidia-container-toolkit-1.15.0-1/desc": "",
            "/var/lib/dkms/nvidia/550.78/source": "",
        },
        base="wsl1",
    )
    w = gather_wsl(host, replace(os_facts(wsl=True), kernel_release="5.15.153.1-microsoft-standard-WSL2"))
    assert isinstance(w, WslFacts)
    assert w.driver_packages == ("nvidia-dkms", "nvidia-utils") and w.dkms_nvidia


def test_denied_package_records_are_reported(tmp_path: Path) -> None:
    host = build(
        tmp_path, file_errors={"/var/lib/dpkg/info": "permission_denied"}, base="wsl2-linux-driver-inside"
    )
    assert reason(wsl(host).driver_packages) is Reason.PERMISSION_DENIED


def test_no_dpkg_and_no_pacman(tmp_path: Path) -> None:
    # Fedora keeps an rpm database gpu-doctor does not read: the library files still tell.
    host = build(tmp_path, base="wsl2-linux-driver-inside")
    shutil.rmtree(tmp_path / "root" / "var" / "lib" / "dpkg")
    assert reason(wsl(host).driver_packages) is Reason.NOT_FOUND


def test_denied_projection_listing(tmp_path: Path) -> None:
    host = build(
        tmp_path, file_errors={"/usr/lib/wsl/lib": "permission_denied"}, base="wsl2-linux-driver-inside"
    )
    assert reason(wsl(host).projected) is Reason.PERMISSION_DENIED


@pytest.mark.parametrize(
    ("release", "dxg", "expected"),
    [
        ("5.15.133.1-microsoft-standard-WSL2", True, 2),
        ("4.19.104-microsoft-standard", False, 2),  # WSL 2 before the -WSL2 suffix (kivy/buildozer#1220)
        ("4.4.0-18362-Microsoft", False, 1),  # WSL 1 (paulirish/git-open#158)
        ("6.6.36.3-my-own-kernel", True, 2),
    ],
)
def test_wsl_version(release: str, dxg: bool, expected: int) -> None:
    assert wsl_version(release, dxg) == expected


def test_unknown_kernel_release_is_not_guessed() -> None:
    assert reason(wsl_version("6.6.36.3-my-own-kernel", False)) is Reason.UNPARSEABLE


def test_dpkg_names() -> None:
    names = (
        "nvidia-driver-535.list",
        "nvidia-driver-535-open.list",
        "libnvidia-compute-535:amd64.list",
        "cuda-drivers-535.list",
        "nvidia-dkms-535.md5sums",
        "nvidia-container-toolkit.list",
        "libnvidia-container1:amd64.list",
        "nvidia-cuda-toolkit.list",
        "cuda-toolkit-12-4.list",
        "libcuda1:amd64.list",
    )
    assert driver_packages_from_dpkg(names) == (
        "cuda-drivers-535",
        "libcuda1",
        "libnvidia-compute-535",
        "nvidia-driver-535",
        "nvidia-driver-535-open",
    )


def test_pacman_names() -> None:
    names = (
        "nvidia-550.78-4",
        "lib32-nvidia-utils-550.78-1",
        "nvidia-settings-550.78-1",
        "nvidia-open-dkms-550.78-1",
    )
    assert driver_packages_from_pacman(names) == ("nvidia", "nvidia-open-dkms")


@pytest.mark.parametrize("scenario", ["wsl2-linux-driver-inside", "wsl1"])
def test_wsl_facts_round_trip_through_json(scenario: str) -> None:
    w = wsl(tree(scenario))
    assert from_json(WslFacts, to_json(w)) == w
