"""One recipe per distribution family, complete, and the only place that knows the families."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from torch_gpu_doctor.fixes.distro import RECIPES, Family, filled
from torch_gpu_doctor.fixes.driver_plan import DriverPlan

ROOT = Path(__file__).resolve().parents[2]
KNOWN = [f for f in Family if f is not Family.UNKNOWN]
PLAN = DriverPlan("580", 580, "2.9.0", "cu128", True, "", ())


def test_every_family_has_its_recipe() -> None:
    assert set(RECIPES) == set(Family)
    assert all(RECIPES[f].family is f for f in Family)


@pytest.mark.parametrize("family", KNOWN, ids=lambda f: f.value)
def test_a_known_family_has_commands_for_every_fix(family: Family) -> None:
    """No known family falls back to prose: each has the driver, headers, a module builder, the initramfs,
    and removing a package (WSL)."""
    recipe = RECIPES[family]
    assert recipe.source
    assert recipe.driver(PLAN, None).commands, "the driver for a current GPU"
    assert recipe.headers is not None and recipe.builder is not None
    assert recipe.remove is not None and recipe.owner is not None
    assert recipe.initramfs.argv[0] == "sudo"


def test_the_unknown_family_says_what_to_do_in_words() -> None:
    recipe = RECIPES[Family.UNKNOWN]
    install = recipe.driver(PLAN, None)
    assert install.commands == () and "Install the NVIDIA driver for your distribution" in install.text
    assert recipe.headers is None and recipe.remove is None and recipe.owner is None


@pytest.mark.parametrize("family", list(Family), ids=lambda f: f.value)
def test_placeholders_are_all_filled(family: Family) -> None:
    recipe = RECIPES[family]
    for command in (recipe.headers, recipe.owner, recipe.initramfs):
        if command is not None:
            done = filled(command, release="6.8.0-45-generic", path="/usr/lib/libcuda.so.1")
            assert not any("{" in word for word in done.argv)
            assert done.note == command.note


def test_no_other_module_switches_on_the_family() -> None:
    """Distribution knowledge lives in fixes/distro.py; a fix that compared families itself would be the
    place a new distribution is forgotten."""
    switching = [
        str(path.relative_to(ROOT))
        for folder in ("checks", "fixes", "doctor")
        for path in (ROOT / folder).rglob("*.py")
        if path.name != "distro.py" and re.search(r"\bFamily\.[A-Z]+\b", path.read_text(encoding="utf-8"))
    ]
    assert switching == []


@pytest.mark.parametrize(
    ("distro_id", "remove"),
    [
        ("ubuntu", ("sudo", "apt-get", "purge")),
        ("fedora", ("sudo", "dnf", "remove")),
        ("rocky", ("sudo", "dnf", "remove")),
        ("opensuse-tumbleweed", ("sudo", "zypper", "remove")),
        ("arch", ("sudo", "pacman", "-Rns")),
    ],
)
def test_a_linux_driver_inside_wsl_is_removed_with_the_familys_tool(
    distro_id: str, remove: tuple[str, ...]
) -> None:
    from torch_gpu_doctor.facts.platform import OsFacts
    from torch_gpu_doctor.fixes.wsl_driver import remove_linux_driver

    os_facts = OsFacts(
        "Linux", "6.6.87.2-microsoft-standard-WSL2", "x", distro_id, distro_id, "1", (), True, True
    )
    fix = remove_linux_driver(os_facts, ("nvidia-driver-550",), ())
    assert [c.argv for c in fix.commands] == [(*remove, "nvidia-driver-550")]


def test_pop_os_installs_system76s_driver_package_not_ubuntus() -> None:
    """Pop!_OS ships NVIDIA's driver from its own repository through system76-driver-nvidia (System76's docs);
    Ubuntu's per-branch package and its prebuilt modules for Ubuntu's kernels are not the way there."""
    from torch_gpu_doctor.facts.platform import OsFacts
    from torch_gpu_doctor.fixes.distro import family, recipe

    pop = OsFacts(
        system="Linux",
        kernel_release="6.12.10-76061203-generic",
        kernel_version="#202501201141~1737580285~24.04~0bc4ff7 SMP PREEMPT_DYNAMIC",
        distro_id="pop",
        distro_name="Pop!_OS 24.04 LTS",
        distro_version="24.04",
        distro_like=("ubuntu", "debian"),
        is_wsl=False,
        has_dxg=False,
    )
    assert family(pop) is Family.POP
    install = recipe(pop).driver(PLAN, 24)
    assert [c.argv for c in install.commands][-1] == ("sudo", "apt", "install", "system76-driver-nvidia")
    assert recipe(pop).prebuilt_modules is None
    assert recipe(pop).initramfs.argv == ("sudo", "update-initramfs", "-u")
    kepler = recipe(pop).driver(DriverPlan("470", 470, "1.12.1", "cu113", False, "", ("Kepler",)), 24)
    assert kepler.commands[-1].argv == ("sudo", "apt", "install", "nvidia-driver-470")
