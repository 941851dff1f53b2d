"""Invariants every report keeps, held over every fixture host (tests/fixtures/hosts): each problem leads to a
fix (its own or its root cause's), causes name only real problems of the same report, no line points the
reader at a check that passed as if it had failed, no two lines disagree about torch, the driver or the GPU,
and every gpu-doctor command a message names is one the command line accepts."""

from __future__ import annotations

import json
import re
import shlex
from functools import cache

import pytest

from tests.fixes.hosts import HOSTS, diagnose_fixture
from torch_gpu_doctor.checks.support.causes import (
    PROBLEMS,
    cause_links,
    first_cause,
    parse_links,
    root_causes,
    symptoms_of,
)
from torch_gpu_doctor.cli_parser import build_parser
from torch_gpu_doctor.exit_codes import UsageError
from torch_gpu_doctor.fixing.plan import plan_fixes
from torch_gpu_doctor.model import Finding, Status
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.runner import known_check_ids

FIXTURES = sorted(p.name for p in HOSTS.iterdir() if (p / "expected.json").is_file())
KNOWN = frozenset(known_check_ids(plugins=False))
AREAS = "|".join(sorted({k.split(".")[0] for k in KNOWN}))
SEE = re.compile(rf"\bsee ((?:{AREAS})\.[a-z_]*[a-z])")
DOCTOR_COMMAND = re.compile(r"`(gpu-doctor(?: [^`]*)?)`")


@cache
def report(name: str) -> Report:
    return diagnose_fixture(name)


def texts(finding: Finding) -> list[str]:
    fix = finding.remediation
    found = [finding.summary, finding.details]
    if fix is not None:
        found += [fix.text, *(c.note for c in fix.commands)]
    return found


def test_the_cause_graph_names_known_checks_and_has_no_loop() -> None:
    links = cause_links()
    assert links, "checks/support/causes.json is empty"
    for symptom, causes in links.items():
        assert symptom in KNOWN, symptom
        unknown = [c for c in causes if c not in KNOWN]
        assert not unknown, f"{symptom}: {unknown}"
    visiting: set[str] = set()
    done: set[str] = set()

    def visit(node: str, path: tuple[str, ...]) -> None:
        assert node not in visiting, f"a loop of causes: {' -> '.join((*path, node))}"
        if node in done:
            return
        visiting.add(node)
        for cause in links.get(node, ()):
            visit(cause, (*path, node))
        visiting.discard(node)
        done.add(node)

    for symptom in links:
        visit(symptom, ())


@pytest.mark.parametrize(
    "data",
    [
        [],
        {"links": [{"symptom": "a.b", "causes": ["a.b"], "why": "w", "source": "s"}]},
        {"links": [{"symptom": "a.b", "causes": ["c.d"], "why": "", "source": "s"}]},
        {"links": [{"symptom": "a.b", "causes": "c.d", "why": "w", "source": "s"}]},
    ],
)
def test_a_malformed_cause_graph_is_refused(data: object) -> None:
    with pytest.raises(ValueError):
        parse_links(data)


def _finding(check_id: str, status: Status = Status.FAIL, caused_by: tuple[str, ...] = ()) -> Finding:
    return Finding(check_id, status, f"{check_id} summary", caused_by=caused_by)


def test_roots_lead_with_the_cause_behind_a_failure_and_symptoms_fold_under_it() -> None:
    findings = (
        _finding("gpu.present", caused_by=("platform.virtual_machine",)),
        _finding("torch.installed"),
        _finding("platform.virtual_machine", Status.WARN),
        _finding("torch.cuda_init", caused_by=("gpu.present",)),
    )
    roots = root_causes(findings)
    # the warning explains two failures: it comes before a failure that explains nothing
    assert [r.check_id for r in roots] == ["platform.virtual_machine", "torch.installed"]
    assert [s.check_id for s in symptoms_of("platform.virtual_machine", findings)] == [
        "gpu.present",
        "torch.cuda_init",
    ]
    root = first_cause(findings[3], findings)
    assert root is not None and root.check_id == "platform.virtual_machine"
    assert first_cause(findings[1], findings) is None


def test_a_loop_of_causes_never_hides_every_problem() -> None:
    findings = (_finding("a.one", caused_by=("a.two",)), _finding("a.two", caused_by=("a.one",)))
    assert [r.check_id for r in root_causes(findings)] == ["a.one"]


@pytest.mark.parametrize("name", FIXTURES)
def test_every_problem_leads_to_a_fix(name: str) -> None:
    findings = report(name).findings
    nowhere = []
    for f in findings:
        if f.status not in PROBLEMS:
            continue
        root = first_cause(f, findings) or f
        if root.remediation is None and f.remediation is None:
            nowhere.append(f"{f.check_id}: {f.summary}")
    assert not nowhere, "problems with no fix and no cause that has one:\n" + "\n".join(nowhere)


@pytest.mark.parametrize("name", FIXTURES)
def test_causes_are_problems_of_the_same_report(name: str) -> None:
    r = report(name)
    problems = {f.check_id for f in r.findings if f.status in PROBLEMS}
    for f in r.findings:
        if f.status not in PROBLEMS:
            assert f.caused_by == (), f"{f.check_id} is {f.status.value} yet names causes"
        assert set(f.caused_by) <= problems - {f.check_id}, f"{f.check_id}: {f.caused_by}"
    roots = r.roots()
    assert bool(roots) == bool(problems)
    assert {s.check_id for root in roots for s in symptoms_of(root.check_id, r.findings)} | {
        root.check_id for root in roots
    } == problems, "every problem is a root or a symptom of one"


@pytest.mark.parametrize("name", FIXTURES)
def test_no_line_sends_the_reader_to_a_check_that_passed(name: str) -> None:
    r = report(name)
    status = {f.check_id: f.status for f in r.findings}
    wrong = []
    for f in r.findings:
        for text in texts(f):
            for ref in SEE.findall(text):
                assert ref in KNOWN, f"{f.check_id} names a check that does not exist: {ref}"
                if (
                    f.status is not Status.PASS
                    and f.status is not Status.SKIP
                    and status.get(ref) is Status.PASS
                ):
                    wrong.append(f"{f.check_id} ({f.status.value}) says 'see {ref}', which passed")
    assert not wrong, "\n".join(wrong)


def _says(r: Report, phrase: str) -> list[str]:
    return [f.check_id for f in r.findings for t in texts(f) if phrase.lower() in t.lower()]


@pytest.mark.parametrize("name", FIXTURES)
def test_no_two_lines_disagree_about_torch_the_driver_or_the_gpu(name: str) -> None:
    r = report(name)
    status = {f.check_id: f.status for f in r.findings}
    if status.get("torch.installed") is Status.PASS:
        assert not _says(r, "torch is not installed"), name
    if status.get("driver.installed") is Status.PASS:
        assert not _says(r, "No NVIDIA driver is running"), name
        assert not _says(r, "No NVIDIA driver is installed"), name
    if status.get("gpu.present") is Status.PASS:
        assert not _says(r, "No NVIDIA GPU was found"), name
    if "torch is not installed" in " ".join(f.summary for f in r.findings if f.check_id == "torch.installed"):
        assert not _says(r, "not a CUDA build"), name


@pytest.mark.parametrize("name", FIXTURES)
def test_a_healthy_description_never_sits_on_a_report_with_failures(name: str) -> None:
    description = json.loads((HOSTS / name / "host.json").read_text(encoding="utf-8"))["description"]
    description = re.sub(r"[a-z0-9-]+-healthy", "", description)  # "a copy of rtx4090-workstation-healthy"
    failing = [f.check_id for f in report(name).findings if f.status is Status.FAIL]
    if "healthy" in description.lower() or "all checks pass" in description.lower():
        assert not failing, f"{name} is described as healthy but fails {failing}"


@pytest.mark.parametrize("name", FIXTURES)
def test_every_gpu_doctor_command_a_report_names_is_one_the_command_line_accepts(name: str) -> None:
    r = report(name)
    named = [m for f in r.findings for t in texts(f) for m in DOCTOR_COMMAND.findall(t)]
    for step in plan_fixes(r).steps:
        named += DOCTOR_COMMAND.findall(step.why)
        if step.remediation is not None:
            named += [shlex.join(c.argv) for c in step.remediation.commands if c.argv[:1] == ("gpu-doctor",)]
    parser = build_parser()
    placeholders = {"ID": "driver.nouveau", "FILE": "paste.txt", "DIR": "capture-dir", "PATH": "python3"}
    for command in named:
        argv = [placeholders.get(a, a) for a in shlex.split(command)[1:]]
        try:
            parser.parse_args(argv)
        except (SystemExit, UsageError):
            pytest.fail(f"{name}: the report names `{command}`, which gpu-doctor refuses")


def test_the_fixtures_cover_the_classes_of_issue_18() -> None:
    """At least one captured machine per class the review found (tests/fixtures/hosts/README.md)."""
    assert len(FIXTURES) >= 32, FIXTURES


def test_every_fixture_host_pins_its_root_causes() -> None:
    for name in FIXTURES:
        expected = json.loads((HOSTS / name / "expected.json").read_text(encoding="utf-8"))
        assert expected["root_causes"] == [f.check_id for f in report(name).roots()], name


def test_root_causes_are_the_first_lines_of_the_text_report(capsys: pytest.CaptureFixture[str]) -> None:
    from torch_gpu_doctor.cli import main

    main(["--root", str(HOSTS / "secure-boot-blocks-module"), "--plain"])
    out = capsys.readouterr().out
    verdict = out.index("1 cause behind 4 problems")
    assert verdict < out.index("1. FAIL  driver.secure_boot") < out.index("It also causes:")
    assert out.index("It also causes:") < out.index("GPUs\n"), "the verdict comes before the list of checks"
    assert "(caused by driver.secure_boot)" in out


def test_the_schema_documents_caused_by_and_root_causes() -> None:
    from torch_gpu_doctor.schemas import report_schema_text

    schema = json.loads(report_schema_text())
    assert "caused_by" in schema["$defs"]["finding"]["required"]
    assert "root_causes" in schema["$defs"]["report"]["required"]
