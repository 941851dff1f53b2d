"""gpu.persistence_mode: does the driver keep the GPUs initialised between programs?

Rules: persistence off is normal on a desktop, where the display keeps the driver busy, and worth a warning on
a headless machine, where every program start pays the GPU set-up and the state resets between jobs
(hardware.md §3.9; NVIDIA "Driver Persistence"). Not supported (vGPU, some cloud shapes) is a skip.
"""

from __future__ import annotations

from torch_gpu_doctor.checks.support.gpu_health import all_unsupported, gpu_name, health_or_finding
from torch_gpu_doctor.facts.describe import fact
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.persistence import enable_persistence
from torch_gpu_doctor.model import Finding, Status
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Unavailable

CID = "gpu.persistence_mode"


@check(CID, "GPUs stay initialised between programs on headless machines", "gpu")
def gpu_persistence_mode(facts: Facts) -> Finding:
    """
    ## What it checks
    NVML's persistence mode for every NVIDIA GPU, and whether any GPU drives a display (NVML "display
    active"), which tells a desktop from a headless server.

    ## Why it matters
    Without persistence the driver tears a GPU down when the last program closes it and sets it up again for
    the next one: each `import torch; torch.cuda.init()` then waits for that (up to seconds per GPU on servers),
    clocks and ECC state reset between jobs, and readings taken "cold" differ. On a desktop the display keeps
    the driver busy, so persistence off costs nothing there.

    ## How to fix
    On headless machines: `sudo nvidia-smi -pm 1` now, and `sudo systemctl enable --now nvidia-persistenced`
    so it stays on after reboots.
    """
    health = health_or_finding(CID, facts)
    if isinstance(health, Finding) and health.status is Status.SKIP:
        return health
    nvml = facts.nvml
    if isinstance(nvml, Unavailable) or nvml.init_error is not None:
        return Finding(CID, Status.UNKNOWN, "NVML did not answer; see driver.nvml.")
    if not nvml.devices:
        return Finding(CID, Status.UNKNOWN, "NVML lists no GPU to ask (see gpu.present).")
    # The health probe only says whether a display runs; persistence itself comes from the nvml facts.
    displays = [h.display_active for h in health] if isinstance(health, tuple) else []
    modes = {d.index: d.persistence_mode for d in nvml.devices}
    names = {d.index: gpu_name(facts, d.index, d.bdf) for d in nvml.devices}
    evidence = tuple(
        fact(f"persistence mode, {names[i]}", m, "nvmlDeviceGetPersistenceMode") for i, m in modes.items()
    )
    if all_unsupported(modes.values()):
        return Finding(
            CID,
            Status.SKIP,
            "NVML reports persistence mode as not supported on these GPUs.",
            evidence=evidence,
        )
    off = [names[i] for i, m in modes.items() if m is False]
    unknown = [m for m in modes.values() if isinstance(m, Unavailable)]
    if not off:
        if unknown:
            return Finding(
                CID, Status.UNKNOWN, f"Could not read persistence mode ({unknown[0]}).", evidence=evidence
            )
        return Finding(
            CID,
            Status.PASS,
            f"Persistence mode is on for {f'all {len(modes)} GPUs' if len(modes) > 1 else 'the GPU'}.",
            evidence=evidence,
        )
    display = displays
    which = ", ".join(off) if len(off) < len(modes) or len(off) == 1 else f"all {len(modes)} GPUs"
    if any(d is True for d in display):
        return Finding(
            CID,
            Status.PASS,
            f"Persistence mode is off ({which}), which is fine on a desktop: the display keeps the driver "
            "initialised.",
            details="Turn it on only if this machine also runs unattended GPU jobs without a desktop session.",
            evidence=evidence,
        )
    if display and all(d is False for d in display):
        return Finding(
            CID,
            Status.WARN,
            f"Persistence mode is off on a headless machine ({which}): every program start waits for the driver "
            "to set the GPUs up, and GPU state resets between jobs.",
            evidence=evidence,
            remediation=enable_persistence(),
        )
    return Finding(
        CID,
        Status.PASS,
        f"Persistence mode is off ({which}); whether a display runs on these GPUs could not be read, so this "
        "may be a desktop, where that is fine.",
        details="On a headless server turn it on: `sudo nvidia-smi -pm 1` and `sudo systemctl enable --now "
        "nvidia-persistenced`.",
        evidence=evidence,
    )
