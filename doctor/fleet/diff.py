"""What differs between two reports that can matter: each report flattened into aspects, then compared.

An aspect is (area, key) -> one display string. Only facts that change what works are aspects: timestamps,
durations, free memory, the current PCIe speed (GPUs idle at Gen1) and the like never are, so noise cannot
show up as a difference.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from torch_gpu_doctor.records import dataclass

AREAS = ("driver", "torch", "libraries", "environment", "python", "os", "platform", "gpus", "pcie", "checks")
ABSENT = "absent"

Aspect = tuple[str, str]


@dataclass(frozen=True)
class Difference:
    area: str
    key: str
    before: str  # ABSENT when the first report does not have it
    after: str


def diff_reports(before: dict[str, Any], after: dict[str, Any]) -> tuple[Difference, ...]:
    a, b = aspects(before), aspects(after)
    order = {area: i for i, area in enumerate(AREAS)}
    keys = sorted(set(a) | set(b), key=lambda k: (order[k[0]], k[1]))
    return tuple(
        Difference(area, key, a.get((area, key), ABSENT), b.get((area, key), ABSENT))
        for area, key in keys
        if a.get((area, key)) != b.get((area, key))
    )


def aspects(report: dict[str, Any]) -> dict[Aspect, str]:
    facts = _dict(report.get("facts"))
    found: dict[Aspect, str] = {}
    for area, items in (
        ("driver", _driver(facts)),
        ("torch", _torch(facts)),
        ("libraries", _libraries(facts)),
        ("environment", _environment(facts)),
        ("python", _section(facts, "python", ("executable", "version", "in_virtualenv", "conda_prefix"))),
        ("os", _section(facts, "os", ("distro_name", "kernel_release"))),
        ("platform", _platform(facts)),
        ("gpus", _gpus(facts)),
        ("pcie", _pcie(facts)),
        ("checks", _checks(report)),
    ):
        for key, value in items:
            found[(area, key)] = value
    return found


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def show(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return " ".join(show(v) for v in value) or "none"
    return str(value)


def _field(section: dict[str, Any], key: str) -> str:
    """A fact's value, or `unknown (reason)` when it was unreadable: becoming unreadable is a change too."""
    value = section.get(key)
    why = _dict(_dict(section.get("unavailable")).get(key))
    if value is None and why:
        return f"unknown ({why.get('reason')})"
    return show(value)


def _section(facts: dict[str, Any], name: str, keys: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    section = facts.get(name)
    if not isinstance(section, dict):
        why = _dict(_dict(facts.get("unavailable")).get(name))
        yield name, f"unknown ({why.get('reason')})" if why else ABSENT
        return
    for key in keys:
        yield key, _field(section, key)


def _driver(facts: dict[str, Any]) -> Iterator[tuple[str, str]]:
    yield from _section(
        facts, "driver", ("version", "kernel_module_flavor", "cuda_version", "userspace_version")
    )
    nvml = _dict(facts.get("nvml"))
    error = _dict(nvml.get("init_error"))
    yield "nvml", show(error.get("name")) if error else ("ok" if nvml else ABSENT)


def _torch(facts: dict[str, Any]) -> Iterator[tuple[str, str]]:
    packages = facts.get("torch_packages")
    if isinstance(packages, dict):
        yield "installed", _field(packages, "version")
        yield "cuda build", _field(packages, "cuda")
        yield "hip build", _field(packages, "hip")
        yield "location", show((_list(packages.get("torch_paths")) or [None])[0])
        for companion in _list(packages.get("companions")):
            item = _dict(companion)
            yield f"{item.get('name')}", show(item.get("version"))
    runtime = facts.get("torch")
    if isinstance(runtime, dict):
        yield "import", show(runtime.get("outcome"))
        yield "arch list", show(runtime.get("arch_list"))
        yield "cuda available", show(runtime.get("cuda_available"))
        yield "cudnn", show(runtime.get("cudnn_version"))
        yield "nccl", show(runtime.get("nccl_version"))


def _libraries(facts: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """The CUDA libraries torch mapped, and the driver libraries a container runtime injected."""
    mapped: dict[str, list[str]] = {}
    for item in _list(_dict(facts.get("torch")).get("mapped_libraries")):
        lib = _dict(item)
        mapped.setdefault(f"loaded {lib.get('name')}", []).append(show(lib.get("realpath")))
    for item in _list(_dict(facts.get("container")).get("driver_libraries")):
        lib = _dict(item)
        mapped.setdefault(f"driver {lib.get('name')}", []).append(
            show(lib.get("resolved") or lib.get("path"))
        )
    for key, paths in mapped.items():
        yield key, ", ".join(sorted(paths))


def _environment(facts: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for name, value in _dict(facts.get("env")).items():
        yield name, show(value)


def _platform(facts: dict[str, Any]) -> Iterator[tuple[str, str]]:
    os_facts, container = _dict(facts.get("os")), _dict(facts.get("container"))
    yield "container", show(container.get("runtime") or os_facts.get("container"))
    yield "container engine", show(container.get("engine"))
    yield "NVIDIA_VISIBLE_DEVICES", show(container.get("visible_devices"))
    yield "WSL", show(os_facts.get("is_wsl"))
    virtualization = _dict(facts.get("virtualization"))
    yield "virtual machine", show(virtualization.get("is_vm"))
    yield "hypervisor", show(virtualization.get("hypervisor"))


def _gpus(facts: dict[str, Any]) -> Iterator[tuple[str, str]]:
    yield "count", str(len(_list(facts.get("gpus"))))
    for item in _list(facts.get("gpus")):
        gpu = _dict(item)
        where = gpu.get("bdf") or f"NVML {gpu.get('nvml_index')}"
        memory = gpu.get("memory_total_bytes")
        size = f", {memory / 2**30:.0f} GiB" if isinstance(memory, int) else ""
        # never the UUID: it is unique to each board, so two identical nodes would always differ
        yield str(where), f"{show(gpu.get('name'))}{size}, driver {show(gpu.get('kernel_driver'))}"


def _pcie(facts: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Each GPU's own link: current width and both ends' max; never the current speed (idle is Gen1)."""
    for item in _list(facts.get("pcie")):
        path = _dict(item)
        hops = [_dict(h) for h in _list(path.get("hops"))[:2]]
        if not hops:
            continue
        width = _dict(hops[0].get("current_link")).get("width")
        top = _dict(hops[0].get("max_link")).get("width")
        gens = [g for h in hops if isinstance(g := _dict(h.get("max_link")).get("generation"), int)]
        gen = min(gens) if len(gens) == 2 else None
        if width is not None or gen is not None:
            yield f"{path.get('bdf')} (sysfs)", f"x{show(width)} of x{show(top)}, max Gen{show(gen)}"
    for item in _list(_dict(facts.get("nvml")).get("devices")):
        device = _dict(item)
        width, top = device.get("pcie_link_width_current"), device.get("pcie_link_width_max")
        yield (
            f"{device.get('bdf')} (NVML)",
            f"x{show(width)} of x{show(top)}, max Gen{show(device.get('pcie_link_gen_max'))}",
        )


def _checks(report: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for item in _list(report.get("findings")):
        finding = _dict(item)
        yield str(finding.get("check_id")), show(finding.get("status"))
