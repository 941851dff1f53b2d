"""Pasted tool output → values: `nvidia-smi` (its table and `-q`), `pip list`, `pip freeze`, `conda list`, and
what paths and banners anywhere in a paste show: the Python version, a Windows machine.

Each parser reads the lines it recognises and leaves the rest; it returns the line numbers it used, so triage
can say which parts of a paste it read. Formats are those of real pastes (tests/triage/pastes/): the table of
drivers 418 to 580 (its column layout changed in 530), `nvidia-smi -q` key-value lines, pip's two-column
list, `name==version` freezes, and conda's four columns with a build string.
"""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.compat.extensions import load_extensions
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.triage.model import Library, distribution_name

# | NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |
_SMI_HEAD = lazy(
    r"NVIDIA-SMI\s+(?P<smi>[\d.]+)\s+Driver Version:\s*(?P<driver>[\d.]+)(?:\s+CUDA Version:\s*(?P<cuda>[\d.]+|N/A))?",
    re.IGNORECASE,
)
# |   0  NVIDIA GeForce RTX 4090    Off |   00000000:01:00.0  On |                  Off |
# Windows' table has the driver model where Linux's has persistence (microsoft/WSL#11865, ollama#8980):
# |   0  NVIDIA L40S                  TCC   |   00000000:61:00.0 Off |                    0 |
_SMI_GPU = lazy(
    r"^\|\s*(?P<index>\d{1,3})\s+(?P<name>.+?)\s+(?:On|Off|N/A|(?P<model>WDDM|TCC|MCDM))\s*\|\s*(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)\b"
)
# | 30%   35C    P8    22W / 350W |    5MiB / 24576MiB |      0%      Default |
_SMI_MEMORY = lazy(
    r"\|\s*(?P<used>\d+)\s*MiB\s*/\s*(?P<total>\d+)\s*MiB\s*\|(?:\s*(?P<util>\d{1,3})%)?"
    r"(?:\s+(?P<mode>Default|Prohibited|E\. Process|E\. Thread|Exclusive_Process|Exclusive_Thread)\b)?"
)
_SMI_Q = lazy(r"^(?P<key>[A-Za-z][A-Za-z0-9 .()/-]{1,40}?)\s*:\s*(?P<value>.*)$")
_Q_KEYS = {
    "driver version": "driver",
    "cuda version": "cuda",
    "product name": "name",
    "bus id": "bus",
    "attached gpus": "count",
}
# package names may start with "_" (conda's _libgcc_mutex, _pytorch_select)
_PIP_ROW = lazy(r"^(?P<name>[A-Za-z0-9_][A-Za-z0-9_.\-]*)\s+(?P<version>\d[^\s]*)(?:\s+(?P<where>\S.*))?$")
# `pip list`'s rows pasted without its header: a name, spaces, a version, then nothing or an editable
# install's folder ("mmdet   2.7.0   /home/ray/mmdetection"); read only as a run of several rows with torch in it
_BARE_PIP_ROW = lazy(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_.\-]*) +(?P<version>\d+(?:\.\d+)+[\w.+!-]*)(?: +(?P<where>(?:/|[A-Za-z]:\\)\S*))?$"
)
_BARE_LIST_ROWS = 5
_PIP_LIST_HEADER = lazy(r"^package\s+version\b")
_CONDA_LIST_COMMAND = lazy(r"\bconda list\b")
_FREEZE = lazy(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_.\-]*)\s*==\s*(?P<version>\S+)$")
_CONDA_ROW = lazy(
    r"^(?P<name>[A-Za-z0-9_][A-Za-z0-9_.\-]*)\s+(?P<version>\d[^\s]*)\s+(?P<build>\S+)(?:\s+(?P<channel>\S+))?\s*$"
)
# a `conda list` row read without its header (`conda list | grep torch`, one row quoted): a channel of
# torch's, or a build string of the pytorch channel ("py3.9_cpu_0", "py38_cu102", "cpu")
# a row of conda's install plan ("The following NEW packages will be INSTALLED:"): the name, then
# channel/subdir::name-version-build ("  pytorch   pytorch/win-64::pytorch-1.10.0-py3.6_cpu_0")
_CONDA_PLAN_ROW = lazy(
    r"^(?P<name>[A-Za-z0-9_][A-Za-z0-9_.\-]*)\s+[\w.\-]+(?:/[\w.\-]+)*::(?P=name)-(?P<version>\d[^\s-]*)-(?P<build>[^\s-]+)"
    r"(?:\s.*)?$"
)
_CONDA_CHANNELS = frozenset({"pytorch", "pytorch-nightly", "nvidia", "conda-forge", "defaults"})
_CONDA_BUILD = lazy(r"^(?:py\d\.?\d+_(?:cpu|cuda|cu\d)|cuda\d+(?:_|py)|cpu(?:_|$))")
# packages whose lines are worth reading from a list: torch's family and the conda packages that pick its
# variant, NVIDIA's wheels, frameworks on top
_RELEVANT = lazy(
    r"^(torch|torchvision|torchaudio|pytorch|pytorch-cuda|pytorch-mutex|cpuonly|_pytorch_select|cudatoolkit|"
    r"cuda-.*|nvidia-.*|triton|xformers|vllm|transformers|accelerate|deepspeed|bitsandbytes|flash-attn|jax|"
    r"jaxlib|tensorflow|numpy|cupy.*)$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class SmiGpu:
    index: int | None
    name: str
    bus_id: str | None  # as nvidia-smi prints it: 00000000:01:00.0
    memory_used_mib: int | None = None
    memory_total_mib: int | None = None
    utilization_pct: int | None = None  # GPU-Util, when the table shows it
    compute_mode: str | None = None  # "Compute M.": Default, Prohibited (no CUDA context), E. Process
    driver_model: str | None = None  # Windows' table only: WDDM, TCC or MCDM


@dataclass(frozen=True)
class SmiOutput:
    driver_version: str | None
    cuda_version: str | None  # "CUDA Version" in nvidia-smi's header: the newest CUDA the driver supports
    gpus: tuple[SmiGpu, ...]
    lines: tuple[int, ...]  # the line numbers read (1-based)
    cut: int | None = None  # the last GPU row, where the paste stops inside the table: more GPUs may follow
    processes: int | None = None  # the rows of its Processes block, where the paste shows that block whole


@dataclass(frozen=True)
class PackageListing:
    manager: str  # "pip" | "conda"
    packages: tuple[Library, ...]
    lines: tuple[int, ...]
    # True: only what pip said of a few packages (`pip show torch`, "Successfully installed", "Requirement
    # already satisfied"), never a list of what is installed: a package it does not name may well be there
    partial: bool = False


def _cells(line: str) -> str:
    return line.strip().strip("`").strip()


def parse_nvidia_smi(lines: list[str]) -> SmiOutput | None:
    """The table (header, GPU rows, memory) and `-q` key lines; None when neither is in the paste."""
    driver = cuda = None
    used: list[int] = []
    gpus: list[SmiGpu] = []
    q_name: str | None = None
    q_bus: str | None = None
    gpu_rows: list[int] = []
    for number, raw in enumerate(lines, start=1):
        line = _cells(raw)
        head = _SMI_HEAD.search(line)
        if head is not None:
            driver = driver or head["driver"]
            cuda = cuda or (head["cuda"] if head["cuda"] and head["cuda"] != "N/A" else None)
            used.append(number)
            continue
        row = _SMI_GPU.match(line)
        if row is not None:
            gpus.append(SmiGpu(int(row["index"]), row["name"].strip(), row["bus"], driver_model=row["model"]))
            used.append(number)
            gpu_rows.append(number)
            continue
        memory = _SMI_MEMORY.search(line)
        if memory is not None and gpus and gpus[-1].memory_total_mib is None and number - 1 in used:
            last = gpus[-1]
            util = int(memory["util"]) if memory["util"] else None
            gpus[-1] = dataclasses.replace(
                last,
                memory_used_mib=int(memory["used"]),
                memory_total_mib=int(memory["total"]),
                utilization_pct=util,
                compute_mode=memory["mode"],
            )
            used.append(number)
            continue
        q = _SMI_Q.match(line)
        key = _Q_KEYS.get(q["key"].strip().lower()) if q is not None else None
        if q is None or key is None:
            continue
        value = q["value"].strip()
        if key == "driver" and re.fullmatch(r"\d+\.\d+(\.\d+)?", value):
            driver = driver or value
        elif key == "cuda" and re.fullmatch(r"\d+\.\d+", value):
            cuda = cuda or value
        elif key == "name" and value and value != "N/A":
            q_name = value
        elif key == "bus" and re.fullmatch(r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d", value):
            q_bus = value
        else:
            continue
        used.append(number)
        if q_name is not None and q_bus is not None:  # one GPU's block of `nvidia-smi -q`
            gpus.append(SmiGpu(None, q_name, q_bus))
            q_name = q_bus = None
    if q_name is not None:
        gpus.append(SmiGpu(None, q_name, None))
    if driver is None and not gpus:
        return None
    return SmiOutput(
        driver, cuda, tuple(gpus), tuple(used), _cut_after(lines, gpu_rows), _process_rows(lines, gpu_rows)
    )


# the table's Processes block: "|  GPU   GI   CI        PID   Type   Process name   GPU Memory |", a ruler of "=",
# then a row per process ("|    0   N/A  N/A      1234      C   python   4000MiB |") or "No running processes
# found", and a closing border "+----...+"
_SMI_PROCESS_ROW = lazy(r"^\|\s*\d{1,3}\s+(?:N/A\s+N/A\s+|\d+\s+\d+\s+)?\d+\s+\S+\s+\S")


def _process_rows(lines: list[str], gpu_rows: list[int]) -> int | None:
    """The number of processes the table's Processes block lists after the GPU rows; None where the paste does
    not show that block from its header to its closing border."""
    start = gpu_rows[-1] if gpu_rows else None
    if start is None:
        return None
    header = next((n for n in range(start, len(lines)) if "Processes:" in lines[n]), None)
    if header is None:
        return None
    rows, ruled = 0, False
    for raw in lines[header + 1 :]:
        line = _cells(raw)
        if line.startswith(("|=", "+=")):
            ruled = True
        elif "No running processes found" in line:
            return 0
        elif ruled and line.startswith("+-"):
            return rows
        elif ruled and _SMI_PROCESS_ROW.match(line):
            rows += 1
    return None  # cut before the block's end


# `nvidia-smi topo -m`: a header naming the devices (GPU0 GPU1 ... NIC0 ..., then "CPU Affinity" and, since
# about driver 450, "NUMA Affinity"), then one row per device: its name, one cell per device, its affinities.
# Terminals underline the header, and triage.decode has removed those escapes; SOC is the word drivers before
# 384 print for SYS.
_TOPO_DEVICE = lazy(r"^(?:GPU\d+|NIC\d+|mlx\d+_\d+)$")
_TOPO_CELL = lazy(r"^(?:X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC)$")
_AFFINITY = lazy(r"[\d,-]+")


@dataclass(frozen=True)
class TopologyShown:
    """A pasted `nvidia-smi topo -m`: the cell of every pair of GPUs ("NV12", "PIX", ..., "SYS"), and each
    GPU's NUMA node and CPUs as the matrix's affinity columns give them."""

    gpus: tuple[int, ...]
    cells: dict[tuple[int, int], str]  # (a, b) with a < b
    numa: dict[int, str]  # GPU index -> its NUMA Affinity ("0"), where the matrix has the column
    cpus: dict[int, str]  # GPU index -> its CPU Affinity ("0-55,112-167")
    lines: tuple[int, ...]
    complete: bool = True  # a row for every GPU of the header (a paste cut inside the matrix has not)


def parse_topology(lines: list[str]) -> TopologyShown | None:
    """The first `nvidia-smi topo -m` matrix in the paste with two GPUs or more; None when there is none."""
    for number, raw in enumerate(lines, start=1):
        if "GPU1" not in raw:  # most lines of most pastes: no split for them
            continue
        head = raw.strip().strip("`").split()
        if len(head) < 2 or head[:2] != ["GPU0", "GPU1"]:
            continue
        devices = []
        for word in head:
            if not _TOPO_DEVICE.match(word):
                break
            devices.append(word)
        rest = " ".join(head[len(devices) :]).lower()
        has_numa = "numa affinity" in rest
        found = _topology_rows(lines, number, devices, has_numa)
        if found is not None:
            return found
    return None


def _topology_rows(lines: list[str], head: int, devices: list[str], has_numa: bool) -> TopologyShown | None:
    cells: dict[tuple[int, int], str] = {}
    numa: dict[int, str] = {}
    cpus: dict[int, str] = {}
    used = [head]
    for number in range(head + 1, min(len(lines), head + 1 + 2 * len(devices) + 2) + 1):
        words = lines[number - 1].strip().strip("`").split()
        if not words or not words[0].startswith("GPU") or words[0] not in devices:
            continue
        row = words[1 : 1 + len(devices)]
        if len(row) < len(devices) or not all(_TOPO_CELL.match(c) for c in row):
            continue
        index = int(words[0][3:])
        for device, cell in zip(devices, row, strict=True):
            if device.startswith("GPU") and int(device[3:]) != index and cell != "X":
                other = int(device[3:])
                cells[min(index, other), max(index, other)] = "SYS" if cell == "SOC" else cell
        after = words[1 + len(devices) :]
        if after and _AFFINITY.fullmatch(after[0]):
            cpus[index] = after[0]
            if has_numa and len(after) > 1 and _AFFINITY.fullmatch(after[1]):
                numa[index] = after[1]
        used.append(number)
    shown = sorted({i for pair in cells for i in pair})
    if len(shown) < 2:
        return None
    rows = len(used) - 1
    complete = rows == sum(1 for d in devices if d.startswith("GPU"))
    return TopologyShown(tuple(shown), cells, numa, cpus, tuple(used), complete)


def _cut_after(lines: list[str], gpu_rows: list[int]) -> int | None:
    """The last GPU row when no border closes its block: the paste (or the thread's excerpt) stops inside the
    table, and the GPUs after it are not shown. Each block is two or three rows, then a `+---` border."""
    if not gpu_rows:
        return None
    last = gpu_rows[-1]
    after = [_cells(line) for line in lines[last : last + 4]]
    return None if any(a.startswith(("+-", "|=", "+=")) for a in after) else last


# `pip show torch` (and `uv pip show`): "Name: torch" and, on the next line, "Version: 2.4.0+cu121"
_SHOW_NAME = lazy(r"^Name:\s*(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]*)\s*$")
_SHOW_VERSION = lazy(r"^Version:\s*(?P<version>[0-9][\w.+!-]*)\s*$")
_PIP_LIST_COMMAND = lazy(r"(?:^|[$#>%]\s*)(?:python3?\s+-m\s+)?pip3?\s+list\b")
# pip install's word on a package it keeps: "Requirement already satisfied: torch in ./lib/python3.8/site-packages
# (1.12.1+rocm5.1.1)", "... torch>=2.2.0 in ./.conda/lib/python3.10/site-packages (from lmcache) (2.5.0)"
_ALREADY_SATISFIED = lazy(
    r"^Requirement already satisfied:\s+(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]*)(?:\[[^\]]*\])?\S*\s+in\s+\S.*?"
    r"(?:\s+\(from [^)]*\))?\s+\((?P<version>[0-9][\w.+!-]*)\)\s*$"
)


def parse_package_lists(lines: list[str]) -> tuple[PackageListing, ...]:
    """`pip list` (after its "Package Version" header), `pip freeze` lines, and `conda list` (after its
    "# packages in environment" or "# Name" header); only the packages that matter for the GPU stack."""
    listings: list[PackageListing] = []
    mode: str | None = None
    found: list[Library] = []
    used: list[int] = []

    def close() -> None:
        if mode is not None and found:
            listings.append(PackageListing(mode, tuple(found), tuple(used)))

    freeze: list[Library] = []
    freeze_lines: list[int] = []
    said: list[Library] = []  # what pip said of single packages (see PackageListing.partial)
    said_lines: list[int] = []
    bare: list[tuple[int, re.Match[str], str]] = []  # a run of rows that look like `pip list`'s, no header

    def close_bare() -> None:
        if len(bare) >= _BARE_LIST_ROWS and any(row["name"].lower() == "torch" for _, row, _ in bare):
            kept = [(n, row, raw) for n, row, raw in bare if _relevant(row["name"])]
            listings.append(
                PackageListing(
                    "pip",
                    tuple(
                        Library("pip", distribution_name(row["name"]), row["version"], None, raw)
                        for _, row, raw in kept
                    ),
                    tuple(n for n, _, _ in kept),
                )
            )
        bare.clear()

    for number, raw in enumerate(lines, start=1):
        line = _cells(raw).lstrip("> ").strip()
        lowered = line.lower()
        if mode is None:
            row = _BARE_PIP_ROW.match(line)
            if row is not None:
                bare.append((number, row, raw))
                continue
            close_bare()
        if _PIP_LIST_HEADER.match(lowered) or _PIP_LIST_COMMAND.search(lowered):
            close()  # the header, or the command itself: "$ pip list | grep torch" prints no header
            mode, found, used = "pip", [], [number]
            continue
        if lowered.startswith(("# packages in environment", "# name ")) or _CONDA_LIST_COMMAND.search(
            lowered
        ):
            close()
            mode, found, used = "conda", [], [number]
            continue
        if line.startswith("Successfully installed ") or " Successfully installed " in line:
            # pip's own last line: "Successfully installed numpy-1.26.4 torch-2.4.0+cu121"
            for word in line.split("Successfully installed ", 1)[1].split():
                name, _, release = word.strip("`").rpartition("-")
                if name and release[:1].isdigit() and _relevant(name):
                    said.append(Library("pip", distribution_name(name), release, None, raw))
                    said_lines.append(number)
            continue
        kept = _ALREADY_SATISFIED.match(line) if line.startswith("Requirement already satisfied") else None
        if kept is not None:
            if _relevant(kept["name"]):
                said.append(Library("pip", distribution_name(kept["name"]), kept["version"], None, raw))
                said_lines.append(number)
            continue
        shown = _SHOW_NAME.match(line)
        version = (
            _SHOW_VERSION.match(_cells(lines[number]).strip()) if shown and number < len(lines) else None
        )
        if shown is not None and version is not None:  # pip show's block: read like a freeze line
            if _relevant(shown["name"]):
                said.append(Library("pip", distribution_name(shown["name"]), version["version"], None, raw))
                said_lines.append(number)
            continue
        pinned = _FREEZE.match(line)
        if pinned is not None:
            if _relevant(pinned["name"]):
                freeze.append(Library("pip", distribution_name(pinned["name"]), pinned["version"], None, raw))
                freeze_lines.append(number)
            continue
        # (an UPDATED or DOWNGRADED row, "old --> new", names two builds: neither is read as the one installed)
        planned = _CONDA_PLAN_ROW.match(line) if mode is None and "::" in line and "-->" not in line else None
        if planned is not None:
            if _relevant(planned["name"]):
                library = Library(
                    "conda", distribution_name(planned["name"]), planned["version"], planned["build"], raw
                )
                listings.append(PackageListing("conda", (library,), (number,)))
            continue
        orphan = _CONDA_ROW.match(line) if mode is None else None
        if orphan is not None and _relevant(orphan["name"]) and _conda_row(orphan):
            listings.append(
                PackageListing(
                    "conda",
                    (
                        Library(
                            "conda",
                            distribution_name(orphan["name"]),
                            orphan["version"],
                            orphan["build"],
                            raw,
                        ),
                    ),
                    (number,),
                )
            )
            continue
        if mode is None or not line or set(line) <= {"-", " "} or line.startswith("#"):
            continue
        row = (_CONDA_ROW if mode == "conda" else _PIP_ROW).match(line)
        if row is None:
            close()
            mode = None
            continue
        if _relevant(row["name"]):
            build = row["build"] if mode == "conda" else None
            found.append(Library(mode, distribution_name(row["name"]), row["version"], build, raw))
            used.append(number)
    close()
    close_bare()
    if freeze:
        listings.append(PackageListing("pip", tuple(freeze), tuple(freeze_lines)))
    if said:
        listings.append(PackageListing("pip", tuple(said), tuple(said_lines), partial=True))
    return tuple(listings)


def _relevant(name: str) -> bool:
    """torch's family and what picks its variant, or a package compiled against torch (compat/extensions.json:
    mmcv-full, flash-attn, detectron2), whose version a rebuild or its wheel page needs."""
    return _RELEVANT.match(name) is not None or load_extensions().by_pip_name(name) is not None


def _conda_row(row: re.Match[str]) -> bool:
    return row["channel"] in _CONDA_CHANNELS or bool(_CONDA_BUILD.match(row["build"]))


# ldd's output for a CUDA library: "\tlibnvJitLink.so.12 => /usr/local/cuda-12.1/lib64/libnvJitLink.so.12 (0x...)"
_LDD = lazy(
    r"^(?P<name>lib(?:cuda|cudart|cudnn[a-z_]*|cublas|cublasLt|nccl|nvJitLink|nvrtc|cusparse|cufft|curand|cusolver|"
    r"nvidia-ml)\.so[.0-9]*)\s+=>\s+(?P<path>/\S+)"
)
# torch >= 2.10's capability warning lists what the build covers: "- 7.5 which supports hardware CC >=7.5,<8.0"
_BUILT_FOR = lazy(r"^-\s*(?P<major>\d{1,2})\.(?P<minor>\d)\s+which supports hardware CC\b", re.IGNORECASE)


@dataclass(frozen=True)
class LinkedLibrary:
    name: str  # libnvJitLink
    path: str  # where the loader found it
    line: int


def parse_ldd(lines: list[str]) -> tuple[LinkedLibrary, ...]:
    """The CUDA libraries in pasted `ldd` output, with where the loader resolved each."""
    found = []
    for number, raw in enumerate(lines, start=1):
        match = _LDD.match(raw.strip())
        if match is not None:
            found.append(LinkedLibrary(match["name"].split(".so")[0], match["path"], number))
    return tuple(found)


def parse_built_for(lines: list[str]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The sm_XY list of torch >= 2.10's capability warning, and its line numbers."""
    arch: list[str] = []
    used: list[int] = []
    for number, raw in enumerate(lines, start=1):
        match = _BUILT_FOR.match(raw.strip())
        if match is not None:
            sm = f"sm_{match['major']}{match['minor']}"
            if sm not in arch:
                arch.append(sm)
            used.append(number)
    return tuple(arch), tuple(used)


# Where a paste shows its Python without saying it: the interpreter's banner, xFormers' "(you have 3.10.9)",
# site-packages paths (/lib/python3.10/, \\Python310\\), extension and wheel file names (cpython-310, cp310).
_PYTHON_SHOWN = (
    lazy(r"\bPython\s+\d+\.\d+\.\d+\s+\(you have (?P<full>[23]\.\d{1,2}\.\d{1,3})\)"),
    lazy(r"\bPython-(?P<full>[23]\.\d{1,2}\.\d{1,3})\b"),
    lazy(r"\bPython (?P<full>[23]\.\d{1,2}\.\d{1,3})\+? \((?:tags|main|default|heads)\b"),
    lazy(r"[/\\]lib(?:64)?[/\\]python(?P<major>[23])\.(?P<minor>\d{1,2})[/\\]", re.IGNORECASE),
    lazy(r"[/\\]python(?P<major>3)(?P<minor>\d{1,2})[/\\]", re.IGNORECASE),
    lazy(r"\bcpython-(?P<major>3)(?P<minor>\d{1,2})\b"),
    lazy(r"\bcp(?P<major>3)(?P<minor>\d{1,2})(?=m?\b)"),
)
# conda build strings carry the environment's Python: "py3.9_cpu_0", "py38_cu102", "py37h7f8727e_0", "cuda118py310h…"
_CONDA_PY = lazy(r"(?:^|_|\d)py(?P<major>[23])\.?(?P<minor>\d{1,2})(?=_|h[0-9a-f]|$)")
# A Windows path ("C:\Users\...", "E:\lama\installer\lib"); not one quoted in Linux ("/mnt/c/...")
_WINDOWS_PATH = lazy(r"(?<![\w/\\])[A-Za-z]:\\[\w$.-]")
_WDDM = lazy(r"\bWDDM\b")  # Windows' display driver model: Linux's nvidia-smi never names it
_WSL = lazy(r"microsoft-standard|/usr/lib/wsl/|\bWSL", re.IGNORECASE)
MAX_PATH_LINE = 4000  # a longer line is a flood, not a traceback's path


@dataclass(frozen=True)
class PythonShown:
    version: str  # "3.10.11" from a banner, "3.10" from a path or file name
    line: int  # the first line that shows it
    text: str  # what shows it: "/lib/python3.10/", "py3.9_cpu_0"


def parse_python_shown(lines: list[str], libraries: tuple[Library, ...]) -> PythonShown | None:
    """The Python version the paste's paths, banners and conda build strings show, by majority when they
    disagree (a path of another interpreter); a banner's full version when it agrees."""
    seen: list[PythonShown] = []
    for number, raw in enumerate(lines, start=1):
        if (
            "cp3" not in raw and "python" not in raw.lower()
        ):  # what each pattern needs: most lines have neither
            continue
        for pattern in _PYTHON_SHOWN:
            for match in pattern.finditer(raw):
                found = match.groupdict()
                version = found.get("full") or f"{found['major']}.{found['minor']}"
                seen.append(PythonShown(version, number, match.group(0)))
    for lib in libraries:
        conda = _CONDA_PY.search(lib.build or "") if lib.manager == "conda" else None
        if conda is not None:
            number = next((n for n, raw in enumerate(lines, start=1) if raw == lib.raw), 0)
            seen.append(PythonShown(f"{conda['major']}.{conda['minor']}", number, lib.build or ""))
    if not seen and any(lib.manager == "conda" for lib in libraries):
        # a `conda list` whose torch rows are cut: its other packages' builds carry the Python too (never a
        # traceback's lines, whose ".py" would send each through the row pattern)
        for number, raw in enumerate(lines, start=1):
            row = _CONDA_ROW.match(raw.strip()) if "py" in raw else None
            conda = _CONDA_PY.search(row["build"]) if row is not None else None
            if conda is not None:
                seen.append(
                    PythonShown(f"{conda['major']}.{conda['minor']}", number, row["build"] if row else "")
                )
    if not seen:
        return None
    minors = [".".join(s.version.split(".")[:2]) for s in seen]
    minor = max(dict.fromkeys(minors), key=minors.count)  # the most shown; the first of a tie
    agreeing = [s for s, m in zip(seen, minors, strict=True) if m == minor]
    full = next((s for s in agreeing if s.version.count(".") == 2), None)
    first = min(agreeing, key=lambda s: s.line)
    return PythonShown(full.version if full else minor, first.line, first.text)


# A conda environment in a path: its prefix is what comes before lib/ (Linux) or Lib\\ (Windows) under an
# installation folder: ~/anaconda3/envs/NAME, C:\\Users\\me\\miniconda3, /opt/conda. The pattern finds the
# folder's name; the path's start is found back from it (a pattern with the whole path would be quadratic).
_CONDA_DIR = lazy(
    r"[\\/](?:anaconda3|miniconda3|anaconda|miniconda|miniforge3|miniforge|mambaforge|conda)"
    r"(?:[\\/]envs[\\/][\w.+-]+)?(?=[\\/](?:lib(?:64)?|Lib)[\\/])"
)
_PATH_START = lazy(r"(?:[A-Za-z]:\\|~?/)")
_PATH_ENDS = " \t\"'`(<,;="
_CONDA_WORDS = ("conda", "mambaforge", "miniforge")
# conda packages that choose conda's torch variant (names normalised: `_pytorch_select` is "-pytorch-select")
CONDA_VARIANT_SELECTORS = ("cpuonly", "pytorch-mutex", "-pytorch-select")


@dataclass(frozen=True)
class CondaShown:
    prefix: str  # the environment's folder; "" when only conda's ownership of torch shows (a `conda list`)
    line: int
    owns_torch: bool | None  # conda (not pip) installed torch there; None: the paste does not show which


def parse_conda_env(lines: list[str], libraries: tuple[Library, ...]) -> CondaShown | None:
    """The conda environment the paste's Python runs in: torch's own path first, any other path under a conda
    installation next; else a package list where conda, not pip, installed torch (its folder unknown)."""
    owner = _torch_owner(libraries)
    owns = None if owner is None else owner.manager == "conda"
    found: list[CondaShown] = []
    for number, raw in enumerate(lines, start=1):
        if len(raw) > MAX_PATH_LINE or not any(w in raw for w in _CONDA_WORDS):
            continue
        for match in _CONDA_DIR.finditer(raw):
            prefix = _path_before(raw, match.end())
            if prefix is None:
                continue
            shown = CondaShown(prefix, number, owns)
            if "site-packages" in raw[match.end() : match.end() + 40] and "torch" in raw[match.end() :]:
                return shown
            found.append(shown)
    if found:
        return found[0]
    if not owns or owner is None:
        return None
    return CondaShown("", next((n for n, raw in enumerate(lines, start=1) if raw == owner.raw), 0), True)


def _torch_owner(libraries: tuple[Library, ...]) -> Library | None:
    """Who installed torch, by the lists: pip's line (conda lists pip's packages as `pypi_0`), else conda's own
    build, or conda's variant selectors (`cpuonly`, `pytorch-mutex`, `_pytorch_select`), which exist only
    beside conda's torch. None: no list names torch."""
    torches = [lib for lib in libraries if lib.name in ("torch", "pytorch")]
    # conda lists pip's packages as `pypi_0`, older conda as `<pip>`
    pip = [lib for lib in torches if lib.manager == "pip" or (lib.build or "").startswith(("pypi", "<pip>"))]
    conda = [
        lib
        for lib in libraries
        if lib.manager == "conda"
        and lib.build
        and lib not in pip
        and lib.name in ("torch", "pytorch", *CONDA_VARIANT_SELECTORS)
    ]
    built = [lib for lib in conda if lib.name in ("torch", "pytorch")]
    if pip and built and all(p.manager == "pip" and p.version == built[0].version for p in pip):
        # collect_env's "[pip3] torch==1.4.0" beside "[conda] pytorch 1.4.0 py3.8_cpu_0": pip lists the package
        # conda installed (its metadata is in site-packages); conda's own build says who installed it
        return built[0]
    return pip[0] if pip else conda[0] if conda else None


# The interpreter a site-packages path shows, for the pip command to name (ComfyUI's portable python_embeded, a
# project's venv, a Docker image's /usr/local): torch's own path first, else the first. Under <env>/lib/pythonX.Y/
# (Linux, macOS) the interpreter is <env>/bin/python; under <env>\Lib\ (Windows) it is <env>\Scripts\python.exe
# in a virtual environment and <env>\python.exe in an installed, portable or embedded Python or a conda env.
_SITE_PACKAGES = lazy(r"[\\/](?:lib(?:64)?/python3\.\d{1,2}|[Ll]ib)[\\/]site-packages[\\/]")
# the user site belongs to whichever Python runs; the system's own is what a bare `python` already is; the Nix
# store is read-only (pip cannot install there)
_NAMES_NONE = lazy(
    r"[\\/]\.local$|[\\/]\.local[\\/]|^/usr(?:/local)?$|^/nix/store/"
    # pip's isolated build environment (deleted when pip exits; its torch is not the user's), uv's and conda's caches
    r"|[\\/]pip-(?:build-env|req-build|install)-|[\\/]\.cache[\\/]uv[\\/]|[\\/]pkgs[\\/]"
)
# A line that is a path and nothing else: what `find`, `ls` or `locate` lists, which may be any Python's
_BARE_PATH = lazy(r"^\s*(?:/|[A-Za-z]:\\)\S*\s*$")
_VENV_NAME = lazy(r"^\.?(?:venv|env|virtualenv)[\w.-]*$|venv$", re.IGNORECASE)


@dataclass(frozen=True)
class InterpreterShown:
    path: str  # the interpreter's path, derived from its site-packages
    line: int
    prefix: str  # the environment's folder, as pasted


# A cmd prompt that runs a Python by its path: "C:\ComfyUI_windows_portable>.\python_embeded\python.exe -s
# ComfyUI\main.py" (the prompt's folder makes a relative path whole), "D:\ai>D:\ai\venv\Scripts\python.exe x.py"
_PROMPT_RUNS_PYTHON = lazy(
    r"^(?:\([\w.-]+\)[ \t]*)?(?:PS[ \t]+)?(?P<cwd>[A-Za-z]:\\[^<>|\"\n]*?)>[ \t]*"  # "(venv) PS C:\x> "
    r"(?P<exe>(?:\.\\|[A-Za-z]:\\)[^\s\"<>|]*?\\python(?:\.exe)?)(?=[ \t]|$)",
    re.IGNORECASE,
)


# `pip show`'s "Location: /home/me/proj/.venv/lib/python3.12/site-packages": the whole line is one path (a
# Windows one may hold spaces), ending in the site-packages folder itself
_PIP_LOCATION = lazy(
    r"^Location:[ \t]*(?P<prefix>(?:/|[A-Za-z]:\\)[^\n]*?)[\\/](?:lib(?:64)?/python3\.\d{1,2}|[Ll]ib)[\\/]"
    r"site-packages[ \t]*$"
)


def parse_interpreter_shown(lines: list[str]) -> InterpreterShown | None:
    """The Python a traceback's or an error's site-packages path belongs to (see _SITE_PACKAGES), or pip show's
    Location; else the one a cmd prompt in the paste runs by its path."""
    first: InterpreterShown | None = None
    prompt: InterpreterShown | None = None
    for number, raw in enumerate(lines, start=1):
        if len(raw) > MAX_PATH_LINE:
            continue
        located = _PIP_LOCATION.match(raw.strip()) if raw.startswith("Location:") else None
        if located is not None and _NAMES_NONE.search(located["prefix"]) is None:
            first = first or InterpreterShown(_interpreter(located["prefix"]), number, located["prefix"])
            continue
        if prompt is None and ">" in raw and "python" in raw.lower():
            ran = _PROMPT_RUNS_PYTHON.match(raw)
            if ran is not None:
                exe = ran["exe"]
                whole = ran["cwd"].rstrip("\\") + exe[1:] if exe.startswith(".\\") else exe
                folder = whole.rsplit("\\", 1)[0]
                env = folder[: -len("\\Scripts")] if folder.lower().endswith("\\scripts") else folder
                prompt = InterpreterShown(whole, number, env)
        if "site-packages" not in raw or _BARE_PATH.match(raw) is not None:
            continue
        for match in _SITE_PACKAGES.finditer(raw):
            prefix = _path_before(raw, match.start())
            if not prefix or _NAMES_NONE.search(prefix) is not None:  # "/lib/python3.8/..." alone: no prefix
                continue
            shown = InterpreterShown(_interpreter(prefix), number, prefix)
            if raw[match.end() : match.end() + 6] in ("torch/", "torch\\"):
                return shown
            first = first or shown
    return first or prompt


_DRIVE = lazy(r"(?<![\w:])[A-Za-z]:\\")
_NOT_IN_A_PATH = lazy(r'["<>|*?\t]|:\s')


def _path_before(raw: str, end: int) -> str | None:
    """The path that ends at `end`: from its opening quote when it is quoted (a Windows user name may hold a
    space), else from the last separator before it; None when that is not the start of a path."""
    quote = max(raw.rfind('"', 0, end), raw.rfind("'", 0, end))
    if quote >= 0 and _PATH_START.match(raw, quote + 1) is not None and " " in raw[quote + 1 : end]:
        return raw[quote + 1 : end]
    begin = max(raw.rfind(c, 0, end) for c in _PATH_ENDS) + 1
    if _PATH_START.match(raw, begin) is None:
        # an unquoted Windows path with a space in a folder's name ("A:\Sin Sincronización\Chrome\ComfyUI_
        # windows_portable\python_embeded\Lib\site-packages\torch\..."): from its drive letter, when nothing
        # between could not be in a path
        drive = [m for m in _DRIVE.finditer(raw, 0, end) if not _NOT_IN_A_PATH.search(raw, m.start(), end)]
        return raw[drive[-1].start() : end] if drive else None  # the nearest: a drive colon ends any path
    return raw[begin:end]


def _interpreter(prefix: str) -> str:
    if "\\" not in prefix:
        return f"{prefix}/bin/python"
    name = prefix.rstrip("\\").rsplit("\\", 1)[-1]
    return f"{prefix}\\Scripts\\python.exe" if _VENV_NAME.search(name) else f"{prefix}\\python.exe"


# A Python session pasted as it ran: the prompt and its answer (`>>> torch.cuda.is_available()` then `False`;
# IPython's `In [2]: torch.cuda.is_available()` then `Out[2]: False`). What torch says of itself there is a fact.
_PROMPT = lazy(r"^\s*(?:>>>|In \[\d+\]:)\s?(?P<expr>.*?)\s*$")
_ANSWER = lazy(r"^\s*(?:Out\[\d+\]:\s?)?(?P<value>.*?)\s*$")
_WARNING = lazy(r"\b\w*Warning: ")  # Python's warnings.warn() line: "path:88: UserWarning: ..."
_ASKED = {  # torch's own answers a paste shows, by what was asked (print(...) stripped)
    "torch.__version__": "version",
    "torch.version.cuda": "cuda",
    "torch.cuda.is_available()": "available",
    "torch.cuda.device_count()": "devices",
    "torch.cuda.get_device_name()": "device_name",
    "torch.cuda.get_device_name(0)": "device_name",
    "torch.__file__": "path",
    "torch.cuda.get_arch_list()": "arch_list",
}


@dataclass(frozen=True)
class SessionAnswers:
    """torch's answers in a pasted Python session (None: not asked); `cuda` is "" when torch.version.cuda was
    None (a CPU build)."""

    version: str | None = None
    cuda: str | None = None
    available: bool | None = None
    devices: int | None = None
    device_name: str | None = None
    path: str | None = None
    arch_list: tuple[str, ...] | None = None
    built: bool | None = (
        None  # "PyTorch built with CUDA: False" (torch.backends.cuda.is_built()): the CPU build
    )
    lines: tuple[int, ...] = ()
    # every answer in the paste's order, (line, what, value): a paste may hold two sessions, one where CUDA works
    # and one where it does not (the fields above keep the first answer of each)
    every: tuple[tuple[int, str, object], ...] = ()


# The same answers printed by a person's own check script, one labelled line each: "torch version = 2.2.1+rocm5.7",
# "cuda version = None", "torch.cuda.is_available()： True", "查看torch版本： 0.4.1", "torch方法查看CUDA版本： 9.2.148"
# (RCAN#143). Only labels that name torch (or its attribute) for the version and CUDA, "available" beside CUDA
# for is_available(): a bare "CUDA Version: 12.2" is nvidia-smi's, the driver's CUDA, not torch's.
_LABELLED = lazy(
    r"^\s*[-*]?\s*(?P<label>[^\n:：=]{3,40}?)\s*(?:[:：=]|\s->)\s*(?P<value>[^\s:：=][^\n]{0,40}?)\s*$"
)
_LABELS = (
    (
        "version",
        lazy(r"^(?:print\()?torch\.__version__\)?$|^\W*(?:查看)?(?:py)?torch[ \t_]*(?:version|版本)$", re.I),
    ),
    (
        "cuda",
        lazy(
            r"^(?:print\()?torch\.version\.cuda\)?$|^(?:torch|pytorch)\S*[ \t_]*cuda[ \t_]*(?:version|版本)$|^cuda version$",
            re.I,
        ),
    ),
    (
        "available",
        lazy(
            r"^(?:print\()?torch\.cuda\.is_available\(\)\)?$"
            r"|^(?:(?:py)?torch[ \t_-]+(?:detects[ \t_]+)?)?(?:is[ \t_]+)?cuda[ \t_]+(?:is[ \t_]+)?available$",
            re.I,
        ),
    ),
    (  # "PyTorch built with CUDA: False" (a cluster's check script, blind set 25): the CPU build, said by torch
        "built",
        lazy(r"^(?:py)?torch[ \t_]+(?:was[ \t_]+|is[ \t_]+)?(?:built|compiled)[ \t_]+with[ \t_]+cuda$", re.I),
    ),
)


_COLLECT_ENV_LABELS = frozenset({"pytorch version", "is cuda available", "cuda used to build pytorch"})


def _labelled(lines: list[str]) -> tuple[dict[str, tuple[object, int]], list[tuple[int, str, object]]]:
    """A check script's labelled answers (see _LABELLED): the first of each, with its line number; and all of
    them, (line, what, value)."""
    found: dict[str, tuple[object, int]] = {}
    every: list[tuple[int, str, object]] = []
    for number, raw in enumerate(lines, start=1):
        if len(raw) > 100 or ("torch" not in raw.lower() and "cuda" not in raw.lower()):
            continue
        line = _LABELLED.match(raw)
        if line is None:
            continue
        label = line["label"].strip().strip("`*").strip()
        if label.lower() in _COLLECT_ENV_LABELS:
            continue  # a collect_env report's own row: its parser reads it
        for what, pattern in _LABELS:
            if pattern.search(label) is None:
                continue
            value = _answer(what, line["value"])
            if value is not None:
                found.setdefault(what, (value, number))
                every.append((number, what, value))
    return found, every


def parse_session(lines: list[str]) -> SessionAnswers | None:
    """torch's answers in a pasted interactive session (or a check script's labelled printout); None when the
    paste has none."""
    found: dict[str, object] = {}
    used: list[int] = []
    every: list[tuple[int, str, object]] = []
    for number, raw in enumerate(lines[:-1], start=1):
        if ">>>" not in raw and "In [" not in raw:
            continue
        prompt = _PROMPT.match(raw)
        if prompt is None:
            continue
        expr = prompt["expr"].replace(" ", "")
        expr = expr[len("print(") : -1] if expr.startswith("print(") and expr.endswith(")") else expr
        what = _ASKED.get(expr)
        answer = _ANSWER.match(lines[number])  # the next line
        if what is None or answer is None or _PROMPT.match(lines[number]) is not None:
            continue
        value = _answer(what, answer["value"])
        at = number + 1  # 1-based: the answer's line
        if value is None and _WARNING.search(lines[number]):
            # torch's warning printed on the way to the answer ("...: UserWarning: HIP initialization: ...",
            # maybe "  return torch._C._cuda_getDeviceCount() > 0", then "False"): the first unindented line
            after = next(
                (i for i in range(number + 1, min(number + 4, len(lines))) if not lines[i].startswith(" ")),
                None,
            )  # a 0-based index
            shown = _ANSWER.match(lines[after]) if after is not None else None
            value = _answer(what, shown["value"]) if shown is not None else None
            at = (after or 0) + 1
        if value is not None:
            found.setdefault(what, value)
            used += [number, at]
            every.append((at, what, value))
    labelled, every_labelled = _labelled(lines)
    if "cuda" in labelled and "version" not in {**found, **labelled}:
        del labelled[
            "cuda"
        ]  # "cuda version = 12.1" alone may be anyone's CUDA: torch's only beside its version
    for what, (value, number) in labelled.items():
        found.setdefault(what, value)
        used.append(number)
    if not found:
        return None
    answers = tuple(sorted({*every, *every_labelled}, key=lambda a: a[0]))
    return SessionAnswers(**found, lines=tuple(used), every=answers)  # type: ignore[arg-type]


def _answer(what: str, text: str) -> object:
    """The typed answer, or None when the line is not one (a traceback, an empty line)."""
    value = text.strip().strip("'\"")
    if what == "available":
        return {"True": True, "False": False}.get(value)
    if what == "built":
        return {"True": True, "False": False}.get(value)
    if what == "devices":
        return int(value) if value.isdigit() else None
    if what == "cuda":  # "11.8", or the full "9.2.148" torch 0.4 printed: its major.minor
        full = re.fullmatch(r"(\d+\.\d+)(?:\.\d+)?", value)
        return "" if value == "None" else full[1] if full is not None else None
    if what == "version":
        return value if re.fullmatch(r"\d+\.\d+(?:\.\d+)?\S*", value) else None
    if what == "arch_list":
        arch = re.findall(r"sm_\d+a?|compute_\d+", value)
        return tuple(arch) if arch else None
    return value or None


# `python -m xformers.info`: its version, one "name: status" row per operator, then torch's and the GPU's rows
_XF_HEAD = lazy(r"^\s*xFormers\s+(?P<version>\d[\w.+-]*)\s*$")
_XF_ROW = lazy(r"^\s*(?P<key>[a-z][\w.-]*(?:@[\w.+-]+)?)\s*:\s+(?P<value>\S.*?)\s*$")


@dataclass(frozen=True)
class XformersInfo:
    version: str
    attention: tuple[tuple[str, str], ...]  # memory_efficient_attention operators and their status
    torch_version: str | None  # pytorch.version: the torch it runs with
    built_for: str | None  # build.torch_version: the torch it was built for (newer releases print it)
    cuda: bool | None  # pytorch.cuda: available
    gpu_name: str | None
    lines: tuple[int, ...]

    @property
    def attention_works(self) -> bool:
        """At least one memory-efficient attention operator loaded (ROCm builds have ck*, CUDA ones cutlass)."""
        return any(status == "available" for _, status in self.attention)


def parse_xformers_info(lines: list[str]) -> XformersInfo | None:
    """The first `python -m xformers.info` table in the paste, or None."""
    start = next((n for n, raw in enumerate(lines) if "xFormers" in raw and _XF_HEAD.match(raw)), None)
    if start is None:
        return None
    rows: dict[str, str] = {}
    used = [start + 1]
    for number, raw in enumerate(lines[start + 1 : start + 200], start=start + 2):
        row = _XF_ROW.match(raw)
        if row is None:
            break
        rows.setdefault(row["key"], row["value"])
        used.append(number)
    attention = tuple(
        (key.removeprefix("memory_efficient_attention."), value)
        for key, value in rows.items()
        if key.startswith("memory_efficient_attention.")
    )
    if not attention:
        return None
    cuda = rows.get("pytorch.cuda")
    return XformersInfo(
        version=_XF_HEAD.match(lines[start])["version"],  # type: ignore[index]
        attention=attention,
        torch_version=rows.get("pytorch.version"),
        built_for=rows.get("build.torch_version"),
        cuda=None if cuda is None else cuda == "available",
        gpu_name=rows.get("gpu.name"),
        lines=tuple(used),
    )


def windows_path_line(lines: list[str]) -> int | None:
    """The first line with a Windows path, or with what only Windows' nvidia-smi prints (its TCC/WDDM column,
    "...and NVIDIA GPU is in WDDM mode." after a failure), in a paste that shows no WSL."""
    if any(_WSL.search(raw) for raw in lines):
        return None
    return next(
        (n for n, raw in enumerate(lines, start=1) if _WINDOWS_PATH.search(raw) or _WDDM.search(raw)), None
    )


# A shell inside a container: Docker's default hostname is the container id's first 12 hex digits
# (`root@185d009a60c8:/workspace#`), a JupyterHub user's pod is named jupyter-<user> by KubeSpawner
# (`moscardo@jupyter-moscardo:/$`), or the command that opened it (`docker exec -it NAME bash`)
_CONTAINER_SHELL = lazy(
    r"^\s*(?:\(\S+\)\s*)?\w[\w.-]*@(?:[0-9a-f]{12}|jupyter-[\w.-]+):|\b(?:docker|podman|nerdctl) (?:exec|run)\b"
    r"|\bkubectl exec\b"
)


# `docker run` / `podman run` typed without a way to pass the GPUs in (--gpus, the nvidia runtime, CDI devices);
# the old `nvidia-docker run` passes them by itself
_RUN = lazy(r"\b(?:docker|podman)\s+run\b")
_GPU_FLAGS = lazy(r"--gpus\b|--runtime[= ]nvidia\b|--device[= ]\S*nvidia\.com/gpu|nvidia-docker\b")


def run_without_gpus_line(lines: list[str]) -> int | None:
    """The first container start the paste shows that passes no GPU in: the command with the lines a trailing
    backslash (sh), backtick (PowerShell) or caret (cmd) continues it on, where --gpus often stands."""
    for number, raw in enumerate(lines, start=1):
        if _RUN.search(raw) is None:
            continue
        command = [raw]
        while command[-1].rstrip().endswith(_CONTINUED) and number + len(command) - 1 < len(lines):
            command.append(lines[number + len(command) - 1])
            if len(command) > MAX_CONTINUED:
                break
        if _GPU_FLAGS.search(" ".join(command)) is None:
            return number
    return None


# A Docker Compose service as pasted: its `image:` key among the service's own keys (two at least, so that one
# YAML line of another file is not a service); a GPU request in it is any of the ways compose passes GPUs in
_COMPOSE_IMAGE = lazy(r"^(?P<indent>[ \t]+)image:[ \t]*\S")
_COMPOSE_KEYS = lazy(
    r"^[ \t]+(?:container_name|environment|volumes|ports|restart|networks|command|env_file|depends_on|healthcheck):"
)
_COMPOSE_GPU = lazy(
    r"driver:[ \t]*[\"']?nvidia|capabilities:|runtime:[ \t]*[\"']?nvidia|^[ \t]+gpus:|NVIDIA_VISIBLE_DEVICES"
    r"|nvidia\.com/gpu|/dev/nvidia",
    re.IGNORECASE,
)
_COMPOSE_INHERITS = lazy(r"^[ \t]*(?:<<:|extends:)")
MAX_SERVICE_LINES = 80  # lines of one service: longer is not a pasted compose service


def compose_without_gpus_line(lines: list[str]) -> int | None:
    """The `image:` line of the first Docker Compose service the paste shows whose definition requests no GPU
    (no `deploy.resources.reservations.devices` with the nvidia driver, no `runtime: nvidia`, no `gpus:`, no
    device): a container that starts with no NVIDIA driver in it, whatever the host has (blind set 31,
    docker-faster-whisper#56)."""
    for number, raw in enumerate(lines, start=1):
        found = _COMPOSE_IMAGE.match(raw)
        if found is None:
            continue
        depth = len(found["indent"].expandtabs())
        start = number - 1
        while start > 0 and number - start < MAX_SERVICE_LINES:  # up to the service's name (less indented)
            above = lines[start - 1]
            if above.strip() and len(above.expandtabs()) - len(above.expandtabs().lstrip()) < depth:
                break
            start -= 1
        end = number
        while end < len(lines) and end - number < MAX_SERVICE_LINES:  # down to the next less indented line
            below = lines[end]
            if below.strip() and len(below.expandtabs()) - len(below.expandtabs().lstrip()) < depth:
                break
            end += 1
        service = lines[start:end]
        if sum(1 for line in service if _COMPOSE_KEYS.match(line)) < 2:
            continue
        if any(_COMPOSE_INHERITS.match(line) for line in service):
            return None  # keys from an anchor or another file (`<<: *gpu`, `extends:`): what it requests is unseen
        if not any(_COMPOSE_GPU.search(line) for line in service):
            return number
    return None


_CONTINUED = ("\\", "`", "^")
MAX_CONTINUED = 60  # lines of one command: a longer run of continuations is not one person's command


# docker compose's log lines: the service's container name ("worker_1" in compose 1, "worker-1" in 2), a bar
_COMPOSE_LOG = lazy(r"^\s*(?P<service>[a-z0-9][\w.-]*[-_]\d+)\s+\|(?:\s|$)")
COMPOSE_LOG_LINES = 3  # one line of that shape could be a table's


def container_shell_line(lines: list[str]) -> int | None:
    """The first line that shows the commands ran in a container: its shell, or docker compose's log lines."""
    shell = next((n for n, raw in enumerate(lines, start=1) if _CONTAINER_SHELL.search(raw)), None)
    services: dict[str, list[int]] = {}
    for number, raw in enumerate(lines, start=1):
        logged = _COMPOSE_LOG.match(raw)
        if logged is not None:
            services.setdefault(logged["service"], []).append(number)
    compose = min((n[0] for n in services.values() if len(n) >= COMPOSE_LOG_LINES), default=None)
    return min((n for n in (shell, compose) if n is not None), default=None)


# CUDA samples' p2pBandwidthLatencyTest: "Device: 0, NVIDIA RTX A6000, pciBusID: 3, ...", then bandwidth matrices,
# each a title ("Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)", "Unidirectional P2P=Enabled Bandwidth (P2P
# Writes) Matrix (GB/s)"), a header row "   D\D     0      1 ..." and a row per device of GB/s figures.
_P2P_DEVICE = lazy(r"^\s*Device:\s*(?P<index>\d+),\s*(?P<name>[^,\n]+?),\s*pciBusID")
_P2P_TITLE = lazy(r"^\s*Unidirectional P2P=(?P<mode>Disabled|Enabled) Bandwidth\b")
_P2P_HEAD = lazy(r"^\s*D\\D(?:\s+\d+)+\s*$")
_P2P_ROW = lazy(r"^\s*(?P<row>\d+)(?P<cells>(?:\s+\d+(?:\.\d+)?)+)\s*$")


@dataclass(frozen=True)
class P2pTest:
    """A pasted p2pBandwidthLatencyTest: each pair's unidirectional GB/s without and with peer-to-peer."""

    names: dict[int, str]  # device index -> its name
    pairs: dict[tuple[int, int], tuple[float, float]]  # (from, to) -> (P2P disabled, P2P enabled)
    lines: tuple[int, ...]

    def slow_pairs(self) -> list[tuple[int, int]]:
        """The pairs whose peer-to-peer copies are less than half as fast as the copies through the host."""
        return [pair for pair, (off, on) in self.pairs.items() if on < off / 2]


def parse_p2p_test(lines: list[str]) -> P2pTest | None:
    """The unidirectional matrices of a pasted p2pBandwidthLatencyTest; None without both of them."""
    if not any("P2P=" in line for line in lines):  # most pastes: none of it
        return None
    names: dict[int, str] = {}
    matrices: dict[str, dict[tuple[int, int], float]] = {}
    used: list[int] = []
    mode: str | None = None
    for number, raw in enumerate(lines, start=1):
        device = _P2P_DEVICE.match(raw)
        if device is not None:
            names[int(device["index"])] = device["name"].strip()
            used.append(number)
            continue
        title = _P2P_TITLE.match(raw)
        if title is not None:
            mode = title["mode"] if title["mode"] not in matrices else None
            if mode is not None:
                matrices[mode] = {}
                used.append(number)
            continue
        if mode is None:
            continue
        if _P2P_HEAD.match(raw):
            used.append(number)
            continue
        row = _P2P_ROW.match(raw)
        if row is None:
            mode = None  # the matrix ended
            continue
        for column, cell in enumerate(row["cells"].split()):
            matrices[mode][int(row["row"]), column] = float(cell)
        used.append(number)
    off, on = matrices.get("Disabled", {}), matrices.get("Enabled", {})
    pairs = {pair: (off[pair], on[pair]) for pair in off if pair in on and pair[0] != pair[1]}
    if not pairs:
        return None
    return P2pTest(names, pairs, tuple(used))
