"""`gpu-doctor triage` imports what judging a paste needs, not the live doctor's machinery (issue 17: triage of a
5 KB paste under 0.3 s, most of which was importing modules it never used). Which modules load is what these
pin, never a time: benchmarks/triage_time.py measures that."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from torch_gpu_doctor.catalog import builtin_modules
from torch_gpu_doctor.triage.outcome import CAUSE_ORDER

# a plain error paste on which every NVIDIA check of CAUSE_ORDER but the Jetson's runs (named: a corpus file sorted before it
# would change which checks run)
PASTE = Path(__file__).parent / "pastes" / "3d-ken-burns-15-torchvision-nms-no-kernel-image.txt"
RUN = """
import contextlib, io, json, sys
from torch_gpu_doctor.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(["triage", sys.argv[1]])
print(json.dumps(sorted(m for m in sys.modules if m.startswith("torch_gpu_doctor."))))
"""
# the gathering side: a paste is another machine's text, nothing here is read, probed or measured
GATHERING = (
    "gather",
    "runner",
    "smoke.",
    "probes.",
    "measure.",
    "host.real",
    "host.process",
    "events",  # progress events: for a listener, and triage has none
    "tui.",
    "bundle.",
)
# facts of sources a paste never shows: their types load only with the checks that read them
NEVER_PASTED = (
    "facts.storage",
    "facts.block_devices",
    "facts.measurements",
    "facts.memory_limits",
    "facts.smoke",
)


def _modules_after_triage(paste: Path) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", RUN, str(paste)], capture_output=True, text=True, timeout=120, check=True
    )
    modules: list[str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return [m.removeprefix("torch_gpu_doctor.") for m in modules]


def test_triage_loads_no_gathering_and_no_facts_a_paste_never_has() -> None:
    loaded = _modules_after_triage(PASTE)
    assert "triage.verdict" in loaded  # it did triage
    unwanted = [m for m in loaded if m.startswith(GATHERING) or m in NEVER_PASTED]
    assert not unwanted, f"triage imported {unwanted}"


def test_triage_imports_only_the_check_modules_of_the_checks_it_runs() -> None:
    loaded = {m for m in _modules_after_triage(PASTE) if m.startswith("checks.") and ".support" not in m}
    modules = builtin_modules()
    needed = {
        modules[c].removeprefix("torch_gpu_doctor.")
        for c in CAUSE_ORDER
        if not c.startswith("amd.") and c != "platform.jetson"  # nothing in it says ARM or Jetson
    }
    assert loaded == needed
    assert len(needed) < len(set(modules.values())) / 2  # proves the selection: most modules stay out
