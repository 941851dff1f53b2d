"""`gpu-doctor fix` end to end through cli.main: plans of captured machines, applying with the fake pip."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixes.hosts import FAKE_PIP, HOSTS, diagnose_capture, diagnose_fixture, retargeted_capture
from torch_gpu_doctor.cli import main
from torch_gpu_doctor.commands import fix as fix_command
from torch_gpu_doctor.report import Report

PIP_ARGV = [
    str(FAKE_PIP), "-m", "pip", "install", "torch==2.13.0+cu126", "--index-url", "https://download.pytorch.org/whl/cu126",
]  # fmt: skip


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def pip_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "pip.log"
    monkeypatch.setenv("FAKE_PIP_LOG", str(log))
    monkeypatch.delenv("FAKE_PIP_RESULT", raising=False)
    return log


@pytest.fixture
def wsl_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Report]:
    """This machine, as far as `fix` can tell, is the wsl2 capture with the fake pip as its interpreter: CPU
    torch first, then (after a fix ran) the cu126 build. Returns the reports handed out, in order."""
    before = diagnose_capture(retargeted_capture("wsl2", tmp_path / "before", str(FAKE_PIP)))
    after = diagnose_capture(retargeted_capture("wsl2", tmp_path / "after", str(FAKE_PIP), "2.13.0+cu126"))
    queue: Iterator[Report] = iter([before, after])
    handed: list[Report] = []

    def fake_diagnose(host: object, python: str, **_: Any) -> Report:
        assert python == str(FAKE_PIP)
        report = next(queue)
        handed.append(report)
        return report

    monkeypatch.setattr(fix_command, "diagnose", fake_diagnose)
    return handed


def logged(log: Path) -> list[list[str]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


# --- --dry-run on captured machines ------------------------------------------------------------------------


def test_dry_run_prints_the_plan_of_a_capture(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "fix", "--dry-run", "--root", str(HOSTS / "nvidia-gpu-no-driver"))
    assert code == 0
    assert out.startswith(
        "Fix plan for /usr/bin/python3\n\n1. Install the NVIDIA driver  [system, needs root, "
    )
    lines = out.splitlines()
    assert (
        "     $ sudo apt install nvidia-driver-580-open   # a newer branch from `ubuntu-drivers list` works as well"
        in lines
    )
    assert "2. Install torch 2.14.1 (cu130)  [python-env, needs network]" in lines
    runs = lines.index("   gpu-doctor runs this itself when you apply the plan:")
    assert lines[runs + 1] == "     $ /usr/bin/python3 -m pip install torch==2.14.1"
    assert lines[runs + 2] == "   or run this yourself instead:"
    assert lines[runs + 3].startswith("     $ uv pip install --python /usr/bin/python3 torch==2.14.1")
    assert "3. Reboot  [system, needs reboot]" in lines
    assert "     $ systemctl reboot   # save your work first" in lines
    assert "4. Re-run gpu-doctor and the quick smoke test" in lines


def test_dry_run_of_a_healthy_machine_says_nothing_needs_fixing(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--root", str(HOSTS / "rtx4090-workstation-healthy"), "fix", "--dry-run")
    assert code == 0
    assert out.endswith("Nothing needs fixing.\n")
    assert "runs this itself" not in out


def test_dry_run_json_is_one_document_with_argv_lists(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "fix", "--dry-run", "--json", "--root", str(HOSTS / "egpu-not-authorized"))
    assert code == 0
    document = json.loads(out)  # exactly one document
    assert document["mode"] == "dry-run"
    assert document["summary"] == {"exit_code": 0}
    assert document["applied"] == []
    plan = document["plan"]
    assert plan["python"] == "/home/user/venv/bin/python"
    assert [s["key"] for s in plan["steps"]] == ["egpu.authorized", "driver", "torch", "verify"]
    bolt = plan["steps"][0]
    assert bolt["run_by"] == "you" and bolt["runnable_argv"] is None
    assert bolt["remediation"]["target"] == "system"
    assert bolt["remediation"]["commands"][0]["argv"] == [
        "boltctl", "enroll", "--policy", "auto", "dc010000-0000-8508-a22d-32ca6421cb16",
    ]  # fmt: skip
    assert plan["steps"][1]["run_by"] is None and plan["steps"][1]["needed"] is False  # the driver: not yet


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["fix", "--root", "ROOT"], "fix --root shows the plan of a captured machine: add --dry-run"),
        (["fix", "--yes", "--root", "ROOT"], "fixes are never applied to a capture"),
        (
            ["fix", "--dry-run", "--yes", "--root", "ROOT"],
            "--dry-run only shows the plan and --yes applies it",
        ),
    ],
)
def test_applying_to_a_capture_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    argv = [str(HOSTS / "wsl2") if a == "ROOT" else a for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert message in err


def test_a_usage_error_in_json_mode_is_still_one_document(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "fix", "--json", "--root", str(HOSTS / "wsl2"))
    assert code == 2
    assert json.loads(out)["error"]["kind"] == "usage"


def test_a_python_that_is_not_a_python_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], pip_log: Path
) -> None:
    # the real diagnosis runs the probes with the fake pip, which refuses `-c`: nothing is applied
    code, _, err = run(capsys, "fix", "--yes", "--python", str(FAKE_PIP))
    assert code == 2
    assert f"--python {FAKE_PIP} is not a working Python interpreter" in err
    assert all(argv[1] == "-c" for argv in logged(pip_log))


# --- applying ------------------------------------------------------------------------------------------------


def test_yes_applies_the_pip_step_and_compares_before_and_after(
    capsys: pytest.CaptureFixture[str], pip_log: Path, wsl_machine: list[Report]
) -> None:
    code, out, _ = run(capsys, "fix", "--yes", "--python", str(FAKE_PIP))
    assert code == 0
    assert logged(pip_log) == [PIP_ARGV]
    lines = out.splitlines()
    assert "==> Install torch 2.13.0 (cu126)" in lines
    assert "  Successfully installed torch-2.13.0+cu126" in lines
    assert "Steps for you to run (gpu-doctor never runs system commands):" in lines
    assert lines[-2:] == [
        "Install torch 2.13.0 (cu126):",
        "  torch.cpu_build: fail → pass",
    ]
    assert len(wsl_machine) == 2  # diagnosed again after applying


def test_yes_stops_at_a_failure_and_shows_pips_message(
    capsys: pytest.CaptureFixture[str],
    pip_log: Path,
    wsl_machine: list[Report],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_PIP_RESULT", "fail")
    code, out, _ = run(capsys, "fix", "--yes", "--python", str(FAKE_PIP))
    assert code == 1
    assert logged(pip_log) == [PIP_ARGV]
    assert out.endswith(
        "Failed: Install torch 2.13.0 (cu126)\n"
        "ERROR: Could not find a version that satisfies the requirement torch==2.13.0+cu126 (from versions: none)\n"
        "ERROR: No matching distribution found for torch==2.13.0+cu126\n"
    )
    assert len(wsl_machine) == 1  # nothing after the failure, no second diagnosis


def test_yes_json_streams_to_stderr_and_prints_one_document(
    capsys: pytest.CaptureFixture[str], pip_log: Path, wsl_machine: list[Report]
) -> None:
    code, out, err = run(capsys, "fix", "--yes", "--json", "--python", str(FAKE_PIP))
    assert code == 0
    document = json.loads(out)
    assert document["mode"] == "apply"
    assert document["summary"] == {"exit_code": 0}
    [applied] = document["applied"]
    assert applied["key"] == "torch"
    assert applied["result"]["argv"] == PIP_ARGV
    assert applied["result"]["ok"] is True and applied["result"]["failure_message"] is None
    assert applied["checks"] == [{"check_id": "torch.cpu_build", "before": "fail", "after": "pass"}]
    # pip's lines streamed to stderr as they came; stdout held the document only (json.loads above)
    assert "  Successfully installed torch-2.13.0+cu126" in (err.splitlines())
    assert logged(pip_log) == [PIP_ARGV]


def test_without_a_terminal_nothing_is_run(
    capsys: pytest.CaptureFixture[str], pip_log: Path, wsl_machine: list[Report]
) -> None:
    code, out, err = run(capsys, "fix", "--python", str(FAKE_PIP))
    assert code == 0
    assert out.endswith("Not applied: pass --yes to apply the Python-environment steps.\n")
    assert "Fix plan for " + str(FAKE_PIP) in out
    assert err == ""
    assert logged(pip_log) == []


def test_without_a_terminal_json_is_the_plan(
    capsys: pytest.CaptureFixture[str], pip_log: Path, wsl_machine: list[Report]
) -> None:
    code, out, err = run(capsys, "fix", "--json", "--python", str(FAKE_PIP))
    assert code == 0
    document = json.loads(out)
    assert document["mode"] == "plan"
    assert document["plan"]["steps"][1]["runnable_argv"] == PIP_ARGV
    assert "pass --yes to apply the Python-environment steps" in err
    assert logged(pip_log) == []


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("answer", "runs"), [("y\n", True), ("\n", False), ("no\n", False), ("", False)])
def test_on_a_terminal_each_step_is_asked_for_and_no_is_the_default(
    capsys: pytest.CaptureFixture[str],
    pip_log: Path,
    wsl_machine: list[Report],
    monkeypatch: pytest.MonkeyPatch,
    answer: str,
    runs: bool,
) -> None:
    monkeypatch.setattr("sys.stdin", _Terminal(answer))
    monkeypatch.setattr(fix_command, "_can_ask", lambda args: True)
    code, out, _ = run(capsys, "fix", "--python", str(FAKE_PIP))
    assert code == (0 if runs else 1)  # the machine's verdict afterwards: declined, torch is still CPU-only
    assert f"  $ {' '.join(PIP_ARGV)}\nRun it now? [y/N] " in out
    assert logged(pip_log) == ([PIP_ARGV] if runs else [])
    assert ("torch.cpu_build: fail → pass" in out) is runs
    assert out.endswith("Nothing applied.\n") is not runs


def test_yes_with_only_system_steps_runs_nothing_and_lists_them(
    capsys: pytest.CaptureFixture[str], pip_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    def fake_diagnose(host: object, python: str, **_: Any) -> Report:
        calls.append(python)
        return diagnose_fixture("egpu-not-authorized")

    monkeypatch.setattr(fix_command, "diagnose", fake_diagnose)
    code, out, _ = run(capsys, "fix", "--yes", "--python", str(FAKE_PIP))
    assert code == 1  # the enclosure is still not authorized: a script must not read "fixed"
    assert logged(pip_log) == []
    assert len(calls) == 1  # nothing applied, nothing to compare
    lines = out.splitlines()
    assert lines[0] == "gpu-doctor has no Python-environment step to apply here."
    assert "1. Authorize the Thunderbolt/USB4 enclosure  [system]" in lines
    assert (
        "     $ boltctl enroll --policy auto dc010000-0000-8508-a22d-32ca6421cb16   # authorize inXtron AKiTiO "
        "Thunder3 PCIe Box (0-3) now and on every plug" in lines
    )
    assert "2. Re-run gpu-doctor and the quick smoke test" in lines


def test_the_fake_pip_refuses_anything_but_install(tmp_path: Path) -> None:
    import subprocess

    env = {**os.environ, "FAKE_PIP_LOG": str(tmp_path / "log")}
    proc = subprocess.run(
        [str(FAKE_PIP), "-c", "print(1)"], capture_output=True, text=True, timeout=30, env=env, check=False
    )
    assert proc.returncode == 2
    assert "only `-m pip install ...` is simulated" in proc.stderr
