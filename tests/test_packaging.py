"""Build the wheel and assert its file list: one import package, every subpackage and data file."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel_text(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every file of the built wheel: name -> text (binary-safe decode)."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        timeout=300,
        capture_output=True,
    )
    (wheel,) = out.glob("torch_gpu_doctor-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        return {name: zf.read(name).decode("utf-8", "replace") for name in zf.namelist()}


@pytest.fixture(scope="module")
def wheel_names(wheel_text: dict[str, str]) -> list[str]:
    return list(wheel_text)


@pytest.mark.slow
def test_only_one_top_level_package(wheel_names: list[str]) -> None:
    tops = {name.split("/")[0] for name in wheel_names}
    dist_info = {t for t in tops if t.endswith(".dist-info")}
    assert tops - dist_info == {"torch_gpu_doctor"}
    for generic in ("doctor", "checks", "fixes", "compat", "tests"):
        assert generic not in tops


@pytest.mark.slow
def test_every_source_module_and_data_file_is_in_the_wheel(wheel_names: list[str]) -> None:
    mapping = {
        "doctor": "torch_gpu_doctor",
        "checks": "torch_gpu_doctor/checks",
        "fixes": "torch_gpu_doctor/fixes",
        "compat": "torch_gpu_doctor/compat",
    }
    expected = set()
    for folder, target in mapping.items():
        for path in (ROOT / folder).rglob("*"):
            if (
                path.is_file()
                and "__pycache__" not in path.parts
                and path.suffix in (".py", ".json", ".typed", ".md", ".tcss")
            ):
                expected.add(f"{target}/{path.relative_to(ROOT / folder).as_posix()}")
    missing = expected - set(wheel_names)
    assert not missing, f"not packaged: {sorted(missing)}"
    for data in (
        "torch_gpu_doctor/py.typed",
        "torch_gpu_doctor/compat/cuda_matrix.json",
        "torch_gpu_doctor/schemas/report.schema.json",
        "torch_gpu_doctor/tui/app.tcss",  # without it the TUI starts unstyled
        "torch_gpu_doctor/tui/screens/dialogs.tcss",  # each screen's own, loaded when it opens
        "torch_gpu_doctor/tui/screens/smoke.tcss",
        "torch_gpu_doctor/tui/screens/setup.tcss",
    ):
        assert data in wheel_names


@pytest.mark.slow
def test_console_script_and_distribution_name(wheel_names: list[str], wheel_text: dict[str, str]) -> None:
    (name,) = [n for n in wheel_names if n.startswith("torch_gpu_doctor-") and n.endswith("entry_points.txt")]
    assert "[console_scripts]\ngpu-doctor = torch_gpu_doctor.cli:entry" in wheel_text[name]


@pytest.mark.slow
def test_the_metadata_has_one_version_an_spdx_license_and_the_license_file(
    wheel_text: dict[str, str],
) -> None:
    from torch_gpu_doctor import __version__

    (metadata,) = [text for name, text in wheel_text.items() if name.endswith(".dist-info/METADATA")]
    assert f"\nVersion: {__version__}\n" in metadata  # pyproject reads it from the package: one source
    assert "\nLicense-Expression: Apache-2.0\n" in metadata
    assert "Classifier: Environment :: GPU :: NVIDIA CUDA" in metadata
    assert "\nProject-URL: Issues, https://github.com/gpu-doctor/gpu-doctor/issues\n" in metadata
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in wheel_text)


@pytest.mark.slow
def test_the_sdist_carries_the_tests_and_their_fixtures(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--no-isolation", "-o", str(tmp_path), str(ROOT)],
        check=True,
        timeout=300,
        capture_output=True,
    )
    import tarfile

    (sdist,) = tmp_path.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    assert any(n.endswith("/tests/test_cli.py") for n in names)
    assert any("/tests/fixtures/hosts/secure-boot-blocks-module/expected.json" in n for n in names)
    assert any(n.endswith("/LICENSE") for n in names)
    assert not any("__pycache__" in n for n in names)


def _names(requirements: list[str]) -> set[str]:
    from packaging.requirements import Requirement

    return {Requirement(r).name.lower() for r in requirements}


def test_the_lint_group_and_the_test_extra_agree() -> None:
    """The suite runs ruff, mypy and lint-imports, so the `test` extra (what the README's command installs)
    carries every tool of the `lint` dependency group; `dev` includes the groups, not copies of them."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    groups = project["dependency-groups"]
    assert _names(groups["lint"]) <= _names(project["project"]["optional-dependencies"]["test"])
    assert {"include-group": "lint"} in groups["dev"]
    assert not _names([r for r in groups["dev"] if isinstance(r, str)]) & _names(groups["lint"])
