"""Write checks/specs.json: the index of the built-in checks' specs (id, title, area, required, explanation).

`--list-checks`, `explain ID` and `--check/--skip` read it (torch_gpu_doctor.catalog.builtin_specs) instead of
importing every check module, the Facts model and the compat data (DESIGN §7: start-up under 300 ms).
It is generated from the real registry, in its order; after adding a check or changing a check's title, area,
`required` or docstring, run `python tools/regen.py` (which runs this with the other generators);
tests/test_check_index.py fails until you do.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from torch_gpu_doctor.catalog import load_checks, spec_to_json

ROOT = Path(__file__).resolve().parent.parent
INDEX = ROOT / "checks" / "specs.json"


def index_text() -> str:
    checks = [spec_to_json(c.spec, c.module) for c in load_checks(plugins=False).checks]
    document = {"generated_by": "python tools/regen.py (do not edit by hand)", "checks": checks}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    text = index_text()
    INDEX.write_text(text, encoding="utf-8")
    print(f"wrote {INDEX.relative_to(ROOT)}: {len(json.loads(text)['checks'])} checks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
