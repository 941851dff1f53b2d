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
