"""The fleet commands stay headless, and the parser that lists them imports none of their engine."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import json, sys
from torch_gpu_doctor.cli import build_parser
build_parser()
parser_only = sorted(m for m in sys.modules if m.startswith(("torch_gpu_doctor.fleet.", "torch_gpu_doctor.facts", "torch_gpu_doctor.runner")))
import torch_gpu_doctor.commands.verify, torch_gpu_doctor.commands.diff, torch_gpu_doctor.commands.summarize
import torch_gpu_doctor.render.prometheus
ui = sorted(m for m in sys.modules if m.split(".")[0] in ("textual", "torch"))
print(json.dumps([parser_only, ui]))
"""


def test_parsing_imports_only_the_arguments_and_the_commands_import_no_ui_or_torch() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=True
    )
    parser_only, ui = json.loads(out.stdout.strip().splitlines()[-1])
    assert parser_only == ["torch_gpu_doctor.fleet.arguments"]
    assert ui == []
