"""The lowest versions pyproject.toml allows really work: uv installs gpu-doctor with every direct dependency
at its declared minimum (`--resolution lowest-direct`) into a new venv, and there the report, the JSON, triage
and the interactive doctor (driven headless by Textual's own Pilot) run on a captured machine.

It needs the package index. Where the index cannot be reached the test is skipped and says so; a resolution
or a run that fails is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
HOST = ROOT / "tests" / "fixtures" / "hosts" / "driver-library-mismatch"
PASTE = ROOT / "tests" / "triage" / "pastes" / "compvis-sd-438-error-803-ubuntu22.txt"
UNREACHABLE = ("Failed to fetch", "dns error", "Connection refused", "Network is unreachable", "timed out")

TUI_SCRIPT = """
import asyncio, sys
from rich.text import Text
from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.tui.app import DoctorApp
from torch_gpu_doctor.tui.session import Session

async def main():
    host = RecordedHost(sys.argv[1])
    app = DoctorApp(Session(host, host.python or "python3", can_apply=False))
    async with app.run_test(size=(100, 32)) as pilot:
        for _ in range(5):
            await pilot.app.workers.wait_for_complete()
            await pilot.pause(0.1)
        shown = []
        for widget in app.screen.query("#detail Static"):
            content = widget.render()
            shown.append(content.plain if isinstance(content, Text) else str(content))
        await pilot.press("t")
        paste = type(app.screen).__name__
        await pilot.press("escape", "q")
    print(paste)
    print("\\n".join(shown))

asyncio.run(main())
"""


def _uv() -> str:
    found = Path(sys.executable).parent / "uv"
    which = str(found) if found.exists() else shutil.which("uv")
    if which is None:
        pytest.fail("uv is not installed; install the test extras: pip install -e '.[test]'")
    return which


def _declared_minimums() -> dict[str, str]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    minimums = {}
    for line in project["dependencies"]:
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        (low,) = [s.version for s in requirement.specifier if s.operator == ">="]
        minimums[requirement.name.lower()] = low
    return minimums


@pytest.fixture(scope="module")
def lowest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with gpu-doctor and each direct dependency at its lowest allowed version: its bin folder."""
    venv = tmp_path_factory.mktemp("lowest") / "venv"
    subprocess.run([_uv(), "venv", "-q", "--python", sys.executable, str(venv)], check=True, timeout=120)
    env = dict(os.environ, UV_NO_PROGRESS="1")
    proc = subprocess.run(
        [_uv(), "pip", "install", "--python", str(venv / "bin" / "python"), "--resolution", "lowest-direct",
         str(ROOT)],
        capture_output=True, text=True, timeout=900, env=env, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        if any(sign in proc.stderr for sign in UNREACHABLE):
            pytest.skip(f"the package index cannot be reached: {proc.stderr.strip()[-300:]}")
        pytest.fail(f"uv could not install the lowest versions:\n{proc.stderr[-3000:]}")
    return venv / "bin"


def _run(bin_dir: Path, *argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bin_dir / argv[0]), *argv[1:]],
        input=stdin, capture_output=True, text=True, timeout=300, check=False,
        env=dict(os.environ, NO_COLOR="1", COLUMNS="120"), cwd=ROOT,
    )  # fmt: skip


@pytest.mark.slow
def test_the_venv_holds_the_declared_minimums(lowest: Path) -> None:
    listed = _run(lowest, "python", "-m", "pip", "list", "--format", "json")
    if listed.returncode != 0:  # a uv venv has no pip: ask importlib.metadata
        listed = _run(
            lowest, "python", "-c",
            "import json, importlib.metadata as m; "
            "print(json.dumps([{'name': d.metadata['Name'], 'version': d.version} for d in m.distributions()]))",
        )  # fmt: skip
    installed = {d["name"].lower().replace("_", "-"): d["version"] for d in json.loads(listed.stdout)}
    for name, low in _declared_minimums().items():
        assert name in installed and Version(installed[name]) == Version(low), (
            name,
            installed.get(name),
            low,
        )


@pytest.mark.slow
def test_the_report_json_and_triage_run_at_the_minimums(lowest: Path) -> None:
    text = _run(lowest, "gpu-doctor", "--plain", "--root", str(HOST))
    assert text.returncode == 1, text.stderr
    assert "driver.library_mismatch" in text.stdout or "mismatch" in text.stdout.lower()
    document = json.loads(_run(lowest, "gpu-doctor", "--json", "--root", str(HOST)).stdout)
    assert document["summary"]["exit_code"] == 1 and document["root_causes"]
    triage = _run(lowest, "gpu-doctor", "triage", "-", stdin=PASTE.read_text(encoding="utf-8"))
    assert triage.returncode in (0, 1), triage.stderr
    assert "Most likely cause" in triage.stdout


@pytest.mark.slow
def test_the_interactive_doctor_runs_at_the_minimums(lowest: Path) -> None:
    proc = _run(lowest, "python", "-c", TUI_SCRIPT, str(HOST))
    assert proc.returncode == 0, proc.stderr[-3000:]
    screen, shown = proc.stdout.split("\n", 1)
    assert screen == "PasteScreen"  # `t` opened the paste view
    assert "mismatch" in shown.lower()
