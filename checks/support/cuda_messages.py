"""What torch's CUDA initialisation messages mean, in plain words, and where the fix is.

The raw text is always shown too; this table only explains it. Sources: compat.md §6 (PyTorch's own texts
in c10/cuda/CUDAFunctions.cpp), and CUDA's runtime error names for the numbered `Error NNN:` forms, which
torch prints after "Unexpected error from cudaGetDeviceCount()".
"""

from __future__ import annotations

from torch_gpu_doctor.checks.support.signatures import explain as catalogue_explain
from torch_gpu_doctor.records import dataclass


@dataclass(frozen=True)
class Meaning:
    pattern: str  # a case-insensitive substring of the message
    meaning: str


MEANINGS = (
    Meaning(
        "driver on your system is too old",
        "The driver is older than the CUDA this torch was built for (see torch.driver_compat for the two fixes).",
    ),
    Meaning(
        "found no nvidia driver",
        "torch could not load libcuda.so.1: no driver is installed or loaded, a container was started without "
        "the NVIDIA runtime, or WSL2 has no Windows driver.",
    ),
    Meaning(
        "error 803",
        "The libcuda the program loaded and the loaded kernel module are different versions: usually a driver "
        "update without a reboot, sometimes a foreign libcuda (cuda-compat, a container's copy) found first.",
    ),
    Meaning(
        "error 804",
        "CUDA forward compatibility was attempted on a GPU that does not support it (only data-centre GPUs "
        "do): a forward-compatibility libcuda (a cuda-compat package's, a container image's) was loaded in place "
        "of the driver's, or a driver was updated without a reboot.",
    ),
    Meaning(
        "error 802",
        "The system is not ready: on NVSwitch machines (HGX, DGX) the nvidia-fabricmanager service must run, "
        "at the same version as the driver.",
    ),
    Meaning(
        "error 100",
        "CUDA sees no device: CUDA_VISIBLE_DEVICES hides every GPU, or the container has no /dev/nvidia* "
        "devices (see env.cuda_visible_devices).",
    ),
    Meaning(
        "error 34",
        "A CUDA toolkit's stub libcuda.so (from .../stubs) shadows the real driver library: remove the stubs "
        "directory from LD_LIBRARY_PATH (see env.library_path).",
    ),
    Meaning(
        "error 999",
        "An unknown CUDA error, most often after suspend and resume: reload the nvidia_uvm module or reboot.",
    ),
    Meaning(
        "cuda driver initialization failed",
        "The driver is there but failed to start: look at `nvidia-smi` and the kernel log (Xid errors).",
    ),
    Meaning("not compiled with cuda", "This torch is a CPU-only build (see torch.cpu_build)."),
)


def explain(message: str) -> str | None:
    """The plain-words meaning of a CUDA initialisation message, or None when it is not a known one: this
    table's, which point at the check with the fix, else the signature catalogue's."""
    lowered = message.lower()
    found = next((m.meaning for m in MEANINGS if m.pattern in lowered), None)
    if found is not None:
        return found
    signature = catalogue_explain(message)
    return signature.means if signature is not None else None
