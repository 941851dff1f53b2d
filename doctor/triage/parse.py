"""collect_env text → CollectEnvReport. Tolerant of what people paste: markdown fences, `<details>` wrappers,
quoted (`> `) lines, torch warnings before the report, fullwidth colons, a missing colon (hand-edited
pastes), torch 1.x wording ("Is CUDA available: No") and a paste cut off anywhere."""

from __future__ import annotations

import re

from torch_gpu_doctor.triage.model import CollectEnvReport, GpuLine, Library, ReportLine, TorchWarnings

# Canonical key → label as collect_env prints it (torch 1.0 to today). Labels of one word need a colon.
LABELS: tuple[tuple[str, str], ...] = (
    ("torch_version", r"PyTorch version"),
    ("debug_build", r"Is debug build"),
    ("cuda_build", r"CUDA used to build PyTorch"),
    ("rocm_build", r"ROCM used to build PyTorch"),
    ("os", r"OS(?=\s*[:：])"),
    ("gcc", r"GCC version"),
    ("clang", r"Clang version"),
    ("cmake", r"CMake version"),
    ("libc", r"Libc version"),
    ("python_version", r"Python version"),
    ("python_platform", r"Python platform"),
    ("cuda_available", r"Is CUDA available"),
    ("cuda_runtime", r"CUDA runtime version"),
    ("cuda_module_loading", r"CUDA_MODULE_LOADING set to"),
    ("gpu_models", r"GPU models and configuration"),
    ("driver_version", r"Nvidia driver version"),
    ("cudnn", r"cuDNN version"),
    ("xpu_available", r"Is XPU available"),
    ("hip_runtime", r"HIP runtime version"),
    ("miopen", r"MIOpen runtime version"),
    ("xnnpack", r"Is XNNPACK available"),
    ("cpu", r"CPU(?=\s*[:：])"),
    ("libraries", r"Versions? of relevant libraries"),
)
_LABEL_RES = tuple(
    (key, re.compile(rf"^{label}\s*[:：]?\s*(?P<value>.*)$", re.IGNORECASE)) for key, label in LABELS
)
# The lines that make a text a collect_env report (any one of them is enough).
KEY_LINES = ("torch_version", "cuda_build", "cuda_available", "gpu_models", "driver_version")
CONTINUED = ("gpu_models", "cudnn", "cpu")  # keys whose value goes on over the next lines
NOT_COLLECTED = {"", "n/a", "na", "none", "no cuda", "could not collect"}
_HEADER = re.compile(r"^Collecting environment information\.*\s*", re.IGNORECASE)
_WRAPPER = re.compile(r"^(```.*|~~~.*|</?details>.*|<summary>.*|#+\s.*)$", re.IGNORECASE)
_LIBRARY = re.compile(r"^\[(?P<manager>pip3?|conda)\]\s*(?P<rest>.*)$", re.IGNORECASE)
_GPU = re.compile(r"^GPU\s*(?P<index>\d+)\s*[:：]\s*(?P<name>.+?)(?:\s*\(UUID:[^)]*\)?)?\s*$", re.IGNORECASE)
_VERSION = re.compile(r"^\d+(?:\.\d+)+")
_TORCH_VERSION = re.compile(
    r"^\d{1,2}\.\d{1,3}(?:\.\d{1,3})?(?:[a-z]+\d*)*(?:\.(?:dev|post)\d+)?(?:\+[A-Za-z0-9.]+)?$"
)
_TOO_OLD = re.compile(r"driver on your system is too old \(found version (\d{4,6})\)", re.IGNORECASE)
_ARCH = re.compile(r"supports CUDA capabilities((?:\s+(?:sm|compute)_\d+[a-z]?)+)", re.IGNORECASE)
_CUDA_INIT = re.compile(r"CUDA initialization:\s*(?P<text>.+?)\s*(?:\(Triggered internally.*)?$")


def looks_like_collect_env(report: CollectEnvReport) -> bool:
    return any(report.has(key) for key in KEY_LINES)


def parse_report(text: str) -> CollectEnvReport:
    found: dict[str, ReportLine] = {}
    libraries: list[Library] = []
    current: str | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _clean(raw)
        if not line:
            if current in ("gpu_models", "cudnn"):
                current = None
            continue
        library = _LIBRARY.match(line)
        if library is not None:
            parsed = _library(library.group("manager"), library.group("rest"), raw)
            libraries.extend([parsed] if parsed is not None else [])
            current = None
            continue
        key, value = _label(line)
        if key is not None and key not in found:
            found[key] = ReportLine(key, value, raw, number)
            current = key if key in CONTINUED else None
        elif key is None and current is not None:
            prev = found[current]
            joined = f"{prev.value}\n{line}" if prev.value else line
            found[current] = ReportLine(current, joined, f"{prev.raw}\n{raw}", prev.line)
    return _report(found, tuple(libraries), text)


def _clean(raw: str) -> str:
    line = raw.strip()
    while line.startswith(">"):  # quoted in a reply
        line = line[1:].strip()
    line = _HEADER.sub("", line)
    return "" if _WRAPPER.match(line) else line


def _label(line: str) -> tuple[str | None, str]:
    for key, pattern in _LABEL_RES:
        match = pattern.match(line)
        if match is not None:
            return key, match.group("value").strip()
    return None, ""


def _library(manager: str, rest: str, raw: str) -> Library | None:
    rest = rest.strip()
    if rest.lower() in NOT_COLLECTED:
        return None
    kind = "conda" if manager.lower() == "conda" else "pip"
    pinned = re.fullmatch(r"([A-Za-z0-9_.\-]+)\s*==\s*(\S+)", rest)
    if pinned is not None:
        return Library(kind, _normal(pinned.group(1)), pinned.group(2), None, raw)
    parts = rest.split()
    if len(parts) >= 2 and _VERSION.match(parts[1]):
        return Library(kind, _normal(parts[0]), parts[1], parts[2] if len(parts) > 2 else None, raw)
    return None  # a cut-off line ("[pip3] to") or a package without a version


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _value(found: dict[str, ReportLine], key: str) -> str | None:
    line = found.get(key)
    if line is None or line.value.strip().lower() in NOT_COLLECTED:
        return None
    return line.value.strip()


def _bool(found: dict[str, ReportLine], key: str) -> bool | None:
    value = (_value(found, key) or "").lower()
    return True if value in ("true", "yes") else False if value in ("false", "no") else None


def _first_version(value: str | None) -> str | None:
    match = _VERSION.match(value or "")
    return match.group(0) if match else None


def _gpus(found: dict[str, ReportLine]) -> tuple[GpuLine, ...] | None:
    value = _value(found, "gpu_models")
    if value is None:
        return None
    rows = [row.strip() for row in value.splitlines() if row.strip()]
    listed = [m for m in (_GPU.match(row) for row in rows) if m is not None]
    if listed:
        return tuple(GpuLine(int(m.group("index")), m.group("name").strip(), m.group(0)) for m in listed)
    return (GpuLine(None, rows[0], rows[0]),)  # ROCm and macOS: the one name torch reports


def _warnings(text: str) -> TorchWarnings:
    flat = " ".join(text.split())
    too_old = _TOO_OLD.search(flat)
    driver_cuda = None
    if too_old is not None:
        number = int(too_old.group(1))  # cudaDriverGetVersion: 11040 = CUDA 11.4
        driver_cuda = f"{number // 1000}.{(number % 1000) // 10}"
    arch = _ARCH.search(flat)
    inits = tuple(m.group("text") for m in (_CUDA_INIT.search(line) for line in text.splitlines()) if m)
    return TorchWarnings(
        driver_cuda=driver_cuda,
        arch_list=tuple(arch.group(1).split()) if arch else (),
        cuda_init=inits,
    )


def _report(found: dict[str, ReportLine], libraries: tuple[Library, ...], text: str) -> CollectEnvReport:
    torch_line = found.get("torch_version")
    torch_value = torch_line.value.split()[0] if torch_line and torch_line.value.split() else ""
    torch_missing = torch_line is not None and torch_value.lower() in NOT_COLLECTED
    if not torch_missing and not _TORCH_VERSION.match(torch_value):  # "nan", "???": not a version at all
        torch_value = ""
    return CollectEnvReport(
        lines=found,
        torch_version=None if torch_missing or not torch_value else torch_value,
        torch_missing=torch_missing,
        cuda_build=_first_version(_value(found, "cuda_build")),
        rocm_build=_value(found, "rocm_build"),
        debug_build=_bool(found, "debug_build"),
        os_name=_value(found, "os"),
        python_version=_first_version(_value(found, "python_version")),
        python_platform=_value(found, "python_platform"),
        cuda_available=_bool(found, "cuda_available"),
        cuda_runtime=_first_version(_value(found, "cuda_runtime")),
        gpus=_gpus(found),
        driver_version=_first_version(_value(found, "driver_version")),
        hip_runtime=_value(found, "hip_runtime"),
        libraries=libraries if "libraries" in found else None,
        warnings=_warnings(text),
        truncated="libraries" not in found,
    )
