"""The error-signature catalogue (checks/support/error_signatures.json): valid, sourced, proved on the real pastes
it was taken from, and consistent with the checks that judge what it implies."""

from __future__ import annotations

import dataclasses
import json
import re
from importlib import resources
from pathlib import Path

import pytest

from tools import signature_needles
from torch_gpu_doctor.catalog import load_checks
from torch_gpu_doctor.checks.support.signatures import (
    CLASSES,
    CatalogueError,
    Signature,
    load_catalogue,
    match_line,
    parse_catalogue,
)
from torch_gpu_doctor.triage.pipeline import diagnose_paste
from torch_gpu_doctor.triage.verdict import Kind

HERE = Path(__file__).parent
CATALOGUE = load_catalogue()
# implications that say something is wrong: a signature carrying one makes its check a problem on its paste
PROBLEM_KEYS = frozenset(
    {
        "error", "driver_loaded", "nvml_error", "torch_cuda_build", "torch_import_failed", "cuda_init_error",
        "visible_devices_problem", "container_without_gpus", "nouveau_loaded",
    }
)  # fmt: skip
# Classes the issue names, each with real examples: the catalogue must cover every one
REQUIRED_CLASSES = (
    "arch", "driver_too_old", "forward_compat", "no_driver", "nvml", "driver_library_mismatch", "unknown_error",
    "cpu_build", "missing_library", "undefined_symbol", "no_visible_gpu", "container", "mig", "wsl", "oom",
    "nccl_shm", "nccl", "nccl_p2p", "nccl_ib", "xid", "gpu_lost", "ecc", "rocm",
)  # fmt: skip


def test_the_catalogue_is_large_and_names_only_real_checks() -> None:
    known = frozenset(c.spec.id for c in load_checks(plugins=False).checks)
    text = (
        resources.files("torch_gpu_doctor.checks.support")
        .joinpath("error_signatures.json")
        .read_text("utf-8")
    )
    assert len(parse_catalogue(json.loads(text), known)) == len(CATALOGUE) >= 60
    assert set(REQUIRED_CLASSES) <= {s.cls for s in CATALOGUE} <= CLASSES


def test_every_signature_names_its_source_thread() -> None:
    for s in CATALOGUE:
        assert s.url.startswith("https://github.com/"), s.id
        assert s.source.replace("/", "").split("#")[0] and "#" in s.source, s.id


@pytest.mark.parametrize("signature", [s for s in CATALOGUE if s.example], ids=lambda s: s.id)
def test_every_signature_matches_the_paste_it_was_taken_from(signature: Signature) -> None:
    assert signature.example is not None
    lines = (HERE / signature.example).read_text(encoding="utf-8").splitlines()
    assert any(h.signature.id == signature.id for n, line in enumerate(lines, 1) for h in match_line(line, n))


@pytest.mark.parametrize(
    "signature", [s for s in CATALOGUE if s.example and PROBLEM_KEYS & set(s.implies)], ids=lambda s: s.id
)
def test_what_a_signature_implies_makes_its_check_a_problem(signature: Signature) -> None:
    """One rules engine: the catalogue only turns text into facts; the check it names must then judge those
    facts a problem on the very paste the signature came from."""
    assert signature.example is not None
    path = HERE / signature.example
    verdicts = {v.finding.check_id: v for v in diagnose_paste(path.read_bytes(), path.name).result.verdicts}
    verdict = verdicts.get(signature.check)
    problem = verdict is not None and verdict.kind == Kind.PROBLEM
    cpu_build = verdicts.get("torch.cpu_build")  # a CPU build explains every CUDA symptom after it
    assert problem or (cpu_build is not None and cpu_build.kind == Kind.PROBLEM), (signature.id, verdict)


def test_a_malformed_entry_is_refused_with_its_id() -> None:
    good = {
        "id": "x_y",
        "class": "oom",
        "pattern": "CUDA out of memory",
        "means": "m",
        "implies": {"error": "oom"},
        "check": "torch.out_of_memory",
        "source": "a/b#1",
        "url": "https://github.com/a/b/issues/1",
        "example": None,
    }
    assert parse_catalogue({"signatures": [good]})[0].id == "x_y"
    for broken, says in (
        ({"pattern": "("}, "does not compile"),
        ({"implies": {"gpu_name": "$missing"}}, "does not capture"),
        ({"implies": {"nonsense": True}}, "not in the vocabulary"),
        ({"class": "astrology"}, "unknown class"),
        ({"implies": {"error": "bad_luck"}}, "unknown error kind"),
        ({"needle": "Out Of Memory"}, "'needle' must be lower-case"),
    ):
        with pytest.raises(CatalogueError, match=says):
            parse_catalogue({"signatures": [{**good, **broken}]})
    with pytest.raises(CatalogueError, match="no check"):
        parse_catalogue({"signatures": [good]}, frozenset({"torch.cuda_init"}))


def test_each_needle_is_the_one_derived_from_its_pattern() -> None:
    document = json.loads(
        resources.files("torch_gpu_doctor.checks.support")
        .joinpath("error_signatures.json")
        .read_text("utf-8")
    )
    stale = [
        (e["id"], e.get("needle"), signature_needles.derive(e["pattern"]))
        for e in document["signatures"]
        if e.get("needle") != signature_needles.derive(e["pattern"])
    ]
    assert not stale, f"run python tools/regen.py: {stale}"
    assert sum(1 for s in CATALOGUE if s.needle) > len(CATALOGUE) * 3 // 4  # most lines skip most patterns


@pytest.mark.parametrize(
    ("pattern", "needle"),
    [
        (r"CUDA out of memory\. Tried to allocate (?P<n>\d+)", "cuda out of memory. tried to allocate "),
        (r"(?:error=999|runtime error \(999\))\s*:\s*unknown error", "unknown error"),
        (r"no CUDA-capable device|cudaErrorNoDevice", None),  # alternatives: no text common to all
        (r"(?:CUDA )?out of memory", "out of memory"),  # an optional part is not required
        (r"Xid\d+", None),  # "xid" alone: too short to be worth a test of its own
        (r"x(?=lookahead text)y", None),
        (r"(abc)+defg", "defg"),
    ],
)
def test_a_needle_is_text_every_match_contains(pattern: str, needle: str | None) -> None:
    assert signature_needles.derive(pattern) == needle


def test_needles_change_no_match_on_the_whole_corpus() -> None:
    # the same hits with and without the first test, on every line of every stored paste and report
    without = tuple(dataclasses.replace(s, needle=None) for s in CATALOGUE)
    for path in sorted((HERE / "pastes").glob("*.txt")) + sorted((HERE / "reports").glob("*.txt")):
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            fast = [h.signature.id for h in match_line(line, n, CATALOGUE)]
            assert fast == [h.signature.id for h in match_line(line, n, without)], (path.name, n)


def test_a_dotless_or_dotted_i_does_not_hide_a_signature() -> None:
    """Review finding: re.IGNORECASE matches "i" with "ı" and "İ", casefold() did not: the needle skipped lines
    the pattern matches (a paste from a Turkish locale)."""
    line = "NVIDIA GeForce RTX 3080 with CUDA capabılıty sm_86 is not compatıble with the current PyTorch İnstallation."
    assert re.search("capability", line, re.IGNORECASE)  # the premise: the regex itself matches
    without = tuple(dataclasses.replace(s, needle=None) for s in CATALOGUE)
    expected = [h.signature.id for h in match_line(line, 1, without)]
    assert expected and [h.signature.id for h in match_line(line, 1, CATALOGUE)] == expected
