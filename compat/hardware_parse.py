"""Parsing of the hardware sections of cuda_matrix.json: PyTorch's cubin -> device rule, each architecture's last
driver and kernel-module guidance, the minor-version driver minimums and the PCI device ids."""

from __future__ import annotations

import functools
import re
from typing import Any

from torch_gpu_doctor import pattern_cache
from torch_gpu_doctor.compat import CompatDataError
from torch_gpu_doctor.compat.json_fields import cc, lst, obj, opt_text, text, texts
from torch_gpu_doctor.compat.torch_releases import (
    _CC,
    _MINOR,
    _PTX,
    _SM,
    CC,
    ArchitectureLastDriver,
    CubinRule,
    DeviceRule,
    KernelModule,
    PciGpu,
    _code,
    cubin_runs_on,
    ptx_runs_on,
)
from torch_gpu_doctor.lazy_re import lazy

_BRANCH = lazy(r"R[0-9]{3}", re.ASCII)
_SM_TEXT = lazy(r"sm_[0-9]{2,3}", re.ASCII)
_DRIVER = lazy(r"[0-9]{3}(\.[0-9]{1,3}){0,2}", re.ASCII)
_PCI_ID = lazy(r"[0-9a-f]{4}", re.ASCII)


@functools.cache
def _code_text() -> re.Pattern[str]:
    """A cubin's or PTX's name, as the two patterns read them (joined when first needed)."""
    return pattern_cache.compile(f"{_SM.pattern}|{_PTX.pattern}", re.ASCII)


def parse_device_rule(value: Any, where: str) -> DeviceRule:
    entry = obj(value, where)
    integrated = frozenset(
        cc(c, f"{where}.integrated_ccs[{i}]")
        for i, c in enumerate(lst(entry.get("integrated_ccs"), f"{where}.integrated_ccs", non_empty=True))
    )
    renamed = {
        cc(k, f"{where}.renamed_ccs.{k[:30]}"): cc(v, f"{where}.renamed_ccs.{k[:30]}")
        for k, v in obj(entry.get("renamed_ccs", {}), f"{where}.renamed_ccs").items()
    }
    cubins: dict[CC, CubinRule] = {}
    for i, item in enumerate(lst(entry.get("cubins"), f"{where}.cubins", non_empty=True)):
        cw = f"{where}.cubins[{i}]"
        raw = obj(item, cw)
        sm = text(raw, "sm", cw, _SM_TEXT)
        parsed = _code(sm, _SM)
        assert parsed is not None
        code = parsed[0]
        if code in cubins:
            raise CompatDataError(f"{cw}: duplicate {sm}")
        if raw.get("only") is not None:
            only = tuple(cc(c, f"{cw}.only[{j}]") for j, c in enumerate(lst(raw["only"], f"{cw}.only", True)))
            if code not in only:
                raise CompatDataError(f"{cw}.only: must contain the cubin's own CC")
            cubins[code] = CubinRule(sm, only, None, None, ())
            continue
        low, high = cc(raw.get("min_cc"), f"{cw}.min_cc"), cc(raw.get("below_cc"), f"{cw}.below_cc")
        if low != code or not low < high:
            raise CompatDataError(f"{cw}: min_cc must be the cubin's own CC and below below_cc")
        excepts = tuple(
            cc(c, f"{cw}.except[{j}]") for j, c in enumerate(lst(raw.get("except", []), f"{cw}.except"))
        )
        cubins[code] = CubinRule(sm, (), low, high, excepts)
    rule = DeviceRule(
        rule=text(entry, "rule", where),
        integrated_ccs=integrated,
        renamed_ccs=renamed,
        cubins=cubins,
        source=text(entry, "source", where),
    )
    for i, item in enumerate(lst(entry.get("examples", []), f"{where}.examples")):
        ew = f"{where}.examples[{i}]"
        raw = obj(item, ew)
        code_text = text(raw, "code", ew, _code_text())
        cc_text = text(raw, "cc", ew, _CC)
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


def parse_architectures(value: Any, where: str) -> tuple[ArchitectureLastDriver, ...]:
    out: list[ArchitectureLastDriver] = []
    for i, item in enumerate(lst(value, where, non_empty=True)):
        aw = f"{where}[{i}]"
        raw = obj(item, aw)
        ccs = texts(raw.get("compute_capabilities"), f"{aw}.compute_capabilities", _CC, non_empty=True)
        branch = opt_text(raw, "last_driver_branch", aw, _BRANCH)
        max_cuda = opt_text(raw, "max_driver_cuda", aw, _MINOR)
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
                architecture=text(raw, "architecture", aw),
                compute_capabilities=ccs,
                last_driver_branch=branch,
                max_driver_cuda=max_cuda,
                last_toolkit_major_with_codegen=codegen,
                note=opt_text(raw, "note", aw),
                kernel_module=kernel_module(raw, aw),
                kernel_module_source=text(raw, "kernel_module_source", aw),
                source=text(raw, "source", aw),
                unconfirmed=opt_text(raw, "unconfirmed", aw),
                first_linux_driver=_first_drivers(raw, aw, ccs),
                first_driver_source=opt_text(raw, "first_driver_source", aw),
                codegen_ended_earlier=_codegen_ended_earlier(raw, aw, ccs, codegen),
            )
        )
    return tuple(out)


def _first_drivers(raw: dict[str, Any], where: str, ccs: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """{"12.0": "570.86.16"}: compute capabilities of this architecture and their first Linux driver."""
    value = raw.get("first_linux_driver")
    if value is None:
        return ()
    table = obj(value, f"{where}.first_linux_driver")
    out = []
    for capability, version in table.items():
        if capability not in ccs or not isinstance(version, str) or not _DRIVER.fullmatch(version):
            raise CompatDataError(
                f"{where}.first_linux_driver: {capability!r}: {version!r} is not a driver of this row"
            )
        out.append((capability, version))
    if out and raw.get("first_driver_source") is None:
        raise CompatDataError(f"{where}: first_linux_driver needs its first_driver_source")
    return tuple(out)


def _codegen_ended_earlier(
    raw: dict[str, Any], where: str, ccs: tuple[str, ...], codegen: int | None
) -> tuple[tuple[str, int], ...]:
    """{"3.0": 10}: capabilities of this architecture that an older CUDA major was the last to compile for."""
    value = raw.get("codegen_ended_earlier")
    if value is None:
        return ()
    out = []
    for capability, major in obj(value, f"{where}.codegen_ended_earlier").items():
        if capability not in ccs or isinstance(major, bool) or not isinstance(major, int) or codegen is None:
            raise CompatDataError(
                f"{where}.codegen_ended_earlier: {capability!r}: {major!r} is not of this row"
            )
        if major >= codegen:
            raise CompatDataError(
                f"{where}.codegen_ended_earlier: {capability!r} ends after its architecture"
            )
        out.append((capability, major))
    if raw.get("codegen_ended_earlier_source") is None:
        raise CompatDataError(f"{where}: codegen_ended_earlier needs its codegen_ended_earlier_source")
    return tuple(out)


def kernel_module(raw: dict[str, Any], where: str) -> KernelModule:
    value = text(raw, "kernel_module", where)
    try:
        return KernelModule(value)
    except ValueError:
        choices = ", ".join(k.value for k in KernelModule)
        raise CompatDataError(f"{where}.kernel_module: {value!r} is not one of {choices}") from None


def parse_mvc(value: Any, where: str) -> dict[int, tuple[str, str]]:
    out: dict[int, tuple[str, str]] = {}
    for i, item in enumerate(lst(value, where, non_empty=True)):
        mw = f"{where}[{i}]"
        raw = obj(item, mw)
        major = raw.get("cuda_major")
        if isinstance(major, bool) or not isinstance(major, int) or not 10 < major < 100 or major in out:
            raise CompatDataError(f"{mw}.cuda_major: must be a CUDA major, listed once")
        text(raw, "source", mw)
        out[major] = (
            text(raw, "linux_min_driver", mw, _DRIVER),
            text(raw, "windows_min_driver", mw, _DRIVER),
        )
    return out


def parse_pci(gpus: Any) -> dict[str, PciGpu]:
    out: dict[str, PciGpu] = {}
    for i, item in enumerate(lst(gpus, "gpus")):
        gw = f"gpus[{i}]"
        raw = obj(item, gw)
        if raw.get("pci_device_ids") is None:
            continue
        ids = texts(raw["pci_device_ids"], f"{gw}.pci_device_ids", _PCI_ID, non_empty=True)
        text(raw, "pci_device_ids_source", gw)
        name = text(raw, "name", gw)
        capability = text(raw, "compute_capability", gw, _CC)
        arch = text(raw, "architecture", gw)
        for j, dev in enumerate(ids):
            if dev in out:
                raise CompatDataError(f"{gw}.pci_device_ids[{j}]: {dev} is also {out[dev].name!r}")
            out[dev] = PciGpu(dev, name, capability, arch)
    return out
