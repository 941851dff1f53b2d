"""Command line: `gpu-doctor [options]`, `explain ID`, `schema`, `capture DIR`: what each command runs (the
parser is doctor/cli_parser.py; `build_parser` and `UsageError` are re-exported here)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from torch_gpu_doctor import TOOL_NAME, __version__
from torch_gpu_doctor.cli_parser import UsageError, build_parser
from torch_gpu_doctor.exit_codes import ExitCode
from torch_gpu_doctor.unavailable import Unavailable

if TYPE_CHECKING:  # the Facts model imports every facts module: `--version` and usage errors need none
    from torch_gpu_doctor.facts.model import PythonFacts
    from torch_gpu_doctor.host.base import Host
    from torch_gpu_doctor.smoke.run import SmokeProgress, SmokeRequest

__all__ = ["UsageError", "build_parser", "main"]  # the parser lives in cli_parser; tests and tools use these

SMOKE_CHECKS = ("pcie.link_under_load",)  # beside the smoke.* checks, what `gpu-doctor smoke` reports


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    # known even when parsing fails, so stdout still gets one JSON document
    json_mode = "--json" in args or "--format=json" in args or "--format json" in " ".join(args)
    try:
        return _main(build_parser().parse_args(args))
    except UsageError as exc:
        return _fail(ExitCode.USAGE, "usage", f"error: {exc}", json_mode)
    except KeyboardInterrupt:
        return _fail(ExitCode.INTERRUPTED, "interrupted", "interrupted", json_mode)
    except Exception as exc:  # last resort: one line, not a traceback
        message = f"internal error: {type(exc).__name__}: {exc} (please report it as a bug)"
        return _fail(ExitCode.INTERNAL, "internal", message, json_mode)


def _fail(code: ExitCode, kind: str, message: str, json_mode: bool) -> int:
    print(f"{TOOL_NAME}: {message}", file=sys.stderr)
    if json_mode:
        document = {
            "schema_version": 1,
            "tool": {"name": TOOL_NAME, "version": __version__},
            "error": {"kind": kind, "message": message},
            "summary": {"exit_code": int(code)},
        }
        sys.stdout.write(json.dumps(document) + "\n")
    return code


def _main(args: argparse.Namespace) -> int:
    if args.format == "json":  # --format json is --json, --format text is --plain
        args.json = True
    elif args.format == "text":
        args.plain = True
    if args.command == "schema":
        from torch_gpu_doctor.schemas import report_schema_text

        sys.stdout.write(report_schema_text())
        return ExitCode.OK
    if args.command == "explain":
        return _explain(args.check_id, plugins=not args.no_plugins)
    if args.command == "triage":  # a report pasted from another machine: no Host
        from torch_gpu_doctor.triage_command import run_triage

        return run_triage(args)
    if args.command in ("diff", "summarize"):  # reports from other machines: no Host
        from torch_gpu_doctor.diff_command import run_diff
        from torch_gpu_doctor.summarize_command import run_summarize

        return run_diff(args) if args.command == "diff" else run_summarize(args)
    if args.list_checks:
        return _list_checks(plugins=not args.no_plugins, as_json=args.json)
    if args.replay:  # a bundle (unpacked safely) or a capture directory; from here on exactly like --root
        args.root = _replay_root(args)
    if args.command == "capture" and args.root:
        # A capture's host.json names an interpreter; never run a path that came from capture data.
        raise UsageError("capture records this machine; it cannot be combined with --root")
    host, python = _host_and_python(args)
    data_dir = _data_dir(args, host)
    if args.command == "verify":
        from torch_gpu_doctor.verify_command import run_verify

        return run_verify(args, host, python, data_dir)
    if args.command == "fix":
        from torch_gpu_doctor.fix_command import run_fix

        return run_fix(args, host, python, data_dir)
    if args.command == "bundle":
        from torch_gpu_doctor.bundle_command import run_bundle

        return run_bundle(args, host, python, data_dir)
    _validate_ids(args.check + args.skip, plugins=not args.no_plugins)
    smoke = _smoke_request(args, host)
    if args.command == "capture":
        return _capture(Path(args.directory), python, data_dir, args.measure, smoke)

    from torch_gpu_doctor.model import Status

    fail_on = Status.WARN if args.strict or args.fail_on == "warn" else Status.FAIL
    if _wants_tui(args):  # before the engine's imports: the first paint must not wait for them
        from torch_gpu_doctor.host.recorded import RecordedHost
        from torch_gpu_doctor.tui.launch import run_tui

        return run_tui(
            host,
            python,
            replay=isinstance(host, RecordedHost),
            data_dir=data_dir,
            plugins=not args.no_plugins,
            fail_on=fail_on,
            only=tuple(args.check),
            skip=tuple(args.skip),
            start="setup" if args.command == "setup" else "doctor",
            smoke=smoke.mode if smoke is not None else None,
        )
    if args.command == "setup":  # no terminal: the wizard's plan, as `fix --dry-run` prints it
        from torch_gpu_doctor.fix_command import run_fix

        args.dry_run, args.yes = True, False
        return run_fix(args, host, python, data_dir)
    from torch_gpu_doctor.runner import diagnose

    only = list(args.check)
    if args.command == "smoke" and not only:
        only = _smoke_check_ids(plugins=not args.no_plugins)
    report = diagnose(
        host, python, only, args.skip, fail_on, plugins=not args.no_plugins, data_dir=data_dir, smoke=smoke
    )
    _require_python(report.facts.python, python, args)
    if args.json:
        from torch_gpu_doctor.render.json_report import render_json

        sys.stdout.write(render_json(report))
    elif args.format == "prometheus":
        from torch_gpu_doctor.render.prometheus import render_prometheus

        sys.stdout.write(render_prometheus(report))
    else:
        from torch_gpu_doctor.render.text import render_text

        render_text(report, sys.stdout, verbose=args.verbose)
    return report.summary().exit_code


def _wants_tui(args: argparse.Namespace) -> bool:
    """DESIGN §4: the TUI only on a terminal (stdin and stdout), never with --json or --plain."""
    if args.command not in (None, "setup") or args.json or args.plain or args.format:
        return False
    if os.environ.get("TERM") == "dumb":
        return False
    return sys.stdin.isatty() and sys.stdout.isatty()


def _replay_root(args: argparse.Namespace) -> str:
    if args.root:
        raise UsageError("--replay and --root both name a machine to diagnose; pass one of them")
    from torch_gpu_doctor.bundle.model import BundleError
    from torch_gpu_doctor.bundle.replay import replay_directory

    try:
        return str(replay_directory(args.replay))
    except BundleError as exc:
        raise UsageError(f"--replay {args.replay}: {exc}") from exc


def _host_and_python(args: argparse.Namespace) -> tuple[Host, str]:
    if args.root:
        from torch_gpu_doctor.host.recorded import CaptureError, RecordedHost

        try:
            recorded = RecordedHost(args.root)
        except CaptureError as exc:
            raise UsageError(str(exc)) from exc
        return recorded, args.python or recorded.python or "python3"
    from torch_gpu_doctor.host.real import RealHost

    python = args.python or sys.executable
    if args.python:
        found = args.python if "/" in args.python else shutil.which(args.python)
        if not found or not Path(found).is_file():
            raise UsageError(f"--python {args.python}: no such file")
        python = found
    return RealHost(measure=args.measure), python


def _data_dir(args: argparse.Namespace, host: Host) -> str:
    """An absolute path on the diagnosed machine: as given, or the captured one, or the current folder."""
    from torch_gpu_doctor.host.recorded import RecordedHost

    if isinstance(host, RecordedHost):
        if args.measure:
            raise UsageError("--measure measures this machine; a capture (--root) replays what it recorded")
        return args.data_dir or host.data_dir or "/"
    path = Path(args.data_dir or ".").absolute()  # not resolve(): the storage walk reports the symlinks
    if not path.is_dir():
        raise UsageError(f"--data-dir {args.data_dir}: not a directory")
    return str(path)


def _require_python(python_facts: PythonFacts | Unavailable, python: str, args: argparse.Namespace) -> None:
    """An explicit --python that does not run as a Python is a usage error, not a finding."""
    why = python_facts if isinstance(python_facts, Unavailable) else python_facts.version
    if args.python and not args.root and isinstance(why, Unavailable):
        raise UsageError(f"--python {python} is not a working Python interpreter ({why})")


def _validate_ids(ids: list[str], plugins: bool) -> None:
    if not ids:
        return
    from torch_gpu_doctor.catalog import known_specs  # the index (and plugins only if one is installed)

    known = {spec.id for spec in known_specs(plugins).specs}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise UsageError(f"unknown check id {unknown[0]!r} (see --list-checks)")


def _list_checks(plugins: bool, as_json: bool = False) -> int:
    from torch_gpu_doctor.catalog import known_specs  # the index: no check module is imported (DESIGN §7)

    loaded = known_specs(plugins)
    specs = sorted(loaded.specs, key=lambda spec: spec.id)
    if as_json:
        rows = [{"id": s.id, "area": s.area, "title": s.title, "required": s.required} for s in specs]
        sys.stdout.write(json.dumps({"checks": rows}, indent=2) + "\n")
        return ExitCode.OK
    width = max(len(spec.id) for spec in specs)
    for spec in specs:
        print(f"{spec.id:<{width}}  {spec.area:<8}  {spec.title}")
    for problem in loaded.problems:
        print(f"{problem.check_id}: {problem.summary}", file=sys.stderr)
    return ExitCode.OK


def _explain(check_id: str, plugins: bool) -> int:
    from torch_gpu_doctor.catalog import known_specs  # the index: no check module is imported (DESIGN §7)

    checks = {spec.id: spec for spec in known_specs(plugins).specs}
    spec = checks.get(check_id)
    if spec is None:
        raise UsageError(f"unknown check id {check_id!r} (see --list-checks)")
    text = spec.explanation
    print(f"{spec.id} — {spec.title}\n")
    for heading, body in (
        ("What it checks", text.what),
        ("Why it matters", text.why),
        ("How to fix", text.fix),
    ):
        print(f"{heading}\n{body}\n")
    return ExitCode.OK


def _smoke_check_ids(plugins: bool) -> list[str]:
    from torch_gpu_doctor.runner import known_check_ids

    return sorted(i for i in known_check_ids(plugins) if i.startswith("smoke.") or i in SMOKE_CHECKS)


def _smoke_request(args: argparse.Namespace, host: Host) -> SmokeRequest | None:
    """What the smoke test should do, once a leftover breadcrumb has been reported (and quick mode offered)."""
    mode_name = args.mode if args.command == "smoke" else args.smoke
    if mode_name is None:
        return None
    from torch_gpu_doctor.facts.smoke import SmokeMode
    from torch_gpu_doctor.host.recorded import RecordedHost
    from torch_gpu_doctor.smoke.run import SmokeRequest

    mode = SmokeMode(mode_name)
    progress = _progress_printer(as_json=args.json)
    if isinstance(host, RecordedHost):  # a replay: no breadcrumb of this machine applies
        return SmokeRequest(mode, on_progress=progress)
    from torch_gpu_doctor.smoke.breadcrumb import Breadcrumb, state_dir

    crumb = Breadcrumb(state_dir(os.environ))
    previous = crumb.unfinished()
    if previous is not None:
        where = f" in {previous.step}" if previous.step else ""
        rebooted = " The machine has rebooted since." if previous.rebooted else ""
        print(
            f"{TOOL_NAME}: the previous smoke test ({previous.mode}, started {previous.started_at}) never "
            f"finished: it stopped{where}.{rebooted}",
            file=sys.stderr,
        )
        if mode is not SmokeMode.QUICK and _ask("Run the quick mode instead?", args):
            mode = SmokeMode.QUICK
    return SmokeRequest(mode, crumb, previous, progress)


def _ask(question: str, args: argparse.Namespace) -> bool:
    """Yes/no on the terminal; the default answer is yes. Never asks without a TTY (then: no change)."""
    if args.yes:
        return True
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        print(
            f"{TOOL_NAME}: not asking without a terminal; pass --smoke quick to use the quick mode",
            file=sys.stderr,
        )
        return False
    sys.stderr.write(f"{question} [Y/n] ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("", "y", "yes")


def _progress_printer(as_json: bool) -> Callable[[SmokeProgress], None]:
    """Progress on stderr: a line per finished step, or JSON lines for a program drawing its own bar."""

    def show(p: SmokeProgress) -> None:
        if as_json:
            event = "end" if p.status is not None else "start" if p.done is None else "progress"
            item = {
                "smoke_progress": {
                    "event": event,  # a step started, got further (`done`, 0..1) or ended (`status`)
                    "step": p.label,
                    "ended": p.ended,
                    "expected": p.expected,
                    "status": p.status.value if p.status else None,
                    "message": p.message,
                    "done": p.done,
                    "duration_ms": p.duration_ms,
                }
            }
            print(json.dumps(item), file=sys.stderr, flush=True)
        elif p.status is not None:
            tail = f": {p.message}" if p.message and p.status.value != "ok" else ""
            print(
                f"  smoke [{p.ended}/{max(p.expected, p.ended)}] {p.status.value:<8} {p.label}{tail}",
                file=sys.stderr,
                flush=True,
            )

    return show


def _capture(directory: Path, python: str, data_dir: str, measure: bool, smoke: SmokeRequest | None) -> int:
    from torch_gpu_doctor.host.real import RealHost
    from torch_gpu_doctor.host.recording import RecordingHost
    from torch_gpu_doctor.runner import diagnose

    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise UsageError(f"{directory} exists and is not an empty directory")
    recorder = RecordingHost(RealHost(measure=measure))
    recorder.data_dir = data_dir
    report = diagnose(recorder, python, data_dir=data_dir, smoke=smoke)
    recorder.write(directory, python)
    print(json.dumps({"captured": str(directory), "findings": len(report.findings)}), file=sys.stderr)
    print(f"Captured this machine in {directory}; replay it with: {TOOL_NAME} --root {directory}")
    return ExitCode.OK
