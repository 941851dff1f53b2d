"""Re-run the commands of the tours (README.md, docs/usage.md) and paste their real output between the markers.

    <!-- tour: ARGS -->            runs `gpu-doctor ARGS` and pastes stdout
    ```console ... ```
    <!-- /tour -->

Run from the repository root after changing what the report prints: `python tools/refresh_readme_tour.py`.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOURS = (ROOT / "README.md", ROOT / "docs" / "usage.md")  # the pages with <!-- tour --> markers
MARKER = re.compile(r"<!-- tour: (?P<args>.+?) -->\n.*?<!-- /tour -->", re.S)


def _output(args: list[str]) -> str:
    env = dict(os.environ, NO_COLOR="1", COLUMNS="100")
    proc = subprocess.run(
        [sys.executable, "-m", "torch_gpu_doctor", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )
    text = proc.stdout.rstrip("\n").replace(str(ROOT) + "/", "")
    return text.replace(sys.executable, "python3")


def _block(match: re.Match[str]) -> str:
    args = shlex.split(match["args"])
    command = f"gpu-doctor {' '.join(args)}".rstrip()  # --plain shown: in a terminal the TUI opens
    return f"<!-- tour: {match['args']} -->\n```console\n$ {command}\n{_output(args)}\n```\n<!-- /tour -->"


def main() -> int:
    for page in TOURS:
        page.write_text(MARKER.sub(_block, page.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
