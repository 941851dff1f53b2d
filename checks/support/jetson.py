"""How the checks name a Jetson board: its model, GPU, L4T and JetPack release in one phrase."""

from __future__ import annotations

from torch_gpu_doctor.checks.support.signatures import reported
from torch_gpu_doctor.compat.jetson import load_jetson
from torch_gpu_doctor.facts.jetson import JetsonFacts
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.jetson import jetson_release
from torch_gpu_doctor.lazy_re import lazy

# A CUDA library of one CUDA release by its soname: libcudart.so.10.2, libcufft.so.10.0, libcublas.so.11
_CUDA_SONAME = lazy(
    r"^lib(?:cudart|cufft|curand|cusparse|cusolver|cublas(?:Lt)?|nvrtc|nvToolsExt|npp\w*)\.so\.\d+(?:\.\d+)?$"
)


def board_line(jetson: JetsonFacts, mid: bool = False) -> str:
    """ "NVIDIA Jetson AGX Orin Developer Kit (Orin GPU, compute capability 8.7), L4T 36.4.3 (JetPack 6.1 / 6.2,
    CUDA 12.6)"; `mid`: for inside a sentence ("a Jetson board" where the model is not known)."""
    data = load_jetson()
    soc, release = data.soc(jetson.soc), data.release(jetson.l4t)
    name = jetson.model or ("a Jetson board" if mid else "A Jetson board")
    gpu = f" ({soc.name} GPU, compute capability {soc.capability})" if soc is not None else ""
    l4t = f", L4T {jetson.l4t}" if jetson.l4t else ", L4T release unknown"
    jetpack = f" (JetPack {release.jetpack}, CUDA {release.cuda})" if release is not None else ""
    return f"{name}{gpu}{l4t}{jetpack}"


def _board_cuda(facts: Facts) -> tuple[str, bool] | None:
    """The CUDA of the board's JetPack and whether it is that release's own: its L4T release's, or where that is
    not known, the last release its SoC has (a Jetson Nano runs JetPack 4.6 and CUDA 10.2 at most; its earlier
    JetPacks had CUDA 10.0, so only the major is certain then)."""
    release = jetson_release(facts)
    if release is not None:
        return release.cuda, True
    board = facts.jetson_board
    data = load_jetson()
    soc = data.soc(board.soc) if board is not None else None
    last = data.release(soc.last_l4t) if soc is not None and soc.last_l4t else None
    return (last.cuda, False) if last is not None else None


def _boards_own(version: str, board: tuple[str, bool]) -> bool:
    """A library version ("10.2", "10") the board's CUDA names so: all of it where the release is known, else
    only a bare major, which every release of the SoC shares."""
    cuda, exact = board
    if exact:
        return (cuda + ".").startswith(version + ".")
    return "." not in version and cuda.split(".")[0] == version


def own_cuda_library_missing(facts: Facts) -> tuple[str, str] | None:
    """A CUDA library torch's import could not open whose version is the board's own CUDA (libcufft.so.10 on a
    Nano, whose CUDA is 10.2): not another JetPack's torch but the board's CUDA libraries missing from the loader
    path (an image without JetPack's CUDA, such as a third-party Ubuntu 20.04 for the Nano). The library and the
    board's CUDA."""
    board = _board_cuda(facts)
    if board is None:
        return None
    for error in reported(facts, "missing_library"):
        library = error.values.get("library", "")
        if _CUDA_SONAME.match(library) and _boards_own(library.split(".so.", 1)[1], board):
            return library, board[0]
    return None


def missing_cuda_library(facts: Facts) -> str | None:
    """A CUDA library torch's import could not open (libcudart.so.10.2): on a Jetson, whose CUDA comes with its
    JetPack, a torch built for another JetPack's CUDA."""
    board = _board_cuda(facts)
    for error in reported(facts, "missing_library"):
        library = error.values.get("library", "")
        if not _CUDA_SONAME.match(library):
            continue
        version = library.split(".so.", 1)[1]
        if board is not None and _boards_own(version, board):
            continue  # the board's own CUDA names it so: a broken or incomplete CUDA install, not another JetPack
        return library
    return None


def missing_cudss(facts: Facts) -> str | None:
    """libcudss.so.0 that torch's import could not open: NVIDIA's torch 2.8 for JetPack 6 links cuDSS, which
    JetPack does not install (NVIDIA/Isaac-GR00T#343)."""
    return next(
        (
            lib
            for e in reported(facts, "missing_library")
            if (lib := e.values.get("library", "")).startswith(CUDSS)
        ),
        None,
    )


CUDSS = "libcudss"
