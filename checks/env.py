"""env.library_path and env.cuda_visible_devices: what the process environment does to torch's CUDA."""

from __future__ import annotations

import re

from torch_gpu_doctor.checks.support.signatures import reported
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.reported_errors import ReportedError
from torch_gpu_doctor.model import Command, Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Unavailable

DRIVER_LIBRARIES = ("libcuda", "libnvidia-ml")  # come from the driver, wherever it is installed
# torch's own folders: site-packages (pip, venv) or dist-packages (Debian/Ubuntu system Python)
OWN_LIBRARY = re.compile(r"/(site|dist)-packages/(nvidia|torch)/")


@check("env.library_path", "torch loads its CUDA libraries from its own wheels", "env")
def library_path(facts: Facts) -> Finding:
    """
    ## What it checks
    The CUDA libraries actually mapped into the torch process (from `/proc/self/maps` of the child), and
    whether any comes from outside torch's own `torch/lib` and `nvidia/` wheel folders (the driver's
    `libcuda` and `libnvidia-ml` excepted).

    ## Why it matters
    `LD_LIBRARY_PATH` pointing at a system CUDA toolkit, or a conda `cudatoolkit`, makes torch load another
    cuBLAS or cuDNN than it was built with: crashes, "CUBLAS_STATUS_NOT_INITIALIZED", or silently slower code.

    ## How to fix
    Remove the CUDA toolkit folders from `LD_LIBRARY_PATH` for this environment (torch's wheels bring their
    own libraries), or use a conda build of torch with conda's CUDA libraries, not a mix.
    """
    cid = "env.library_path"
    failed = reported(facts, "missing_library", "undefined_symbol", "cudnn", "cublas")
    if failed:
        return _library_failure(cid, failed)
    runtime = facts.torch
    if isinstance(runtime, Unavailable) or runtime.outcome != "ok":
        return Finding(cid, Status.SKIP, "torch was not imported, so no library was loaded to inspect.")
    foreign = [
        lib
        for lib in runtime.mapped_libraries
        if lib.name not in DRIVER_LIBRARIES and not OWN_LIBRARY.search(lib.realpath)
    ]
    evidence = tuple(
        Evidence(lib.name, lib.realpath, "/proc/self/maps of the torch process")
        for lib in runtime.mapped_libraries
    )
    if foreign:
        ld = facts.env.get("LD_LIBRARY_PATH")
        folders = sorted({lib.realpath.rsplit("/", 1)[0] for lib in foreign})
        return Finding(
            cid,
            Status.WARN,
            "torch loaded "
            + ", ".join(f"{lib.name} from {lib.realpath}" for lib in foreign)
            + " instead of its own wheels.",
            details=f"LD_LIBRARY_PATH={ld!r}." if ld else "",
            evidence=evidence,
            remediation=Remediation(
                text=f"Take {', '.join(folders)} out of the library search path for this environment: run the "
                "program with LD_LIBRARY_PATH unset (or without those folders) and, if they come from "
                "/etc/ld.so.conf.d, remove that file and run `sudo ldconfig`. torch's wheels bring their own CUDA "
                "libraries; a system CUDA toolkit or a conda cudatoolkit first on the path replaces them with "
                "another version.",
                commands=(
                    Command(
                        (
                            "env",
                            "-u",
                            "LD_LIBRARY_PATH",
                            "python",
                            "-c",
                            "import torch; torch.zeros(1).cuda()",
                        ),
                        note="works once the override is gone",
                    ),
                ),
                target=Target.SYSTEM,
            ),
        )
    if not runtime.mapped_libraries:
        return Finding(cid, Status.SKIP, "torch loaded no CUDA library to inspect (CUDA did not start).")
    count = len(runtime.mapped_libraries)
    return Finding(
        cid,
        Status.PASS,
        f"{count} CUDA librar{'y' if count == 1 else 'ies'}, all from torch's own wheels or the driver.",
        evidence=evidence,
    )


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
    wrong = reported(facts, "visible_devices", "mig")
    if wrong and value is None:
        return Finding(
            cid,
            Status.FAIL,
            f"The program asked CUDA for a GPU that it does not see ({wrong[0].where}).",
            details=wrong[0].means,
            evidence=tuple(Evidence("reported", e.text, e.where) for e in wrong[:3]),
            remediation=Remediation(
                text="Compare the GPU index the program uses (or CUDA_VISIBLE_DEVICES, a `--gpus` or `device=` "
                "setting) with the GPUs that exist: indices count from 0 within CUDA_VISIBLE_DEVICES, and a MIG "
                "instance is addressed by its MIG-... UUID. Unset CUDA_VISIBLE_DEVICES or list existing ones.",
                commands=(
                    Command(
                        ("nvidia-smi", "-L"), note="the GPUs (and MIG instances) that exist, with their UUIDs"
                    ),
                ),
                target=Target.SYSTEM,
            ),
        )
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


def _library_failure(cid: str, failed: list[ReportedError]) -> Finding:
    """A program could not load a CUDA library, or loaded one of another version (a missing symbol)."""
    first = failed[0]
    library = first.values.get("library") or first.values.get("cudnn_library") or ""
    symbol = first.values.get("symbol")
    if symbol or first.kind in ("undefined_symbol", "cudnn", "cublas"):
        summary = "A CUDA library of another version was loaded before the one torch was built with"
        fix = (
            "An older or newer copy of the library comes first on the search path: LD_LIBRARY_PATH (a system "
            "CUDA toolkit, a conda cudatoolkit), LD_PRELOAD or /etc/ld.so.conf. Run the program with "
            "LD_LIBRARY_PATH unset; if that works, remove the CUDA folders from it for good. With pip's torch, "
            "the nvidia-* wheels must be the versions torch requires (`pip check`)."
        )
    else:
        summary = f"A CUDA library could not be found: {library or 'see the error'}"
        fix = (
            "torch's pip wheels bring their CUDA libraries as nvidia-* packages: reinstall the torch build (with "
            "--no-cache-dir) so they come back, and do not point LD_LIBRARY_PATH at a CUDA that lacks them. A "
            "program with its own CUDA build (CTranslate2, TensorFlow, ONNX Runtime) needs the CUDA and cuDNN "
            "major versions it was built for installed on the system or as nvidia-* wheels."
        )
    return Finding(
        cid,
        Status.FAIL,
        f"{summary} ({first.where}).",
        details=first.means,
        evidence=tuple(Evidence("reported", e.text, e.where) for e in failed[:3]),
        remediation=Remediation(
            text=fix,
            commands=(
                Command(
                    ("python", "-m", "pip", "check"),
                    note="nvidia-* wheels that do not match what torch requires",
                ),
                Command(("ldconfig", "-p"), note="which copies of the CUDA libraries the loader finds"),
            ),
            target=Target.PYTHON_ENV,
        ),
    )
