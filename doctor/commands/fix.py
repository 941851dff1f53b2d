"""`gpu-doctor fix [--dry-run | --yes] [--json] [--python PATH]`: the fix plan, and applying its pip steps.

Diagnose, build the plan (doctor/fixing/plan.py), then show it (--dry-run), apply every step gpu-doctor may run
itself (--yes: `python -m pip ...` in the target interpreter, nothing else, never sudo), or ask before each one
on a terminal. After applying, diagnose again and show each applied step's checks before and after.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable
from typing import IO, Any

from torch_gpu_doctor import TOOL_NAME, __version__
from torch_gpu_doctor.commands.common import Machine, open_machine, require_python
from torch_gpu_doctor.exit_codes import ExitCode, UsageError
from torch_gpu_doctor.fixing.apply import ApplyResult, apply_command
from torch_gpu_doctor.fixing.plan import FixPlan, FixStep, plan_fixes
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.render.fix_plan import plan_json, render_plan_text, result_json, step_text
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.runner import diagnose
from torch_gpu_doctor.serialize import json_document

NO_TTY_HINT = "pass --yes to apply the Python-environment steps"


@dataclass(frozen=True)
class Applied:
    step: FixStep
    result: ApplyResult


def run(args: argparse.Namespace) -> int:
    return run_on(args, open_machine(args))


def run_on(args: argparse.Namespace, machine: Machine) -> int:
    host, python, data_dir, replay = machine.host, machine.python, machine.data_dir, machine.replay
    if args.dry_run and args.yes:
        raise UsageError("fix: --dry-run only shows the plan and --yes applies it; pass one of them")
    if replay and not args.dry_run:
        raise UsageError(
            "fix --root shows the plan of a captured machine: add --dry-run (fixes are never applied to a capture)"
        )
    plugins = not args.no_plugins
    report = diagnose(host, python, plugins=plugins, data_dir=data_dir)
    require_python(report.facts.python, python, args)
    plan = plan_fixes(report)
    out = sys.stdout
    log = sys.stderr if args.json else sys.stdout  # --json: stdout carries the one document only
    runnable = [s for s in plan.steps if s.needed and s.runnable_argv is not None]
    if args.dry_run or not (args.yes or _can_ask(args)):
        return _show_only(plan, args, hint=bool(runnable) and not args.dry_run)
    if args.yes:
        chosen = runnable
    else:
        render_plan_text(plan, out)
        chosen = [s for s in runnable if _confirm(s)]
    if not chosen:
        declined = "Nothing applied." if runnable else ""
        print(declined or f"{TOOL_NAME} has no Python-environment step to apply here.", file=log)
    applied = _apply(chosen, log)
    failed = next((a for a in applied if not a.result.ok), None)
    after = None
    if failed is None:
        if args.yes:  # on a terminal the whole plan is on the screen already
            _show_yours(plan, log)
        if applied:
            print(f"\nChecking again after {len(applied)} applied step(s)...", file=log, flush=True)
            after = diagnose(host, python, plugins=plugins, data_dir=data_dir)
            _show_changes(applied, report, after, log)
    else:
        skipped = chosen[len(applied) :]
        if skipped:
            print("Not run: " + "; ".join(s.title for s in skipped), file=log)
    # A failed step: 1. Otherwise the machine's verdict afterwards, as plain `gpu-doctor` gives it: a
    # provisioning script must not read "fixed" while a system step (driver, boltctl) is still to do.
    code = ExitCode.FINDINGS if failed is not None else ExitCode((after or report).summary().exit_code)
    if args.json:
        out.write(_document("apply", plan, applied, (report, after), code))
    return code


def _show_only(plan: FixPlan, args: argparse.Namespace, hint: bool) -> int:
    """The plan, applying nothing (--dry-run, or no terminal to ask on and no --yes)."""
    if args.json:
        if hint:
            print(f"{TOOL_NAME}: not applied; {NO_TTY_HINT}", file=sys.stderr)
        sys.stdout.write(_document("dry-run" if args.dry_run else "plan", plan, [], None, ExitCode.OK))
        return ExitCode.OK
    render_plan_text(plan, sys.stdout)
    if hint:
        sys.stdout.write(f"Not applied: {NO_TTY_HINT}.\n")
    return ExitCode.OK


def _can_ask(args: argparse.Namespace) -> bool:
    """Questions only on a terminal, and never in --json mode (a program reads stdout there)."""
    return not args.json and sys.stdin.isatty() and sys.stdout.isatty()


def _confirm(step: FixStep) -> bool:
    assert step.runnable_argv is not None
    sys.stdout.write(f"\n{step.title}\n  $ {shlex.join(step.runnable_argv)}\nRun it now? [y/N] ")
    sys.stdout.flush()
    answer = sys.stdin.readline()
    if not answer.endswith("\n"):  # end of input (Ctrl-D): the terminal echoed no newline
        sys.stdout.write("\n")
    return answer.strip().lower() in ("y", "yes")


def _apply(steps: list[FixStep], log: IO[str]) -> list[Applied]:
    """Run each step's command in order; stop at the first that fails."""
    applied: list[Applied] = []
    for step in steps:
        assert step.runnable_argv is not None
        print(f"\n==> {step.title}\n$ {shlex.join(step.runnable_argv)}", file=log, flush=True)
        result = apply_command(step.runnable_argv, _printer(log))
        applied.append(Applied(step, result))
        if not result.ok:
            print(f"\nFailed: {step.title}\n{result.failure_message()}", file=log, flush=True)
            break
        print(f"Done in {result.duration_ms / 1000:.1f} s.", file=log, flush=True)
    return applied


def _printer(log: IO[str]) -> Callable[[str], None]:
    def show(line: str) -> None:
        print(f"  {line}", file=log, flush=True)

    return show


def _show_yours(plan: FixPlan, log: IO[str]) -> None:
    yours = [s for s in plan.steps if s.needed and s.runnable_argv is None]
    if not yours:
        return
    print(f"\nSteps for you to run ({TOOL_NAME} never runs system commands):\n", file=log)
    for number, step in enumerate(yours, 1):
        print(step_text(step, number) + "\n", file=log)


def _statuses(report: Report) -> dict[str, str]:
    return {f.check_id: f.status.value for f in report.findings}


def _show_changes(applied: list[Applied], before: Report, after: Report, log: IO[str]) -> None:
    old, new = _statuses(before), _statuses(after)
    for item in applied:
        print(f"{item.step.title}:", file=log)
        for cid in item.step.check_ids:
            print(f"  {cid}: {old.get(cid, 'not run')} → {new.get(cid, 'not run')}", file=log)


def _document(
    mode: str,
    plan: FixPlan,
    applied: list[Applied],
    reports: tuple[Report, Report | None] | None,
    code: ExitCode,
) -> str:
    rows: list[dict[str, Any]] = []
    old, new = (
        (_statuses(reports[0]), _statuses(reports[1]) if reports[1] else None) if reports else ({}, None)
    )
    for item in applied:
        rows.append(
            {
                "key": item.step.key,
                "title": item.step.title,
                "result": result_json(item.result),
                "checks": [
                    {
                        "check_id": cid,
                        "before": old.get(cid),
                        "after": new.get(cid) if new is not None else None,
                    }
                    for cid in item.step.check_ids
                ],
            }
        )
    document = {
        "schema_version": 1,
        "tool": {"name": TOOL_NAME, "version": __version__},
        "mode": mode,
        "plan": plan_json(plan),
        "applied": rows,
        "summary": {"exit_code": int(code)},
    }
    return json_document(document)
