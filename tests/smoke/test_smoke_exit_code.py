"""`gpu-doctor smoke` exits 0 only when the GPU test ran and passed: a script's `smoke && train` stops when the
test could not run at all (no torch), in text and JSON alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from torch_gpu_doctor.cli import main
from torch_gpu_doctor.exit_codes import ExitCode

NO_TORCH = Path(__file__).resolve().parent.parent / "fixtures" / "hosts" / "ci-no-gpu-cuda-toolkit"


@pytest.mark.parametrize("mode", ["--plain", "--json"])
def test_a_smoke_test_that_cannot_run_is_not_a_success(mode: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--replay", str(NO_TORCH), "smoke", mode])
    out = capsys.readouterr().out
    assert code == ExitCode.FINDINGS
    if mode == "--json":
        document = json.loads(out)
        assert document["summary"]["exit_code"] == code
        run = next(f for f in document["findings"] if f["check_id"] == "smoke.run")
        assert run["status"] == "fail" and run["remediation"]["commands"]
    else:
        assert "The smoke test could not run: torch is not installed" in out
