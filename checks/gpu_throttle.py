"""gpu.throttle: is anything other than normal operation holding the GPU clocks down right now?

Bits of nvmlClocksEventReasons (nvml.h; hardware.md §4): 0x1 GPU idle, 0x2 applications clocks setting,
0x4 SW power cap, 0x8 HW slowdown, 0x10 sync boost, 0x20 SW thermal slowdown, 0x40 HW thermal slowdown,
0x80 HW power brake slowdown, 0x100 display clock setting; nvidia-ml-py's older throttle constants also
name 0x200 board limit and 0x400 reliability. Idle, a clock setting, sync boost and the power cap are how a healthy GPU
runs (the power cap is the normal limit under full load: NVSentinel treats it as noise, NVIDIA/NVSentinel#1666);
thermal slowdowns and the hardware brakes are not. One reading is a snapshot: HW slowdown "may be also
reported during PState or clock change" (nvml.h), so these are warnings, not failures.
"""

from __future__ import annotations

from torch_gpu_doctor.checks.support.gpu_health import all_unsupported, gpu_name, health_or_finding
from torch_gpu_doctor.facts.describe import fact
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.model import Finding, Remediation, Status, Target
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Unavailable

CID = "gpu.throttle"
# bit: (name, healthy?)
REASONS: dict[int, tuple[str, bool]] = {
    0x1: ("idle", True),
    0x2: ("applications clocks setting", True),
    0x4: ("software power cap", True),
    0x8: ("hardware slowdown", False),
    0x10: ("sync boost", True),
    0x20: ("software thermal slowdown", False),
    0x40: ("hardware thermal slowdown", False),
    0x80: ("hardware power brake", False),
    0x100: ("display clock setting", True),
    0x200: ("board limit", True),
    0x400: ("reliability limit", True),
}


def decode_reasons(mask: int) -> list[tuple[str, bool]]:
    """(name, healthy) for each set bit; unknown bits are named by value and not judged."""
    found = [(name, healthy) for bit, (name, healthy) in REASONS.items() if mask & bit]
    unknown = mask & ~sum(REASONS)
    if unknown:
        found.append((f"unknown reason {unknown:#x}", True))
    return found


def _describe(mask: int) -> str:
    names = [name for name, _ in decode_reasons(mask)]
    return ", ".join(names) if names else "none (full clocks)"


def _advice(bad: set[str]) -> str:
    parts = []
    if bad & {"software thermal slowdown", "hardware thermal slowdown"}:
        parts.append("the GPU is too hot: check fans, airflow, dust and the case or rack temperature")
    if "hardware power brake" in bad:
        parts.append(
            "the power supply or the server's power controller asserts the brake: check PSU capacity "
            "and every PCIe power cable"
        )
    if "hardware slowdown" in bad:
        parts.append(
            "hardware slowdown halves the clocks or more: overheating, a power brake or power draw "
            "above what the board allows"
        )
    return "; ".join(parts) + "."


@check(CID, "No heat or power problem is slowing the GPUs down", "gpu")
def gpu_throttle(facts: Facts) -> Finding:
    """
    ## What it checks
    NVML's current clock event (throttle) reasons for every NVIDIA GPU, decoded: idle, application clocks,
    software power cap, sync boost and display clocks are normal operation; software or hardware thermal
    slowdown, the hardware power brake and hardware slowdown are not.

    ## Why it matters
    A GPU that overheats or whose power delivery pulls the brake runs at half its clocks or less: training is
    slower than it should be, with no error anywhere. Idle clocks are not a problem: an unloaded GPU lowers its
    clocks on purpose, and a GPU at its power limit under full load is working as designed.

    ## How to fix
    Thermal: clean the heatsink and fans, improve airflow, check the fan curve and the room or rack
    temperature. Power brake: check the power supply's capacity and that every PCIe power connector is plugged
    in; on servers, the BMC's power capping. One reading is a snapshot: re-run under load to confirm.
    """
    health = health_or_finding(CID, facts)
    if isinstance(health, Finding):
        return health
    masks = {h.index: h.clocks_event_reasons for h in health}
    names = {h.index: gpu_name(facts, h.index, h.bdf) for h in health}
    evidence = tuple(
        fact(
            f"clock event reasons, {names[i]}",
            _describe(m) if isinstance(m, int) else m,
            "nvmlDeviceGetCurrentClocksEventReasons",
        )
        for i, m in masks.items()
    )
    if all_unsupported(masks.values()):
        return Finding(
            CID, Status.SKIP, "NVML does not report clock event reasons for these GPUs.", evidence=evidence
        )
    slowed: dict[str, set[str]] = {}
    for index, mask in masks.items():
        if isinstance(mask, int):
            bad = {name for name, healthy in decode_reasons(mask) if not healthy}
            if bad:
                slowed[names[index]] = bad
    if slowed:
        reasons = set().union(*slowed.values())
        which = "; ".join(f"{name}: {', '.join(sorted(bad))}" for name, bad in slowed.items())
        return Finding(
            CID,
            Status.WARN,
            f"GPU clocks are being held down by {', '.join(sorted(reasons))} ({which}).",
            details=f"This reading is a snapshot; {_advice(reasons)}",
            evidence=evidence,
            remediation=Remediation(
                text="Fix the cooling or power delivery named above, then run a GPU load and look again "
                "(`nvidia-smi -q -d PERFORMANCE` shows the same reasons live).",
                target=Target.SYSTEM,
            ),
        )
    unknown = [m for m in masks.values() if isinstance(m, Unavailable)]
    if unknown and len(unknown) == len(masks):
        return Finding(
            CID, Status.UNKNOWN, f"Could not read the clock event reasons ({unknown[0]}).", evidence=evidence
        )
    return Finding(
        CID,
        Status.PASS,
        "No thermal or power slowdown: the GPUs' clocks are limited only by normal operation (idle, settings or "
        "the power cap).",
        evidence=evidence,
    )
