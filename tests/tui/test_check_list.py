"""CheckList.show_all (a whole report at once) draws what showing each check in turn draws."""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult

from tests.tui.conftest import report_of
from torch_gpu_doctor.model import Finding
from torch_gpu_doctor.tui.widgets.check_list import CheckList


class Lists(App[None]):
    def compose(self) -> ComposeResult:
        yield CheckList(id="one")
        yield CheckList(id="each")


def _labels(checks: CheckList) -> list[str]:
    out: list[str] = []
    for area in checks.root.children:
        out.append(str(area.label))
        out.extend(str(leaf.label) for leaf in area.children)
    return out


def test_a_whole_report_at_once_is_drawn_as_check_by_check() -> None:
    report = report_of("secure-boot-blocks-module")  # fails, warnings and passes in several areas
    found: dict[str, list[Finding]] = {}
    for finding in report.findings:
        found.setdefault(finding.check_id, []).append(finding)

    async def scenario() -> None:
        app = Lists()
        async with app.run_test(size=(80, 40)):
            at_once, each = app.query_one("#one", CheckList), app.query_one("#each", CheckList)
            for checks in (at_once, each):
                checks.plan(report.specs)
            planned = _labels(at_once)
            at_once.show_all(found)
            for check_id, findings in found.items():
                each.show(check_id, findings)
            assert _labels(at_once) == _labels(each) != planned
            assert any("fail" in label for label in _labels(at_once))

    asyncio.run(scenario())
