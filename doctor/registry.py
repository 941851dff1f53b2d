"""Where checks come from: an explicit tuple of built-in modules, a decorator, and plugins.

Plugins are entry points in the group `gpu_doctor.checks`; each names a module (its decorated checks register
on import). A plugin that fails to load becomes a `crash` finding, never a crash of the doctor.
"""

from __future__ import annotations

import importlib
import inspect
import re
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TypeVar

from gpu_doctor.facts.model import Facts
from gpu_doctor.model import CheckSpec, Explanation, Finding, Status

ENTRY_POINT_GROUP = "gpu_doctor.checks"
BUILTIN_CHECK_MODULES = (
    "gpu_doctor.checks.gpu",
    "gpu_doctor.checks.driver",
    "gpu_doctor.checks.nvml",
    "gpu_doctor.checks.nouveau",
    "gpu_doctor.checks.torch_build",
    "gpu_doctor.checks.torch_stack",
    "gpu_doctor.checks.environment",
    "gpu_doctor.checks.pcie",
    "gpu_doctor.checks.egpu",
    "gpu_doctor.checks.memory",
    "gpu_doctor.checks.storage",
    "gpu_doctor.checks.platform_container",
    "gpu_doctor.checks.platform_wsl",
    "gpu_doctor.checks.platform_iommu",
    "gpu_doctor.checks.platform_vm",
    "gpu_doctor.checks.pcie_under_load",
    # after the checks above: the smoke test's results, when it ran
    "gpu_doctor.checks.smoke_run",
    "gpu_doctor.checks.smoke_gpu",
    "gpu_doctor.checks.smoke_training",
    "gpu_doctor.checks.smoke_multi_gpu",
    "gpu_doctor.checks.amd",
    "gpu_doctor.checks.secure_boot",
    "gpu_doctor.checks.module_build",
    "gpu_doctor.checks.reboot_pending",
    "gpu_doctor.checks.xid_errors",
    "gpu_doctor.checks.gpu_persistence",
    "gpu_doctor.checks.gpu_throttle",
    "gpu_doctor.checks.gpu_memory_errors",
)
CheckResult = Finding | Iterable[Finding]
CheckFn = Callable[[Facts], CheckResult]
F = TypeVar("F", bound=CheckFn)
_ID = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")
_SECTIONS = {"what it checks": "what", "why it matters": "why", "how to fix": "fix"}


@dataclass(frozen=True)
class RegisteredCheck:
    spec: CheckSpec
    fn: CheckFn
    module: str


_REGISTRY: dict[str, RegisteredCheck] = {}


class RegistryError(ValueError):
    pass


def parse_explanation(doc: str | None, check_id: str) -> Explanation:
    """The docstring's three `## What it checks / ## Why it matters / ## How to fix` sections."""
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in inspect.cleandoc(doc or "").splitlines():
        heading = line.strip().lstrip("#").strip().lower() if line.strip().startswith("##") else None
        if heading is not None:
            current = _SECTIONS.get(heading)
            if current is None:
                raise RegistryError(f"{check_id}: unknown section {line.strip()!r}")
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    texts = {key: "\n".join(lines).strip() for key, lines in sections.items()}
    missing = [name for name, key in _SECTIONS.items() if not texts.get(key)]
    if missing:
        raise RegistryError(f"{check_id}: the docstring lacks {', '.join(missing)}")
    return Explanation(what=texts["what"], why=texts["why"], fix=texts["fix"])


def check(check_id: str, title: str, area: str, *, required: bool = False) -> Callable[[F], F]:
    """Register a pure `Facts -> Finding(s)` function; its docstring is the check's explanation."""

    def register(fn: F) -> F:
        if not _ID.match(check_id):
            raise RegistryError(f"check id {check_id!r} must be dotted lower case, like 'driver.nvml'")
        if check_id in _REGISTRY and _REGISTRY[check_id].module != fn.__module__:
            raise RegistryError(f"check id {check_id!r} is registered twice ({_REGISTRY[check_id].module})")
        spec = CheckSpec(check_id, title, area, parse_explanation(fn.__doc__, check_id), required)
        _REGISTRY[check_id] = RegisteredCheck(spec, fn, fn.__module__)
        return fn

    return register


@dataclass(frozen=True)
class LoadedChecks:
    checks: tuple[RegisteredCheck, ...]
    problems: tuple[Finding, ...]  # plugins that failed to load


def load_checks(plugins: bool = True) -> LoadedChecks:
    """The built-in checks and, with `plugins`, those of the entry points that loaded. Only those: a check
    some other imported module registered (a test, a half-loaded plugin) never joins a run unasked."""
    for name in BUILTIN_CHECK_MODULES:
        importlib.import_module(name)
    modules = set(BUILTIN_CHECK_MODULES)
    problems: list[Finding] = []
    if plugins:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            try:
                ep.load()
            except Exception as exc:  # any plugin bug is reported, never raised
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
    chosen = [c for c in _REGISTRY.values() if c.module in modules or c.module.rpartition(".")[0] in modules]
    # The order of BUILTIN_CHECK_MODULES, then plugins, each module's checks as written: never the order in
    # which something happened to import the modules first (reports and the TUI list stay the same).
    rank = {name: i for i, name in enumerate(BUILTIN_CHECK_MODULES)}
    chosen.sort(key=lambda c: rank.get(c.module, len(rank)))
    return LoadedChecks(tuple(chosen), tuple(problems))


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "_", name.lower()).strip("_") or "unnamed"
