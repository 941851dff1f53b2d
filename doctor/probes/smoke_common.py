# Shared by the smoke test's files (doctor/probes/smoke*.py), run by the *target* interpreter beside them as
# gpu_doctor_smoke_common.py. Standard library only; Python 3.7+ syntax. One copy of StepFailed for every file:
# a class defined in the main script would be a different class when a sibling imports it.
import json
import os
import re
import sys

MIB = 1 << 20
PROGRESS_EVERY_S = 0.1
# Relative error bound per element, as a multiple of the sum of |a_ik * b_kj| (a rounding-error bound that
# holds for any summation order): generous, because a broken GPU is wrong by whole values, not by ulps.
MATMUL_TOLERANCE = {"fp32": 1e-5, "tf32": 4e-3, "fp16": 4e-3, "bf16": 3e-2}
STICKY = (
    "illegal memory access",
    "unspecified launch failure",
    "device-side assert",
    "ECC error",
    "uncorrectable",
    "fell off the bus",
    "misaligned address",
    "illegal instruction",
)
# The longest the smoke test copies untimed before it times a transfer, waiting for a steady rate and a link at
# its top speed.
WARM_UP_S = 2.0
BDF = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def emit(item):
    sys.stdout.write(json.dumps(item) + "\n")
    sys.stdout.flush()


class StepFailed(Exception):
    def __init__(self, status, message, values=None):
        Exception.__init__(self, message)
        self.status = status
        self.values = values or {}


def pci_bus_id(props):
    domain, bus, device = (
        getattr(props, name, None) for name in ("pci_domain_id", "pci_bus_id", "pci_device_id")
    )
    if all(isinstance(v, int) for v in (domain, bus, device)):
        return "%04x:%02x:%02x.0" % (domain, bus, device)
    return None


UUID = re.compile(r"^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$")


def uuid_text(props):
    """The GPU's UUID as NVML and nvidia-smi write it: str(props.uuid) has no "GPU-" prefix (torch 2.11 on an
    H200: "753f0af4-7f35-..."), and older torch has no uuid field at all."""
    value = getattr(props, "uuid", None)
    if value is None:
        return None
    text = str(value)
    return "GPU-" + text if UUID.match(text) else text


def pci_address(props, index, known):
    """The GPU's PCI address: from its properties where this torch has the PCI fields (recent releases only);
    else from the parent's NVML list (`known`: {"uuid", "bdf"} per NVIDIA GPU) by UUID; else by position
    where torch numbers GPUs in PCI order and all are visible; else None."""
    found = pci_bus_id(props)
    if found:
        return found
    uuid = uuid_text(props)
    for gpu in known:
        if uuid and isinstance(gpu.get("uuid"), str) and gpu["uuid"].lower() == uuid.lower():
            return gpu.get("bdf")
    in_pci_order = os.environ.get("CUDA_DEVICE_ORDER") == "PCI_BUS_ID" or len(known) == 1
    if in_pci_order and os.environ.get("CUDA_VISIBLE_DEVICES") is None:
        addresses = sorted(g["bdf"] for g in known if isinstance(g.get("bdf"), str))
        if index < len(addresses):
            return addresses[index]
    return None


def is_oom(exc):
    return type(exc).__name__ == "OutOfMemoryError" or "out of memory" in str(exc).lower()


# Rows of the memory test checked at once; each row is MEMORY_COLS int32 words (4 MiB).
MEMORY_BATCH_ROWS = 64
MEMORY_COLS = 1 << 20


def memory_rows(free, share):
    """Rows of the memory test: `share` of the free memory, less what its verify pass allocates beside the block
    (the expected rows and their complement as int32, the comparison as bool: 576 MiB at 64 rows, plus 64 MiB
    for the allocator's rounding), so a GPU with a few GiB free is not run out of memory by the test itself."""
    temporaries = MEMORY_BATCH_ROWS * MEMORY_COLS * (4 + 4 + 1) + 64 * MIB
    usable = min(int(free * share), int(free) - temporaries)
    return max(1, usable // (4 * MEMORY_COLS))


def step_label(name, device, variant):
    """As the parent names a step (doctor/smoke/run.py _label): "transfer h2d_pinned on GPU 0"."""
    text = name
    if isinstance(variant, str):
        text += " " + variant
    if isinstance(device, int):
        text += " on GPU %d" % device
    return text


def write_step(path, label):
    """The running step, durably (fsync): the case it is for is a machine that never writes its caches back.
    A failure to write never stops the smoke test."""
    try:
        with open(path, "w") as handle:
            handle.write(label)
            handle.flush()
            os.fsync(handle.fileno())
    except (IOError, OSError):
        pass


def first_line(exc):
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
