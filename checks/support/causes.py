"""Root causes as data (causes.json): which failing check is a consequence of which other one.

A report links each failing or warning finding to the other problems of the same report that cause it
(`Finding.caused_by`); the problems nothing causes are its roots. Front ends lead with the roots, fold the
symptoms under them, and the fix plan acts on the roots first: a symptom's next step is its cause's fix.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from functools import cache

from torch_gpu_doctor.model import Finding, Status
from torch_gpu_doctor.package_data import package_text

GRAPH = "causes.json"
PROBLEMS = (Status.FAIL, Status.WARN)


@cache
def cause_links() -> dict[str, tuple[str, ...]]:
    """symptom check id -> the check ids that can cause it, first cause first."""
    text = package_text("torch_gpu_doctor.checks.support", GRAPH)
    return parse_links(json.loads(text))


def parse_links(data: object) -> dict[str, tuple[str, ...]]:
    if not isinstance(data, dict) or not isinstance(data.get("links"), list):
        raise ValueError(f"{GRAPH}: expected an object with a list of links")
    links: dict[str, tuple[str, ...]] = {}
    for row in data["links"]:
        if not isinstance(row, dict):
            raise ValueError(f"{GRAPH}: a link is not an object: {row!r}")
        symptom, causes = row.get("symptom"), row.get("causes")
        if not isinstance(symptom, str) or not isinstance(causes, list):
            raise ValueError(f"{GRAPH}: a link needs a symptom and a list of causes: {row!r}")
        if not all(isinstance(c, str) for c in causes) or symptom in causes or symptom in links:
            raise ValueError(f"{GRAPH}: bad causes for {symptom}")
        if not row.get("why") or not row.get("source"):
            raise ValueError(f"{GRAPH}: {symptom}: every link says why and where that is from")
        links[symptom] = tuple(causes)
    return links


def link_causes(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """Each problem with `caused_by` set to the problems of the same findings that cause it: those the check
    named itself first, then those of the graph, in its order. Findings that are not problems name none."""
    found = list(findings)
    problems = {f.check_id for f in found if f.status in PROBLEMS}
    links = cause_links()
    linked = []
    for f in found:
        named = (*f.caused_by, *links.get(f.check_id, ())) if f.status in PROBLEMS else ()
        causes = tuple(dict.fromkeys(c for c in named if c in problems and c != f.check_id))
        linked.append(f if causes == f.caused_by else dataclasses.replace(f, caused_by=causes))
    return tuple(linked)


def root_causes(findings: Sequence[Finding]) -> tuple[Finding, ...]:
    """The problems that nothing else in the findings causes, the most telling first: those behind a failure
    (their own or a symptom's) before those behind warnings only, then those that explain the most other
    problems, then the report's order."""
    problems = [f for f in findings if f.status in PROBLEMS]
    by_id = {f.check_id: f for f in problems}
    roots = [f for f in problems if not any(c in by_id for c in f.caused_by)]
    if not roots and problems:  # a loop of checks naming each other: never lose every problem
        roots = problems[:1]
    explained = {r.check_id: symptoms_of(r.check_id, problems) for r in roots}
    order = {f.check_id: i for i, f in enumerate(problems)}

    def rank(root: Finding) -> tuple[bool, int, int]:
        behind_failure = any(f.status is Status.FAIL for f in (root, *explained[root.check_id]))
        return (not behind_failure, -len(explained[root.check_id]), order[root.check_id])

    return tuple(sorted(roots, key=rank))


def symptoms_of(check_id: str, findings: Sequence[Finding]) -> tuple[Finding, ...]:
    """Every problem that `check_id` causes, directly or through other symptoms, in the findings' order."""
    reached = {check_id}
    changed = True
    while changed:
        changed = False
        for f in findings:
            if f.check_id not in reached and f.status in PROBLEMS and reached.intersection(f.caused_by):
                reached.add(f.check_id)
                changed = True
    return tuple(f for f in findings if f.check_id in reached and f.check_id != check_id)


def first_cause(finding: Finding, findings: Sequence[Finding]) -> Finding | None:
    """The root this problem leads to through its first causes (None when it is a root itself)."""
    by_id = {f.check_id: f for f in findings if f.status in PROBLEMS}
    seen = {finding.check_id}
    current: Finding | None = None
    step = finding
    while True:
        nxt = next((by_id[c] for c in step.caused_by if c in by_id and c not in seen), None)
        if nxt is None:
            return current
        seen.add(nxt.check_id)
        current = step = nxt
