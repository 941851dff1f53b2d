"""Every gpu-doctor line a person is told to type runs as written: from the README and docs/, from the hints
in the source, and from what the program prints on every captured machine (tests/documented_commands.py says
how each line is found, filled in and run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.documented_commands import (
    HOSTS,
    Line,
    Places,
    call,
    documented_lines,
    lines_in,
    problem,
    run_line,
    source_hints,
)

DOCUMENTED = documented_lines()
HINTS = source_hints()


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> Places:
    return Places(tmp_path_factory.mktemp("documented"))


def test_the_lines_are_found() -> None:
    """The finders see what is there: the README's tour, a docs page's spans, a Command tuple, a message."""
    where = {line.text: line.where for line in DOCUMENTED}
    assert where["gpu-doctor explain driver.nouveau"] == "README.md"
    assert "gpu-doctor verify --config docs/fleet/verify.toml --json" in where
    assert any(w.startswith("docs/fleet.md") for w in where.values())
    hints = {line.text for line in HINTS}
    assert "gpu-doctor smoke --mode quick" in hints  # Command(("gpu-doctor", "smoke", "--mode", "quick"))
    assert "gpu-doctor capture DIR --smoke" in hints
    assert len(DOCUMENTED) >= 25 and len(HINTS) >= 8


@pytest.mark.parametrize("line", DOCUMENTED, ids=str)
def test_every_documented_line_runs(line: Line, places: Places) -> None:
    ran = run_line(line, places)
    assert problem(line, ran) is None, f"{line} → {ran.argv}: {problem(line, ran)}"


@pytest.mark.parametrize("line", HINTS, ids=str)
def test_every_hint_in_the_source_runs(line: Line, places: Places) -> None:
    ran = run_line(line, places)
    assert problem(line, ran) is None, f"{line} → {ran.argv}: {problem(line, ran)}"


def _checks() -> list[str]:
    listed = call(["--list-checks", "--json"])
    return [c["id"] for c in json.loads(listed.out)["checks"]]


def test_every_line_the_program_prints_runs(places: Places) -> None:
    """Over every captured machine: the report with every check, and the fix plan; every check's explanation.
    Each line is run against the machine it was printed for."""
    seen = {line.text for line in DOCUMENTED + HINTS}
    printed: dict[str, Line] = {}
    hosts = sorted(p for p in HOSTS.iterdir() if (p / "host.json").is_file())
    assert len(hosts) >= 30
    for host in hosts:
        for argv in (["--plain", "-v", "--root", str(host)], ["fix", "--dry-run", "--root", str(host)]):
            for line in lines_in(call(argv).out, f"{argv[0]} on {host.name}", host):
                printed.setdefault(line.text, line)
    for check_id in _checks():
        for line in lines_in(call(["explain", check_id]).out, f"explain {check_id}"):
            printed.setdefault(line.text, line)
    assert printed, "the program printed no gpu-doctor line at all: the finder is broken"
    failures = []
    for text, line in sorted(printed.items()):
        if text in seen:
            continue  # run above, from the source or the docs
        ran = run_line(line, places)
        why = problem(line, ran)
        if why is not None:
            failures.append(f"{line} → {ran.argv}: {why}")
    assert not failures, "\n".join(failures)


def test_a_line_that_would_not_run_is_caught(places: Places) -> None:
    """The runner can fail: a misspelled option, an unknown check and a missing file are each a problem."""
    for text in (
        "gpu-doctor --plian",
        "gpu-doctor explain no.such_check",
        "gpu-doctor diff /nonexistent.json",
    ):
        line = Line(text, "made up here")
        assert problem(line, run_line(line, places)) is not None, text


def test_a_capture_line_records_into_a_temporary_folder(places: Places) -> None:
    line = Line("gpu-doctor capture /tmp/my-machine", "made up here")
    ran = run_line(line, places)
    assert problem(line, ran) is None
    assert Path(ran.argv[1]).parent == places.folder and (Path(ran.argv[1]) / "host.json").is_file()


def test_every_command_the_source_names_is_quoted_where_the_finder_sees_it() -> None:
    """A message naming `gpu-doctor --smoke` in prose, unquoted, would escape the tests above."""
    from tests.documented_commands import unquoted_hints

    assert unquoted_hints() == []
