"""A check's explanation as styled text for the detail pane.

Explanations are docstring sections (`registry.parse_explanation`): hard-wrapped paragraphs with `code` spans,
sometimes a list. Textual's Markdown widget rendered them, but importing markdown-it and laying the widget out
cost ~100 ms on the way to the first full screen (issue 21), for three headings and some code spans. This
reads just that subset: blank lines part paragraphs, a paragraph's line breaks are spaces (the pane wraps it),
list items ("- ", "* ", "1. ") keep their own lines, and backticks mark code. Nothing is read as markup.
"""

from __future__ import annotations

import re

from rich.text import Text

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Explanation

HEADINGS = ("What it checks", "Why it matters", "How to fix")
_ITEM = lazy(r"\s*(?:[-*+]|[0-9]{1,3}[.)])\s")
CODE_STYLE = "bold cyan"  # as the fix's commands: what a person types


def explanation_text(explanation: Explanation) -> Text:
    out = Text()
    for heading, body in zip(HEADINGS, (explanation.what, explanation.why, explanation.fix), strict=True):
        if out:
            out.append("\n\n")
        out.append(heading, "bold underline")
        for i, paragraph in enumerate(_paragraphs(body)):
            out.append("\n" if i == 0 else "\n\n")
            out.append_text(_inline(paragraph))
    return out


def _paragraphs(body: str) -> list[str]:
    """Blank-line separated blocks; inside one, a list item starts a new line and other breaks are spaces."""
    blocks: list[str] = []
    for block in re.split(r"\n[ \t]*\n", body.strip()):
        lines: list[str] = []
        for line in block.splitlines():
            if lines and not _ITEM.match(line):
                lines[-1] += " " + line.strip()
            else:
                lines.append(line.strip() if not _ITEM.match(line) else line.rstrip())
        blocks.append("\n".join(lines))
    return [b for b in blocks if b]


def _inline(paragraph: str) -> Text:
    """`code` spans styled; a lone backtick stays a backtick."""
    text = Text()
    for i, part in enumerate(re.split(r"`([^`\n]+)`", paragraph)):
        text.append(part, CODE_STYLE if i % 2 else "")
    return text
