"""compat.data_age: whether the doctor's compatibility data knows the installed torch."""

from __future__ import annotations

from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.model import Finding, Status
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Unavailable


@check("compat.data_age", "The doctor's compatibility data knows this torch", "compat")
def data_age(facts: Facts) -> Finding:
    """
    ## What it checks
    Whether the installed torch is newer than the newest release in gpu-doctor's compatibility data.

    ## Why it matters
    Verdicts about architectures, CUDA variants and companion versions come from that data; for a release
    it has never seen, they are guesses, and the doctor should say so rather than sound sure.

    ## How to fix
    Upgrade gpu-doctor (`pip install -U torch-gpu-doctor`); the data ships with it.
    """
    cid = "compat.data_age"
    data = load_torch_releases()
    packages = facts.torch_packages
    if isinstance(packages, Unavailable) or packages.version is None:
        return Finding(
            cid, Status.SKIP, f"No torch to compare; the data covers torch up to {data.newest.latest}."
        )
    if data.is_newer_than_data(packages.version):
        return Finding(
            cid,
            Status.WARN,
            f"torch {packages.version} is newer than this doctor's data (up to {data.newest.latest}): "
            "the torch verdicts may be out of date.",
        )
    return Finding(
        cid, Status.PASS, f"The data covers torch {packages.version} (up to {data.newest.latest})."
    )
