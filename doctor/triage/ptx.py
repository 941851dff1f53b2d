"""CUDA error 222, "the provided PTX was compiled with an unsupported toolchain": GPU code carried as PTX that a
newer CUDA toolkit than the driver's built. The PTX is most often the program's own (a CUDA extension compiled on
the machine by its toolkit, a wheel's kernels), not torch's, so another torch is no answer: a driver that runs
that CUDA is (blind set 32: GeneFacePlusPlus#192, an extension built by CUDA 11.7 under driver 510, was told to
install a torch that needs driver 525)."""

from __future__ import annotations

import dataclasses

from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.driver_plan import plan_driver
from torch_gpu_doctor.fixes.driver_update import driver_update
from torch_gpu_doctor.model import Status, Target
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText

SIGNATURE = "other_ptx_unsupported_toolchain"


def ptx_newer_than_the_driver(verdict: Verdict, pasted: PastedText, facts: Facts) -> Verdict:
    """torch.driver_compat's answer to error 222, where it installs another torch, turned to the driver: the
    program's PTX needs it newer."""
    finding = verdict.finding
    if finding.check_id != "torch.driver_compat" or finding.status is not Status.FAIL:
        return verdict
    hit = next((h for h in pasted.hits if h.signature.id == SIGNATURE and h.line in verdict.lines), None)
    fix = finding.remediation
    if hit is None or fix is None or fix.target is not Target.PYTHON_ENV:
        return verdict  # the driver's own update already (a container's host, WSL's Windows driver)
    summary = (
        f"The driver is older than the CUDA that built the program's GPU code (line {hit.line} of the paste: "
        "'the provided PTX was compiled with an unsupported toolchain')."
    )
    fix = driver_update(
        facts,
        plan_driver(facts),
        "The PTX (the GPU code a CUDA extension, or a wheel, carries for the driver to compile) was built by a "
        "newer CUDA toolkit than this driver runs: update the driver to one that runs the CUDA toolkit on this "
        "machine (nvcc --version) and the CUDA the program's wheels were built for.",
        alternative="Building the extension with a CUDA toolkit no newer than the driver's CUDA (nvidia-smi shows "
        "it) works too; another torch does not.",
    )
    return dataclasses.replace(
        verdict, finding=dataclasses.replace(finding, summary=summary, remediation=fix)
    )
