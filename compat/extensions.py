"""Packages that ship CUDA code compiled against torch (compat/extensions.json): one row each, with the module
names a traceback or a library path shows, how the package is installed and rebuilt, and whether its wheels
pin one torch. The triage rules that say "the kernel is the extension's, not torch's" and the extension fixes
take every package name from this one table."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from torch_gpu_doctor.compat import CompatDataError
from torch_gpu_doctor.compat.json_fields import lst, obj, text
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.package_data import package_text
from torch_gpu_doctor.records import dataclass

_PIP_NAME = lazy(r"[a-z][a-z0-9-]*")
_MODULE = lazy(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class Extension:
    name: str  # its pip name: "flash-attn"
    modules: tuple[str, ...]  # its top-level modules, the package folder first
    pip_aliases: tuple[str, ...]  # "mmcv-full"
    cuda_suffixed: bool  # published as NAME-cuXYZ
    csrc: bool  # its CUDA sources live under <module>/csrc
    ops_frames: bool  # its operator modules' frames call straight into its kernels
    kernel_check: bool  # its ops raise "<Op> failed with error code <CUDA error>" (FlashInfer's wording)
    built_for_one_torch: bool  # another torch build breaks it
    rebuild: str | None  # what a rebuild against the installed torch installs, where its wheels pin no torch
    wheels: str | None  # where its prebuilt wheels are, in one sentence
    build_env: tuple[tuple[str, str], ...]  # what its source build needs set to compile: (VAR, value)
    find_links: str | None  # its prebuilt wheels' page for one torch: {cuda} and {minor} filled in
    source: str

    def wheel_page(self, torch_minor: str, cuda: str) -> str | None:
        """The page of its wheels built for torch `torch_minor` ("2.1") and torch's build `cuda` ("cu121")."""
        if self.find_links is None:
            return None
        return self.find_links.replace("{minor}", torch_minor).replace("{cuda}", cuda)

    @property
    def module(self) -> str:
        return self.modules[0]


@dataclass(frozen=True)
class Extensions:
    packages: tuple[Extension, ...]

    def by_module(self, module: str | None) -> Extension | None:
        return next((p for p in self.packages if module in p.modules), None)

    def by_pip_name(self, name: str) -> Extension | None:
        """The row of a pip name as typed: any case, "_" for "-", an alias, or NAME-cuXYZ."""
        said = name.lower().replace("_", "-")
        for p in self.packages:
            if said == p.name or said in p.pip_aliases:
                return p
            suffix = said[len(p.name) + 3 :] if said.startswith(f"{p.name}-cu") else ""
            if p.cuda_suffixed and suffix.isdecimal():  # "spconv-cu120", not "spconv-cuda"
                return p
        return None

    def names(self, flag: str) -> tuple[str, ...]:
        """The module names (package folders first) of the rows with `flag` set, for building patterns."""
        return tuple(m for p in self.packages if getattr(p, flag) for m in p.modules)

    def pip_pattern(self, flag: str) -> str:
        """A regex alternation of the pip names (and aliases) of the rows with `flag` set: "-" or "_" either
        way, NAME-cuXYZ where the package is published per CUDA. Longest first."""
        names = sorted(
            {n for p in self.packages if getattr(p, flag) for n in (p.name, *p.pip_aliases)},
            key=len,
            reverse=True,
        )
        suffixed = {p.name for p in self.packages if p.cuda_suffixed}
        return "|".join(
            re.escape(n).replace(r"\-", "-").replace("-", "[-_]") + (r"(?:-cu\d+)?" if n in suffixed else "")
            for n in names
        )


def _flag(entry: dict[str, Any], key: str, where: str) -> bool:
    value = entry.get(key)
    if not isinstance(value, bool):
        raise CompatDataError(f"{where}.{key}: must be true or false")
    return value


def _optional(entry: dict[str, Any], key: str, where: str) -> str | None:
    value = entry.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise CompatDataError(f"{where}.{key}: must be null or a non-empty string")
    return value


_ENV_NAME = lazy(r"[A-Z][A-Z0-9_]*")


def _build_env(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and _ENV_NAME.fullmatch(k) and isinstance(v, str) and v for k, v in value.items()
    ):
        raise CompatDataError(f"{where}: must be an object of VARIABLE: value strings ({{}} for none)")
    return tuple(value.items())


def _find_links(entry: dict[str, Any], where: str) -> str | None:
    value = _optional(entry, "find_links", where)
    if value is not None and (
        not value.startswith("https://") or "{minor}" not in value or "{cuda}" not in value
    ):
        raise CompatDataError(
            f"{where}.find_links: an https:// page with {{minor}} and {{cuda}} in it, or null"
        )
    return value


def parse_extensions(data: Any) -> Extensions:
    rows = lst(obj(data, "extensions.json").get("packages"), "extensions.json.packages", non_empty=True)
    packages = []
    for i, raw in enumerate(rows):
        where = f"extensions.json.packages[{i}]"
        entry = obj(raw, where)
        modules = tuple(lst(entry.get("modules"), f"{where}.modules", non_empty=True))
        aliases = tuple(lst(entry.get("pip_aliases"), f"{where}.pip_aliases"))
        if not all(isinstance(m, str) and _MODULE.fullmatch(m) for m in modules):
            raise CompatDataError(f"{where}.modules: must be Python module names")
        if not all(isinstance(a, str) and _PIP_NAME.fullmatch(a) for a in aliases):
            raise CompatDataError(f"{where}.pip_aliases: must be lower-case pip names")
        packages.append(
            Extension(
                name=text(entry, "name", where, _PIP_NAME),
                modules=modules,
                pip_aliases=aliases,
                cuda_suffixed=_flag(entry, "cuda_suffixed", where),
                csrc=_flag(entry, "csrc", where),
                ops_frames=_flag(entry, "ops_frames", where),
                kernel_check=_flag(entry, "kernel_check", where),
                built_for_one_torch=_flag(entry, "built_for_one_torch", where),
                rebuild=_optional(entry, "rebuild", where),
                wheels=_optional(entry, "wheels", where),
                build_env=_build_env(entry.get("build_env"), f"{where}.build_env"),
                find_links=_find_links(entry, where),
                source=text(entry, "source", where),
            )
        )
    seen: set[str] = set()
    for p in packages:
        for module in p.modules:
            if module in seen:
                raise CompatDataError(f"extensions.json: module {module} is in two rows")
            seen.add(module)
    return Extensions(tuple(packages))


@functools.cache
def load_extensions() -> Extensions:
    return parse_extensions(json.loads(package_text("torch_gpu_doctor.compat", "extensions.json")))
