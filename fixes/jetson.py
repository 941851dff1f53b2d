"""torch for a Jetson: NVIDIA's build for the board's JetPack (compat/jetson.json), never PyPI's.

PyPI's aarch64 wheels are built for server ARM (SBSA) GPUs or the CPU; on a Jetson they import and find no
GPU. NVIDIA publishes its own builds per JetPack: a pip index from JetPack 6.1 (pypi.jetson-ai-lab.io), single
wheel files before it.
"""

from __future__ import annotations

from torch_gpu_doctor.compat.jetson import JetsonRelease, load_jetson
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.target import python_command
from torch_gpu_doctor.model import Command, Remediation, Target

FORUM = "https://forums.developer.nvidia.com/t/pytorch-for-jetson/72048"


def jetson_release(facts: Facts) -> JetsonRelease | None:
    jetson = facts.jetson_board
    return load_jetson().release(jetson.l4t) if jetson is not None else None


def jetson_torch_remediation(facts: Facts) -> Remediation:
    """NVIDIA's torch for this board's JetPack, into the diagnosed interpreter; the forum's list when the L4T
    release is not in the data."""
    jetson = facts.jetson_board
    release = jetson_release(facts)
    python = python_command(facts)
    if jetson is None or release is None:
        l4t = f"L4T {jetson.l4t}" if jetson is not None and jetson.l4t else "this board's L4T release"
        return Remediation(
            text=f"Install NVIDIA's torch built for {l4t} (`cat /etc/nv_tegra_release` names it) from the list at "
            f"{FORUM} (gpu-doctor's data has no row for it); PyPI's and other JetPacks' builds do not use this "
            "board's GPU.",
            target=Target.PYTHON_ENV,
        )
    pip = (python, "-m", "pip", "install")
    argv: tuple[str, ...]
    if release.index_url is not None:
        argv = (*pip, "--force-reinstall", "torch", "torchvision", "--index-url", release.index_url)
        where = f"NVIDIA's index for JetPack {release.jetpack} ({release.index_url})"
    else:
        assert release.wheel is not None
        argv = (*pip, "--force-reinstall", release.wheel)
        where = f"NVIDIA's wheel for JetPack {release.jetpack} (Python {release.python})"
    return Remediation(
        text=f"Install torch from {where}: PyPI's builds do not use a Jetson's GPU. L4T {jetson.l4t} ships CUDA "
        f"{release.cuda}; other versions are listed at {FORUM}.",
        commands=(Command(argv),),
        needs_network=True,
        target=Target.PYTHON_ENV,
    )


def openblas_core_type_fix() -> Remediation:
    """'Illegal instruction (core dumped)' at import on a Jetson: numpy's bundled OpenBLAS (numpy 1.19.5's
    wheel, numpy/numpy#18131) picks a kernel for a CPU core the Jetson's Cortex-A57 is not, so every import of
    numpy, and of torch and torchvision through it, dies, whatever torch build is installed."""
    return Remediation(
        text="numpy's OpenBLAS chooses a CPU core type the Jetson's CPU is not and executes an instruction it "
        "lacks: every script that imports numpy, torch among them, dies at import. Tell OpenBLAS the core type "
        "in the shell that starts the program (add the line to ~/.bashrc, or the service's environment, to keep "
        "it; a new user account needs it too), or install another numpy release than 1.19.5 "
        "(`pip3 install numpy==1.19.4`).",
        commands=(
            Command(
                ("export", "OPENBLAS_CORETYPE=ARMV8"),
                note="then run the program again from this shell",
                runs_here=False,
            ),
        ),
        target=Target.PYTHON_ENV,
    )


# NVIDIA's CUDA repository for JetPack 6 (Ubuntu 22.04 on arm64), whose cudss package holds libcudss.so.0
CUDA_KEYRING_JP6 = (
    "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/arm64/cuda-keyring_1.1-1_all.deb"
)


def cudss_fix(l4t: str | None) -> Remediation:
    """torch 2.8 for JetPack 6 (pypi.jetson-ai-lab) links cuDSS, which JetPack does not install: its import
    fails on libcudss.so.0 (NVIDIA/Isaac-GR00T#343, where installing NVIDIA's cudss package fixed it; torch 2.7
    did not need it)."""
    jetpack6 = l4t is not None and l4t.startswith("36.")
    text = (
        "NVIDIA's torch 2.8 for JetPack 6 needs cuDSS, which JetPack does not install: add NVIDIA's CUDA "
        "repository and install its cudss package, or stay on the torch 2.7 wheel, which does not need it."
    )
    if not jetpack6:
        return Remediation(
            text=text + " The package comes from NVIDIA's CUDA repository for this board's "
            "Ubuntu release (arm64).",
            target=Target.SYSTEM,
        )
    return Remediation(
        text=text,
        commands=(
            Command(("wget", CUDA_KEYRING_JP6), note="NVIDIA's CUDA repository key for Ubuntu 22.04 (arm64)"),
            Command(("sudo", "dpkg", "-i", "cuda-keyring_1.1-1_all.deb")),
            Command(("sudo", "apt-get", "update")),
            Command(("sudo", "apt-get", "-y", "install", "cudss"), note="libcudss.so.0, for torch 2.8"),
        ),
        needs_network=True,
        target=Target.SYSTEM,
    )


def board_cuda_missing_fix(library: str, cuda: str) -> Remediation:
    """The board's own CUDA library missing from the loader's path: find where its CUDA is, then put that
    folder in the loader's configuration; an image without JetPack's CUDA needs it installed first."""
    folder = f"/usr/local/cuda-{cuda}/lib64"
    return Remediation(
        text=f"Look for {library} under /usr/local/cuda-{cuda}. If it is there, add {folder} to the loader's "
        f"configuration (a file in /etc/ld.so.conf.d holding that line, then `sudo ldconfig`) or to "
        f"LD_LIBRARY_PATH. If it is not, this system has no CUDA {cuda}: on NVIDIA's JetPack image install its "
        "CUDA (`sudo apt install nvidia-jetpack`); a third-party image has to bring CUDA itself, or use the image "
        "the torch build was made for.",
        commands=(
            Command(("ls", folder), note=f"must list {library}"),
            Command(("ldconfig", "-p"), note=f"{library} must be listed once that folder is configured"),
        ),
        target=Target.SYSTEM,
    )
