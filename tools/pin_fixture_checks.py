"""Add expected.json pins for the given check ids from what the doctor says now, for a person to REVIEW.

    python tools/pin_fixture_checks.py CHECK_ID [CHECK_ID ...] [--fixture NAME ...]

The pin is the status and the summary's first clause; existing pins are never overwritten. Read the diff:
an expectation says what a careful engineer concludes about the machine, not what the code happened to print.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from torch_gpu_doctor.host.recorded import RecordedHost
from torch_gpu_doctor.runner import diagnose

HOSTS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "hosts"


def phrase(summary: str) -> str:
    """The summary up to its first colon or full stop that ends a clause: short, but specific."""
    cut = re.split(r"(?<=[:.;])\s", summary, maxsplit=1)[0]
    return cut.rstrip(":;")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("checks", nargs="+")
    parser.add_argument("--fixture", action="append", default=[])
    args = parser.parse_args()
    fixtures = [HOSTS / n for n in args.fixture] or sorted(p for p in HOSTS.iterdir() if p.is_dir())
    for fixture in fixtures:
        host = RecordedHost(fixture)
        report = diagnose(host, host.python or "python3", only=args.checks, plugins=False)
        path = fixture / "expected.json"
        expected = json.loads(path.read_text(encoding="utf-8"))
        added = []
        for finding in report.findings:
            if finding.check_id in args.checks and finding.check_id not in expected["findings"]:
                expected["findings"][finding.check_id] = {
                    "status": finding.status.value,
                    "summary_contains": phrase(finding.summary),
                }
                added.append(f"{finding.check_id}={finding.status.value}")
        path.write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{fixture.name}: {', '.join(added) or 'nothing new'}")


if __name__ == "__main__":
    main()
