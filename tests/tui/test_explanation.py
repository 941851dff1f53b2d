"""The detail pane's explanation: the docstring subset checks use, read without a Markdown widget."""

from __future__ import annotations

from torch_gpu_doctor.catalog import builtin_specs
from torch_gpu_doctor.model import Explanation
from torch_gpu_doctor.tui.explanation import CODE_STYLE, explanation_text


def test_hard_wrapped_paragraphs_read_as_one_and_blank_lines_part_them() -> None:
    text = explanation_text(Explanation("one\ntwo\n\nthree", "why", "fix"))
    assert text.plain == "What it checks\none two\n\nthree\n\nWhy it matters\nwhy\n\nHow to fix\nfix"


def test_code_spans_are_styled_and_the_backticks_dropped() -> None:
    text = explanation_text(Explanation("run `nvidia-smi -q` now", "w", "f"))
    assert "run nvidia-smi -q now" in text.plain
    styled = [text.plain[s.start : s.end] for s in text.spans if s.style == CODE_STYLE]
    assert styled == ["nvidia-smi -q"]


def test_list_items_keep_their_lines_and_continuations_join_them() -> None:
    text = explanation_text(Explanation("Causes:\n- one\n  more of one\n* two\n1. three", "w", "f"))
    assert "Causes:\n- one more of one\n* two\n1. three" in text.plain


def test_nothing_is_read_as_markup_and_a_lone_backtick_stays() -> None:
    text = explanation_text(Explanation("[bold]x[/] and a ` alone", "w", "f"))
    assert "[bold]x[/] and a ` alone" in text.plain
    assert not [s for s in text.spans if s.style == "bold"]


def test_every_shipped_explanation_keeps_its_words() -> None:
    """No word of a shipped explanation is lost or added: the docstring's, less backticks and wrapping."""
    for spec in builtin_specs():
        e = spec.explanation
        words = ["What", "it", "checks", *e.what.replace("`", "").split()]
        words += ["Why", "it", "matters", *e.why.replace("`", "").split()]
        words += ["How", "to", "fix", *e.fix.replace("`", "").split()]
        assert explanation_text(e).plain.split() == words, spec.id
