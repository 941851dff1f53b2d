"""Parsing and validation of the torch-release sections of compat/cuda_matrix.json (see torch_releases.py)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

from torch_gpu_doctor import data_cache
from torch_gpu_doctor.compat import MATRIX, CompatDataError
from torch_gpu_doctor.compat.hardware_parse import (
    parse_architectures,
    parse_device_rule,
    parse_mvc,
    parse_pci,
)
from torch_gpu_doctor.compat.json_fields import lst, obj, opt_text, text, texts
from torch_gpu_doctor.compat.torch_releases import (
    _MINOR,
    _PTX,
    _SM,
    _VERSION,
    PLATFORMS,
    BundledRuntime,
    Companion,
    Companions,
    LegacyBuild,
    LegacyRelease,
    TorchCompat,
    TorchRelease,
    TorchVariant,
    _version_tuple,
    parse_cc,
)
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.package_data import package_file, package_text

_CUDA_VARIANT = lazy(r"cu([0-9]{1,2})([0-9])", re.ASCII)
_LIB_VERSION = lazy(r"[0-9]{1,4}(\.[0-9]{1,6}){1,3}", re.ASCII)
_PY = lazy(r"3\.([0-9]{1,2})(t?)", re.ASCII)
_COMPANION_NAME = lazy(r"torchvision|torchaudio", re.ASCII)
_REQ_PY = lazy(r">=3\.([0-9]{1,2})", re.ASCII)
_OLD_PY = lazy(r"[23]\.[0-9]{1,2}", re.ASCII)  # torch 1.4 still had Python 2.7 wheels
_DATE = lazy(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
_PLATFORM = lazy("|".join(PLATFORMS))
_ROCM_VARIANT = lazy(r"rocm[0-9]{1,2}(\.[0-9]{1,3}){1,2}", re.ASCII)


def _platform_map(
    value: Any, where: str, platforms: tuple[str, ...], pattern: re.Pattern[str]
) -> dict[str, tuple[str, ...]]:
    mapping = obj(value, where)
    out: dict[str, tuple[str, ...]] = {}
    for plat, items in mapping.items():
        if plat not in platforms:
            raise CompatDataError(
                f"{where}.{plat[:30]}: not one of the variant's platforms {list(platforms)}"
            )
        out[plat] = texts(items, f"{where}.{plat}", pattern)
    return out


def _parse_variant(entry: Any, where: str) -> TorchVariant:
    entry = obj(entry, where)
    name = text(entry, "name", where)
    cuda = opt_text(entry, "cuda", where, _MINOR)
    cuda_match = _CUDA_VARIANT.fullmatch(name)
    if cuda_match:
        expected = f"{int(cuda_match.group(1))}.{cuda_match.group(2)}"
        if cuda != expected:
            raise CompatDataError(f"{where}.cuda: {name} needs cuda {expected!r}, not {cuda!r}")
    elif name == "cpu" or _ROCM_VARIANT.fullmatch(name):
        if cuda is not None:
            raise CompatDataError(f"{where}.cuda: {name} has no CUDA, must be null")
    else:
        raise CompatDataError(f"{where}.name: {name[:60]!r} is not cuXYZ, rocmX.Y or cpu")
    platforms = texts(entry.get("platforms"), f"{where}.platforms", _PLATFORM, non_empty=True)
    arch = _platform_map(entry.get("arch_list"), f"{where}.arch_list", platforms, _SM)
    ptx = _platform_map(entry.get("ptx"), f"{where}.ptx", platforms, _PTX)
    if cuda is None and (any(arch.values()) or any(ptx.values())):
        raise CompatDataError(f"{where}: only CUDA variants have sm_/compute_ targets")
    arch_unc_raw = obj(entry.get("arch_unconfirmed", {}), f"{where}.arch_unconfirmed")
    arch_unc: dict[str, str] = {}
    for plat in arch_unc_raw:
        if plat not in platforms:
            raise CompatDataError(f"{where}.arch_unconfirmed.{plat[:30]}: not one of the variant's platforms")
        arch_unc[plat] = text(arch_unc_raw, plat, f"{where}.arch_unconfirmed")
    return TorchVariant(
        name=name,
        cuda=cuda,
        platforms=platforms,
        arch_list=arch,
        ptx=ptx,
        cudnn=opt_text(entry, "cudnn", where, _LIB_VERSION),
        nccl=opt_text(entry, "nccl", where, _LIB_VERSION),
        source=text(entry, "source", where),
        unconfirmed=opt_text(entry, "unconfirmed", where),
        arch_unconfirmed=arch_unc,
        cudnn_unconfirmed=opt_text(entry, "cudnn_unconfirmed", where),
    )


def _parse_companions(value: Any, where: str, patches: tuple[str, ...]) -> Companions:
    entry = obj(value, where)
    raw = obj(entry.get("for_patches", {}), f"{where}.for_patches")
    for_patches: dict[str, Companion] = {}
    for patch, comp_raw in raw.items():
        if patch not in patches:
            raise CompatDataError(
                f"{where}.for_patches.{patch[:20]}: not one of the release's patches {list(patches)}"
            )
        comp_where = f"{where}.for_patches.{patch}"
        comp = obj(comp_raw, comp_where)
        for_patches[patch] = Companion(
            text(comp, "torchvision", comp_where, _VERSION),
            text(comp, "torchaudio", comp_where, _VERSION),
            _untagged(comp, comp_where),
        )
    return Companions(
        torchvision=text(entry, "torchvision", where, _VERSION),
        torchaudio=text(entry, "torchaudio", where, _VERSION),
        for_patches=for_patches,
        note=opt_text(entry, "note", where),
        source=text(entry, "source", where),
        unconfirmed=opt_text(entry, "unconfirmed", where),
        untagged=_untagged(entry, where),
    )


def _untagged(entry: Mapping[str, Any], where: str) -> frozenset[str]:
    """The companions whose version is one wheel for every variant (torchvision 0.29.2 is `py3-none`): no
    local version such as `+cu130` exists for them."""
    return frozenset(texts(entry.get("untagged", []), f"{where}.untagged", _COMPANION_NAME))


def _parse_release(entry: Any, where: str) -> TorchRelease:
    entry = obj(entry, where)
    version = text(entry, "version", where, _VERSION)
    patches = texts(entry.get("patches", []), f"{where}.patches", _VERSION)
    base = _version_tuple(version)
    previous = base
    for i, patch in enumerate(patches):
        found = _version_tuple(patch)
        if found[:2] != base[:2] or found <= previous:
            raise CompatDataError(
                f"{where}.patches[{i}]: {patch!r} must be a later patch of {version}, ascending"
            )
        previous = found
    date = text(entry, "release_date", where, _DATE)
    import datetime  # only when the data is parsed: data_cache's runs never are (issue 17's budget)

    try:
        datetime.date.fromisoformat(date)
    except ValueError:
        raise CompatDataError(f"{where}.release_date: {date!r} is not a date") from None
    requires = text(entry, "requires_python", where, _REQ_PY)
    pythons = texts(entry.get("python_versions"), f"{where}.python_versions", _PY, non_empty=True)
    lowest = min(int(p.removesuffix("t").split(".")[1]) for p in pythons)
    if int(requires[4:]) > lowest:
        raise CompatDataError(f"{where}.requires_python: {requires} excludes python_versions 3.{lowest}")
    variants: list[TorchVariant] = []
    for i, item in enumerate(lst(entry.get("variants"), f"{where}.variants", non_empty=True)):
        var = _parse_variant(item, f"{where}.variants[{i}]")
        if any(v.name == var.name for v in variants):
            raise CompatDataError(f"{where}.variants[{i}]: duplicate variant {var.name!r}")
        variants.append(var)
    default_raw = obj(entry.get("pypi_default"), f"{where}.pypi_default")
    if set(default_raw) != set(PLATFORMS):
        raise CompatDataError(f"{where}.pypi_default: needs exactly the keys {list(PLATFORMS)}")
    defaults: dict[str, str | None] = {}
    for plat in PLATFORMS:
        name = opt_text(default_raw, plat, f"{where}.pypi_default")
        if name is not None and not any(v.name == name and plat in v.platforms for v in variants):
            raise CompatDataError(
                f"{where}.pypi_default.{plat}: {name[:60]!r} is not a variant published for {plat}"
            )
        defaults[plat] = name
    return TorchRelease(
        version=version,
        patches=patches,
        release_date=date,
        requires_python=requires,
        python_versions=pythons,
        pypi_default=defaults,
        variants=tuple(variants),
        companions=_parse_companions(entry.get("companions"), f"{where}.companions", patches),
        linux_x86_64_glibc_min=opt_text(entry, "linux_x86_64_glibc_min", where, _MINOR),
        notes=opt_text(entry, "notes", where),
        source=text(entry, "source", where),
        unconfirmed=opt_text(entry, "unconfirmed", where),
    )


def _parse_legacy_build(entry: Any, where: str, versions: tuple[str, ...]) -> LegacyBuild:
    variant = _parse_variant(entry, where)
    raw = obj(entry.get("install", {}), f"{where}.install")
    install: dict[str, str] = {}
    for version in raw:
        if version not in versions:
            raise CompatDataError(f"{where}.install.{version[:20]}: not one of the release's versions")
        command = text(raw, version, f"{where}.install")
        if variant.cuda is not None and (
            not command.startswith(("pip install ", "pip3 install ")) or f"torch=={version}" not in command
        ):  # what a CUDA build's fix runs (ROCm and CPU commands are kept, never run)
            raise CompatDataError(f"{where}.install.{version}: not a pip command for torch {version}")
        install[version] = command
    conda: dict[str, str] = {}
    raw_conda = obj(entry.get("conda_install", {}), f"{where}.conda_install")
    for version in raw_conda:
        command = text(raw_conda, version, f"{where}.conda_install")
        pinned = command.startswith(f"conda install pytorch=={version} ")
        lts = (
            command.startswith("conda install pytorch ") and " -c pytorch-lts" in command
        )  # 1.8.2: its own channel
        if version not in versions or not (pinned or lts):
            raise CompatDataError(
                f"{where}.conda_install.{version[:20]}: not a conda command for torch {version}"
            )
        conda[version] = command
    patched: dict[str, dict[str, tuple[str, ...]]] = {}
    for version, lists in obj(
        entry.get("arch_list_for_patches", {}), f"{where}.arch_list_for_patches"
    ).items():
        if version not in versions:
            raise CompatDataError(
                f"{where}.arch_list_for_patches.{version[:20]}: not one of the release's versions"
            )
        patch_where = f"{where}.arch_list_for_patches.{version}"
        text(obj(lists, patch_where), "source", patch_where)
        patched[version] = _platform_map(
            lists.get("arch_list"), f"{patch_where}.arch_list", variant.platforms, _SM
        )
    return LegacyBuild(variant=variant, install=install, arch_for_patches=patched, conda_install=conda)


def _parse_legacy(value: Any, oldest: str) -> tuple[LegacyRelease, ...]:
    """`legacy_torch_releases`: newest first, all older than the oldest of `torch_releases`."""
    releases: list[LegacyRelease] = []
    previous = _version_tuple(oldest)
    for i, item in enumerate(lst(value if value is not None else [], "legacy_torch_releases")):
        where = f"legacy_torch_releases[{i}]"
        entry = obj(item, where)
        version = text(entry, "version", where, _VERSION)
        if _version_tuple(version) >= previous:
            raise CompatDataError(f"{where}: {version} must be older than the release before it")
        previous = _version_tuple(version)
        patches = texts(entry.get("patches", []), f"{where}.patches", _VERSION)
        text(entry, "release_date", where, re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII))
        builds = tuple(
            _parse_legacy_build(b, f"{where}.variants[{j}]", (version, *patches))
            for j, b in enumerate(lst(entry.get("variants"), f"{where}.variants", non_empty=True))
        )
        default_raw = obj(entry.get("pypi_default"), f"{where}.pypi_default")
        defaults: dict[str, str | None] = {}
        for plat in default_raw:
            name = opt_text(default_raw, plat, f"{where}.pypi_default")
            if name is not None and not any(
                b.variant.name == name and plat in b.variant.platforms for b in builds
            ):
                raise CompatDataError(
                    f"{where}.pypi_default.{plat[:30]}: {name[:60]!r} is not a build for it"
                )
            defaults[plat] = name
        pythons = texts(entry.get("python_versions"), f"{where}.python_versions", _OLD_PY, non_empty=True)
        for_patches: dict[str, tuple[str, ...]] = {}
        for patch, listed in obj(
            entry.get("python_versions_for_patches", {}), f"{where}.python_versions_for_patches"
        ).items():
            if patch not in patches:
                raise CompatDataError(
                    f"{where}.python_versions_for_patches.{patch[:20]}: not one of its patches"
                )
            for_patches[patch] = texts(
                listed, f"{where}.python_versions_for_patches.{patch}", _PY, non_empty=True
            )
        releases.append(
            LegacyRelease(
                version=version,
                patches=patches,
                release_date=entry["release_date"],
                pypi_default=defaults,
                builds=builds,
                source=text(entry, "source", where),
                unconfirmed=opt_text(entry, "unconfirmed", where),
                python_versions=pythons,
                python_for_patches=for_patches,
            )
        )
    return tuple(releases)


def _parse_program_floors(value: Any) -> tuple[dict[str, tuple[int, int]], dict[str, str]]:
    """`program_gpu_floors`: each program's oldest supported compute capability, with its source; and its name
    as its docs write it."""
    floors: dict[str, tuple[int, int]] = {}
    names: dict[str, str] = {}
    for i, item in enumerate(lst(value if value is not None else [], "program_gpu_floors")):
        where = f"program_gpu_floors[{i}]"
        entry = obj(item, where)
        text(entry, "source", where)
        cc = parse_cc(text(entry, "min_compute_capability", where))
        if cc is None:
            raise CompatDataError(f"{where}.min_compute_capability: not a compute capability")
        program = text(entry, "program", where)
        floors[program] = cc
        names[program] = text(entry, "name", where)
    return floors, names


def _parse_bundled(
    value: Any, where: str, releases: tuple[TorchRelease, ...], toolkits: Mapping[tuple[str, str], Any]
) -> tuple[BundledRuntime, ...]:
    out: list[BundledRuntime] = []
    for i, item in enumerate(lst(value, where, non_empty=True)):
        bw = f"{where}[{i}]"
        raw = obj(item, bw)
        name = text(raw, "variant", bw)
        minors = texts(raw.get("releases"), f"{bw}.releases", _MINOR, non_empty=True)
        for j, minor in enumerate(minors):
            rel = next((r for r in releases if r.minor == minor), None)
            if rel is None or rel.variant(name) is None:
                raise CompatDataError(f"{bw}.releases[{j}]: torch {minor} has no variant {name!r}")
            if any(name == b.variant and minor in b.releases for b in out):
                raise CompatDataError(f"{bw}.releases[{j}]: {name} of torch {minor} is listed twice")
        runtime = BundledRuntime(
            variant=name,
            releases=minors,
            cuda_runtime=text(raw, "cuda_runtime", bw, _LIB_VERSION),
            toolkit_cuda=text(raw, "toolkit_cuda", bw, _MINOR),
            toolkit_release=text(raw, "toolkit_release", bw),
            source=text(raw, "source", bw),
            unconfirmed=opt_text(raw, "unconfirmed", bw),
        )
        if (runtime.toolkit_cuda, runtime.toolkit_release) not in toolkits:
            raise CompatDataError(
                f"{bw}: no cuda_toolkits row {runtime.toolkit_cuda} {runtime.toolkit_release!r} to take the driver from"
            )
        out.append(runtime)
    return tuple(out)


def _toolkit_rows(value: Any) -> dict[tuple[str, str], tuple[str | None, str | None]]:
    rows: dict[tuple[str, str], tuple[str | None, str | None]] = {}
    for i, item in enumerate(lst(value, "cuda_toolkits")):
        where = f"cuda_toolkits[{i}]"
        raw = obj(item, where)
        key = (text(raw, "cuda", where), text(raw, "release", where))
        rows[key] = (opt_text(raw, "linux_min_driver", where), opt_text(raw, "windows_min_driver", where))
    return rows


def parse_torch_compat(data: Any) -> TorchCompat:
    """Validate the torch-release sections of the whole cuda_matrix.json object; CompatDataError names the path."""
    root = obj(data, "cuda_matrix.json")
    releases: list[TorchRelease] = []
    for i, item in enumerate(lst(root.get("torch_releases"), "torch_releases", non_empty=True)):
        rel = _parse_release(item, f"torch_releases[{i}]")
        if releases and _version_tuple(rel.version) >= _version_tuple(releases[-1].version):
            raise CompatDataError(
                f"torch_releases[{i}]: {rel.version} must come after {releases[-1].version} (newest first)"
            )
        if any(r.minor == rel.minor for r in releases):
            raise CompatDataError(f"torch_releases[{i}]: second entry for torch {rel.minor}")
        releases.append(rel)
    toolkits = _toolkit_rows(root.get("cuda_toolkits"))
    floors, names = _parse_program_floors(root.get("program_gpu_floors"))
    return TorchCompat(
        data_date=text(root, "data_date", "cuda_matrix.json"),
        releases=tuple(releases),
        bundled_runtimes=_parse_bundled(
            root.get("wheel_bundled_cuda_runtime"), "wheel_bundled_cuda_runtime", tuple(releases), toolkits
        ),
        device_rule=parse_device_rule(root.get("pytorch_device_rule"), "pytorch_device_rule"),
        architectures=parse_architectures(root.get("architecture_last_driver"), "architecture_last_driver"),
        pci_gpus=parse_pci(root.get("gpus")),
        toolkit_drivers=toolkits,
        mvc_min_driver=parse_mvc(
            root.get("cuda_minor_version_compatibility"), "cuda_minor_version_compatibility"
        ),
        legacy=_parse_legacy(root.get("legacy_torch_releases"), releases[-1].version),
        program_floors=floors,
        program_names=names,
    )


@functools.cache
def load_torch_releases() -> TorchCompat:
    """The torch sections of the packaged cuda_matrix.json, parsed and validated (by this run or, through
    data_cache, by an earlier one)."""
    shipped = package_file("torch_gpu_doctor.compat", MATRIX)
    return data_cache.cached("torch-releases", _shipped_torch_releases, (shipped,))


def _shipped_torch_releases() -> TorchCompat:
    return parse_torch_compat(json.loads(package_text("torch_gpu_doctor.compat", MATRIX)))
