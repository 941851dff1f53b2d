"""The layers of docs/architecture.md hold: import-linter's contracts, no import cycle, pure checks, and every
module placed in a layer.

The import graph here is read from the source with `ast`, function-level imports included (a cycle hidden
behind one is still a cycle), `if TYPE_CHECKING:` blocks excluded (they never run).
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "torch_gpu_doctor"
# pyproject's package-dir: the import package is spread over the user's top-level folders
FOLDERS = {
    "doctor": PACKAGE,
    "checks": f"{PACKAGE}.checks",
    "fixes": f"{PACKAGE}.fixes",
    "compat": f"{PACKAGE}.compat",
}
PROBES = f"{PACKAGE}.probes"  # scripts for the target interpreter, never imported by the doctor


def modules() -> dict[str, Path]:
    """Every module of the package: dotted name -> file."""
    found: dict[str, Path] = {}
    for folder, dotted in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join([dotted, *parts])
            if name.startswith(PROBES + "."):
                continue
            found[name] = path
    return found


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(tree: ast.AST, name: str, is_package: bool) -> Iterator[tuple[ast.stmt, str, bool]]:
    """(statement, imported module, inside a function) for every import that runs."""

    def walk(node: ast.AST, in_function: bool) -> Iterator[tuple[ast.stmt, str, bool]]:
        for child in ast.iter_child_nodes(node):
            if _type_checking(child):
                continue
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield child, alias.name, in_function
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = name.split(".") if is_package else name.split(".")[:-1]
                    anchor = anchor[: len(anchor) - child.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                yield child, base, in_function
                for alias in child.names:
                    yield child, f"{base}.{alias.name}", in_function
            yield from walk(child, nested)

    yield from walk(tree, False)


def import_graph() -> dict[str, set[str]]:
    known = modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for _, imported, _ in _imports(tree, name, path.name == "__init__.py"):
            target = imported
            while target and target not in known:  # `from pkg.mod import name` -> pkg.mod
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_no_import_cycle() -> None:
    found = cycles(import_graph())
    assert found == [], f"import cycles (function-level imports count): {found}"


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_import_linter_contracts_are_kept() -> None:
    tool = Path(sys.executable).parent / "lint-imports"
    command = str(tool) if tool.exists() else shutil.which("lint-imports")
    if command is None:
        pytest.fail("lint-imports is not installed; install the test extras: pip install -e '.[test]'")
    proc = subprocess.run(
        [command, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " 0 broken" in proc.stdout


def _layered() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (layers,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [name.strip() for layer in layers["layers"] for name in layer.replace("|", ":").split(":")]


def test_every_module_is_in_a_layer() -> None:
    """A new module outside every layer would escape the contract: place it (docs/architecture.md)."""
    layered = _layered()
    outside = [
        name
        for name in modules()
        if not any(name == layer or name.startswith(layer + ".") for layer in layered)
        and not any(layer.startswith(name + ".") for layer in layered)  # a package split over layers
    ]
    assert outside == []
    graph = import_graph()
    split = [
        name for name in modules() if name not in layered and any(x.startswith(name + ".") for x in layered)
    ]
    assert all(not graph[name] for name in split), "a package split over layers imports nothing itself"


IMPORT_CHECK = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
print(json.dumps(sorted(m for m in sys.modules if m in sys.argv[2:])))
"""
IMPURE = ("subprocess", f"{PACKAGE}.host.real", f"{PACKAGE}.host.streaming", f"{PACKAGE}.host.process")


@pytest.mark.parametrize(
    "module",
    sorted(m for m in modules() if m.startswith(f"{PACKAGE}.checks.") and m != f"{PACKAGE}.checks.support"),
)
def test_importing_a_check_loads_no_process_code(module: str) -> None:
    """In a fresh interpreter: nothing a check imports, however indirectly, can start a process."""
    out = subprocess.run(
        [sys.executable, "-c", IMPORT_CHECK, module, *IMPURE],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert json.loads(out) == []


def test_the_import_check_sees_subprocess() -> None:
    # proves the test above can fail
    out = subprocess.run(
        [sys.executable, "-c", IMPORT_CHECK, f"{PACKAGE}.host.real", *IMPURE],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "subprocess" in json.loads(out)


def test_function_level_imports_say_why() -> None:
    """A function-level import is for start-up time only, and says so in a comment on its line or above it."""
    silent = []
    for name, path in modules().items():
        lines = path.read_text(encoding="utf-8").splitlines()
        tree = ast.parse("\n".join(lines))
        for statement, target, in_function in _imports(tree, name, path.name == "__init__.py"):
            if not in_function or not target.startswith(PACKAGE):
                continue
            here, above = lines[statement.lineno - 1], lines[statement.lineno - 2].strip()
            if "#" not in here and not above.startswith("#"):
                silent.append(f"{path.relative_to(ROOT)}:{statement.lineno}")
    assert sorted(set(silent)) == []
