"""egpu.*: Thunderbolt/USB4 enclosures that hold back a GPU, and what a tunnel means for a GPU behind it.

Rules from hardware.md §2: an unauthorized device has no PCIe functions at all; the security levels dponly,
usbonly and nopcie forbid PCIe tunnels whatever `authorized` says; a PCIe tunnel is at most a PCIe 3.0 x4 link,
so a tunnel limit is expected, not a fault.
"""

from __future__ import annotations

from torch_gpu_doctor.facts.boltctl import BoltDevice, BoltStatus
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.thunderbolt import PCIE_BLOCKING_SECURITY, ThunderboltDevice, gpu_tunnel
from torch_gpu_doctor.model import Command, Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Reason, Unavailable

TUNNEL_CEILING_GBYTES_PER_S = 8.0 * 128 / 130 / 8 * 4  # PCIe 3.0 x4, the TB3/TB4/USB4 v1 tunnel (§2.3)


def _label(device: ThunderboltDevice) -> str:
    parts = [p for p in (device.vendor_name, device.device_name) if isinstance(p, str)]
    return f"{' '.join(parts) or 'a device'} ({device.name})"


# Words in the device names eGPU enclosures report ("AKiTiO Thunder3 PCIe Box", "Razer Core X", "Sonnet eGFX
# Breakaway Box"): only the order of the authorize commands depends on them, so the enclosure comes first.
ENCLOSURE_WORDS = ("egpu", "egfx", "gpu", "pcie", "core x", "breakaway", "graphics")


def _looks_like_enclosure(device: ThunderboltDevice) -> bool:
    name = " ".join(p for p in (device.vendor_name, device.device_name) if isinstance(p, str)).lower()
    return any(word in name for word in ENCLOSURE_WORDS)


def _bolt(facts: Facts) -> tuple[BoltDevice, ...]:
    return () if isinstance(facts.boltctl, Unavailable) else facts.boltctl


@check("egpu.authorized", "Thunderbolt/USB4 devices may open PCIe tunnels", "egpu")
def egpu_authorized(facts: Facts) -> Finding:
    """
    ## What it checks
    Every Thunderbolt/USB4 domain's security level and every plugged device's `authorized` flag under
    `/sys/bus/thunderbolt/devices`, and bolt's status when `boltctl` is installed.

    ## Why it matters
    Until a device is authorized the kernel creates no PCIe tunnel, so the GPU in an eGPU enclosure simply
    does not exist for Linux, NVML or PyTorch. The firmware levels `dponly`, `usbonly` and `nopcie` forbid
    PCIe tunnels for every device.

    ## How to fix
    Authorize the enclosure with `boltctl enroll --policy auto <uuid>` (or in your desktop's Thunderbolt
    settings); for `dponly`/`usbonly`/`nopcie`, set the Thunderbolt security level in the firmware setup to
    "user authorization" or "no security".
    """
    cid = "egpu.authorized"
    tb = facts.thunderbolt
    if isinstance(tb, Unavailable):
        status = Status.SKIP if tb.reason is Reason.NOT_FOUND else Status.UNKNOWN
        return Finding(cid, status, f"No Thunderbolt/USB4 bus to check ({tb}).")
    evidence = tuple(
        Evidence(d.name, f"security {d.security.value}", f"/sys/bus/thunderbolt/devices/{d.name}/security")
        for d in tb.domains
        if not isinstance(d.security, Unavailable)
    )
    blocked = [
        d
        for d in tb.domains
        if not isinstance(d.security, Unavailable) and d.security in PCIE_BLOCKING_SECURITY
    ]
    if blocked:
        level = blocked[0].security
        return Finding(
            cid,
            Status.FAIL,
            f"Thunderbolt security level '{getattr(level, 'value', level)}' on {blocked[0].name}: the firmware "
            "allows no PCIe tunnels, so no eGPU can appear.",
            evidence=evidence,
            remediation=Remediation(
                text="In the firmware (BIOS/UEFI) setup, set the Thunderbolt security level to 'user "
                "authorization' (or 'no security'), then reboot.",
                requires_reboot=True,
                target=Target.SYSTEM,
            ),
        )
    plugged = [d for d in tb.devices if not d.is_host_router]
    waiting = [d for d in plugged if d.authorized == 0]
    errors = [b for b in _bolt(facts) if b.status is BoltStatus.AUTH_ERROR]
    if waiting or errors:
        names = ", ".join(
            [_label(d) for d in waiting] + [f"{b.name} (bolt: authorization error)" for b in errors]
        )
        # Enrolling is a lasting trust with DMA access: only the enclosure the GPU sits in, when one can be
        # told apart; every waiting device only when none can.
        enclosures = [d for d in waiting if _looks_like_enclosure(d)]
        chosen = enclosures or waiting
        commands = tuple(
            Command(
                ("boltctl", "enroll", "--policy", "auto", d.unique_id),
                note=f"authorize {_label(d)} now and on every plug",
            )
            for d in chosen
            if isinstance(d.unique_id, str)
        )
        others = [d for d in waiting if d not in chosen]
        left = (
            f" {', '.join(_label(d) for d in others)} {'is' if len(others) == 1 else 'are'} not needed for a GPU: "
            "leave unauthorized unless you use it."
            if others
            else ""
        )
        return Finding(
            cid,
            Status.FAIL,
            f"Not authorized: {names}. Until it is, no PCIe device behind it (an eGPU) exists.",
            evidence=evidence,
            remediation=Remediation(
                text="Authorize the enclosure with bolt (or your desktop's Thunderbolt settings); an "
                "'authorization error' usually clears after re-plugging." + left,
                commands=commands,
                target=Target.SYSTEM,
            ),
        )
    if not plugged:
        return Finding(cid, Status.PASS, "No Thunderbolt/USB4 device is plugged in.", evidence=evidence)
    return Finding(
        cid,
        Status.PASS,
        f"{len(plugged)} Thunderbolt/USB4 device{'s' if len(plugged) > 1 else ''}, all authorized.",
        evidence=evidence,
    )


@check("egpu.tunnel", "What a Thunderbolt/USB4 tunnel means for a GPU behind it", "egpu")
def egpu_tunnel(facts: Facts) -> Finding:
    """
    ## What it checks
    Whether a GPU's PCI path runs through a Thunderbolt/USB4 PCIe tunnel (hardware.md §2.2: the kernel's
    `removable` mark, a Thunderbolt bridge or tunnel port above it, or a port of an authorized domain).

    ## Why it matters
    A PCIe tunnel is at most a PCIe 3.0 x4 link (about 3.9 GB/s; 2.4-4 GB/s measured): fine for training
    once the data is on the GPU, slow when every step copies a batch from the host. Hot-unplugging the
    enclosure while CUDA uses the GPU crashes the process.

    ## How to fix
    Nothing to fix: keep datasets on the GPU or use larger batches with pinned memory; for full bandwidth
    put the GPU in an internal x16 slot.
    """
    cid = "egpu.tunnel"
    if isinstance(facts.pcie, Unavailable):
        return Finding(cid, Status.SKIP, f"No PCIe paths to look at ({facts.pcie}).")
    if not facts.pcie:
        return Finding(cid, Status.SKIP, "No GPU on the PCI bus.")
    behind = [p for p in facts.pcie if gpu_tunnel(p, facts.thunderbolt).through_tunnel is True]
    if not behind:
        return Finding(cid, Status.PASS, "No GPU is behind a Thunderbolt/USB4 tunnel.")
    evidence = tuple(
        Evidence(p.bdf, e.detail, f"rule {e.rule.value}")
        for p in behind
        for e in gpu_tunnel(p, facts.thunderbolt).evidence
    )
    return Finding(
        cid,
        Status.PASS,
        f"{', '.join(p.bdf for p in behind)} {'is' if len(behind) == 1 else 'are'} behind a Thunderbolt/USB4 "
        f"tunnel: at most about {TUNNEL_CEILING_GBYTES_PER_S:.1f} GB/s to the GPU (PCIe 3.0 x4), which is "
        "expected for an eGPU, not a fault.",
        details="Fine for training once data is on the GPU; slow when each step copies a batch from the host. "
        "Do not unplug the enclosure while CUDA uses it.",
        evidence=evidence,
    )
