"""Jetson boards: recognised from their files (real published contents, tools/fixture_hosts_jetson.py), and
torch's fix is NVIDIA's build for the board's JetPack, never a PyPI or download.pytorch.org wheel."""

from __future__ import annotations

import pytest

from tests.factories import facts, python_facts, torch_runtime
from tests.fixes.hosts import diagnose_fixture
from torch_gpu_doctor.checks.platform_jetson import platform_jetson
from torch_gpu_doctor.compat.jetson import load_jetson
from torch_gpu_doctor.facts.jetson import JetsonFacts, parse_tegra_release
from torch_gpu_doctor.model import Status


@pytest.mark.parametrize(
    ("line", "l4t", "board"),
    [  # as published: an Orin Nano Super (R36.4.3), a JetPack 5.1.2 box (R35.4.1), a Nano (R32.7.6)
        (
            "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64, DATE: Wed Jan  8 "
            "01:49:37 UTC 2025",
            "36.4.3",
            "generic",
        ),
        (
            "# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64, DATE: Tue Aug  1 "
            "19:57:35 UTC 2023",
            "35.4.1",
            "t186ref",
        ),
        (
            "# R32 (release), REVISION: 7.6, GCID: 38171779, BOARD: t210ref, EABI: aarch64, DATE: Tue Nov  5 "
            "07:46:14 UTC 2024",
            "32.7.6",
            "t210ref",
        ),
        ("garbage", None, None),
    ],
)
def test_the_l4t_release_line(line: str, l4t: str | None, board: str | None) -> None:
    assert parse_tegra_release(line) == (l4t, board)


def test_the_soc_from_the_compatible_strings_else_from_the_model() -> None:
    orin = JetsonFacts(
        "NVIDIA Jetson AGX Orin Developer Kit",
        ("nvidia,p3737-0000+p3701-0005", "nvidia,tegra234"),
        "36.3.0",
        "generic",
        True,
    )
    assert orin.soc == "tegra234"
    xavier = JetsonFacts("NVIDIA Jetson Xavier NX Developer Kit", (), "35.4.1", "t186ref", True)
    assert xavier.soc == "tegra194"
    orin_nano = JetsonFacts("NVIDIA Jetson Orin Nano Developer Kit", (), "36.4.0", "generic", True)
    assert orin_nano.soc == "tegra234"  # an Orin, not the older Nano


def test_pypis_torch_on_an_orin_gets_nvidias_index_for_jetpack_6() -> None:
    report = diagnose_fixture("jetson-orin-jp6-pypi-torch")
    found = {f.check_id: f for f in report.findings}
    jetson = found["platform.jetson"]
    assert jetson.status is Status.FAIL
    assert jetson.remediation is not None
    assert jetson.remediation.commands[0].argv == (
        "/home/user/venv/bin/python",
        "-m",
        "pip",
        "install",
        "--force-reinstall",
        "torch",
        "torchvision",
        "--index-url",
        "https://pypi.jetson-ai-lab.io/jp6/cu126",
    )
    # no other line sends the user to PyPI or download.pytorch.org, and none says the GPU is unusable
    for f in report.findings:
        for command in f.remediation.commands if f.remediation else ():
            assert "download.pytorch.org" not in command.display(), f.check_id
    assert report.recommended_install is None
    assert found["torch.cpu_build"].caused_by == ("platform.jetson",)


def test_a_nano_on_jetpack_4_is_told_the_wheel_for_its_python() -> None:
    report = diagnose_fixture("jetson-nano-jp4-no-torch")
    installed = next(f for f in report.findings if f.check_id == "torch.installed")
    assert installed.status is Status.FAIL and installed.remediation is not None
    assert installed.remediation.commands[0].argv[-1] == (
        "https://developer.download.nvidia.com/compute/redist/jp/v461/pytorch/"
        "torch-1.11.0a0+17540c5+nv22.01-cp36-cp36m-linux_aarch64.whl"
    )


def test_an_l4t_release_the_data_lacks_points_to_nvidias_list() -> None:
    jetson = JetsonFacts(
        "NVIDIA Jetson AGX Orin Developer Kit", ("nvidia,tegra234",), "34.1.1", "t186ref", True
    )
    assert load_jetson().release("34.1.1") is None
    finding = platform_jetson(facts(jetson=jetson, python=python_facts(machine="aarch64")))
    assert finding.remediation is not None and not finding.remediation.commands
    assert "forums.developer.nvidia.com/t/pytorch-for-jetson/72048" in finding.remediation.text


def test_every_release_row_names_a_source_and_one_torch() -> None:
    data = load_jetson()
    assert {s.capability for s in data.socs} >= {"8.7", "7.2", "6.2", "5.3"}
    for release in data.releases:
        assert release.source and (release.index_url is None) != (release.wheel is None)
    assert data.release("36.4.3") is not None and data.release("36.4.3").cuda == "12.6"  # type: ignore[union-attr]
    assert data.release("35.3.1") is not None and data.release("32.7.6") is not None


def test_the_header_lines_name_the_integrated_gpu_and_the_l4t_release() -> None:
    """Not "no GPU found" and a desktop driver's CUDA: the GPU is the SoC's, the driver the L4T release's."""
    from torch_gpu_doctor.render.text import header_lines
    from torch_gpu_doctor.tui.machine_line import machine_line

    report = diagnose_fixture("jetson-orin-jp6-pypi-torch")
    assert "GPUs: Jetson Orin (integrated GPU) · L4T 36.4.3 (CUDA 12.6)" in header_lines(report)
    line = machine_line(report.facts, 0)
    assert "Jetson Orin (integrated GPU)" in line and "L4T 36.4.3 (CUDA 12.6)" in line


def test_an_import_killed_by_sigill_on_a_jetson_is_numpys_openblas_not_the_torch_build() -> None:
    """numpy 1.19.5's OpenBLAS dies on a Jetson's CPU (numpy/numpy#18131): the live probe sees the import killed
    by SIGILL; both torch.cuda_init and platform.jetson point to OPENBLAS_CORETYPE, never a torch reinstall."""
    from torch_gpu_doctor.checks.torch_build import torch_cuda_init

    nano = JetsonFacts("NVIDIA Jetson Nano Developer Kit", ("nvidia,tegra210",), "32.7.6", "t210ref", True)
    crashed = torch_runtime(outcome="crashed", failed_stage="import", message="killed by SIGILL (signal 4)")
    f = facts(jetson=nano, python=python_facts(machine="aarch64"), torch=crashed)
    jetson, init = platform_jetson(f), torch_cuda_init(f)
    assert jetson.status is Status.FAIL and "numpy's OpenBLAS" in jetson.summary
    for finding in (jetson, init):
        assert finding.remediation is not None
        assert finding.remediation.commands[0].argv == ("export", "OPENBLAS_CORETYPE=ARMV8")
    # the same signal on a desktop is not a Jetson's numpy: no Jetson answer is given there
    desktop = torch_cuda_init(facts(torch=crashed))
    assert desktop.remediation is not None and "OPENBLAS" not in " ".join(
        desktop.remediation.commands[0].argv
    )


def test_an_import_killed_by_sigill_with_pypis_aarch64_torch_is_the_build() -> None:
    """PyPI's CPU aarch64 wheel installed (a live run sees it): the build is the cause, NVIDIA's the fix."""
    from tests.factories import torch_packages

    nano = JetsonFacts("NVIDIA Jetson Nano Developer Kit", ("nvidia,tegra210",), "32.7.6", "t210ref", True)
    crashed = torch_runtime(outcome="crashed", failed_stage="import", message="killed by SIGILL (signal 4)")
    pypi = torch_packages(version="2.1.0", cuda=None)
    finding = platform_jetson(
        facts(jetson=nano, python=python_facts(machine="aarch64"), torch=crashed, torch_packages=pypi)
    )
    assert finding.status is Status.FAIL and "OpenBLAS" not in finding.summary
