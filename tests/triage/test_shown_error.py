"""A failure the paste shows that no signature knows (triage/shown_error.py), and the rules of blind set 12: a
paste that shows a failure is never "No problem found" nor "found nothing it knows"; an error that explains
another goes first; a GPU no build supports is the answer whatever torch is installed. The pastes are real
(tests/triage/pastes, MANIFEST.json)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from torch_gpu_doctor.checks.support.signatures import CatalogueError, parse_catalogue
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste
from torch_gpu_doctor.triage.prose import read_prose
from torch_gpu_doctor.triage.render import render_text
from torch_gpu_doctor.triage.shown_error import parse_shown_error

PASTES = Path(__file__).parent / "pastes"


def diagnosed(name: str, text: str | None = None) -> PasteDiagnosis:
    data = (PASTES / name).read_bytes() if text is None else text.encode()
    return diagnose_paste(data, name)


def rendered(d: PasteDiagnosis) -> str:
    out = io.StringIO()
    render_text(d, "paste.txt", out)
    return out.getvalue()


def cause_id(d: PasteDiagnosis) -> str | None:
    return d.result.cause.finding.check_id if d.result.cause is not None else None


def test_a_traceback_cut_before_its_exception_is_reported_with_its_last_frame() -> None:
    """pytorch/vision#9174: the paste ends inside torchvision's import; its last frame is line 31."""
    lines = (
        (PASTES / "vision-9174-torchvision-nms-two-torch-copies.txt").read_text(encoding="utf-8").split("\n")
    )
    shown = parse_shown_error(lines)
    assert shown is not None and shown.cut
    assert shown.text.startswith('File "') and "torchvision/__init__.py" in shown.text
    assert lines[shown.line - 1].strip() == shown.text


def test_a_log_prefixed_traceback_is_read_through_its_prefix() -> None:
    """vLLM prints a worker's traceback behind "ERROR 03-02 19:49:00 [multiproc_executor.py:783] "; the paste
    (MiniMax-M2.5#9) is cut inside it, so its last frame is what is shown, without the prefix."""
    text = (PASTES / "minimax-m2.5-9-error802-vllm-tp4-fabricmanager.txt").read_text(encoding="utf-8")
    shown = parse_shown_error(text.split("\n"))
    assert shown is not None and shown.cut
    assert shown.text.startswith('File "/home/user/.venv/lib/python3.10/site-packages/vllm/v1/executor/')
    assert shown.text.endswith("line 754, in worker_main")


def test_a_log_prefix_with_a_message_before_the_traceback() -> None:
    """vLLM 0.7.3: "ERROR 02-24 22:11:40 core.py:294] EngineCore hit an exception: Traceback (most recent call
    last):", its frames behind "ERROR 02-24 22:11:40 core.py:294] " alone; cut at line 59."""
    lines = (
        (PASTES.parent / "reports" / "c03_vllm_collect_env_v100_v1.txt")
        .read_text(encoding="utf-8")
        .split("\n")
    )
    shown = parse_shown_error(lines)
    assert shown is not None and shown.cut and shown.line == 56
    assert shown.text.startswith('File "/root/vllm-0.7.3/') and shown.text.endswith("in run_busy_loop")


@pytest.mark.parametrize(
    "name",
    [
        "vllm-jetson-agx-orin-nv2302-torch20-python2-syntaxerror-first.txt",  # `python collect_env.py` under Python 2
        "vllm-v100s-cu118-torch-collect-env-after-vllm-script-failed.txt",  # vLLM's script beside another vLLM
    ],
)
def test_the_environment_collectors_own_error_is_not_the_problem(name: str) -> None:
    lines = (PASTES.parent / "reports" / name).read_text(encoding="utf-8").split("\n")
    assert parse_shown_error(lines) is None


@pytest.mark.parametrize(
    ("lines", "text", "cut"),
    [
        (  # a chained traceback: the last exception is the one that ended the program
            [
                "Traceback (most recent call last):",
                '  File "a.py", line 1, in <module>',
                "KeyError: 'x'",
                "",
                "During handling of the above exception, another exception occurred:",
                "",
                "Traceback (most recent call last):",
                '  File "a.py", line 3, in <module>',
                "    raise RuntimeError('boom')",
                "RuntimeError: boom",
            ],
            "RuntimeError: boom",
            False,
        ),
        (
            ["Traceback (most recent call last):", '  File "t.py", line 2, in <module>', "KeyboardInterrupt"],
            "KeyboardInterrupt",
            False,
        ),
        (  # Python 3.11's ^^^^ marks under a frame are not the frame
            [
                "Traceback (most recent call last):",
                '  File "t.py", line 2, in f',
                "    g()",
                "    ^^^",
                "```",
            ],
            'File "t.py", line 2, in f',
            True,
        ),
        (["collect2: error: ld returned 1 exit status"], "collect2: error: ld returned 1 exit status", False),
        (["Segmentation fault (core dumped)"], "Segmentation fault (core dumped)", False),
        (
            ["ImportError: cannot import name 'X' from 'y'"],
            "ImportError: cannot import name 'X' from 'y'",
            False,
        ),
    ],
)
def test_what_counts_as_a_shown_error(lines: list[str], text: str, cut: bool) -> None:
    shown = parse_shown_error(lines)
    assert shown is not None and (shown.text, shown.cut) == (text, cut)


@pytest.mark.parametrize(
    "lines",
    [
        ["I get no error, it just runs on the CPU."],
        ["Note: this is a sentence", "Thanks: for the help"],
        ["the error-free run took 3 s"],
        ["time.sleep(5) after resume"],
        # a review's reproducers: a person's sentences, a warning alone, pip's resolver notice
        ["I have an RTX 3090 and torch 2.1. There is no error: it just runs slowly."],
        ["Can the new version support my Tesla K40m? The model failed to load."],
        [
            "FutureWarning: torch.cuda.amp.autocast(args...) is deprecated. Please use torch.amp.autocast('cuda')"
        ],
        [
            "ERROR: pip's dependency resolver does not currently take into account all the packages that are installed."
        ],
    ],
)
def test_words_about_errors_are_not_an_error(lines: list[str]) -> None:
    assert parse_shown_error(lines) is None


def test_an_unrecognised_error_is_a_problem_never_no_problem_found() -> None:
    text = 'python train.py\nTraceback (most recent call last):\n  File "train.py", line 9, in <module>\nZeroDivisionError: division by zero\n'
    d = diagnosed("unknown.txt", text)
    assert d.result.cause is None and d.result.unrecognised is not None
    assert d.result.exit_problem()
    out = rendered(d)
    assert "No problem found" not in out
    assert (
        "an error gpu-doctor does not know (line 4)" in out and "ZeroDivisionError: division by zero" in out
    )
    assert "python -m torch.utils.collect_env" in out


def test_a_cut_traceback_asks_for_its_last_lines_with_the_papers_own_python() -> None:
    d = diagnosed("pytorch-cpu-feedstock-303-jetson-orin-condaforge-no-sm87.txt")
    out = rendered(d)
    assert "traceback cut before its last line" in out
    assert "/home/ergocub/miniforge3/envs/testenv/bin/python -m torch.utils.collect_env" in out


def test_the_json_carries_the_unrecognised_error_and_the_exit_code_is_one() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "torch_gpu_doctor", "triage", "--json", "-"],
        input=b'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\nValueError: nope\n',
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    document = json.loads(proc.stdout)
    assert document["cause"] is None
    assert document["unrecognised_error"] == {
        "line": 3,
        "text": "ValueError: nope",
        "cut": False,
        "first": 1,
        "said": False,
        "image": False,
        "title": False,
    }


def test_a_paste_with_no_error_says_so_and_asks_for_it() -> None:
    """vllm#3785: the error was only in the issue's title; the report alone shows nothing wrong."""
    out = rendered(diagnosed("vllm-3785-collectenv-vllm-p100-no-kernel-image.txt"))
    assert "No problem found in what this paste shows, and no failing program's error." in out


def test_an_error_that_explains_another_is_the_cause() -> None:
    """detectron2#1991: CUDA_HOME ':/usr/local/cuda' (line 16) is why detectron2._C failed to import (line 8)."""
    d = diagnosed("detectron2-1991-collectenv-detectron2-cuda-home-leading-colon.txt")
    cause = d.result.cause
    assert cause is not None and cause.lines == (16,)
    assert "':/usr/local/cuda'" in cause.finding.summary


def test_explains_must_name_a_signature() -> None:
    entry = {
        "id": "a_b", "class": "other", "pattern": "x", "means": "m", "implies": {}, "check": "torch.companions",
        "source": "o/r#1", "url": "https://github.com/o/r/issues/1", "explains": ["no_such_signature"],
    }  # fmt: skip
    with pytest.raises(CatalogueError, match="no_such_signature"):
        parse_catalogue({"source_note": "", "signatures": [entry]})


def test_torch_that_did_not_import_yields_to_the_error_that_says_why() -> None:
    """pytorch#186591: collect_env's N/A beside `undefined symbol: ncclCommResume` in torch's own import."""
    d = diagnosed("pytorch-186591-collectenv-undefined-symbol-ncclCommResume.txt")
    assert cause_id(d) == "env.library_path"
    problems = {v.finding.check_id for v in d.result.verdicts if v.kind == "problem"}
    assert "torch.installed" in problems  # still said, after the cause


def test_a_gpu_no_build_supports_is_the_answer_to_a_question_in_words() -> None:
    """pytorch#44253: "新版本能不能支持下 tesla k40m的显卡" (can a new version support the Tesla K40m)."""
    d = diagnosed("pytorch-44253-tesla-k40m-new-version-support.txt")
    assert cause_id(d) == "torch.arch_compat"
    fix = d.result.cause.finding.remediation if d.result.cause else None
    assert fix is not None and "TORCH_CUDA_ARCH_LIST=3.5" in fix.text and "CUDA 11.x" in fix.text


def test_another_programs_log_with_an_old_gpu_keeps_its_own_answer() -> None:
    """ansible-cuda#16 is a driver installer's kernel log for a Tesla M2070: no torch in it, so the driver is
    the answer, not that no torch build supports the card."""
    assert cause_id(diagnosed("ansible-cuda-16-legacy-390-m2070.txt")) == "driver.installed"


@pytest.mark.parametrize(
    ("line", "gpu"),
    [
        ("新版本能不能支持下 tesla k40m的显卡", "Tesla K40m"),
        ("on a Tesla K20Xm", "Tesla K20Xm"),
        ("nvidia k40c here", "Tesla K40c"),
    ],
)
def test_kepler_boards_by_their_full_names(line: str, gpu: str) -> None:
    said = read_prose([line]).gpu
    assert said is not None and said.value == gpu


@pytest.mark.parametrize(
    "line",
    [
        "However, when attempting to activate CUDA, it shows as 0 or false.",  # chatdoctor#23
        "torch.cuda.device_count() returns 0",
    ],
)
def test_cuda_unavailable_in_more_words(line: str) -> None:
    fails = read_prose([line]).torch_fails
    assert fails is not None and fails.value == "cuda_unavailable"


def test_suspend_in_words_gets_the_module_reload_and_the_restart() -> None:
    """ollama#5464: "Every time Linux resumes from suspension, it fails to correctly reload CUDA"."""
    d = diagnosed("ollama-5464-ollama-cuda-after-suspend-resume.txt")
    assert cause_id(d) == "torch.cuda_init"
    fix = d.result.cause.finding.remediation if d.result.cause else None
    assert fix is not None and [c.display() for c in fix.commands] == [
        "sudo rmmod nvidia_uvm",
        "sudo modprobe nvidia_uvm",
    ]
    assert (
        "restart the programs that were running" in fix.text
        and "NVreg_PreserveVideoMemoryAllocations=1" in fix.text
    )


def test_a_long_line_before_traceback_is_not_taken_for_a_log_prefix() -> None:
    """A 100,000-character line before "Traceback" once cost a compile per space in it (minutes): a log
    header is short, so no prefix is looked for past MAX_PREFIX characters and the frames are read as they are."""
    from torch_gpu_doctor.triage.shown_error import MAX_PREFIX, _prefix_pattern

    assert _prefix_pattern("a " * (MAX_PREFIX // 2 + 1), "a a a") is None
    shown = parse_shown_error(
        [("a " * 50_000) + _TRACEBACK_LINE, '  File "x.py", line 1, in <module>', "KeyError: 1"]
    )
    assert shown is None or shown.line == 3


_TRACEBACK_LINE = "Traceback (most recent call last):"


@pytest.mark.parametrize(
    "text",
    [
        "Loss becomes NaN after resume from checkpoint, then:\nRuntimeError: CUDA error: an illegal memory access was encountered\n",
        "Training crashes right after resume from the last epoch.\n",
    ],
)
def test_resuming_training_is_not_a_suspend(text: str) -> None:
    d = diagnosed("paste.txt", text)
    assert all(h.signature.id != "unknown_error_after_suspend_in_words" for h in d.pasted.hits)


def test_a_model_folder_above_csrc_is_not_a_package() -> None:
    """GroundingDINO keeps its CUDA sources in .../groundingdino/models/GroundingDINO/csrc/: 'models' is no
    package to reinstall."""
    text = (
        "RTX 4090, torch 2.1.0+cu121\n"
        "error in ms_deformable_im2col_cuda: no kernel image is available for execution on the device\n"
        '  File "/home/u/GroundingDINO/groundingdino/models/GroundingDINO/csrc/MsDeformAttn/ms_deform_attn_cuda.cu", line 140\n'
    )
    fix = diagnosed("paste.txt", text).result.cause
    remediation = fix.finding.remediation if fix is not None else None
    assert remediation is None or "in models" not in remediation.text


def test_found_no_driver_with_docker_in_words_only_is_the_hosts_driver() -> None:
    text = (
        "I am not using docker, this is bare metal Ubuntu 22.04 with torch 2.3.\n"
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you\n"
    )
    cause = diagnosed("paste.txt", text).result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert not any("docker run" in c.display() for c in cause.finding.remediation.commands)


def test_early_kepler_is_built_with_cuda_10() -> None:
    """CUDA 11.0 dropped sm_30: a GTX 770 (3.0) is built with CUDA 10.2 at the latest."""
    cause = diagnosed("paste.txt", "Can the new torch support my GTX 770?\n").result.cause
    fix = cause.finding.remediation if cause is not None else None
    assert fix is not None and "CUDA 10.x toolkit" in fix.text


def test_a_traceback_that_lost_its_indentation_is_still_read() -> None:
    """pytorch#130181: the pasted frames start at column 0 ('File "...", line 327, in _lazy_init' then its
    source line), cut mid-frame: its last frame is line 9."""
    lines = (PASTES / "pytorch-130181-mig-internal-assert.txt").read_text(encoding="utf-8").split("\n")
    shown = parse_shown_error(lines)
    assert shown is not None and shown.cut and shown.line == 9 and shown.first == 4


def test_a_traceback_cut_right_after_its_header_is_the_header() -> None:
    shown = parse_shown_error(["some output", "Traceback (most recent call last):"])
    assert shown is not None and shown.cut and shown.line == 2


def test_a_mention_of_collect_env_is_not_a_run_of_it() -> None:
    lines = ["collect_env output is below, first the error:", "Traceback (most recent call last):",
             '  File "x.py", line 1, in <module>', "ValueError: x"]  # fmt: skip
    shown = parse_shown_error(lines)
    assert shown is not None and shown.text == "ValueError: x"


def test_an_unknown_traceback_away_from_a_known_error_is_labelled_as_unknown() -> None:
    """Only a failure line next to a known error is one more line of it (collect2 after ld's -lcuda)."""
    text = (
        "CUDA error: an illegal memory access was encountered\nsome log\nmore\n"
        'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\nValueError: nope\n'
    )
    parts = {(p.kind, p.first_line, p.last_line) for p in diagnosed("paste.txt", text).pasted.parts}
    assert ("unknown_error", 4, 6) in parts
    lcuda = diagnosed("lmdeploy-2026-triton-cannot-find-lcuda.txt").pasted.parts
    assert all(p.kind != "unknown_error" for p in lcuda)
