"""The `@check` decorator and the registry it fills: a check's id, title, area and explanation (its docstring).

Which modules' checks run, plugins and the shipped index are torch_gpu_doctor.catalog's job.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import CheckSpec, Explanation, Finding
from torch_gpu_doctor.records import dataclass

if TYPE_CHECKING:  # the Facts model imports every facts module: builtin_specs() must not need it
    from torch_gpu_doctor.facts.model import Facts

CheckResult = Finding | Iterable[Finding]
CheckFn: TypeAlias = Callable[["Facts"], CheckResult]
F = TypeVar("F", bound=CheckFn)
_ID = lazy(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")
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


def registered() -> tuple[RegisteredCheck, ...]:
    """Every check registered so far, by any imported module (catalog.load_checks chooses among them)."""
    return tuple(_REGISTRY.values())
