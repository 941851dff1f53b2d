"""pcie.link_under_load: does each GPU's link train up to full speed when the smoke test loads it?

An idle NVIDIA GPU drops its link to Gen1 to save power (hardware.md §1.4), so pcie.link cannot tell "resting"
from "stuck". During the smoke test's pinned host→device copies the child samples the GPU's
`current_link_speed` in sysfs; the verdict compares that with what both ends of the link support. Where no
sample could be taken (no sysfs in a container, a torch that does not report PCI bus ids) the measured
bandwidth decides: copies no faster than a Gen1 link carries mean a Gen1 link.
"""

from __future__ import annotations

from torch_gpu_doctor.checks.support.smoke import SOURCE, gpu_run_or_finding, gpu_words
from torch_gpu_doctor.checks.support.smoke_figures import device_path
from torch_gpu_doctor.facts.describe import fact
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.pcie_link import PcieLinkPath, link_gbytes_per_s, link_state
from torch_gpu_doctor.facts.smoke import SmokeRun, SmokeStep, StepStatus
from torch_gpu_doctor.facts.thunderbolt import gpu_tunnel
from torch_gpu_doctor.model import Command, Evidence, Finding, Remediation, Status
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.registry import check

CID = "pcie.link_under_load"
GEN1_MARGIN = 1.15  # measured copies within 15% of the Gen1 ceiling (or below it): a Gen1 link


@dataclass(frozen=True)
class _Verdict:
    status: Status
    sentence: str
    evidence: tuple[Evidence, ...]


def _capable_generation(path: PcieLinkPath) -> int | None:
    """The fastest generation both ends of the GPU's own link support."""
    gens = [h.max_link.generation for h in path.hops[:2]]
    known = [g for g in gens if isinstance(g, int)]
    return min(known) if known else None


def _judge(facts: Facts, run: SmokeRun, step: SmokeStep) -> _Verdict:
    who = gpu_words(run, step.device)
    device = next((d for d in run.devices if d.index == step.device), None)
    path = device_path(facts, device)
    measured = step.numbers.get("gbytes_per_s")
    best = step.numbers.get("best_gbytes_per_s")
    if path is None or not path.hops:
        return _Verdict(Status.UNKNOWN, f"{who}: its PCIe path is unknown here.", ())
    if gpu_tunnel(path, facts.thunderbolt).through_tunnel is True:
        return _Verdict(
            Status.PASS, f"{who} is behind a Thunderbolt/USB4 tunnel: judged by egpu.* instead.", ()
        )
    capable = _capable_generation(path)
    width = path.hops[0].current_link.width
    evidence: list[Evidence] = [
        fact(f"{who}: link generation both ends support", capable, "sysfs max_link_speed")
    ]
    speed_text, width_text = step.texts.get("link_speed_under_load"), step.texts.get("link_width_under_load")
    if speed_text is not None and width_text is not None:
        sampled = link_state(speed_text, width_text)
        evidence.append(fact(f"{who}: link while copying", f"{speed_text}, x{width_text}", SOURCE))
        gen = sampled.generation
        if isinstance(gen, int) and isinstance(capable, int):
            if gen < capable:
                stuck = "stuck at Gen1" if gen == 1 else f"only at Gen{gen}"
                return _Verdict(
                    Status.WARN,
                    f"{who}'s link stays {stuck} under load ({speed_text} while copying at {measured:g} GB/s), "
                    f"though both ends support Gen{capable}.",
                    tuple(evidence),
                )
            return _Verdict(
                Status.PASS,
                f"{who}'s link trains up to Gen{gen} x{width_text} under load ({speed_text} while copying).",
                tuple(evidence),
            )
    if measured is None or not isinstance(width, int) or not isinstance(capable, int):
        return _Verdict(
            Status.UNKNOWN, f"{who}: no link sample and no width to judge the copies by.", tuple(evidence)
        )
    gen1 = link_gbytes_per_s(1, width)
    if not isinstance(gen1, float):
        return _Verdict(
            Status.UNKNOWN, f"{who}: the link width ({width}) gives no bandwidth.", tuple(evidence)
        )
    evidence.append(fact(f"{who}: Gen1 x{width} carries", f"{gen1:g} GB/s", "PCIe 1.0: 2.5 GT/s, 8b/10b"))
    # The best copy judges the link: a link that once carried more than Gen1 is not stuck at Gen1.
    if capable >= 2 and max(measured, best or 0.0) <= GEN1_MARGIN * gen1:
        return _Verdict(
            Status.WARN,
            f"{who} copies at {measured:g} GB/s, no faster than a Gen1 x{width} link ({gen1:g} GB/s): its link "
            f"behaves as if stuck at Gen1 under load, though both ends support Gen{capable}.",
            tuple(evidence),
        )
    return _Verdict(
        Status.PASS,
        f"{who} copies at {measured:g} GB/s, faster than Gen1 allows: its link trains up under load.",
        tuple(evidence),
    )


def _remedy() -> Remediation:
    return Remediation(
        text="In the BIOS/UEFI set the slot's PCIe speed to Auto (or the generation both ends support) instead of "
        "Gen1/Gen2; reseat the card; a riser or extension cable that cannot carry the faster signal must be "
        "replaced (or the slot set to the generation it can carry). Then check while a job runs: the current "
        "generation should equal the max.",
        commands=(
            Command(
                (
                    "nvidia-smi",
                    "--query-gpu=index,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current",
                    "--format=csv",
                ),
                note="run while the GPU is busy",
            ),
        ),
        requires_reboot=True,
    )


@check(CID, "Each GPU's PCIe link trains up to full speed under load", "pcie")
def pcie_link_under_load(facts: Facts) -> Finding:
    """
    ## What it checks
    The link speed of each GPU while the smoke test copies to it: sampled from sysfs during the copies, or,
    when no sample could be taken, judged from the copy bandwidth (no faster than Gen1 means Gen1).

    ## Why it matters
    Idle GPUs rest at Gen1 and speed up when work arrives. A link that stays at Gen1 (a BIOS set to Gen1, a
    riser that fails at higher speeds, a firmware bug) carries a sixteenth of Gen5: every batch waits on it,
    and nothing else reports it because at idle it looks normal.

    ## How to fix
    Set the slot to Auto or the right generation in the BIOS, reseat the card, replace a riser that cannot
    carry the speed, update the motherboard firmware.
    """
    run = gpu_run_or_finding(CID, facts, "transfer")
    if isinstance(run, Finding):
        return run
    steps = [s for s in run.named("transfer") if s.variant == "h2d_pinned" and s.status is StepStatus.OK]
    if not steps:
        return Finding(
            CID,
            Status.UNKNOWN,
            "No host→device copy finished, so the link was never loaded (see smoke.transfer).",
        )
    verdicts = [_judge(facts, run, s) for s in steps]
    evidence = tuple(e for v in verdicts for e in v.evidence)
    worst = max(verdicts, key=lambda v: v.status.severity)
    details = "\n".join(v.sentence for v in verdicts) if len(verdicts) > 1 else ""
    return Finding(
        CID,
        worst.status,
        worst.sentence,
        details=details,
        evidence=evidence,
        remediation=_remedy() if worst.status is Status.WARN else None,
    )
