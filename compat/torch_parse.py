"""Parsing and validation of the torch-release sections of compat/cuda_matrix.json (see torch_releases.py)."""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any

from gpu_doctor.compat import CompatDataError
from gpu_doctor.compat.torch_releases import (
    _CC,
    _MINOR,
    _PTX,
    _SM,
    _VERSION,
    CC,
    PLATFORMS,
    ArchitectureLastDriver,
    BundledRuntime,
    Companion,
    Companions,
    CubinRule,
    DeviceRule,
    KernelModule,
    PciGpu,
    TorchCompat,
    TorchRelease,
    TorchVariant,
    _code,
    _version_tuple,
    cubin_runs_on,
    parse_cc,
    ptx_runs_on,
)

_BRANCH = re.compile(r"R[0-9]{3}", re.ASCII)
_DRIVER = re.compile(r"[0-9]{3}(\.[0-9]{1,3}){0,2}", re.ASCII)
_CUDA_VARIANT = re.compile(r"cu([0-9]{1,2})([0-9])", re.ASCII)
_LIB_VERSION = re.compile(r"[0-9]{1,4}(\.[0-9]{1,6}){1,3}", re.ASCII)
_PCI_ID = re.compile(r"[0-9a-f]{4}", re.ASCII)
_PY = re.compile(r"3\.([0-9]{1,2})(t?)", re.ASCII)
_REQ_PY = re.compile(r">=3\.([0-9]{1,2})", re.ASCII)
_ROCM_VARIANT = re.compile(r"rocm[0-9]{1,2}(\.[0-9]{1,3}){1,2}", re.ASCII)


def _show(value: Any) -> str:
    """A short, always-printable picture of a bad value (str() of a huge int raises)."""
    return repr(value[:60]) if isinstance(value, str) else type(value).__name__


def _obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise CompatDataError(f"{where}: must be an object with string keys")
    return value


def _lst(value: Any, where: str, non_empty: bool = False) -> list[Any]:
    if not isinstance(value, list):
        raise CompatDataError(f"{where}: must be a list")
    if non_empty and not value:
        raise CompatDataError(f"{where}: must not be empty")
    return value


def _text(entry: dict[str, Any], key: str, where: str, pattern: re.Pattern[str] | None = None) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CompatDataError(f"{where}.{key}: must be a non-empty string")
    if pattern is not None and not pattern.fullmatch(value):
        raise CompatDataError(f"{where}.{key}: {value[:60]!r} does not match {pattern.pattern}")
    return value


def _opt_text(
    entry: dict[str, Any], key: str, where: str, pattern: re.Pattern[str] | None = None
) -> str | None:
    if entry.get(key) is None:
        return None
    return _text(entry, key, where, pattern)


def _texts(value: Any, where: str, pattern: re.Pattern[str], non_empty: bool = False) -> tuple[str, ...]:
    items = _lst(value, where, non_empty)
    out: list[str] = []
    for i, item in enumerate(items):
        if not isinstance(item, str) or not pattern.fullmatch(item):
            raise CompatDataError(f"{where}[{i}]: {_show(item)} does not match {pattern.pattern}")
        if item in out:
            raise CompatDataError(f"{where}[{i}]: duplicate {item!r}")
        out.append(item)
    return tuple(out)


def _cc(text: Any, where: str) -> CC:
    found = parse_cc(text) if isinstance(text, str) else None
    if found is None or text != text.strip():
        raise CompatDataError(f"{where}: {_show(text)} is not a compute capability like '8.6'")
    return found


def _platform_map(
    value: Any, where: str, platforms: tuple[str, ...], pattern: re.Pattern[str]
) -> dict[str, tuple[str, ...]]:
    mapping = _obj(value, where)
    out: dict[str, tuple[str, ...]] = {}
    for plat, items in mapping.items():
        if plat not in platforms:
            raise CompatDataError(
                f"{where}.{plat[:30]}: not one of the variant's platforms {list(platforms)}"
            )
        out[plat] = _texts(items, f"{where}.{plat}", pattern)
    return out


def _parse_variant(entry: Any, where: str) -> TorchVariant:
    entry = _obj(entry, where)
    name = _text(entry, "name", where)
    cuda = _opt_text(entry, "cuda", where, _MINOR)
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
    platforms = _texts(
        entry.get("platforms"), f"{where}.platforms", re.compile("|".join(PLATFORMS)), non_empty=True
    )
    arch = _platform_map(entry.get("arch_list"), f"{where}.arch_list", platforms, _SM)
    ptx = _platform_map(entry.get("ptx"), f"{where}.ptx", platforms, _PTX)
    if cuda is None and (any(arch.values()) or any(ptx.values())):
        raise CompatDataError(f"{where}: only CUDA variants have sm_/compute_ targets")
    arch_unc_raw = _obj(entry.get("arch_unconfirmed", {}), f"{where}.arch_unconfirmed")
    arch_unc: dict[str, str] = {}
    for plat in arch_unc_raw:
        if plat not in platforms:
            raise CompatDataError(f"{where}.arch_unconfirmed.{plat[:30]}: not one of the variant's platforms")
        arch_unc[plat] = _text(arch_unc_raw, plat, f"{where}.arch_unconfirmed")
    return TorchVariant(
        name=name,
        cuda=cuda,
        platforms=platforms,
        arch_list=arch,
        ptx=ptx,
        cudnn=_opt_text(entry, "cudnn", where, _LIB_VERSION),
        nccl=_opt_text(entry, "nccl", where, _LIB_VERSION),
        source=_text(entry, "source", where),
        unconfirmed=_opt_text(entry, "unconfirmed", where),
        arch_unconfirmed=arch_unc,
        cudnn_unconfirmed=_opt_text(entry, "cudnn_unconfirmed", where),
    )


def _parse_companions(value: Any, where: str, patches: tuple[str, ...]) -> Companions:
    entry = _obj(value, where)
    raw = _obj(entry.get("for_patches", {}), f"{where}.for_patches")
    for_patches: dict[str, Companion] = {}
    for patch, comp_raw in raw.items():
        if patch not in patches:
            raise CompatDataError(
                f"{where}.for_patches.{patch[:20]}: not one of the release's patches {list(patches)}"
            )
        comp_where = f"{where}.for_patches.{patch}"
        comp = _obj(comp_raw, comp_where)
        for_patches[patch] = Companion(
            _text(comp, "torchvision", comp_where, _VERSION), _text(comp, "torchaudio", comp_where, _VERSION)
        )
    return Companions(
        torchvision=_text(entry, "torchvision", where, _VERSION),
        torchaudio=_text(entry, "torchaudio", where, _VERSION),
        for_patches=for_patches,
        note=_opt_text(entry, "note", where),
        source=_text(entry, "source", where),
        unconfirmed=_opt_text(entry, "unconfirmed", where),
    )


def _parse_release(entry: Any, where: str) -> TorchRelease:
    entry = _obj(entry, where)
    version = _text(entry, "version", where, _VERSION)
    patches = _texts(entry.get("patches", []), f"{where}.patches", _VERSION)
    base = _version_tuple(version)
    previous = base
    for i, patch in enumerate(patches):
        found = _version_tuple(patch)
        if found[:2] != base[:2] or found <= previous:
            raise CompatDataError(
                f"{where}.patches[{i}]: {patch!r} must be a later patch of {version}, ascending"
            )
        previous = found
    date = _text(entry, "release_date", where, re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII))
    try:
        datetime.date.fromisoformat(date)
    except ValueError:
        raise CompatDataError(f"{where}.release_date: {date!r} is not a date") from None
    requires = _text(entry, "requires_python", where, _REQ_PY)
    pythons = _texts(entry.get("python_versions"), f"{where}.python_versions", _PY, non_empty=True)
    lowest = min(int(p.removesuffix("t").split(".")[1]) for p in pythons)
    if int(requires[4:]) > lowest:
        raise CompatDataError(f"{where}.requires_python: {requires} excludes python_versions 3.{lowest}")
    variants: list[TorchVariant] = []
    for i, item in enumerate(_lst(entry.get("variants"), f"{where}.variants", non_empty=True)):
        var = _parse_variant(item, f"{where}.variants[{i}]")
        if any(v.name == var.name for v in variants):
            raise CompatDataError(f"{where}.variants[{i}]: duplicate variant {var.name!r}")
        variants.append(var)
    default_raw = _obj(entry.get("pypi_default"), f"{where}.pypi_default")
    if set(default_raw) != set(PLATFORMS):
        raise CompatDataError(f"{where}.pypi_default: needs exactly the keys {list(PLATFORMS)}")
    defaults: dict[str, str | None] = {}
    for plat in PLATFORMS:
        name = _opt_text(default_raw, plat, f"{where}.pypi_default")
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
        linux_x86_64_glibc_min=_opt_text(entry, "linux_x86_64_glibc_min", where, _MINOR),
        notes=_opt_text(entry, "notes", where),
        source=_text(entry, "source", where),
        unconfirmed=_opt_text(entry, "unconfirmed", where),
    )


def _parse_device_rule(value: Any, where: str) -> DeviceRule:
    entry = _obj(value, where)
    integrated = frozenset(
        _cc(c, f"{where}.integrated_ccs[{i}]")
        for i, c in enumerate(_lst(entry.get("integrated_ccs"), f"{where}.integrated_ccs", non_empty=True))
    )
    renamed = {
        _cc(k, f"{where}.renamed_ccs.{k[:30]}"): _cc(v, f"{where}.renamed_ccs.{k[:30]}")
        for k, v in _obj(entry.get("renamed_ccs", {}), f"{where}.renamed_ccs").items()
    }
    cubins: dict[CC, CubinRule] = {}
    for i, item in enumerate(_lst(entry.get("cubins"), f"{where}.cubins", non_empty=True)):
        cw = f"{where}.cubins[{i}]"
        raw = _obj(item, cw)
        sm = _text(raw, "sm", cw, re.compile(r"sm_[0-9]{2,3}", re.ASCII))
        parsed = _code(sm, _SM)
        assert parsed is not None
        code = parsed[0]
        if code in cubins:
            raise CompatDataError(f"{cw}: duplicate {sm}")
        if raw.get("only") is not None:
            only = tuple(
                _cc(c, f"{cw}.only[{j}]") for j, c in enumerate(_lst(raw["only"], f"{cw}.only", True))
            )
            if code not in only:
                raise CompatDataError(f"{cw}.only: must contain the cubin's own CC")
            cubins[code] = CubinRule(sm, only, None, None, ())
            continue
        low, high = _cc(raw.get("min_cc"), f"{cw}.min_cc"), _cc(raw.get("below_cc"), f"{cw}.below_cc")
        if low != code or not low < high:
            raise CompatDataError(f"{cw}: min_cc must be the cubin's own CC and below below_cc")
        excepts = tuple(
            _cc(c, f"{cw}.except[{j}]") for j, c in enumerate(_lst(raw.get("except", []), f"{cw}.except"))
        )
        cubins[code] = CubinRule(sm, (), low, high, excepts)
    rule = DeviceRule(
        rule=_text(entry, "rule", where),
        integrated_ccs=integrated,
        renamed_ccs=renamed,
        cubins=cubins,
        source=_text(entry, "source", where),
    )
    for i, item in enumerate(_lst(entry.get("examples", []), f"{where}.examples")):
        ew = f"{where}.examples[{i}]"
        raw = _obj(item, ew)
        code_text = _text(raw, "code", ew, re.compile(f"{_SM.pattern}|{_PTX.pattern}", re.ASCII))
        cc_text = _text(raw, "cc", ew, _CC)
        runs = raw.get("runs")
        if not isinstance(runs, bool):
            raise CompatDataError(f"{ew}.runs: must be true or false")
        got = (
            cubin_runs_on(code_text, cc_text, rule)
            if code_text.startswith("sm_")
            else ptx_runs_on(code_text, cc_text)
        )
        if got != runs:
            raise CompatDataError(
                f"{ew}: the rule says {code_text} on {cc_text} runs={got}, the example says {runs}"
            )
    return rule


def _parse_architectures(value: Any, where: str) -> tuple[ArchitectureLastDriver, ...]:
    out: list[ArchitectureLastDriver] = []
    for i, item in enumerate(_lst(value, where, non_empty=True)):
        aw = f"{where}[{i}]"
        raw = _obj(item, aw)
        ccs = _texts(raw.get("compute_capabilities"), f"{aw}.compute_capabilities", _CC, non_empty=True)
        branch = _opt_text(raw, "last_driver_branch", aw, _BRANCH)
        max_cuda = _opt_text(raw, "max_driver_cuda", aw, _MINOR)
        codegen = raw.get("last_toolkit_major_with_codegen")
        if codegen is not None and (
            isinstance(codegen, bool) or not isinstance(codegen, int) or not 0 < codegen < 100
        ):
            raise CompatDataError(f"{aw}.last_toolkit_major_with_codegen: must be a CUDA major or null")
        if (branch is None) != (max_cuda is None) or (branch is None) != (codegen is None):
            raise CompatDataError(
                f"{aw}: last_driver_branch, max_driver_cuda and the codegen major go together"
            )
        out.append(
            ArchitectureLastDriver(
                architecture=_text(raw, "architecture", aw),
                compute_capabilities=ccs,
                last_driver_branch=branch,
                max_driver_cuda=max_cuda,
                last_toolkit_major_with_codegen=codegen,
                note=_opt_text(raw, "note", aw),
                kernel_module=_kernel_module(raw, aw),
                kernel_module_source=_text(raw, "kernel_module_source", aw),
                source=_text(raw, "source", aw),
                unconfirmed=_opt_text(raw, "unconfirmed", aw),
            )
        )
    return tuple(out)


def _kernel_module(raw: dict[str, Any], where: str) -> KernelModule:
    text = _text(raw, "kernel_module", where)
    try:
        return KernelModule(text)
    except ValueError:
        choices = ", ".join(k.value for k in KernelModule)
        raise CompatDataError(f"{where}.kernel_module: {text!r} is not one of {choices}") from None


def _parse_mvc(value: Any, where: str) -> dict[int, tuple[str, str]]:
    out: dict[int, tuple[str, str]] = {}
    for i, item in enumerate(_lst(value, where, non_empty=True)):
        mw = f"{where}[{i}]"
        raw = _obj(item, mw)
        major = raw.get("cuda_major")
        if isinstance(major, bool) or not isinstance(major, int) or not 10 < major < 100 or major in out:
            raise CompatDataError(f"{mw}.cuda_major: must be a CUDA major, listed once")
        _text(raw, "source", mw)
        out[major] = (
            _text(raw, "linux_min_driver", mw, _DRIVER),
            _text(raw, "windows_min_driver", mw, _DRIVER),
        )
    return out


def _parse_bundled(
    value: Any, where: str, releases: tuple[TorchRelease, ...], toolkits: Mapping[tuple[str, str], Any]
) -> tuple[BundledRuntime, ...]:
    out: list[BundledRuntime] = []
    for i, item in enumerate(_lst(value, where, non_empty=True)):
        bw = f"{where}[{i}]"
        raw = _obj(item, bw)
        name = _text(raw, "variant", bw)
        minors = _texts(raw.get("releases"), f"{bw}.releases", _MINOR, non_empty=True)
        for j, minor in enumerate(minors):
            rel = next((r for r in releases if r.minor == minor), None)
            if rel is None or rel.variant(name) is None:
                raise CompatDataError(f"{bw}.releases[{j}]: torch {minor} has no variant {name!r}")
            if any(name == b.variant and minor in b.releases for b in out):
                raise CompatDataError(f"{bw}.releases[{j}]: {name} of torch {minor} is listed twice")
        runtime = BundledRuntime(
            variant=name,
            releases=minors,
            cuda_runtime=_text(raw, "cuda_runtime", bw, _LIB_VERSION),
            toolkit_cuda=_text(raw, "toolkit_cuda", bw, _MINOR),
            toolkit_release=_text(raw, "toolkit_release", bw),
            source=_text(raw, "source", bw),
            unconfirmed=_opt_text(raw, "unconfirmed", bw),
        )
        if (runtime.toolkit_cuda, runtime.toolkit_release) not in toolkits:
            raise CompatDataError(
                f"{bw}: no cuda_toolkits row {runtime.toolkit_cuda} {runtime.toolkit_release!r} to take the driver from"
            )
        out.append(runtime)
    return tuple(out)


def _parse_pci(gpus: Any) -> dict[str, PciGpu]:
    out: dict[str, PciGpu] = {}
    for i, item in enumerate(_lst(gpus, "gpus")):
        gw = f"gpus[{i}]"
        raw = _obj(item, gw)
        if raw.get("pci_device_ids") is None:
            continue
        ids = _texts(raw["pci_device_ids"], f"{gw}.pci_device_ids", _PCI_ID, non_empty=True)
        _text(raw, "pci_device_ids_source", gw)
        name = _text(raw, "name", gw)
        cc = _text(raw, "compute_capability", gw, _CC)
        arch = _text(raw, "architecture", gw)
        for j, dev in enumerate(ids):
            if dev in out:
                raise CompatDataError(f"{gw}.pci_device_ids[{j}]: {dev} is also {out[dev].name!r}")
            out[dev] = PciGpu(dev, name, cc, arch)
    return out


def _toolkit_rows(value: Any) -> dict[tuple[str, str], tuple[str | None, str | None]]:
    rows: dict[tuple[str, str], tuple[str | None, str | None]] = {}
    for i, item in enumerate(_lst(value, "cuda_toolkits")):
        where = f"cuda_toolkits[{i}]"
        raw = _obj(item, where)
        key = (_text(raw, "cuda", where), _text(raw, "release", where))
        rows[key] = (_opt_text(raw, "linux_min_driver", where), _opt_text(raw, "windows_min_driver", where))
    return rows


def parse_torch_compat(data: Any) -> TorchCompat:
    """Validate the torch-release sections of the whole cuda_matrix.json object; CompatDataError names the path."""
    root = _obj(data, "cuda_matrix.json")
    releases: list[TorchRelease] = []
    for i, item in enumerate(_lst(root.get("torch_releases"), "torch_releases", non_empty=True)):
        rel = _parse_release(item, f"torch_releases[{i}]")
        if releases and _version_tuple(rel.version) >= _version_tuple(releases[-1].version):
            raise CompatDataError(
                f"torch_releases[{i}]: {rel.version} must come after {releases[-1].version} (newest first)"
            )
        if any(r.minor == rel.minor for r in releases):
            raise CompatDataError(f"torch_releases[{i}]: second entry for torch {rel.minor}")
        releases.append(rel)
    toolkits = _toolkit_rows(root.get("cuda_toolkits"))
    return TorchCompat(
        data_date=_text(root, "data_date", "cuda_matrix.json"),
        releases=tuple(releases),
        bundled_runtimes=_parse_bundled(
            root.get("wheel_bundled_cuda_runtime"), "wheel_bundled_cuda_runtime", tuple(releases), toolkits
        ),
        device_rule=_parse_device_rule(root.get("pytorch_device_rule"), "pytorch_device_rule"),
        architectures=_parse_architectures(root.get("architecture_last_driver"), "architecture_last_driver"),
        pci_gpus=_parse_pci(root.get("gpus")),
        toolkit_drivers=toolkits,
        mvc_min_driver=_parse_mvc(
            root.get("cuda_minor_version_compatibility"), "cuda_minor_version_compatibility"
        ),
    )
