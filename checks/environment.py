"""env.cuda_visible_devices, python.env_kind, compat.data_age: the environment around torch."""

from __future__ import annotations

from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.model import Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Reason, Unavailable


def visible_devices(value: str, count: int, uuids: list[str]) -> tuple[list[int], str | None]:
    """The GPU indices CUDA will expose for CUDA_VISIBLE_DEVICES=value, and the first problem if any.

    CUDA reads the list left to right and stops at the first entry that is not a valid device (an index out
    of range, an unknown UUID, a repeat): everything after it is silently dropped.
    """
    shown: list[int] = []
    for raw in value.split(","):
        token = raw.strip()
        if token.lstrip("-").isdigit():
            index = int(token)
            if not 0 <= index < count:
                return (
                    shown,
                    f"{token!r} is not a GPU index (0-{count - 1}); it and everything after it are ignored",
                )
        elif token.startswith(("GPU-", "MIG-")):
            matches = [i for i, u in enumerate(uuids) if u.startswith(token)]
            if len(matches) != 1:
                return shown, f"{token!r} matches {len(matches)} GPUs; it and everything after it are ignored"
            index = matches[0]
        else:
            return (
                shown,
                f"{token!r} is neither an index nor a GPU UUID; it and everything after it are ignored",
            )
        if index in shown:
            return shown, f"GPU {index} is listed twice; the list stops there"
        shown.append(index)
    return shown, None


@check("env.cuda_visible_devices", "CUDA_VISIBLE_DEVICES does not hide the GPUs by mistake", "env")
def cuda_visible_devices(facts: Facts) -> Finding:
    """
    ## What it checks
    Parses `CUDA_VISIBLE_DEVICES` the way CUDA does (indices or GPU/MIG UUIDs, read until the first invalid
    entry) and says which GPUs torch will see.

    ## Why it matters
    An empty value, `-1`, a typo or an index that does not exist hides GPUs without any error: torch simply
    reports fewer devices, or none ("no CUDA GPUs are available").

    ## How to fix
    Unset the variable (`unset CUDA_VISIBLE_DEVICES`) or list only valid indices or UUIDs, separated by commas.
    """
    cid = "env.cuda_visible_devices"
    value = facts.env.get("CUDA_VISIBLE_DEVICES")
    usable = [g for g in facts.nvidia_gpus if g.nvml_index is not None]
    if value is None:
        return Finding(cid, Status.PASS, "CUDA_VISIBLE_DEVICES is not set: every GPU is visible to torch.")
    evidence = (Evidence("CUDA_VISIBLE_DEVICES", repr(value), "environment"),)
    if not usable:
        return Finding(
            cid,
            Status.SKIP,
            f"CUDA_VISIBLE_DEVICES={value!r}, but no usable NVIDIA GPU here.",
            evidence=evidence,
        )
    ordered = sorted(usable, key=lambda g: g.nvml_index or 0)
    uuids = [g.uuid if isinstance(g.uuid, str) else "" for g in ordered]
    shown, problem = visible_devices(value, len(ordered), uuids)
    fix = Remediation(
        text="Unset CUDA_VISIBLE_DEVICES or list valid GPU indices/UUIDs.", target=Target.PYTHON_ENV
    )
    if not shown:
        return Finding(
            cid,
            Status.FAIL,
            f"CUDA_VISIBLE_DEVICES={value!r} hides every GPU from torch.",
            details=problem or "",
            evidence=evidence,
            remediation=fix,
        )
    if problem:
        return Finding(
            cid,
            Status.WARN,
            f"CUDA_VISIBLE_DEVICES={value!r} exposes only GPU {', '.join(map(str, shown))}: {problem}.",
            evidence=evidence,
            remediation=fix,
        )
    return Finding(
        cid,
        Status.PASS,
        f"CUDA_VISIBLE_DEVICES={value!r}: torch sees GPU {', '.join(map(str, shown))}.",
        evidence=evidence,
    )


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
            remediation=Remediation(
                text="Create a virtual environment and diagnose it with --python.",
                target=Target.PYTHON_ENV,
            ),
        )
    return Finding(cid, Status.PASS, f"A system Python ({py.prefix}) that pip may install into.")


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
