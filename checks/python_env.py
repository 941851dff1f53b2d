"""python.env_kind: whether the diagnosed interpreter's environment can take a pip install."""

from __future__ import annotations

from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.torch_wheel import fix_for_torch
from torch_gpu_doctor.model import Finding, Status
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Reason, Unavailable


@check("python.env_kind", "The diagnosed Python environment can take a pip install", "python")
def env_kind(facts: Facts) -> Finding:
    """
    ## What it checks
    What kind of environment the diagnosed interpreter is: a virtual environment, a conda environment, or a
    system Python, and whether the system Python is marked externally managed (PEP 668).

    ## Why it matters
    The fix for a wrong torch is a pip install into this interpreter. pip refuses to install into an
    externally managed system Python (`error: externally-managed-environment`), and installing torch with
    pip over conda's own packages mixes two package managers' CUDA libraries.

    ## How to fix
    Create a virtual environment (`python3 -m venv ~/venvs/torch`) and install torch there; in conda, use
    one package manager for torch and its CUDA libraries.
    """
    cid = "python.env_kind"
    py, packages = facts.python, facts.torch_packages
    if isinstance(py, Unavailable):
        return Finding(cid, Status.UNKNOWN, f"The diagnosed Python did not describe itself: {py}.")
    if isinstance(py.prefix, Unavailable):  # the interpreter exists but its probe gave nothing
        status = Status.SKIP if py.prefix.reason is Reason.NOT_RECORDED else Status.UNKNOWN
        return Finding(cid, status, f"The diagnosed Python did not describe itself: {py.prefix}.")
    managed = not isinstance(packages, Unavailable) and packages.externally_managed
    if isinstance(py.conda_prefix, str):
        return Finding(cid, Status.PASS, f"A conda environment ({py.conda_prefix}).")
    if py.in_virtualenv is True:
        return Finding(cid, Status.PASS, f"A virtual environment ({py.prefix}).")
    if managed:
        return Finding(
            cid,
            Status.WARN,
            f"{py.executable} is the system's externally managed Python: pip will refuse to install torch into it.",
            # the same venv recipe the torch install gives here: one step in the plan, not two
            remediation=fix_for_torch(facts),
        )
    return Finding(cid, Status.PASS, f"A system Python ({py.prefix}) that pip may install into.")
