"""The engine, checks and fixes never import the UI library or torch (DESIGN §1, STYLE)."""

from __future__ import annotations

import subprocess
import sys

HEADLESS = [
    "torch_gpu_doctor.cli",
    "torch_gpu_doctor.runner",
    "torch_gpu_doctor.gather",
    "torch_gpu_doctor.render.json_report",
    "torch_gpu_doctor.render.text",
    "torch_gpu_doctor.host.real",
    "torch_gpu_doctor.host.recorded",
    "torch_gpu_doctor.host.recording",
    "torch_gpu_doctor.checks.gpu_present",
    "torch_gpu_doctor.checks.driver_installed",
    "torch_gpu_doctor.checks.driver_nvml",
    "torch_gpu_doctor.checks.driver_nouveau",
    "torch_gpu_doctor.fixes.driver_install",
    "torch_gpu_doctor.fixes.kernel_modules",
    "torch_gpu_doctor.compat",
    "torch_gpu_doctor.events",
    "torch_gpu_doctor.fixing.plan",
    "torch_gpu_doctor.fixing.apply",
    "torch_gpu_doctor.commands.fix",
    # the TUI's engine side: what it shows is decided without the UI library
    "torch_gpu_doctor.tui.session",
    "torch_gpu_doctor.tui.machine_line",
]

SCRIPT = """
import importlib, sys, json
for name in {modules!r}:
    importlib.import_module(name)
from torch_gpu_doctor.cli import main
# a whole run too: probes and checks must not pull the UI or torch in lazily
import io, contextlib
with contextlib.redirect_stdout(io.StringIO()):
    main(["--json"])
bad = sorted(m for m in sys.modules if m.split(".")[0] in ("textual", "torch"))
print(json.dumps(bad))
"""


def test_headless_modules_import_neither_textual_nor_torch() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(modules=HEADLESS)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_the_check_sees_a_forbidden_import() -> None:
    # proves the test above can fail: importing textual is detected
    script = "import textual, sys; print([m for m in sys.modules if m.split('.')[0] == 'textual'][:1])"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert "textual" in out
