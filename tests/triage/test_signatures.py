"""The error-signature catalogue (checks/support/error_signatures.json): valid, sourced, proved on the real pastes
it was taken from, and consistent with the checks that judge what it implies."""

from __future__ import annotations

import dataclasses
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from tools import signature_needles
from torch_gpu_doctor.catalog import load_checks
from torch_gpu_doctor.checks.support.signatures import (
    CLASSES,
    CatalogueError,
    Signature,
    candidates,
    load_catalogue,
    match_line,
    parse_catalogue,
)
from torch_gpu_doctor.triage.decode import decode_paste
from torch_gpu_doctor.triage.outcome import Kind
from torch_gpu_doctor.triage.paste import read_paste
from torch_gpu_doctor.triage.pipeline import diagnose_paste

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
        ({"within": ["x_y"]}, "'within' must be a signature id"),
        ({"within": "no_such_signature"}, "'explains' or 'within' names no signature"),
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
    # most lines skip most patterns: a needle, or one for each alternative, for every signature
    assert sum(1 for s in CATALOGUE if s.needle) > len(CATALOGUE) * 2 // 3
    assert all(s.needle or s.needle_any for s in CATALOGUE)


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


def test_each_alternation_has_the_needles_derived_from_its_pattern() -> None:
    """An alternation without a common needle gets one per alternative (a line must hold one of them)."""
    document = json.loads(
        resources.files("torch_gpu_doctor.checks.support")
        .joinpath("error_signatures.json")
        .read_text("utf-8")
    )
    stale = [
        e["id"]
        for e in document["signatures"]
        if e.get("needle_any") != signature_needles.derive_any(e["pattern"])
    ]
    assert not stale, f"run python tools/signature_needles.py: {stale}"
    assert signature_needles.derive_any(r"no CUDA-capable device|cudaErrorNoDevice") == [
        "cudaerrornodevice",
        "no cuda-capable device",
    ]
    # where an alternative has no needle of four characters: three ("xid", "oom", "gpu") or, without case, two
    # ("显存"): a few lines hold one, where without needles every line of the paste is searched
    assert signature_needles.derive_any(r"(?:Xid\d+|fallen off the bus)") == ["fallen off the bus", "xid"]
    assert signature_needles.derive_any(r"(?:Xi\d+|fallen off the bus)") is None  # two letters: too short
    assert signature_needles.derive_any(r"显存(?:不足|爆)|out of memory") == ["out of memory", "显存"]
    # ... and the short ones only where the long are missing, alternative by alternative
    assert signature_needles.derive_any(r"(?:job|run) (?:memory|vram)|显存") == ["memory", "vram", "显存"]
    assert signature_needles.derive_any(r"(?:job|run) (?:on|at) \w+|显存") == ["job", "run", "显存"]
    assert signature_needles.derive_any(r"CUDA out of memory") is None  # it has a needle of its own
    # re's parser moves the shared "\b" out in front of the alternation: still one needle per alternative
    assert signature_needles.derive_any(r"\binsufficient driver\b|\bdriver is insufficient\b") == [
        "driver is insufficient",
        "insufficient driver",
    ]
    # beside a zero-width test, an optional part and a positive lookahead, and nested
    assert signature_needles.derive_any(r"^(?!.*\bnot\b)(?:\[x\] )?(?:gp (?:lost|gone away)|vanished)") == [
        "gone away",
        "lost",
        "vanished",
    ]
    assert signature_needles.derive_any(r"^(?=.*(?:memory|vram))\w+ fu") == ["memory", "vram"]
    # a negative lookahead's words are not in every match; an alternative without a needle spoils the lot
    assert signature_needles.derive_any(r"^(?!.*(?:memory|vram))\w+ f") is None
    assert signature_needles.derive_any(r"(?:lost|x)\w") is None
    # only lines with an alternative's text are searched
    (plain,) = parse_catalogue(
        {
            "signatures": [
                {
                    "id": "x_y",
                    "class": "oom",
                    "pattern": "alpha beta|gamma delta",
                    "needle_any": ["alpha beta", "gamma delta"],
                    "means": "m",
                    "implies": {},
                    "check": "torch.out_of_memory",
                    "source": "a/b#1",
                    "url": "https://github.com/a/b/issues/1",
                }
            ]
        }
    )
    assert match_line("x GAMMA DELTA", 1, (plain,)) and not match_line("alpha", 1, (plain,))
    with pytest.raises(CatalogueError, match="needle_any"):
        parse_catalogue({"signatures": [{"id": "x", "class": "oom", "pattern": "a", "needle_any": "a"}]})


def test_needles_change_no_match_on_the_whole_corpus() -> None:
    # the same hits with and without the first test, on every line of every stored paste and report
    without = tuple(dataclasses.replace(s, needle=None, needle_any=()) for s in CATALOGUE)
    for path in sorted((HERE / "pastes").glob("*.txt")) + sorted((HERE / "reports").glob("*.txt")):
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            fast = [h.signature.id for h in match_line(line, n, CATALOGUE)]
            assert fast == [h.signature.id for h in match_line(line, n, without)], (path.name, n)


def test_a_paste_searched_once_for_each_needle_finds_every_hit_line_by_line_does() -> None:
    """`candidates` (each needle looked for once in the whole paste) keeps every signature a line, or a line
    joined with the next as _error_hits joins a wrapped message, matches: on every stored paste and report."""
    for path in sorted((HERE / "pastes").glob("*.txt")) + sorted((HERE / "reports").glob("*.txt")):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        likely = candidates(" ".join(line.strip() for line in lines))
        assert len(likely) < len(CATALOGUE), path.name  # it does narrow the search
        for n, line in enumerate(lines, 1):
            joined = f"{line.rstrip()} {lines[n].strip()}" if n < len(lines) else line
            for text in (line, joined):
                every = [h.signature.id for h in match_line(text, n, CATALOGUE)]
                assert [h.signature.id for h in match_line(text, n, likely)] == every, (path.name, n)


def test_a_message_whose_needle_is_cut_by_a_wrap_is_still_a_candidate() -> None:
    """The needle of torch's driver message spans the line break of a terminal's wrap; the joined text a
    wrapped message is read from holds it, and so does the text `candidates` searches."""
    first = "    torch._C._cuda_init()  RuntimeError: The NVIDIA driver on your system is too"
    second = "   old (found version 11040). Please update your GPU driver"
    every = [h.signature.id for h in match_line(f"{first} {second.strip()}", 1, CATALOGUE)]
    assert every and not match_line(first, 1, CATALOGUE) and not match_line(second, 2, CATALOGUE)
    likely = candidates(" ".join(line.strip() for line in (first, second)))
    assert [h.signature.id for h in match_line(f"{first} {second.strip()}", 1, likely)] == every
    pasted = read_paste(decode_paste(f"{'x' * 70}\n{first}\n{second}\n".encode(), "wrapped.txt"))
    assert [h.signature.id for h in pasted.hits] == every


def test_a_dotless_or_dotted_i_does_not_hide_a_signature() -> None:
    """Review finding: re.IGNORECASE matches "i" with "ı" and "İ", casefold() did not: the needle skipped lines
    the pattern matches (a paste from a Turkish locale)."""
    line = "NVIDIA GeForce RTX 3080 with CUDA capabılıty sm_86 is not compatıble with the current PyTorch İnstallation."
    assert re.search("capability", line, re.IGNORECASE)  # the premise: the regex itself matches
    without = tuple(dataclasses.replace(s, needle=None, needle_any=()) for s in CATALOGUE)
    expected = [h.signature.id for h in match_line(line, 1, without)]
    assert expected and [h.signature.id for h in match_line(line, 1, CATALOGUE)] == expected


def test_a_signature_with_its_own_fix_is_the_cause_of_its_paste() -> None:
    """An error no check turns into a problem (a program's bug, a build tool's refusal) still gives a verdict:
    the catalogue's own cause and fix, never "no problem found" after a known error was read."""
    own = [s for s in CATALOGUE if s.fix is not None]
    assert len(own) >= 6
    for signature in own:
        assert signature.example is not None, signature.id
        path = HERE / signature.example
        result = diagnose_paste(path.read_bytes(), path.name).result
        assert result.cause is not None, signature.id
        assert result.cause.lines, signature.id  # it says which lines of the paste


def test_own_fix_values_come_from_the_line_and_other_dollars_stay() -> None:
    entry: dict[str, Any] = {
        "id": "x_y",
        "class": "other",
        "pattern": r"built with (?P<cuda>\d+\.\d+)",
        "means": "m",
        "implies": {},
        "check": "torch.companions",
        "source": "a/b#1",
        "url": "https://github.com/a/b/issues/1",
        "fix": {
            "cause": "CUDA $cuda",
            "text": "set CUDA_HOME=$CONDA_PREFIX for $cuda",
            "commands": [{"argv": ["conda", "install", "cuda-toolkit=$cuda"], "note": "$cuda"}],
        },
    }
    (signature,) = parse_catalogue({"signatures": [entry]})
    (hit,) = match_line("nvcc built with 12.1 here", 3, (signature,))
    told = hit.own_cause()
    assert told is not None
    cause, fix = told
    assert cause == "CUDA 12.1" and fix.text == "set CUDA_HOME=$CONDA_PREFIX for 12.1"
    assert fix.commands[0].argv == ("conda", "install", "cuda-toolkit=12.1")
    assert not fix.commands[0].runs_here  # the other machine's command: shown and copied only
    for broken, says in (
        ({"commands": [{"argv": "conda install x"}]}, "argv"),
        ({"commands": [{"argv": ["conda", ""]}]}, "argv"),
        ({"target": "cloud"}, "unknown fix target"),
        ({"cause": ""}, "'cause' must be a non-empty string"),
        ({"requires_root": "yes"}, "requires_root"),
    ):
        with pytest.raises(CatalogueError, match=says):
            parse_catalogue({"signatures": [{**entry, "fix": {**entry["fix"], **broken}}]})


def test_a_message_wrapped_over_two_lines_is_read_once() -> None:
    """Terminals and setup.py wrap long messages: a long line that matches nothing is tried with the next."""
    wrapped = (
        "RuntimeError:\n"
        "The detected CUDA version (12.1) mismatches the version that was used to compile\n"
        "      PyTorch (11.8). Please make sure to use the same CUDA versions.\n"
    )
    pasted = read_paste(decode_paste(wrapped.encode(), "wrapped.txt"))
    assert [(h.signature.id, h.line) for h in pasted.hits] == [
        ("other_cpp_extension_cuda_version_mismatch", 2)
    ]
    assert 3 not in pasted.unread  # the continuation is part of the message
    result = diagnose_paste(wrapped.encode(), "wrapped.txt").result
    assert result.cause is not None and "12.1" in result.cause.finding.summary
    # a next line that matches on its own keeps its own hit, once
    both = "x" * 70 + "\nRuntimeError: CUDA error: out of memory\n"
    ids = [h.signature.id for h in read_paste(decode_paste(both.encode(), "b.txt")).hits]
    assert len(ids) == len(set(ids)) and all(
        h.line == 2 for h in read_paste(decode_paste(both.encode(), "b.txt")).hits
    )


def test_an_install_command_the_person_typed_is_no_evidence() -> None:
    """`pip install torch==2.7.0+cpu ...` (pytorch/vision#9077) says what was asked for, not what is installed."""
    typed = (
        "`pip install torch==2.7.0+cpu torchvision==0.22.0 --index-url https://download.pytorch.org/whl/cpu`\n"
        "$ python -m pip install torch==2.5.1+cpu\n"
        "RuntimeError: operator torchvision::nms does not exist\n"
    )
    hits = read_paste(decode_paste(typed.encode(), "typed.txt")).hits
    assert [(h.signature.id, h.line) for h in hits] == [("other_torchvision_operator_missing", 3)]
    said = "PyTorch version: 2.7.0+cpu\n"  # the same words as output are evidence
    assert read_paste(decode_paste(said.encode(), "said.txt")).hits


@pytest.mark.parametrize(
    ("name", "starts"),
    [
        # the message on a line of its own, no RuntimeError before it: still known, still exit 1
        ("pastes/comfyui-8984-mps-oom.txt", "The Mac's GPU reached the unified memory torch may use"),
        # vLLM's custom all-reduce: its own switch, not NCCL's P2P settings (sgl-project/sglang#552)
        ("pastes/sglang-552-p2p-custom-allreduce.txt", "vLLM's custom all-reduce failed"),
        # a bare "CUDA error: no kernel image" is torch's wording: a torch build with sm_120, not "another program"
        ("pastes/comfyui-7380-no-kernel-image-sm-120.txt", "torch has no kernels for GeForce RTX 5070"),
    ],
)
def test_a_known_family_in_another_form_is_still_known(name: str, starts: str) -> None:
    d = diagnose_paste((HERE / name).read_bytes(), name)
    assert d.result.cause is not None and d.result.cause.finding.summary.startswith(starts)
    assert d.result.exit_problem()
