"""platform.jetson: a Jetson board, its L4T and JetPack release, and whether the installed torch is one that uses
its integrated GPU (NVIDIA's build for that JetPack, never PyPI's)."""

from __future__ import annotations

from torch_gpu_doctor.checks.support.jetson import (
    board_line,
    missing_cuda_library,
    missing_cudss,
    own_cuda_library_missing,
)
from torch_gpu_doctor.compat.jetson import load_jetson
from torch_gpu_doctor.facts.jetson import JetsonFacts
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.torch import TorchRuntime
from torch_gpu_doctor.fixes.jetson import (
    board_cuda_missing_fix,
    cudss_fix,
    jetson_torch_remediation,
    openblas_core_type_fix,
)
from torch_gpu_doctor.model import Evidence, Finding, Status
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable

CID = "platform.jetson"


@check(CID, "A Jetson runs NVIDIA's torch for its JetPack", "platform")
def platform_jetson(facts: Facts) -> Finding:
    """
    ## What it checks
    Whether this is an NVIDIA Jetson (the device tree's `model` and `compatible`, `/etc/nv_tegra_release`), which
    board and L4T release it runs, the JetPack and CUDA that release ships, and whether the installed torch is
    a build that uses the Jetson's integrated GPU.

    ## Why it matters
    A Jetson's GPU is part of its Tegra chip: it is not on the PCI bus, the desktop driver and NVML do not cover
    it, and CUDA comes with the board's L4T image. PyPI's aarch64 torch wheels are built for server ARM or the
    CPU: `pip install torch` succeeds and `torch.cuda.is_available()` is False. download.pytorch.org's CUDA
    wheels do not fit it either.

    ## How to fix
    Install NVIDIA's torch for the board's JetPack: from JetPack 6.1 its pip index
    (`https://pypi.jetson-ai-lab.io/jp6/cu126`), before it the wheel file listed in NVIDIA's "PyTorch for
    Jetson" forum thread. The command names the file for this L4T release.
    """
    jetson = facts.jetson
    if isinstance(jetson, Unavailable):
        if jetson.reason is Reason.NOT_APPLICABLE:
            return Finding(CID, Status.SKIP, "Not a Jetson.")
        return Finding(CID, Status.UNKNOWN, f"Could not tell whether this is a Jetson: {jetson}.")
    board, in_sentence = board_line(jetson), board_line(jetson, mid=True)
    evidence = _evidence(jetson)
    packages, runtime = facts.torch_packages, facts.torch
    pypi_build = (
        not isinstance(packages, Unavailable) and packages.version is not None and packages.cuda is None
    )
    if (  # PyPI's aarch64 torch dies the same way: then the build is the cause (below), not numpy
        not isinstance(runtime, Unavailable)
        and runtime.outcome == "crashed"
        and "SIGILL" in runtime.message
        and not pypi_build
    ):
        return Finding(
            CID,
            Status.FAIL,
            f"Python dies on an illegal instruction importing torch or numpy on this Jetson ({in_sentence}): "
            "numpy's OpenBLAS, not the torch build, is the usual cause.",
            details="numpy 1.19.5's OpenBLAS picks a kernel for another ARM core and every import of numpy "
            "crashes the same way (numpy/numpy#18131); a script that never imports torch dies too.",
            evidence=evidence,
            remediation=openblas_core_type_fix(),
        )
    cudss = missing_cudss(facts)
    if cudss is not None and _torch_failed(runtime):
        return Finding(
            CID,
            Status.FAIL,
            f"torch's import looks for {cudss}, which JetPack does not install: NVIDIA's torch 2.8 "
            f"for Jetson links cuDSS. {board}.",
            evidence=evidence,
            remediation=cudss_fix(jetson.l4t),
        )
    own = own_cuda_library_missing(facts)
    if own is not None and _torch_failed(runtime):
        library, cuda = own
        return Finding(
            CID,
            Status.FAIL,
            f"torch's import cannot find {library}, a library of CUDA {cuda}, this board's own: the CUDA libraries "
            f"are not installed or not on the loader path. {board}.",
            details="The torch build fits this board's JetPack (its CUDA names the library so), so the libraries "
            "are what is missing: an image without JetPack's CUDA (a third-party Ubuntu image for the board), a "
            "CUDA installed under /usr/local/cuda-X.Y without its folder in the loader's configuration, or an "
            "interrupted JetPack install.",
            evidence=evidence,
            remediation=board_cuda_missing_fix(library, cuda),
        )
    soname = missing_cuda_library(facts)
    if soname is not None and _torch_failed(runtime):
        return Finding(
            CID,
            Status.FAIL,
            f"torch was built for another JetPack: its import looks for {soname}, which the CUDA of this Jetson's "
            f"JetPack does not have. {board}.",
            details="NVIDIA's torch for Jetson is built against one JetPack's CUDA; on a board flashed with "
            "another JetPack its CUDA libraries are missing (each CUDA release names them with its own version). "
            "Install the build for this board's JetPack, or flash the JetPack that torch was built for.",
            evidence=evidence,
            remediation=jetson_torch_remediation(facts),
        )
    if (isinstance(packages, Unavailable) or packages.version is None) and _torch_failed(runtime):
        return Finding(
            CID,
            Status.FAIL,
            f"torch does not use the GPU of this Jetson ({in_sentence}): it is not NVIDIA's build for its JetPack.",
            details="PyPI's and conda's aarch64 torch are built for the CPU or for server ARM GPUs: on a Jetson "
            "CUDA is not available to them, and some die at import on an instruction the Jetson's CPU lacks "
            "('Illegal instruction'). NVIDIA publishes builds for each JetPack.",
            evidence=evidence,
            remediation=jetson_torch_remediation(facts),
        )
    if isinstance(packages, Unavailable) or packages.version is None:
        return Finding(
            CID,
            Status.PASS,
            f"{board}.",
            details="torch is not installed (see torch.installed): install NVIDIA's build for this JetPack.",
            evidence=evidence,
            remediation=jetson_torch_remediation(facts),
        )
    version = packages.version
    if packages.cuda is None:
        return Finding(
            CID,
            Status.FAIL,
            f"torch {version} is a CPU build (PyPI's aarch64 wheel): it does not use the GPU of this Jetson "
            f"({in_sentence}).",
            details="PyPI's aarch64 torch is built for the CPU or for server ARM GPUs, not for a Jetson's "
            "integrated GPU. NVIDIA publishes builds for each JetPack.",
            evidence=evidence,
            remediation=jetson_torch_remediation(facts),
        )
    if not isinstance(runtime, Unavailable) and runtime.outcome == "ok" and runtime.cuda_available is False:
        return Finding(
            CID,
            Status.FAIL,
            f"torch {version} (CUDA {packages.cuda}) finds no GPU on this Jetson: it is not NVIDIA's build for "
            f"its JetPack. {board}.",
            details="A CUDA build from PyPI or download.pytorch.org targets server ARM GPUs with the desktop "
            "driver; a Jetson's GPU needs the build made against its L4T's CUDA.",
            evidence=evidence,
            remediation=jetson_torch_remediation(facts),
        )
    used = not isinstance(runtime, Unavailable) and runtime.outcome == "ok" and runtime.cuda_available is True
    said = "uses the GPU" if used else "is a CUDA build (whether it reaches the GPU was not recorded)"
    return Finding(CID, Status.PASS, f"{board}; torch {version} {said}.", evidence=evidence)


def _torch_failed(runtime: Maybe[TorchRuntime]) -> bool:
    """torch was run and could not use CUDA: it did not import, or is_available() was False."""
    return not isinstance(runtime, Unavailable) and (
        runtime.outcome != "ok" or runtime.cuda_available is False
    )


def _evidence(jetson: JetsonFacts) -> tuple[Evidence, ...]:
    rows = [
        Evidence("model", jetson.model or "not readable", "/proc/device-tree/model"),
        Evidence(
            "compatible", ", ".join(jetson.compatible) or "not readable", "/proc/device-tree/compatible"
        ),
        Evidence("L4T release", jetson.l4t or "unknown", "/etc/nv_tegra_release"),
        Evidence(
            "nvgpu driver",
            "loaded" if jetson.nvgpu else "not seen",
            "/sys/module/nvgpu, /dev/nvhost-ctrl-gpu",
        ),
    ]
    release = load_jetson().release(jetson.l4t)
    if release is not None:
        rows.append(
            Evidence(
                "JetPack, CUDA, Python",
                f"{release.jetpack}, {release.cuda}, {release.python}",
                release.source,
            )
        )
    return tuple(rows)
