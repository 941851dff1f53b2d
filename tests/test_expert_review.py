"""The doctor's root causes against an expert's, for every fixture host (tests/fixtures/hosts/expert_review.json).

The first root cause must be the expert's first. Where the doctor is known to disagree the row says why, and the
test holds that it still does: fixing it fails here until the row is updated, so the table stays true.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.fixes.hosts import HOSTS, diagnose_fixture

TABLE = json.loads((HOSTS / "expert_review.json").read_text(encoding="utf-8"))
ROWS: dict[str, dict[str, Any]] = {row["host"]: row for row in TABLE["hosts"]}
FIXTURES = sorted(p.name for p in HOSTS.iterdir() if (p / "expected.json").is_file())


def test_every_fixture_host_has_the_experts_verdict() -> None:
    assert sorted(ROWS) == FIXTURES
    for row in ROWS.values():
        assert isinstance(row["root_causes"], list) and row["first_step"], row["host"]
        assert row["report_signed"] or row.get("why"), f"{row['host']}: say why it is not signed"


@pytest.mark.parametrize("name", FIXTURES)
def test_the_first_root_cause_is_the_experts(name: str) -> None:
    row = ROWS[name]
    ours = [f.check_id for f in diagnose_fixture(name).roots()]
    agrees = ours[:1] == row["root_causes"][:1]
    if row.get("doctor_disagrees"):
        assert not agrees, f"{name} now agrees with the expert: drop doctor_disagrees from its row"
    else:
        assert agrees, f"{name}: the doctor leads with {ours[:1]}, the expert with {row['root_causes'][:1]}"
        # no root cause the expert names is missing from the report
        assert set(row["root_causes"]) <= set(ours), (ours, row["root_causes"])
