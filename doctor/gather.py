"""Gather every fact section concurrently, each probe under its own timeout, all under one deadline.

A probe that raises or hangs leaves its section unavailable and becomes a `crash` finding; the run goes on.
Probe threads are daemons: a wedged NVML call or a stuck `nvidia-smi` cannot keep the process alive.
"""

from __future__ import annotations

import contextlib
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import field
from typing import Any

from torch_gpu_doctor.facts.boltctl import gather_boltctl
from torch_gpu_doctor.facts.container import gather_container
from torch_gpu_doctor.facts.driver import gather_driver
from torch_gpu_doctor.facts.environment import relevant_env
from torch_gpu_doctor.facts.gpu_health import gather_gpu_health
from torch_gpu_doctor.facts.gpus import join_gpus
from torch_gpu_doctor.facts.iommu import gather_iommu
from torch_gpu_doctor.facts.jetson import gather_jetson
from torch_gpu_doctor.facts.kernel import gather_kernel
from torch_gpu_doctor.facts.kernel_log import gather_kernel_log
from torch_gpu_doctor.facts.measurements import gather_measurements
from torch_gpu_doctor.facts.memory import gather_memory
from torch_gpu_doctor.facts.memory_limits import gather_memory_limits
from torch_gpu_doctor.facts.model import FACTS_SCHEMA_VERSION, Facts
from torch_gpu_doctor.facts.nvidia_module import gather_nvidia_module
from torch_gpu_doctor.facts.nvml import gather_nvml
from torch_gpu_doctor.facts.pci import gather_pci, gather_proc_gpus
from torch_gpu_doctor.facts.pcie_link import gather_pcie_links
from torch_gpu_doctor.facts.platform import gather_cpu, gather_os
from torch_gpu_doctor.facts.python_env import PROBE_TIMEOUT_S, gather_python
from torch_gpu_doctor.facts.rocm import gather_rocm
from torch_gpu_doctor.facts.secure_boot import gather_secure_boot
from torch_gpu_doctor.facts.storage import gather_storage
from torch_gpu_doctor.facts.thunderbolt import gather_thunderbolt
from torch_gpu_doctor.facts.topology import gather_topology
from torch_gpu_doctor.facts.torch import (
    PACKAGES_TIMEOUT_S,
    RUNTIME_TIMEOUT_S,
    gather_torch_packages,
    gather_torch_runtime,
)
from torch_gpu_doctor.facts.virtualization import gather_virtualization
from torch_gpu_doctor.facts.wsl import gather_wsl
from torch_gpu_doctor.host.base import Host, MalformedAnswer
from torch_gpu_doctor.model import Finding, Status
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

DEFAULT_DEADLINE_S = 90.0
ProbeFn = Callable[[Host, dict[str, Any]], Any]


@dataclass(frozen=True)
class Probe:
    name: str  # also the Facts field it fills
    fn: ProbeFn  # (host, results of its dependencies) -> section
    timeout_s: float
    needs: tuple[str, ...] = ()


def default_probes(python: str, data_dir: str = "/") -> tuple[Probe, ...]:
    """Every fact section. `data_dir` is the folder whose storage is diagnosed (an absolute host path)."""
    probes = (
        Probe("os", lambda h, _: gather_os(h), 5.0),
        Probe("cpu", lambda h, _: gather_cpu(h), 5.0),
        Probe("memory", lambda h, _: gather_memory(h), 5.0),
        Probe("python", lambda h, _: gather_python(h, python), PROBE_TIMEOUT_S + 5.0),
        Probe("kernel", lambda h, _: gather_kernel(h), 10.0),
        Probe("nvml", lambda h, _: gather_nvml(h), 20.0),
        Probe("pci", lambda h, _: gather_pci(h), 10.0),
        Probe("proc_gpus", lambda h, _: gather_proc_gpus(h), 5.0),
        Probe("driver", lambda h, got: gather_driver(h, got["nvml"]), 25.0, needs=("nvml",)),
        Probe("pcie", lambda h, got: _gpu_links(h, got["pci"]), 10.0, needs=("pci",)),
        Probe("thunderbolt", lambda h, _: gather_thunderbolt(h), 5.0),
        Probe("boltctl", lambda h, _: gather_boltctl(h), 10.0),
        Probe("torch_packages", lambda h, _: gather_torch_packages(h, python), PACKAGES_TIMEOUT_S + 5.0),
        Probe(
            "torch",
            lambda h, got: gather_torch_runtime(h, python, got["torch_packages"]),
            RUNTIME_TIMEOUT_S + 5.0,
            needs=("torch_packages",),
        ),
        Probe("memory_limits", lambda h, _: gather_memory_limits(h, _shm_free(h)), 5.0),
        Probe("storage", lambda h, _: gather_storage(h, data_dir), 10.0),
        Probe("virtualization", lambda h, _: gather_virtualization(h), 5.0),
        Probe("jetson", lambda h, _: gather_jetson(h), 5.0),
        Probe("container", lambda h, _: gather_container(h), 5.0),
        Probe("wsl", lambda h, got: gather_wsl(h, got["os"]), 5.0, needs=("os",)),
        Probe("iommu", lambda h, got: gather_iommu(h, got["pci"]), 5.0, needs=("pci",)),
        # After driver: it reuses driver's `modinfo -F version` answer instead of asking modinfo twice.
        Probe(
            "nvidia_module", lambda h, got: gather_nvidia_module(h, got["driver"]), 25.0, needs=("driver",)
        ),
        Probe("secure_boot", lambda h, _: gather_secure_boot(h), 25.0),
        Probe("kernel_log", lambda h, _: gather_kernel_log(h), 30.0),
        # Beside nvml, not after it: RealNvml shares one nvmlInit between the two (no second GPU set-up).
        Probe("gpu_health", lambda h, _: gather_gpu_health(h), 20.0),
        Probe("topology", lambda h, _: gather_topology(h), 20.0),
        Probe("rocm", lambda h, _: gather_rocm(h), 5.0),  # files only: no rocminfo / rocm-smi
    )
    # Timed measurements last, alone: a torch import or an NVML scan beside them would steal bandwidth.
    after_all = tuple(p.name for p in probes)
    return (
        *probes,
        Probe("measurements", lambda h, _: gather_measurements(h, data_dir), 15.0, needs=after_all),
    )


def _shm_free(host: Host) -> Callable[[str], Maybe[int]]:
    def free(path: str) -> Maybe[int]:
        space = host.disk_space(path)
        return space if isinstance(space, Unavailable) else space.free_bytes

    return free


def _gpu_links(host: Host, pci: Any) -> Any:
    """The PCIe chain of every display-class device (class 0x03xxxx): GPUs of any vendor."""
    if isinstance(pci, Unavailable):
        return pci
    return gather_pcie_links(host, [d.bdf for d in pci if d.class_code >> 16 == 0x03])


@dataclass
class _Slot:
    probe: Probe
    done: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)  # the probe's end vs. its time-out: one wins
    started: float | None = None
    result: Any = None
    crash: Finding | None = None


RECORDING_FILES = ("probes.json", "commands.json")  # a MalformedAnswer naming one of these is a capture's


@dataclass(frozen=True)
class Gathered:
    facts: Facts
    problems: tuple[Finding, ...]  # probes that crashed or timed out


def gather(
    host: Host,
    probes: tuple[Probe, ...],
    deadline_s: float = DEFAULT_DEADLINE_S,
    on_done: Callable[[str], object] | None = None,
) -> Gathered:
    """`on_done(name)` is called once per probe as it ends or is abandoned, from the gathering threads."""
    slots = {p.name: _Slot(p) for p in probes}
    deadline = time.monotonic() + deadline_s

    def run(slot: _Slot) -> None:
        needs = {}
        for name in slot.probe.needs:
            dep = slots[name]
            dep.done.wait(max(0.0, deadline - time.monotonic()))
            needs[name] = dep.result
        slot.started = time.monotonic()
        crash: Finding | None = None
        try:
            result = slot.probe.fn(host, needs)
        except MalformedAnswer as exc:  # a damaged capture, not a bug: say which file and field
            result = Unavailable(Reason.UNPARSEABLE, str(exc))
            crash = Finding(
                check_id=f"probe.{slot.probe.name}",
                status=Status.CRASH,
                summary=f"Reading the {slot.probe.name} facts failed: {exc}.",
                details=(
                    "A value in the capture has the wrong type: the file was edited or damaged. Correct that field "
                    "or capture the machine again"
                    if str(exc).startswith(RECORDING_FILES)
                    else "The probe printed a value of the wrong type: a bug in gpu-doctor's probe, or an "
                    "interpreter that changed what it reports. Please report it with a bundle"
                )
                + "; the checks that need these facts report 'unknown'.",
            )
        except Exception as exc:  # a probe bug must not take the run down
            result = Unavailable(Reason.FAILED, f"probe {slot.probe.name} crashed: {exc}")
            crash = Finding(
                check_id=f"probe.{slot.probe.name}",
                status=Status.CRASH,
                summary=f"Reading the {slot.probe.name} facts failed: {type(exc).__name__}: {exc}",
                details="This is a bug in gpu-doctor. The checks that need these facts report 'unknown'.",
                traceback=traceback.format_exc(),
            )
        with slot.lock:
            if slot.done.is_set():  # it was abandoned: a late answer must not replace the verdict
                return
            slot.result, slot.crash = result, crash
            slot.done.set()
        _notify(on_done, slot.probe.name)

    for slot in slots.values():
        threading.Thread(target=run, args=(slot,), name=f"probe-{slot.probe.name}", daemon=True).start()

    _wait(slots, deadline, on_done)
    values = {name: slot.result for name, slot in slots.items()}
    problems = tuple(s.crash for s in slots.values() if s.crash is not None)
    return Gathered(_assemble(host, values), problems)


def _notify(on_done: Callable[[str], object] | None, name: str) -> None:
    if on_done is None:
        return
    with contextlib.suppress(Exception):  # a listener's bug must not lose a probe's facts
        on_done(name)


def _wait(slots: dict[str, _Slot], deadline: float, on_done: Callable[[str], object] | None) -> None:
    pending = dict(slots)
    while pending:
        now = time.monotonic()
        for name, slot in list(pending.items()):
            if slot.done.is_set():
                del pending[name]
                continue
            over_budget = slot.started is not None and now > slot.started + slot.probe.timeout_s
            if over_budget or now > deadline:
                budget = slot.probe.timeout_s if over_budget else None
                if _time_out(slot, budget):
                    _notify(on_done, name)
                del pending[name]
        if pending:
            next(iter(pending.values())).done.wait(0.02)


def _time_out(slot: _Slot, budget: float | None) -> bool:
    """Abandon the probe; False when it finished since _wait looked."""
    with slot.lock:
        if slot.done.is_set():
            return False
        _abandon(slot, budget)
        # Done, with the time-out as its result: probes that need this one go on without it.
        slot.done.set()
        return True


def _abandon(slot: _Slot, budget: float | None) -> None:
    limit = f"its {budget:g} s budget" if budget is not None else "the overall deadline"
    slot.result = Unavailable(Reason.TIMED_OUT, f"probe {slot.probe.name} did not finish within {limit}")
    slot.crash = Finding(
        check_id=f"probe.{slot.probe.name}",
        status=Status.CRASH,
        summary=f"Reading the {slot.probe.name} facts hung and was abandoned after {limit}.",
        details=(
            "Something on this machine did not answer in time (often a wedged driver: nvidia-smi or NVML "
            "hanging). The checks that need these facts report 'unknown'."
        ),
    )


def _assemble(host: Host, values: dict[str, Any]) -> Facts:
    def section(name: str) -> Any:
        if name in values:
            return values[name]
        return Unavailable(Reason.NOT_APPLICABLE, f"{name} was not gathered")

    return Facts(
        schema_version=FACTS_SCHEMA_VERSION,
        host=host.description,
        os=section("os"),
        cpu=section("cpu"),
        memory=section("memory"),
        python=section("python"),
        driver=section("driver"),
        kernel=section("kernel"),
        nvml=section("nvml"),
        pci=section("pci"),
        proc_gpus=section("proc_gpus"),
        gpus=join_gpus(section("pci"), section("nvml"), section("proc_gpus")),
        env=relevant_env(host.env()),
        torch_packages=section("torch_packages"),
        torch=section("torch"),
        pcie=section("pcie"),
        thunderbolt=section("thunderbolt"),
        boltctl=section("boltctl"),
        memory_limits=section("memory_limits"),
        storage=section("storage"),
        virtualization=section("virtualization"),
        jetson=section("jetson"),
        measurements=section("measurements"),
        container=section("container"),
        wsl=section("wsl"),
        iommu=section("iommu"),
        nvidia_module=section("nvidia_module"),
        secure_boot=section("secure_boot"),
        kernel_log=section("kernel_log"),
        gpu_health=section("gpu_health"),
        topology=section("topology"),
        rocm=section("rocm"),
    )
