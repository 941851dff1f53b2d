"""NVIDIA driver version and the newest CUDA it supports, from every source that answers.

Order (DESIGN / issue 1): NVML, /sys/module/nvidia/version, /proc/driver/nvidia/version, nvidia-smi.
Every reading is kept, so checks can show the evidence and notice sources that disagree.
"""

from __future__ import annotations

import re

from torch_gpu_doctor.compat import load_matrix
from torch_gpu_doctor.facts.nvml import NvmlFacts
from torch_gpu_doctor.host.base import Host
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Maybe, Reason, Unavailable


@dataclass(frozen=True)
class DriverVersionReading:
    source: str  # "nvml" | "sysfs" | "procfs" | "nvidia-smi"
    origin: str  # the file, call or command it came from
    version: Maybe[str]


@dataclass(frozen=True)
class DriverFacts:
    version: Maybe[str]  # the first source that answered, in DESIGN order
    version_source: str | None
    readings: tuple[DriverVersionReading, ...]
    kernel_module_flavor: Maybe[str]  # "open" | "proprietary" (from /proc/driver/nvidia/version)
    is_jetson: bool  # L4T: the version is an L4T release, not a desktop driver branch
    cuda_version: Maybe[str]  # newest CUDA the driver supports, e.g. "12.4"
    cuda_version_source: str | None  # "nvml" | "nvidia-smi" | "compat table"
    userspace_version: Maybe[str]  # version of the libnvidia-ml.so.1 user-space library
    userspace_library: Maybe[str]  # its resolved path
    installed_module_version: Maybe[str]  # `modinfo -F version nvidia`: built for the running kernel
    nvidia_smi: str | None  # path, if on PATH


PROC_VERSION = "/proc/driver/nvidia/version"
SYS_MODULE_VERSION = "/sys/module/nvidia/version"
NVIDIA_SMI_QUERY = (
    "nvidia-smi",
    "--query-gpu=driver_version,name,pci.bus_id,uuid,memory.total",
    "--format=csv,noheader,nounits",
)
NVML_LIBRARY_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib",
    "/usr/local/nvidia/lib64",
    "/usr/lib/wsl/lib",
)
# ASCII digits only, and bounded: `int()` on a 5000-digit garbage field raises instead of parsing.
DRIVER_VERSION = lazy(r"^\d{1,9}(\.\d{1,9}){1,2}$", re.ASCII)


def parse_version_token(text: str) -> str | None:
    """A bare `550.144.03` (sysfs) or `35.3.1` (L4T)."""
    token = text.strip()
    return token if DRIVER_VERSION.match(token) else None


def parse_proc_driver_version(text: str) -> tuple[str | None, str | None, bool]:
    """(version, flavor, is_jetson) from /proc/driver/nvidia/version.

    Proprietary: `NVRM version: NVIDIA UNIX x86_64 Kernel Module  384.98  Thu Oct 26 ...`
    Open:        `NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release Build  (...)  ...`
    Fields are separated by two spaces; the version is the first field that looks like one (hardware.md §3.1).
    """
    raw = next((ln for ln in text.splitlines(keepends=True) if ln.startswith("NVRM version:")), "")
    if not raw:
        return None, None, False
    line = raw.splitlines()[0]
    fields = line.split("  ")
    if len(line) == len(raw):
        # No line end: the text was cut short, and the last field may be a cut version ("565.57.0").
        fields = fields[:-1]
    version = next((f.strip() for f in fields if DRIVER_VERSION.match(f.strip())), None)
    # "Open Kernel Module" / "x86_64 Kernel Module"; a line cut before "Kernel Module" tells neither.
    flavor = "open" if "Open Kernel Module" in line else "proprietary" if "Kernel Module" in line else None
    # L4T (Jetson) modules are built for aarch64 and carry an L4T release such as 35.3.1, not a 3-digit branch.
    jetson = "aarch64" in line and version is not None and int(version.split(".")[0]) < 100
    return version, flavor, jetson


def parse_nvidia_smi_csv(text: str) -> list[list[str]]:
    """Rows of `--format=csv,noheader,nounits`: comma-separated, values trimmed."""
    rows = []
    for line in text.splitlines():
        if line.strip():
            rows.append([cell.strip() for cell in line.split(",")])
    return rows


def library_version_from_name(name: str, stem: str = "libnvidia-ml.so.") -> str | None:
    """`libnvidia-ml.so.580.178.04` → `580.178.04`."""
    base = name.rsplit("/", 1)[-1]
    if not base.startswith(stem):
        return None
    return parse_version_token(base[len(stem) :])


def cuda_from_nvml_int(value: int) -> str:
    """NVML/cudaDriverGetVersion encoding: 12040 → "12.4"."""
    return f"{value // 1000}.{(value % 1000) // 10}"


def _reading_from_text(
    source: str, origin: str, text: str | Unavailable, parsed: str | None
) -> DriverVersionReading:
    if isinstance(text, Unavailable):
        return DriverVersionReading(source, origin, text)
    return DriverVersionReading(
        source, origin, parsed or Unavailable(Reason.UNPARSEABLE, f"{origin}: {text.strip()[:120]!r}")
    )


def gather_driver(host: Host, nvml: NvmlFacts | Unavailable) -> DriverFacts:
    readings: list[DriverVersionReading] = []
    nvml_version: Maybe[str] = nvml if isinstance(nvml, Unavailable) else nvml.driver_version
    readings.append(DriverVersionReading("nvml", "nvmlSystemGetDriverVersion", nvml_version))

    sys_text = host.read_text(SYS_MODULE_VERSION)
    readings.append(
        _reading_from_text(
            "sysfs",
            SYS_MODULE_VERSION,
            sys_text,
            None if isinstance(sys_text, Unavailable) else parse_version_token(sys_text),
        )
    )

    proc_text = host.read_text(PROC_VERSION)
    flavor: Maybe[str] = (
        proc_text if isinstance(proc_text, Unavailable) else Unavailable(Reason.UNPARSEABLE, PROC_VERSION)
    )
    jetson = False
    proc_version = None
    if not isinstance(proc_text, Unavailable):
        proc_version, parsed_flavor, jetson = parse_proc_driver_version(proc_text)
        if parsed_flavor:
            flavor = parsed_flavor
    readings.append(_reading_from_text("procfs", PROC_VERSION, proc_text, proc_version))

    smi = host.which("nvidia-smi")
    if not any(isinstance(r.version, str) for r in readings):
        readings.append(_nvidia_smi_reading(host, smi))

    chosen = next((r for r in readings if isinstance(r.version, str)), None)
    version: Maybe[str] = chosen.version if chosen else _best_reason(readings)
    cuda, cuda_source = _cuda_version(nvml, version, jetson)
    lib_path, lib_version = _userspace_library(host)
    return DriverFacts(
        version=version,
        version_source=chosen.source if chosen else None,
        readings=tuple(readings),
        kernel_module_flavor=flavor,
        is_jetson=jetson,
        cuda_version=cuda,
        cuda_version_source=cuda_source,
        userspace_version=lib_version,
        userspace_library=lib_path,
        installed_module_version=_installed_module(host, sys_text),
        nvidia_smi=smi,
    )


def _nvidia_smi_reading(host: Host, smi: str | None) -> DriverVersionReading:
    origin = " ".join(NVIDIA_SMI_QUERY)
    if smi is None:
        return DriverVersionReading(
            "nvidia-smi", origin, Unavailable(Reason.NOT_FOUND, "nvidia-smi is not on PATH")
        )
    result = host.run(NVIDIA_SMI_QUERY, timeout=15.0)
    if not result.ok:
        return DriverVersionReading("nvidia-smi", origin, result.unavailable())
    rows = parse_nvidia_smi_csv(result.stdout)
    version = parse_version_token(rows[0][0]) if rows and rows[0] else None
    return DriverVersionReading(
        "nvidia-smi",
        origin,
        version or Unavailable(Reason.UNPARSEABLE, f"nvidia-smi: {result.stdout[:120]!r}"),
    )


def _best_reason(readings: list[DriverVersionReading]) -> Unavailable:
    """Why no source answered: prefer the most telling reason over plain "not found"."""
    reasons = [r.version for r in readings if isinstance(r.version, Unavailable)]
    for wanted in (Reason.PERMISSION_DENIED, Reason.TIMED_OUT, Reason.FAILED, Reason.UNPARSEABLE):
        for reason in reasons:
            if reason.reason is wanted:
                return reason
    return Unavailable(Reason.NOT_FOUND, "no NVIDIA kernel module is loaded and NVML does not answer")


def _cuda_version(
    nvml: NvmlFacts | Unavailable, version: Maybe[str], jetson: bool
) -> tuple[Maybe[str], str | None]:
    if not isinstance(nvml, Unavailable) and isinstance(nvml.cuda_driver_version, int):
        return cuda_from_nvml_int(nvml.cuda_driver_version), "nvml"
    if isinstance(version, Unavailable):
        return version, None
    if jetson:
        return Unavailable(
            Reason.NOT_SUPPORTED, "L4T release: CUDA comes with JetPack, not the driver branch"
        ), None
    cuda = load_matrix().max_cuda_for_driver(version, "linux")
    if cuda is None:
        return Unavailable(Reason.NOT_SUPPORTED, f"driver {version} is older than CUDA 11.0's minimum"), None
    return cuda, "compat table"


def _userspace_library(host: Host) -> tuple[Maybe[str], Maybe[str]]:
    for directory in NVML_LIBRARY_DIRS:
        path = f"{directory}/libnvidia-ml.so.1"
        if not host.exists(path):
            continue
        resolved = host.realpath(path)
        if isinstance(resolved, Unavailable):
            return resolved, resolved
        version = library_version_from_name(resolved)
        if version is None and resolved.startswith("/usr/lib/wsl/"):
            # WSL projects the Windows driver's library unversioned; NVML itself reports the version.
            return resolved, Unavailable(Reason.NOT_SUPPORTED, "WSL's libnvidia-ml.so.1 carries no version")
        return resolved, version or Unavailable(Reason.UNPARSEABLE, f"no version in the name {resolved}")
    missing = Unavailable(Reason.NOT_FOUND, "libnvidia-ml.so.1 in the standard library folders")
    return missing, missing


def _installed_module(host: Host, sys_text: str | Unavailable) -> Maybe[str]:
    """Whether an nvidia module exists for the running kernel even though it is not loaded."""
    if not isinstance(sys_text, Unavailable):
        return Unavailable(Reason.NOT_APPLICABLE, "the module is loaded; see the loaded version")
    if host.which("modinfo") is None:
        return Unavailable(Reason.NOT_FOUND, "modinfo is not on PATH")
    result = host.run(("modinfo", "-F", "version", "nvidia"), timeout=5.0)
    if not result.ok:
        return result.unavailable()
    return parse_version_token(result.stdout) or Unavailable(Reason.UNPARSEABLE, result.stdout[:80])
