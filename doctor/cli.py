"""Command line: parse (cli_parser.py), then hand the arguments to the command's module (commands/).

Whatever happens, the process ends with an exit code of the one enum, one line on stderr for an error, and in
`--json` mode one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import functools
import gc
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from torch_gpu_doctor import TOOL_NAME, data_cache, pattern_cache
from torch_gpu_doctor.cli_parser import SMOKE_MODES, build_parser
from torch_gpu_doctor.commands import command_name, run_command
from torch_gpu_doctor.exit_codes import ExitCode, UsageError, error_document

__all__ = ["UsageError", "build_parser", "main"]  # the parser lives in cli_parser; tests and tools use these


def entry() -> int:
    """The console script and `python -m torch_gpu_doctor`: one command in a process of its own.

    Start-up loads about 110 modules whose tens of thousands of objects live until the process ends; Python's
    cyclic collector would walk them again at each of its passes on the way (25-45 ms of a 300 ms `triage`).
    It stays off while the command's modules load; they are then set aside from it (gc.freeze) and it is
    turned back on for the run itself. Never from `main`, which tests and other programs call in-process.

    The package's regular expressions come from the compiled-pattern cache file (pattern_cache), which this
    run then completes with any it had to compile, and its parsed data files from data_cache."""
    pattern_cache.enable()
    data_cache.enable()
    gc.disable()
    try:
        return main(start_up_over=_collect_from_here)
    finally:
        gc.enable()
        pattern_cache.save()
        pattern_cache.disable()  # a program that called entry() in-process gets plain re.compile back
        data_cache.disable()


def _collect_from_here() -> None:
    gc.freeze()
    gc.enable()


def main(argv: Sequence[str] | None = None, start_up_over: Callable[[], None] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if sys.stdout is None:  # started with stdout closed (`>&-`): nothing can be said there
        return _fail(ExitCode.OUTPUT, "output", "cannot write the output: stdout is closed", False)
    # known even when parsing fails, so stdout still gets one JSON document
    json_mode = "--json" in args or "--format=json" in args or "--format json" in " ".join(args)
    metrics = _option(args, "--format") == "prometheus"  # a failed run still leaves its exit code there
    output = _option(args, "--output")
    if "_ARGCOMPLETE" in os.environ:  # a shell asking for completions (gpu-doctor completion): answer, exit
        import argcomplete

        argcomplete.autocomplete(build_parser())
    previous = _interrupt_on(signal.SIGTERM, signal.SIGHUP)  # as Ctrl-C: stop the children, exit 130
    if "torch_gpu_doctor.host.process" in sys.modules:  # an earlier run in this process stopped them all
        sys.modules["torch_gpu_doctor.host.process"].allow_children()
    interrupted = False
    try:
        # only the commands the arguments name get the shared options (a value that is a command's name too
        # adds that one as well): the full parser is for help and completion
        parsed = build_parser(set(args)).parse_args(_smoke_mode_spelled(args))
        if parsed.format == "json":  # --format json is --json, --format text is --plain
            parsed.json = True
        elif parsed.format == "text":
            parsed.plain = True
        code = run_command(command_name(parsed), parsed, start_up_over)
        sys.stdout.flush()  # a full disk or a closed pipe shows here, not in the interpreter's exit
        return code
    except BrokenPipeError:
        return _reader_gone()
    except OSError as exc:
        if exc.errno not in OUTPUT_ERRORS:
            return _fail(ExitCode.INTERNAL, "internal", _internal(exc), json_mode)
        where = exc.filename or "the output"
        return _fail(ExitCode.OUTPUT, "output", f"cannot write {where}: {exc.strerror or exc}", False)
    except UsageError as exc:
        return _failed_run(metrics, output) or _fail(ExitCode.USAGE, "usage", f"error: {exc}", json_mode)
    except KeyboardInterrupt:
        interrupted = True
        _failed_run(metrics, output, ExitCode.INTERRUPTED, "interrupted")
        return _fail(ExitCode.INTERRUPTED, "interrupted", "interrupted", json_mode)
    except Exception as exc:  # last resort: one line, not a traceback
        _failed_run(metrics, output, ExitCode.INTERNAL, "internal")
        return _fail(ExitCode.INTERNAL, "internal", _internal(exc), json_mode)
    finally:
        _stop_children(final=interrupted)
        for sig, handler in previous.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(sig, handler)


def _interrupt_on(*signals: signal.Signals) -> dict[signal.Signals, Any]:
    """SIGTERM and SIGHUP end a run as Ctrl-C does (KeyboardInterrupt): its children are stopped on the way out.
    The handlers they replaced, to put back when the run ends."""

    def interrupt(signum: int, frame: object) -> None:  # noqa: ARG001
        raise KeyboardInterrupt(signal.Signals(signum).name)

    previous: dict[signal.Signals, Any] = {}
    for sig in signals:
        # not in the main thread (a test calling main) no handler can be set: the run goes on without
        with contextlib.suppress(ValueError, OSError):
            previous[sig] = signal.signal(sig, interrupt)
    return previous


def _stop_children(final: bool) -> None:
    """Probes, commands and the smoke test run in their own sessions, out of reach of the terminal's Ctrl-C:
    whatever is still running when gpu-doctor ends is stopped (SIGTERM, then SIGKILL). `final` (an interrupt):
    a probe thread still running starts nothing more before the process exits."""
    if "torch_gpu_doctor.host.process" not in sys.modules:  # nothing was ever started
        return
    from torch_gpu_doctor.host.process import stop_all_children  # already loaded (checked above): no cost

    with contextlib.suppress(Exception):
        stop_all_children(final=final)


# errors of writing the output, not bugs: a full disk or quota, a read-only file system, a closed descriptor
OUTPUT_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EBADF, errno.EIO, errno.EPIPE})


def _internal(exc: BaseException) -> str:
    return f"internal error: {type(exc).__name__}: {exc} (please report it as a bug)"


def _reader_gone() -> int:
    """`gpu-doctor ... | head -1`: the reader has what it wanted. Quietly, and without Python's own complaint
    when it flushes stdout at exit (the descriptor now points at /dev/null)."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return ExitCode.BROKEN_PIPE


def _smoke_mode_spelled(args: list[str]) -> list[str]:
    """`--smoke capture DIR`: an optional MODE would take the next word, so --smoke without one of the modes
    after it is spelled `--smoke=standard` (argparse would otherwise refuse `capture` as a mode). After a
    command that has a `--smoke` flag of its own (`verify --smoke`: the gate), it is that flag, left alone."""
    if "--smoke" not in args:  # the usual case: no second parser to build for the commands' own flags
        return args
    spelled = []
    own = False
    for i, arg in enumerate(args):
        own = own or arg in _commands_with_own_smoke()
        following = args[i + 1] if i + 1 < len(args) else None
        spelled.append(
            "--smoke=standard" if arg == "--smoke" and not own and following not in SMOKE_MODES else arg
        )
    return spelled


@functools.cache
def _commands_with_own_smoke() -> frozenset[str]:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    return frozenset(
        name
        for name, sub in commands.items()
        if any("--smoke" in a.option_strings and a.nargs == 0 for a in sub._actions)
    )


def _option(args: list[str], flag: str) -> str | None:
    """`--flag VALUE` or `--flag=VALUE` in raw arguments: known even when parsing them failed."""
    for i, arg in enumerate(args):
        if arg == flag and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(flag + "="):
            return arg.split("=", 1)[1]
    return None


def _failed_run(
    metrics: bool, output: str | None, code: ExitCode = ExitCode.USAGE, kind: str = "usage"
) -> int:
    """With --format prometheus, a run that ends before its report still writes its exit code and time
    (to --output atomically, else stdout): the textfile collector must not keep serving the last good run.
    Returns 0, so `_failed_run(...) or _fail(...)` goes on to the message."""
    if not metrics:
        return 0
    # only when a run failed with --format prometheus: start-up does not pay for the renderer
    from torch_gpu_doctor.render.files import write_atomically
    from torch_gpu_doctor.render.prometheus import render_failed_run  # the same: only on this path

    text = render_failed_run(int(code), time.time(), kind)
    with contextlib.suppress(OSError):
        if output:
            write_atomically(Path(output), text)
        else:
            sys.stdout.write(text)
            sys.stdout.flush()
    return 0


def _fail(code: ExitCode, kind: str, message: str, json_mode: bool) -> int:
    with contextlib.suppress(OSError):
        print(f"{TOOL_NAME}: {message}", file=sys.stderr)
    if json_mode:
        try:
            sys.stdout.write(json.dumps(error_document(kind, message, code)) + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            return _reader_gone()
        except OSError:
            pass  # stdout itself is what failed: the line on stderr says so
    return code
