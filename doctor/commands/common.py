"""What several commands share: the machine to diagnose (live or a capture), the interpreter, the smoke-test
request, questions on the terminal, progress lines, and the JSON error document.

Nothing here imports the engine (facts, checks, runner): a command imports it when it needs it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from torch_gpu_doctor import TOOL_NAME
from torch_gpu_doctor.commands.interpreter import discover, given
from torch_gpu_doctor.exit_codes import UsageError
from torch_gpu_doctor.facts.smoke import SmokeMode
from torch_gpu_doctor.host.real import RealHost
from torch_gpu_doctor.host.recorded import CaptureError, RecordedHost
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Unavailable

if TYPE_CHECKING:  # the Facts model imports every facts module
    from torch_gpu_doctor.facts.python_env import PythonFacts
    from torch_gpu_doctor.host.base import Host
    from torch_gpu_doctor.model import Status
    from torch_gpu_doctor.smoke.run import SmokeProgress, SmokeRequest


@dataclass(frozen=True)
class Machine:
    """The machine a command diagnoses: this one, or a capture (--root, --replay)."""

    host: Host
    python: str  # the interpreter to diagnose
    data_dir: str  # an absolute path on that machine
    replay: bool  # a capture: nothing of it is ever run
    python_why: str = ""  # why that interpreter (commands/interpreter.py): shown in the header and --json


def open_machine(args: argparse.Namespace) -> Machine:
    """The machine the options name: `--replay` unpacked to a root, `--root`, or this machine."""
    if args.replay:  # a bundle (unpacked safely) or a capture directory; from here on exactly like --root
        from torch_gpu_doctor.commands.replay import replay_root  # only with --replay: the bundle reader

        args.root = replay_root(args)
    host, python, why = _host_and_python(args)
    replay = isinstance(host, RecordedHost)
    return Machine(host, python, _data_dir(args, host), replay, why)


def _host_and_python(args: argparse.Namespace) -> tuple[Host, str, str]:
    if args.root:
        try:
            recorded = RecordedHost(args.root)
        except CaptureError as exc:
            raise UsageError(str(exc)) from exc
        python = args.python or recorded.python or "python3"
        return recorded, python, "--python" if args.python else "the capture's"
    if args.python:
        found = given(args.python, Path.cwd())
        if found is None:
            raise UsageError(f"--python {args.python}: no such file")
        return RealHost(measure=args.measure), found, "--python"
    choice = discover(os.environ, Path.cwd())
    return RealHost(measure=args.measure), choice.python, choice.why


def _data_dir(args: argparse.Namespace, host: Host) -> str:
    """An absolute path on the diagnosed machine: as given, or the captured one, or the current folder."""
    if isinstance(host, RecordedHost):
        if args.measure:
            raise UsageError("--measure measures this machine; a capture (--root) replays what it recorded")
        return args.data_dir or host.data_dir or "/"
    path = Path(args.data_dir or ".").absolute()  # not resolve(): the storage walk reports the symlinks
    if not path.is_dir():
        raise UsageError(f"--data-dir {args.data_dir}: not a directory")
    return str(path)


def require_python(python_facts: PythonFacts | Unavailable, python: str, args: argparse.Namespace) -> None:
    """An explicit --python that does not run as a Python is a usage error, not a finding."""
    why = python_facts if isinstance(python_facts, Unavailable) else python_facts.version
    if args.python and not args.root and isinstance(why, Unavailable):
        raise UsageError(f"--python {python} is not a working Python interpreter ({why})")


def validate_ids(ids: list[str], plugins: bool) -> None:
    if not ids:
        return
    from torch_gpu_doctor.catalog import known_specs  # only with --check/--skip: the index, plugins if any

    known = {spec.id for spec in known_specs(plugins).specs}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise UsageError(f"unknown check id {unknown[0]!r} (see --list-checks)")


def fail_on(args: argparse.Namespace) -> Status:
    """The status at which the run exits 1: --fail-on, or --strict (= warn)."""
    return Status.WARN if args.strict or args.fail_on == "warn" else Status.FAIL


def smoke_request(args: argparse.Namespace, host: Host) -> SmokeRequest | None:
    """What the smoke test should do, once a leftover breadcrumb has been reported (and quick mode offered)."""
    mode_name = args.mode if args.command == "smoke" else args.smoke
    if mode_name is None:
        return None
    from torch_gpu_doctor.smoke.run import SmokeRequest  # only with --smoke

    mode = SmokeMode(mode_name)
    progress = progress_printer(as_json=args.json)
    if isinstance(host, RecordedHost):  # a replay: no breadcrumb of this machine applies
        return SmokeRequest(mode, on_progress=progress)
    from torch_gpu_doctor.smoke.breadcrumb import Breadcrumb, state_dir  # only with --smoke, on this machine

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
        if mode is not SmokeMode.QUICK and ask("Run the quick mode instead?", args):
            mode = SmokeMode.QUICK
    return SmokeRequest(mode, crumb, previous, progress)


def ask(question: str, args: argparse.Namespace) -> bool:
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


def progress_printer(as_json: bool) -> Callable[[SmokeProgress], None]:
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
