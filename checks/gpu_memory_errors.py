"""gpu.memory_errors: ECC errors, retired pages and remapped rows in the GPUs' memory.

Rules (nvml.h; NVIDIA's dynamic page retirement and row remapping guides, as cited in hardware.md §3.8):
corrected (single-bit) errors are what ECC is for, never a failure by themselves, however many; an
uncorrectable error since the driver loaded, or a row that could not be remapped, fails; a page retirement or a
row remap waiting for a reset, and an ECC mode change waiting for one, warn. GeForce cards without ECC report
none of this (NotSupported): skipped, not passed.
"""

from __future__ import annotations

from torch_gpu_doctor.checks.support.gpu_health import all_unsupported, gpu_name, health_or_finding
from torch_gpu_doctor.facts.describe import fact
from torch_gpu_doctor.facts.gpu_health import GpuHealth
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.model import Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Unavailable

CID = "gpu.memory_errors"
_RANK = {Status.SKIP: 0, Status.PASS: 1, Status.UNKNOWN: 2, Status.WARN: 3, Status.FAIL: 4}


@dataclass(frozen=True)
class MemoryVerdict:
    status: Status
    sentence: str


def _fields(h: GpuHealth) -> tuple[object, ...]:
    return (
        h.ecc_enabled,
        h.ecc_corrected_volatile,
        h.ecc_uncorrected_volatile,
        h.retired_pages_single_bit,
        h.retired_pages_double_bit,
        h.retired_pages_pending,
        h.remapped_rows_correctable,
        h.remapped_rows_uncorrectable,
        h.remapped_rows_pending,
        h.remapping_failed,
    )


def _positive(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def memory_verdict(h: GpuHealth, name: str) -> MemoryVerdict:
    """One GPU's verdict; pure."""
    if all_unsupported(_fields(h)):
        return MemoryVerdict(Status.SKIP, f"{name} reports no ECC or memory-repair data (no ECC memory).")
    if all(isinstance(v, Unavailable) for v in _fields(h)):
        return MemoryVerdict(Status.UNKNOWN, f"{name}: the memory error counters could not be read.")
    if h.remapping_failed is True:
        return MemoryVerdict(
            Status.FAIL,
            f"{name}: a bad memory row could not be remapped, NVIDIA's criterion for replacing the GPU.",
        )
    uncorrected = _positive(h.ecc_uncorrected_volatile)
    if uncorrected:
        return MemoryVerdict(
            Status.FAIL,
            f"{name}: {uncorrected} uncorrectable memory error{'s' if uncorrected > 1 else ''} since the driver "
            "loaded; programs on it may have crashed or computed wrong results. Reset the GPU or reboot.",
        )
    if h.remapped_rows_pending is True or h.retired_pages_pending is True:
        what = "row remap" if h.remapped_rows_pending is True else "page retirement"
        return MemoryVerdict(
            Status.WARN,
            f"{name}: a bad memory {what} waits for a GPU reset or reboot to take effect.",
        )
    if isinstance(h.ecc_enabled, bool) and isinstance(h.ecc_pending, bool) and h.ecc_enabled != h.ecc_pending:
        change = "on" if h.ecc_pending else "off"
        return MemoryVerdict(
            Status.WARN, f"{name}: ECC will be switched {change} at the next GPU reset or reboot."
        )
    return MemoryVerdict(Status.PASS, _healthy(h, name))


def _healthy(h: GpuHealth, name: str) -> str:
    parts = []
    if h.ecc_enabled is False:
        parts.append("ECC is off")
    corrected = _positive(h.ecc_corrected_volatile)
    if corrected:
        parts.append(
            f"{corrected} corrected error{'s' if corrected > 1 else ''} since the driver loaded (fixed by ECC)"
        )
    lifetime = _positive(h.ecc_uncorrected_aggregate)
    if lifetime:
        parts.append(
            f"{lifetime} uncorrectable error{'s' if lifetime > 1 else ''} in its lifetime, already handled"
        )
    retired = _positive(h.retired_pages_single_bit) + _positive(h.retired_pages_double_bit)
    if retired:
        parts.append(f"{retired} retired page{'s' if retired > 1 else ''}")
    remapped = _positive(h.remapped_rows_correctable) + _positive(h.remapped_rows_uncorrectable)
    if remapped:
        parts.append(f"{remapped} remapped row{'s' if remapped > 1 else ''}")
    return f"{name}: no uncorrectable memory errors" + (f" ({'; '.join(parts)})." if parts else ".")


def _evidence(h: GpuHealth, name: str) -> tuple[Evidence, ...]:
    return (
        fact(
            f"ECC mode (current/pending), {name}", f"{h.ecc_enabled}/{h.ecc_pending}", "nvmlDeviceGetEccMode"
        ),
        fact(
            f"ECC errors corrected/uncorrected since driver load, {name}",
            f"{h.ecc_corrected_volatile}/{h.ecc_uncorrected_volatile}",
            "nvmlDeviceGetTotalEccErrors (volatile)",
        ),
        fact(
            f"retired pages single/double bit, pending, {name}",
            f"{h.retired_pages_single_bit}/{h.retired_pages_double_bit}, {h.retired_pages_pending}",
            "nvmlDeviceGetRetiredPages",
        ),
        fact(
            f"remapped rows correctable/uncorrectable, pending, failed, {name}",
            f"{h.remapped_rows_correctable}/{h.remapped_rows_uncorrectable}, {h.remapped_rows_pending}, "
            f"{h.remapping_failed}",
            "nvmlDeviceGetRemappedRows",
        ),
    )


@check(CID, "GPU memory has no uncorrectable errors", "gpu")
def gpu_memory_errors(facts: Facts) -> Finding:
    """
    ## What it checks
    For every NVIDIA GPU with ECC memory: the ECC mode (now and after the next reset), corrected and
    uncorrectable error counts since the driver loaded and over the GPU's life, pages retired for bad memory
    (before Ampere) and rows remapped (Ampere and newer), and whether a retirement or remap waits for a reset.

    ## Why it matters
    An uncorrectable memory error crashes the program using that memory or silently corrupts its results,
    and a GPU that cannot remap a bad row any more is due for replacement. Corrected errors are normal: ECC
    exists to fix them, so their count alone is not a problem. A pending retirement or remap protects the GPU
    only after a reset.

    ## How to fix
    Pending retirement or remap, or an ECC mode change: reset the GPU (`sudo nvidia-smi -r -i <index>` with
    nothing running on it) or reboot. Uncorrectable errors: reset, then run the vendor's diagnostics; a failed
    remap or errors that return mean the GPU should be replaced.
    """
    health = health_or_finding(CID, facts)
    if isinstance(health, Finding):
        return health
    verdicts = []
    evidence: list[Evidence] = []
    for h in health:
        name = gpu_name(facts, h.index, h.bdf)
        verdicts.append(memory_verdict(h, name))
        evidence += _evidence(h, name)
    worst = max((v.status for v in verdicts), key=_RANK.__getitem__)
    sentences = " ".join(v.sentence for v in verdicts if v.status is worst)
    others = " ".join(v.sentence for v in verdicts if v.status is not worst)
    if worst is Status.SKIP:
        return Finding(
            CID, Status.SKIP, "These GPUs have no ECC memory to report on.", evidence=tuple(evidence)
        )
    if worst is Status.PASS and len(verdicts) > 1:
        return Finding(
            CID,
            worst,
            f"No uncorrectable memory errors on the {len(verdicts)} GPUs.",
            details=" ".join(v.sentence for v in verdicts),
            evidence=tuple(evidence),
        )
    if worst in (Status.PASS, Status.UNKNOWN):
        return Finding(CID, worst, sentences, details=others, evidence=tuple(evidence))
    return Finding(
        CID,
        worst,
        sentences,
        details=others,
        evidence=tuple(evidence),
        remediation=Remediation(
            text="With nothing running on the GPU, reset it (`sudo nvidia-smi -r -i <index>`) or reboot. If "
            "uncorrectable errors return or a remap failed, run the vendor's diagnostics and ask for a "
            "replacement.",
            requires_root=True,
            requires_reboot=True,
            target=Target.SYSTEM,
        ),
    )
