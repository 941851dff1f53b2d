"""Which checks exist: the built-in modules (torch_gpu_doctor.checks.BUILTIN_CHECK_MODULES), the plugins, and
the shipped index of the built-in checks' specs.

Plugins are entry points in the group `torch_gpu_doctor.checks`; each names a module (its decorated checks
register on import). A plugin that fails to load becomes a `crash` finding, never a crash of the doctor.

`builtin_specs()` reads the built-in checks' specs from `checks/specs.json` (written by `python tools/regen.py`,
kept equal to the registry by tests/test_check_index.py): `--list-checks`, `explain` and the TUI's first frame
import no check module and not the Facts model (DESIGN §7: start-up under 300 ms).
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Collection
from functools import cache

from torch_gpu_doctor.checks import BUILTIN_CHECK_MODULES
from torch_gpu_doctor.model import CheckSpec, Explanation, Finding, Status
from torch_gpu_doctor.package_data import package_text
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.registry import RegisteredCheck, RegistryError, registered

ENTRY_POINT_GROUP = "torch_gpu_doctor.checks"
SPECS_RESOURCE = "specs.json"  # in the package torch_gpu_doctor.checks


@dataclass(frozen=True)
class LoadedChecks:
    checks: tuple[RegisteredCheck, ...]
    problems: tuple[Finding, ...]  # plugins that failed to load


def load_checks(plugins: bool = True, only: Collection[str] | None = None) -> LoadedChecks:
    """The built-in checks and, with `plugins`, those of the entry points that loaded. Only those: a check
    some other imported module registered (a test, a half-loaded plugin) never joins a run unasked.

    With `only` (check ids), just the built-in checks among them, and just the modules that hold them are
    imported (the index names each check's module): triage runs a fifth of the checks, and importing the
    others' modules, their facts and their tables would be most of its start-up."""
    if only is not None:
        wanted = set(only)
        where = builtin_modules()
        names = tuple(m for m in BUILTIN_CHECK_MODULES if any(where.get(c) == m for c in wanted))
        for name in names:
            importlib.import_module(name)
        rank = {name: i for i, name in enumerate(BUILTIN_CHECK_MODULES)}
        picked = [c for c in registered() if c.module in names and c.spec.id in wanted]
        picked.sort(key=lambda c: rank[c.module])
        return LoadedChecks(tuple(picked), ())
    for name in BUILTIN_CHECK_MODULES:
        importlib.import_module(name)
    modules = set(BUILTIN_CHECK_MODULES)
    problems: list[Finding] = []
    if plugins:
        from importlib.metadata import entry_points  # ~25 ms: only where plugins are looked for

        for ep in entry_points(group=ENTRY_POINT_GROUP):
            try:
                ep.load()
            except Exception as exc:  # any plugin bug is reported, never raised
                import traceback  # only a failure needs it: not part of every start (issue 17's budget)

                problems.append(
                    Finding(
                        check_id=f"plugin.{_slug(ep.name)}",
                        status=Status.CRASH,
                        summary=f"The check plugin {ep.name!r} ({ep.value}) failed to load: {exc}",
                        details="Its checks did not run. Update or uninstall the package that provides it.",
                        traceback=traceback.format_exc(),
                    )
                )
            else:
                modules.add(ep.value.split(":")[0].strip())
    # a plugin package may register its checks in submodules it imports (mypkg -> mypkg.checks)
    chosen = [c for c in registered() if c.module in modules or c.module.rpartition(".")[0] in modules]
    # The order of BUILTIN_CHECK_MODULES, then plugins, each module's checks as written: never the order in
    # which something happened to import the modules first (reports and the TUI list stay the same).
    rank = {name: i for i, name in enumerate(BUILTIN_CHECK_MODULES)}
    chosen.sort(key=lambda c: rank.get(c.module, len(rank)))
    return LoadedChecks(tuple(chosen), tuple(problems))


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "_", name.lower()).strip("_") or "unnamed"


@dataclass(frozen=True)
class KnownSpecs:
    specs: tuple[CheckSpec, ...]
    problems: tuple[Finding, ...]  # plugins that failed to load


def known_specs(plugins: bool = True) -> KnownSpecs:
    """The checks `--list-checks`, `explain` and `--check/--skip` know about, in load_checks' order: the
    built-in index, and the plugins' checks only when plugins are enabled and one is installed (only then
    are the check modules imported)."""
    if plugins and plugins_installed():
        loaded = load_checks(plugins=True)
        return KnownSpecs(tuple(c.spec for c in loaded.checks), loaded.problems)
    return KnownSpecs(builtin_specs(), ())


def plugins_installed() -> bool:
    """Whether some distribution declares an entry point in the group: cheap, nothing is loaded."""
    from importlib.metadata import entry_points

    return any(True for _ in entry_points(group=ENTRY_POINT_GROUP))


@cache
def _index() -> tuple[dict[str, object], ...]:
    text = package_text("torch_gpu_doctor.checks", SPECS_RESOURCE)
    document = json.loads(text)
    if not isinstance(document, dict) or not isinstance(document.get("checks"), list):
        raise RegistryError(f"torch_gpu_doctor.checks/{SPECS_RESOURCE}: no list of checks")
    return tuple(document["checks"])


@cache
def builtin_specs() -> tuple[CheckSpec, ...]:
    """The built-in checks' specs, in load_checks(plugins=False)'s order, from the shipped index."""
    return tuple(spec_from_json(entry) for entry in _index())


@cache
def builtin_modules() -> dict[str, str]:
    """Each built-in check's id -> the module that defines it, from the shipped index."""
    return {_text(entry, "id"): _text(entry, "module") for entry in _index()}


def spec_to_json(spec: CheckSpec, module: str) -> dict[str, object]:
    """One entry of the index (tools/build_check_index.py writes them, run by tools/regen.py)."""
    text = spec.explanation
    return {
        "id": spec.id,
        "module": module,
        "title": spec.title,
        "area": spec.area,
        "required": spec.required,
        "explanation": {"what": text.what, "why": text.why, "fix": text.fix},
    }


def spec_from_json(entry: object) -> CheckSpec:
    """One entry of the index back into a CheckSpec; anything malformed is a RegistryError."""
    if not isinstance(entry, dict) or not isinstance(entry.get("explanation"), dict):
        raise RegistryError(f"torch_gpu_doctor.checks/{SPECS_RESOURCE}: a malformed entry: {entry!r}")
    required = entry.get("required")
    if not isinstance(required, bool):
        raise RegistryError(
            f"torch_gpu_doctor.checks/{SPECS_RESOURCE}: 'required' is not true/false: {entry!r}"
        )
    text = entry["explanation"]
    explanation = Explanation(what=_text(text, "what"), why=_text(text, "why"), fix=_text(text, "fix"))
    return CheckSpec(_text(entry, "id"), _text(entry, "title"), _text(entry, "area"), explanation, required)


def _text(entry: dict[str, object], key: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str):
        raise RegistryError(f"torch_gpu_doctor.checks/{SPECS_RESOURCE}: {key!r} is not a string: {entry!r}")
    return value
