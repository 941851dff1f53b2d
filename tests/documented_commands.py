"""The gpu-doctor command lines a person is told to type, found where they are told, and run as written.

Three places tell a person what to type: the documentation (README.md, docs/), the hints in the program's
source (a backquoted `gpu-doctor ...` in a message, a `Command(("gpu-doctor", ...))` fix), and what the
program prints on real machines (the reports and fix plans of the fixture hosts, every check's explanation).
Each line is found by reading those places, never copied here by hand.

A line is run as written, with its placeholders filled (DIR, FILE, ID, A.json, `reports/*.json`, ...) and,
where it diagnoses a machine, a captured machine added with `--root`: the lines are written for the reader's
own machine, and a test must not depend on this one. Two lines cannot run on a capture as they are and change
as little as they can: `fix` gets `--dry-run` (a capture takes only that; without a terminal `fix` applies
nothing either), and a bundle is written to a temporary folder.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

ROOT = Path(__file__).resolve().parent.parent
HOSTS = ROOT / "tests" / "fixtures" / "hosts"
DEFAULT_HOST = HOSTS / "rtx4090-workstation-healthy"
PASTE = ROOT / "tests" / "triage" / "pastes" / "compvis-sd-438-error-803-ubuntu22.txt"
VERIFY_TOML = ROOT / "docs" / "fleet" / "verify.toml"
SOURCES = ("doctor", "checks", "fixes")

# commands that read no machine, or record this one (capture, bundle): run without --root
MACHINE_FREE = frozenset(
    {"explain", "schema", "completion", "triage", "diff", "summarize", "capture", "bundle"}
)
# flags that end a command line without reading a machine
EXITING_FLAGS = frozenset({"--help", "-h", "--version", "--list-checks"})
# exit codes of a command that ran and gave its verdict: 0 nothing found, 1 findings, 3 a required check
# could not decide (a capture has no smoke run). 2 (usage), 4 (a bug) and 5 (output) are failures here.
RAN = frozenset({0, 1, 3})
# what `verify` checks (doctor/commands/verify.py): without one it has nothing to verify
VERIFY_GATES = (
    "config",
    "gpus",
    "gpu_name",
    "min_driver",
    "torch_cuda",
    "min_pcie_gen",
    "min_pcie_width",
    "verify_smoke",
    "nccl",
)

_SPAN = re.compile(
    r"`(gpu-doctor(?: [^`\n]*)?)`|`[^`\n]*\$\((gpu-doctor [^)`\n]*)\)[^`\n]*`"
)  # or `eval "$(...)"`
_BLOCK = re.compile(r"```([a-z]*)\n(.*?)```", re.S)


@dataclass(frozen=True)
class Line:
    text: str  # as it is written
    where: str  # the file (and line) or the host it came from
    host: Path = DEFAULT_HOST  # the captured machine it runs against, when it reads one

    def __str__(self) -> str:
        return f"{self.text}  ({self.where})"


def _clean(text: str) -> str:
    """The command itself: no prompt, no trailing comment, nothing after a pipe, redirection or `&&`."""
    text = text.strip().removeprefix("$ ")
    for cut in ("  #", " # ", " | ", " > ", " 2>", " >", " && ", " || ", " &"):
        text = text.split(cut, 1)[0]
    return text.strip()


def _spans(text: str) -> list[str]:
    return [a or b for a, b in _SPAN.findall(text)]


def _is_command(text: str) -> bool:
    return text == "gpu-doctor" or (text.startswith("gpu-doctor ") and not text.startswith("gpu-doctor-"))


def doc_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def documented_lines() -> list[Line]:
    """Every gpu-doctor line of README.md and docs/: code blocks (a console block's `$ ` lines) and spans."""
    found: dict[str, Line] = {}
    for page in doc_pages():
        text = page.read_text(encoding="utf-8")
        name = page.relative_to(ROOT).as_posix()
        for kind, block in _BLOCK.findall(text):
            for raw in block.splitlines():
                if kind == "console" and not raw.startswith("$ "):
                    continue  # a console block's other lines are output
                line = _clean(raw)
                if _is_command(line):
                    found.setdefault(line, Line(line, name))
        for span in _spans(_BLOCK.sub("", text)):
            line = _clean(span)
            if _is_command(line):
                found.setdefault(line, Line(line, name))
    return list(found.values())


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string nodes that are docstrings: documentation, not something the program says."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _strings(node: ast.AST, skip: set[int]) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
        yield node.value
    elif isinstance(node, ast.JoinedStr):  # an f-string: its fixed parts, a value as {}
        yield "".join(str(v.value) if isinstance(v, ast.Constant) else "{}" for v in node.values)


def source_hints() -> list[Line]:
    """The gpu-doctor lines the program's source can print: backquoted in a message, or a Command's argv."""
    found: dict[str, Line] = {}
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            skip = _docstrings(tree)
            where = path.relative_to(ROOT).as_posix()
            for node in ast.walk(tree):
                for text in _strings(node, skip):
                    for span in _spans(text):
                        line = _clean(span)
                        if _is_command(line) and "{}" not in line:  # a value filled in: see printed_hints
                            found.setdefault(line, Line(line, f"{where}:{node.lineno}"))  # type: ignore[attr-defined]
                if isinstance(node, ast.Assign) and isinstance(
                    node.value, ast.Constant
                ):  # X = "gpu-doctor --json"
                    value, names = node.value.value, [t.id for t in node.targets if isinstance(t, ast.Name)]
                    if (
                        isinstance(value, str)
                        and _WHOLE.fullmatch(value)
                        and not any(n.endswith("_SCHEMA") for n in names)
                    ):
                        found.setdefault(value, Line(value, f"{where}:{node.lineno}"))
                if isinstance(node, ast.Tuple | ast.List) and node.elts:
                    parts = [
                        e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
                    ]
                    if len(parts) == len(node.elts) and parts[0] == "gpu-doctor":
                        line = shlex.join(parts)
                        found.setdefault(line, Line(line, f"{where}:{node.lineno}"))
    return list(found.values())


_WHOLE = re.compile(r"gpu-doctor(?: --?[a-z][-a-z]*)+")  # a constant that is a command: options only
# a span may be wrapped onto the next line by the report's layout; a `$ ` line is one line
_PRINTED = re.compile(r"`(gpu-doctor(?:\s[^`]{0,300})?)`|^\s*\$ (gpu-doctor[^\n]*)", re.M)


def lines_in(text: str, where: str, host: Path = DEFAULT_HOST) -> list[Line]:
    """The gpu-doctor lines in what the program printed: backquoted, or a `$ ` command line."""
    found = (" ".join((a or b).split()) for a, b in _PRINTED.findall(text))
    return [Line(_clean(m), where, host) for m in found if _is_command(_clean(m))]


@dataclass
class Ran:
    argv: list[str]
    code: int
    out: str
    err: str


class Places:
    """The files a line's placeholders stand for, made once in `folder`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.reports: list[Path] = []
        self.made = 0

    def report_files(self) -> list[Path]:
        if not self.reports:
            for name in ("rtx4090-workstation-healthy", "driver-library-mismatch"):
                ran = call(["--json", "--root", str(HOSTS / name)])
                assert ran.code in RAN, ran.err
                path = self.folder / f"{name}.json"
                path.write_text(ran.out, encoding="utf-8")
                self.reports.append(path)
        return self.reports

    def new_folder(self) -> str:
        """A capture's folder: new and empty each time, as `capture` wants it."""
        self.made += 1
        return str(self.folder / f"capture-{self.made}")

    def complete(self, words: list[str]) -> list[str]:
        """A line that names a command without its argument (`gpu-doctor triage` reads a paste, `gpu-doctor
        verify` checks gates): add one, the example paste or the example gates."""
        from torch_gpu_doctor.cli import _smoke_mode_spelled
        from torch_gpu_doctor.cli_parser import build_parser
        from torch_gpu_doctor.exit_codes import UsageError

        try:
            parsed = build_parser().parse_args(_smoke_mode_spelled(list(words)))
        except UsageError as exc:
            if "arguments are required" not in str(exc):
                return words
            command = next(w for w in words if w in self.REQUIRED)
            return [*words, *self.REQUIRED[command](self)]
        except SystemExit:  # --help, --version
            return words
        if parsed.command == "verify" and not any(getattr(parsed, gate, None) for gate in VERIFY_GATES):
            return [*words, "--config", str(VERIFY_TOML)]
        return words

    REQUIRED: ClassVar[dict[str, Callable[[Places], list[str]]]] = {
        "triage": lambda places: [str(PASTE)],
        "explain": lambda places: ["driver.nouveau"],
        "capture": lambda places: [places.new_folder()],
        "diff": lambda places: [str(p) for p in places.report_files()],
        "summarize": lambda places: [str(p) for p in places.report_files()],
        "completion": lambda places: ["bash"],
        "fit": lambda places: ["7B"],
    }

    def fill(self, words: list[str], host: Path) -> list[str]:
        out: list[str] = []
        previous = ""
        for word in words:
            if word.startswith("[") or word.endswith("]"):  # a synopsis's optional part: leave it out
                previous = word
                continue
            out.extend(self._one(word, previous, host, out))
            previous = word
        return out

    def _one(self, word: str, previous: str, host: Path, before: list[str]) -> list[str]:
        command = before[0] if before else ""
        if "|" in word and not word.startswith("-"):  # alternatives: bash|zsh|fish, FILE|-
            word = word.split("|", maxsplit=1)[0]
        if previous == "--output":
            return [str(self.folder / Path(word).name)]
        if previous == "--config" or word.endswith(".toml"):
            return [str(VERIFY_TOML)]
        if previous in ("--python",) and word == "PATH":
            return [sys.executable]
        if previous in ("--root", "--replay") and not Path(word).is_absolute() and (ROOT / word).exists():
            return [str(ROOT / word)]
        if previous in ("--root", "--replay") and word in ("DIR", "FILE", "BUNDLE_OR_DIR", "/tmp/my-machine"):
            return [str(host)]
        if word in ("DIR", "/tmp/my-machine") and command == "capture":
            return [self.new_folder()]
        if word == "ID":
            return ["driver.nouveau"]
        if word == "MODEL":
            return ["7B"]
        if word in ("FILE", "error.txt", "paste.txt") and command == "triage":
            return [str(PASTE)]
        if word.endswith(".json") or word in ("REPORTS...", "REPORTS"):
            reports = [str(p) for p in self.report_files()]
            if "*" in word or word.startswith("REPORTS"):
                return reports
            return [reports[0] if word.startswith(("A", "reports/node-03")) else reports[-1]]
        return [word]


def call(argv: list[str], stdin: str = "") -> Ran:
    """gpu-doctor in this process, as `main` runs it, with its output and exit code."""
    from torch_gpu_doctor.cli import main

    out, err = io.StringIO(), io.StringIO()
    real_stdin, real_columns = sys.stdin, os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "1000"  # no line wrapped inside a `gpu-doctor ...` span
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # --help, --version: argparse exits
                code = exc.code if isinstance(exc.code, int) else 0
    finally:
        sys.stdin = real_stdin
        if real_columns is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = real_columns
    return Ran(argv, code, out.getvalue(), err.getvalue())


def argv_of(line: Line, places: Places) -> list[str]:
    """The line's argv, its placeholders filled, a captured machine added where it reads one."""
    words = places.fill(shlex.split(line.text)[1:], line.host)
    words = places.complete(words)
    command = _command(words)
    if EXITING_FLAGS & set(words) or command in MACHINE_FREE:
        if command == "bundle" and "-o" not in words:
            words += ["-o", places.new_folder() + ".tar.gz"]
        return words
    if "--root" not in words and "--replay" not in words:
        words += ["--root", str(line.host)]
    if command == "fix" and "--dry-run" not in words:  # --yes too: a capture is never changed
        words = [w for w in words if w != "--yes"] + ["--dry-run"]
    return words


def _command(words: list[str]) -> str | None:
    """The subcommand of `--plain smoke --json` as the parser reads it (None: the report)."""
    from torch_gpu_doctor.cli import _smoke_mode_spelled
    from torch_gpu_doctor.cli_parser import build_parser
    from torch_gpu_doctor.exit_codes import UsageError

    if EXITING_FLAGS & set(words):
        return None
    try:
        command = build_parser().parse_args(_smoke_mode_spelled(list(words))).command
    except UsageError:  # the run says it, as exit 2
        return None
    return str(command) if command else None


def run_line(line: Line, places: Places) -> Ran:
    argv = argv_of(line, places)
    stdin = PASTE.read_text(encoding="utf-8") if argv[-1:] == ["-"] else ""
    return call(argv, stdin)


def problem(line: Line, ran: Ran) -> str | None:
    """Why the run does not count as working, or None."""
    said = ran.out + ran.err
    if ran.code not in RAN:
        return f"exit {ran.code}: {ran.err.strip()[-400:]}"
    if "internal error" in ran.err or "Traceback (most recent call last)" in said:
        return f"internal error: {said.strip()[-400:]}"
    if not said.strip() and "--output" not in ran.argv:
        return "printed nothing"
    return None


def unquoted_hints() -> list[str]:
    """Messages that name a gpu-doctor command outside backquotes, where the finder cannot see it."""
    from torch_gpu_doctor.cli_parser import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices or {}
    starts = re.compile(r"gpu-doctor (?:-[-\w]+|(?:" + "|".join(map(re.escape, commands)) + r")\b)")
    found = []
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            skip = _docstrings(tree)
            for node in ast.walk(tree):
                for text in _strings(node, skip):
                    bare = _SPAN.sub("", text)
                    if starts.search(bare) and not text.startswith("gpu-doctor "):
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {text[:90]!r}")  # type: ignore[attr-defined]
    return found
