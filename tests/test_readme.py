"""The README opens with the two set-up commands, and CI runs exactly the second one."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    head = text.split("\n## ", 1)[0]
    return re.findall(r"```(?:sh|bash|console)?\n(.+?)\n```", head, flags=re.S)


def test_readme_opens_with_two_setup_commands() -> None:
    run, test = _commands()[:2]
    assert "gpu-doctor" in run and "pip install" in run
    assert "pytest" in test and ".[test]" in test


def test_ci_runs_the_readme_test_command() -> None:
    test = _commands()[1].strip()
    ci = (ROOT / ".ci" / "run").read_text()
    assert test in ci.splitlines()


def test_the_triage_example_is_what_triage_prints() -> None:
    """The triage example (docs/usage.md) is the real answer to a real paste (tests/triage/pastes, CompVis#438), and
    its count of error signatures is the catalogue's."""
    import io

    from torch_gpu_doctor.checks.support.signatures import load_catalogue
    from torch_gpu_doctor.triage.pipeline import diagnose_paste
    from torch_gpu_doctor.triage.render import render_text

    readme = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    paste = ROOT / "tests" / "triage" / "pastes" / "compvis-sd-438-error-803-ubuntu22.txt"
    out = io.StringIO()
    render_text(diagnose_paste(paste.read_bytes(), "error.txt"), "error.txt", out)
    printed = out.getvalue().splitlines()
    example = readme.split("$ gpu-doctor triage error.txt\n", 1)[1].split("```", 1)[0].splitlines()
    for line in example:
        shown = line.removesuffix("…").rstrip()
        assert any(p.startswith(shown) for p in printed), line
    assert f"a catalogue of {len(load_catalogue())} signatures" in " ".join(readme.split())


def test_the_corpus_counts_in_the_usage_guide_are_the_corpus() -> None:
    """docs/usage.md says how many real reports and pastes triage is measured on: the files that are there."""
    usage = " ".join((ROOT / "docs" / "usage.md").read_text(encoding="utf-8").split())
    said = re.search(r"(\d+) collect_env reports and (\d+) error pastes", usage)
    assert said is not None
    corpus = ROOT / "tests" / "triage"
    counted = (len(list((corpus / "reports").glob("*.txt"))), len(list((corpus / "pastes").glob("*.txt"))))
    assert (int(said[1]), int(said[2])) == counted
