"""The default text report says what matters in a few lines (flutter doctor's way): the verdict, the areas
with a problem (each problem in full, the rest counted), one line per area with nothing to report; -v lists
every check with its evidence."""

from __future__ import annotations

import pytest

from tests.fixes.hosts import HOSTS
from torch_gpu_doctor.cli import main


def _text(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    main(["--plain", *argv])
    return capsys.readouterr().out


def test_a_healthy_machine_is_a_few_lines_and_every_area_is_one(capsys: pytest.CaptureFixture[str]) -> None:
    out = _text(capsys, "--root", str(HOSTS / "rtx3090-x8-slots"))
    assert "PASS    " not in out and "SKIP    " not in out  # counted, not listed
    assert "  OK      GPUs: " in out and "  OK      Torch: " in out
    listed = [line for line in out.splitlines() if line.startswith(("  UNKNOWN ", "  WARN ", "  FAIL "))]
    areas = [line for line in out.splitlines() if line.startswith("  OK      ")]
    assert len(listed) + len(areas) < 20  # 53 checks: only what is not fine is a line of its own


def test_problems_are_listed_in_full_and_the_rest_of_their_area_counted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = _text(capsys, "--root", str(HOSTS / "secure-boot-blocks-module"))
    driver = out.split("\nDriver\n", 1)[1].split("\n\n", 1)[0]
    assert "FAIL    driver.secure_boot" in driver
    assert "PASS" not in driver and "and 3 pass, 1 skipped" in driver
    assert out.index("1 cause behind 4 problems") < out.index("\nDriver\n") < out.index("Nothing to report")


def test_verbose_lists_every_check(capsys: pytest.CaptureFixture[str]) -> None:
    out = _text(capsys, "--root", str(HOSTS / "rtx3090-x8-slots"), "-v")
    assert "PASS    driver.installed" in out and "SKIP    " in out
    assert "Nothing to report" not in out


def test_the_footer_time_is_the_whole_run_when_the_command_knows_it() -> None:
    """The footer said the checks' time alone ("· 0.6 s"); a person waited for start-up and imports too."""
    import io

    from tests.fleet.reports import X4, report_of
    from torch_gpu_doctor.render.text import render_text

    report = report_of(X4)
    out = io.StringIO()
    render_text(report, out, elapsed_s=12.34)
    assert " · 12.3 s\n" in out.getvalue()
    out = io.StringIO()
    render_text(report, out)
    assert f" · {report.duration_ms / 1000:.1f} s\n" in out.getvalue()
