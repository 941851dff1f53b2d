"""Judge a Report against `verify`'s expectations: each gate with the value observed on this machine.

Pure: a Report in, one `Gate` per expectation out. A value that cannot be observed (no driver, NVML refused,
the smoke test not run) fails with the reason: a gate that cannot be checked is not a gate that holds.
"""

from __future__ import annotations

from collections.abc import Callable

from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.smoke import SmokeOutcome, SmokeRun, StepStatus
from torch_gpu_doctor.fleet.expectations import Expectations, version_tuple
from torch_gpu_doctor.fleet.links import GpuLink, gpu_links, nvml_devices
from torch_gpu_doctor.model import Status
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.unavailable import Reason, Unavailable

Value = int | str | bool | None


@dataclass(frozen=True)
class Gate:
    name: str  # the expectation's TOML key: gpus, min_driver, ...
    expected: int | str | bool
    observed: Value  # None: could not be observed (the reason is in `detail`)
    status: Status  # PASS or FAIL
    detail: str

    @property
    def passed(self) -> bool:
        return self.status is Status.PASS


def evaluate(expect: Expectations, report: Report) -> tuple[Gate, ...]:
    facts = report.facts
    gates: list[Gate] = []
    if expect.gpus is not None:
        gates.append(_gpus(facts, expect.gpus))
    if expect.gpu_name is not None:
        gates.append(_gpu_name(facts, expect.gpu_name))
    if expect.min_driver is not None:
        gates.append(_min_driver(facts, expect.min_driver))
    if expect.torch_cuda is not None:
        gates.append(_torch_cuda(facts, expect.torch_cuda))
    if expect.min_pcie_gen is not None:
        gates.append(_min_link("min_pcie_gen", expect.min_pcie_gen, facts, lambda k: k.generation, "Gen"))
    if expect.min_pcie_width is not None:
        gates.append(_min_link("min_pcie_width", expect.min_pcie_width, facts, lambda k: k.width, "x"))
    if expect.smoke:
        gates.append(_smoke(report))
    if expect.nccl:
        gates.append(_nccl(facts))
    return tuple(gates)


def _gate(name: str, expected: int | str | bool, observed: Value, ok: bool, detail: str = "") -> Gate:
    return Gate(name, expected, observed, Status.PASS if ok else Status.FAIL, detail)


def _unobserved(name: str, expected: int | str | bool, why: str) -> Gate:
    return Gate(name, expected, None, Status.FAIL, why)


def _gpus(facts: Facts, wanted: int) -> Gate:
    nvml = facts.nvml
    count = nvml if isinstance(nvml, Unavailable) else nvml.device_count
    on_bus = sum(1 for g in facts.nvidia_gpus if g.on_pci_bus)
    if isinstance(count, Unavailable) and _no_nvidia_anywhere(facts, on_bus):
        return _gate(
            "gpus",
            wanted,
            0,
            wanted == 0,
            f"no NVIDIA driver and no NVIDIA GPU on the PCI bus (NVML: {count})",
        )
    if isinstance(count, Unavailable):
        return _unobserved("gpus", wanted, f"NVML: {count}; {on_bus} NVIDIA GPU(s) on the PCI bus")
    detail = f"{on_bus} NVIDIA GPU(s) on the PCI bus" if on_bus != count else ""
    return _gate("gpus", wanted, count, count == wanted, detail)


def _no_nvidia_anywhere(facts: Facts, on_bus: int) -> bool:
    """No GPU is an observation: NVML's library is absent (no driver) and the PCI bus, read, has no NVIDIA
    GPU. NVML refusing (permissions, a mismatch) or an unread bus stays unobserved."""
    nvml = facts.nvml
    error = None if isinstance(nvml, Unavailable) else nvml.init_error
    library_missing = (error is not None and error.name == "LibraryNotFound") or (
        isinstance(nvml, Unavailable) and nvml.reason is Reason.NOT_FOUND
    )
    return library_missing and not isinstance(facts.pci, Unavailable) and on_bus == 0


def _gpu_name(facts: Facts, wanted: str) -> Gate:
    devices = nvml_devices(facts)
    if isinstance(devices, Unavailable):
        return _unobserved("gpu_name", wanted, f"NVML: {devices}")
    if not devices:
        return _unobserved("gpu_name", wanted, "no GPU visible to the driver")
    names = [d.name if isinstance(d.name, str) else f"GPU {d.index} (name {d.name})" for d in devices]
    other = [n for n in names if wanted.lower() not in n.lower()]
    observed = ", ".join(sorted(set(names)))
    detail = f"not matching: {', '.join(other)}" if other else ""
    return _gate("gpu_name", wanted, observed, not other, detail)


def _min_driver(facts: Facts, wanted: str) -> Gate:
    driver = facts.driver
    version = driver if isinstance(driver, Unavailable) else driver.version
    if isinstance(version, Unavailable):
        return _unobserved("min_driver", wanted, f"driver version: {version}")
    try:
        ok = version_tuple(version) >= version_tuple(wanted)
    except ValueError:
        return _unobserved("min_driver", wanted, f"driver version {version!r} is not numeric")
    return _gate("min_driver", wanted, version, ok)


def _torch_cuda(facts: Facts, wanted: str) -> Gate:
    packages = facts.torch_packages
    if isinstance(packages, Unavailable):
        return _unobserved("torch_cuda", wanted, f"torch: {packages}")
    if packages.version is None:
        return _unobserved("torch_cuda", wanted, "torch is not installed in this Python")
    if packages.cuda is None:
        build = f"ROCm {packages.hip}" if packages.hip else "CPU"
        return _gate("torch_cuda", wanted, "none", False, f"torch {packages.version} is a {build} build")
    want = version_tuple(wanted)
    try:
        ok = version_tuple(packages.cuda)[: len(want)] == want
    except ValueError:
        ok = False
    return _gate("torch_cuda", wanted, packages.cuda, ok, f"torch {packages.version}")


def _min_link(name: str, wanted: int, facts: Facts, pick: Callable[[GpuLink], int | None], unit: str) -> Gate:
    links = gpu_links(facts)
    if isinstance(links, str):
        return _unobserved(name, wanted, links)
    values = [(link, pick(link)) for link in links]
    described = "; ".join(
        f"{link.bdf} {unit}{value} ({link.source})" if value is not None else f"{link.bdf} unknown"
        for link, value in values
    )
    known = [v for _, v in values if v is not None]
    if len(known) < len(values):
        return _unobserved(name, wanted, f"not readable for every GPU: {described}")
    return _gate(name, wanted, min(known), min(known) >= wanted, described)


def _smoke(report: Report) -> Gate:
    run = report.facts.smoke
    if isinstance(run, Unavailable):
        return _unobserved("smoke", True, f"the smoke test: {run}")
    failing = [
        f
        for f in report.findings
        if f.check_id.startswith("smoke.") and f.status in (Status.FAIL, Status.CRASH)
    ]
    observed = run.outcome.value if not failing else f"{run.outcome.value}, {len(failing)} failing"
    if run.outcome is not SmokeOutcome.COMPLETED:
        where = f" in {run.stopped_in}" if run.stopped_in else ""
        return _gate("smoke", True, observed, False, f"{run.outcome.value}{where}: {run.message}")
    detail = "; ".join(f"{f.check_id}: {f.summary}" for f in failing)
    return _gate(
        "smoke", True, observed, not failing, detail or f"{run.mode.value} mode, {len(run.steps)} steps"
    )


def _nccl(facts: Facts) -> Gate:
    run = facts.smoke
    if isinstance(run, Unavailable):
        return _unobserved("nccl", True, f"the smoke test: {run}")
    if len(run.devices) < 2:
        return _unobserved(
            "nccl", True, f"the all-reduce needs 2 or more GPUs; the smoke test saw {len(run.devices)}"
        )
    return _all_reduce(run)


def _all_reduce(run: SmokeRun) -> Gate:
    step = run.find("all_reduce")
    if step is None:
        stopped = f" ({run.outcome.value}: {run.message})" if run.message else ""
        return _unobserved("nccl", True, "the smoke test ended before the all-reduce" + stopped)
    if step.status is not StepStatus.OK or step.flags.get("correct") is False:
        why = step.message or ("wrong sum" if step.flags.get("correct") is False else step.status.value)
        return _gate("nccl", True, step.status.value, False, why)
    busbw = step.numbers.get("busbw_gbytes_per_s")
    backend = step.texts.get("backend", "nccl")
    ranks = int(step.numbers.get("world_size", len(run.devices)))
    figure = f", bus bandwidth {busbw:.0f} GB/s" if busbw is not None else ""
    return _gate("nccl", True, "ok", True, f"{backend} all-reduce over {ranks} GPUs{figure}")
