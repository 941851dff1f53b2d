"""Programs with an environment report of their own (compat/program_reports.json): every row sourced, a malformed
row refused, the failing program's report asked for where the paste shows no error, its next test where the
report is shown already, and nothing of a program the paste does not run (blind set 22: torch's collect_env was
asked of LLaMA-Factory, SGLang and accelerate users whose paste held their program's own report)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.triage.corpus_helpers import diagnosed
from torch_gpu_doctor.compat import CompatDataError
from torch_gpu_doctor.compat.program_reports import load_program_reports, parse_program_reports, report_to_ask
from torch_gpu_doctor.triage.render import render_text


def test_every_row_is_sourced() -> None:
    programs = load_program_reports()
    assert {p.name for p in programs} >= {"LLaMA-Factory", "SGLang", "vLLM", "accelerate", "Ollama"}
    for p in programs:
        assert p.source and p.report


@pytest.mark.parametrize(
    "row",
    [
        {"name": "x", "words": "(", "report": "x env", "shown": "x", "source": "s"},
        {"name": "x", "words": "x", "report": "x env", "shown": "x", "then": 3, "source": "s"},
        {"name": "x", "words": "x", "shown": "x", "source": "s"},
    ],
)
def test_a_malformed_row_is_refused(row: dict[str, Any]) -> None:
    with pytest.raises(CompatDataError):
        parse_program_reports({"programs": [row]})


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        (
            "llamafactory-cli train -h\nINFO - llamafactory.cli - Initializing distributed tasks",
            "llamafactory-cli env",
        ),
        (
            "- `llamafactory` version: 0.9.3\n- Platform: Linux",
            "",
        ),  # its report is there: nothing more of its own
        ("python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B", "python3 -m sglang.check_env"),
        ("accelerate launch --multi_gpu train.py", "accelerate env"),
        ("- `Accelerate` version: 0.34.2\n- Platform: Linux", "accelerate test"),
        ("ollama run gemma3", "journalctl -u ollama --no-pager"),
        ('time=2025 level=INFO source=types.go:130 msg="inference compute" ollama', "ollama ps"),
        ("python train.py --epochs 3", None),
        ("I accelerate my training with a bigger batch", None),
    ],
)
def test_the_failing_programs_own_report_is_asked_for(text: str, asked: str | None) -> None:
    assert report_to_ask(text) == asked


def test_a_paste_with_its_programs_report_asks_for_the_error_only() -> None:
    """LlamaFactory#8164: 'gpu报错', its `llamafactory-cli env` shown, the error a screenshot: no collect_env."""
    import io  # the text report a person reads

    out = io.StringIO()
    render_text(diagnosed("llamafactory-8164-insufficient-info-error-in-screenshot.txt"), "paste", out)
    assert "collect_env" not in out.getvalue()
    assert "Next: paste the error's last lines as text." in out.getvalue()
