"""The fix plan as text and as JSON (`gpu-doctor fix`): each step, its commands, their flags, who runs them."""

from __future__ import annotations

import textwrap
from typing import IO, Any

from torch_gpu_doctor import TOOL_NAME
from torch_gpu_doctor.fixing.apply import ApplyResult
from torch_gpu_doctor.fixing.plan import VERIFY_KEY, FixPlan, FixStep
from torch_gpu_doctor.model import Remediation, flag_words
from torch_gpu_doctor.serialize import to_json

WIDTH = 100


def flags(remediation: Remediation) -> list[str]:
    """The remediation's target and safety flags, as words."""
    return [remediation.target.value, *flag_words(remediation)]


def run_by(step: FixStep) -> str | None:
    """Who runs the step: "gpu-doctor" (its runnable_argv, after confirmation), "you", or None (nothing to do)."""
    if not step.needed or step.remediation is None:
        return None
    return TOOL_NAME if step.runnable_argv is not None else "you"


def _wrapped(text: str, indent: str) -> str:
    return textwrap.fill(text, WIDTH, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False)


def _command_lines(step: FixStep, indent: str) -> list[str]:
    rem = step.remediation
    if rem is None:
        return []
    lines: list[str] = []
    rest = rem.commands
    if step.runnable_argv is not None:
        lines.append(f"{indent}{TOOL_NAME} runs this itself when you apply the plan:")
        first, *others = rem.commands
        lines.append(f"{indent}  $ {first.display()}")
        rest = tuple(others)
        if rest:
            which = "this" if len(rest) == 1 else "one of these"
            lines.append(f"{indent}or run {which} yourself instead:")
    elif rem.commands:
        lines.append(f"{indent}you run:")
    for command in rest:
        note = f"   # {command.note}" if command.note else ""
        lines.append(f"{indent}  $ {command.display()}{note}")
    return lines


def step_text(step: FixStep, number: int | None) -> str:
    """One step: numbered when needed, with its flags, reasons and commands."""
    if not step.needed:
        return f"- {step.title}\n{_wrapped(step.why, '  ')}"
    changes = step.remediation is not None and step.key != VERIFY_KEY  # re-running the doctor changes nothing
    tags = f"  [{', '.join(flags(step.remediation))}]" if changes and step.remediation else ""
    head = f"{number}. {step.title}{tags}"
    return "\n".join([head, _wrapped(step.why, "   "), *_command_lines(step, "   ")])


def render_plan_text(plan: FixPlan, out: IO[str]) -> None:
    target = plan.python or "the target Python (it could not be read)"
    out.write(f"Fix plan for {target}\n\n")
    number = 0
    for step in plan.steps:
        if step.needed:
            number += 1
        out.write(step_text(step, number if step.needed else None) + "\n\n")
    if not plan.changes_needed:
        out.write("Nothing needs fixing.\n")


def step_json(step: FixStep) -> dict[str, Any]:
    item: dict[str, Any] = to_json(step)
    item["run_by"] = run_by(step)
    return item


def plan_json(plan: FixPlan) -> dict[str, Any]:
    return {
        "python": plan.python,
        "changes_needed": plan.changes_needed,
        "steps": [step_json(s) for s in plan.steps],
    }


def result_json(result: ApplyResult) -> dict[str, Any]:
    item: dict[str, Any] = to_json(result)
    item["ok"] = result.ok
    item["failure_message"] = None if result.ok else result.failure_message()
    return item
