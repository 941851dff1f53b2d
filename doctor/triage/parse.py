"""collect_env text → CollectEnvReport. Tolerant of what people paste: markdown fences, `<details>` wrappers,
quoted (`> `) lines, torch warnings before the report, fullwidth colons, a missing colon (hand-edited
pastes), torch 1.x wording ("Is CUDA available: No"), a paste cut off anywhere (its first character, or its
last line mid-value), the "Versions of relevant libraries" section alone, and the wrappers that print the
same facts under their own labels: detectron2's `python -m detectron2.utils.collect_env` table and mmengine's
`Key: value` dump (lmdeploy check_env, mmcv, mmdet), with torch.__config__.show() after them."""

from __future__ import annotations

import dataclasses
import functools
import re

from torch_gpu_doctor import pattern_cache
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.triage.model import (
    HUGGINGFACE_ENV,
    CollectEnvReport,
    GpuLine,
    Library,
    ReportLine,
    TorchWarnings,
    distribution_name,
)

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
# torch.__config__.show() ("PyTorch built with:"), which detectron2 and mmengine print after their table. Its
# "CUDA Runtime" is the cudart torch loaded; "Built with CUDA Runtime", printed first when the two differ, is
# the one it was compiled for.
CONFIG_LABELS: tuple[tuple[str, str], ...] = (
    ("torch_config", r"(?:PyTorch compiling details\s*[:：]\s*)?PyTorch built with"),
    ("cuda_build", r"-\s*(?:Built with )?CUDA Runtime(?=\s+\d)"),
    ("rocm_build", r"-\s*HIP Runtime(?=\s+\d)"),
    ("arch_flags", r"-\s*NVCC architecture flags"),
)
# The wrappers' own labels. Read only in a paste that shows one of their rows (_WRAPPER_MARK): elsewhere
# "PyTorch 2.0.0+cu118 with CUDA 1108 (you have 2.0.0+cpu)" is xFormers naming the torch it was built for.
WRAPPER_LABELS: tuple[tuple[str, str], ...] = (
    ("sys_platform", r"sys\.platform"),
    ("python_version", r"Python(?=[:：]?\s+\d)"),
    ("torch_version", r"PyTorch(?=[:：]?\s+\d)"),
    ("debug_build", r"PyTorch [Dd]ebug [Bb]uild"),
    ("cuda_available", r"(?:CUDA|GPU) available"),
    ("cuda_runtime", r"NVCC(?=[:：]?\s)"),
    ("driver_version", r"(?:NVIDIA |CUDA )?[Dd]river [Vv]ersion"),
    ("python_platform", r"Platform(?=\s*[:：])"),  # transformers/accelerate env: platform.platform()
    ("gpu_models", r"GPU type(?=\s*[:：])"),  # transformers env >= 4.40
    ("gpu_in_script", r"Using GPU in script\?"),  # the person's answer in Hugging Face's bug template
)
_WRAPPER_MARK = lazy(
    r"^(?:(?P<detectron2>DETECTRON2_ENV_MODULE|[Dd]etectron2\b)|sys\.platform\b|PyTorch [Dd]ebug [Bb]uild\b"
    r"|PyTorch compiling details\s*[:：]|(?P<sglang>sglang|sgl_kernel)\s*[:：]|CUDA Driver Version\s*[:：]"
    r"|(?P<huggingface>-\s*PyTorch version \(GPU\?\)\s*[:：]))"
)
_CUT_LABELS = tuple(  # a paste that lost its first character ("yTorch version: 1.8.0"): its first line
    (key, label[1:])
    for key, label in LABELS  # a label of ASCII letters and spaces, at least six long, a letter first
    if label.isascii() and label[:1].isalpha() and len(label) > 5 and label.replace(" ", "").isalpha()
)


class _Labels:
    """Labels as one anchored alternation, tried in their order: the first label that starts the line wins, as
    a loop over one pattern per label would decide, for one compiled pattern instead of one per label (a
    start-up cost of every triage, issue 17). `(?i:...)` keeps each label's own case rule."""

    def __init__(self, *groups: tuple[tuple[tuple[str, str], ...], bool]) -> None:
        self.keys = [key for labels, _ in groups for key, _ in labels]
        parts = [
            f"(?P<l{i}>{'(?i:' if caseless else '(?:'}{label}))"
            for i, (label, caseless) in enumerate((label, c) for labels, c in groups for _, label in labels)
        ]
        self.pattern = pattern_cache.compile(rf"^(?:{'|'.join(parts)})\s*[:：]?\s*(?P<value>.*)$")

    def match(self, line: str) -> tuple[str | None, str]:
        found = self.pattern.match(line)
        if found is None:
            return None, ""
        key = next(self.keys[i] for i in range(len(self.keys)) if found.group(f"l{i}") is not None)
        return key, found.group("value").strip()


@functools.cache
def _labels(wrapper: bool) -> _Labels:
    """collect_env's labels (and torch.__config__'s rows), then the wrappers' own in a paste that has them."""
    ours = ((*LABELS, *CONFIG_LABELS), True)
    return _Labels(ours, (WRAPPER_LABELS, False)) if wrapper else _Labels(ours)


@functools.cache
def _cut_labels() -> _Labels:
    return _Labels((_CUT_LABELS, True))


# The lines that make a text a collect_env report (any one of them is enough; or a package line of its
# "Versions of relevant libraries" section).
KEY_LINES = ("torch_version", "cuda_build", "cuda_available", "gpu_models", "driver_version")
CONTINUED = ("gpu_models", "cudnn", "cpu", "torch_config")  # keys whose value goes on over the next lines
_IN_CONFIG = ("cuda_build", "rocm_build", "arch_flags")  # torch_config's own rows, read on their own too
NOT_COLLECTED = {"", "n/a", "na", "none", "no cuda", "could not collect"}
# Values that are whole even at the very end of a cut paste; keys whose value is read from its first token
COMPLETE = NOT_COLLECTED | {"true", "false", "yes", "no"}
FIRST_TOKEN = ("torch_version", "cuda_build", "python_version", "cuda_runtime", "driver_version")
WORDS = ("os", "gcc", "clang", "cmake", "libc")  # free text: its words before a cut one still hold
_HEADER = lazy(r"^Collecting environment information\.*\s*", re.IGNORECASE)
_MARKUP = lazy(r"^(```.*|~~~.*|</?details>.*|<summary>.*|#+\s.*)$", re.IGNORECASE)
_LIBRARY = lazy(r"^\[(?P<manager>pip3?|conda)\]\s*(?P<rest>.*)$", re.IGNORECASE)
# "GPU 0: NAME (UUID: ...)" (nvidia-smi -L); the wrappers group devices: "GPU 0,1,2,3  NAME (arch=7.5)", "GPU 0-7 NAME"
_GPU = lazy(
    r"^GPU\s*(?P<ids>\d+(?:\s*[,-]\s*\d+)*)(?:\s*[:：]\s*|\s+)(?P<name>.+?)(?:\s*\(UUID:[^)]*\)?)?"
    r"(?:\s*\(arch=(?P<arch>\d+\.\d+)\))?\s*$",
    re.IGNORECASE,
)
# Rows that start like a GPU's and are not one: sglang's "GPU 0 Compute Capability: 8.0", and the rows of
# `nvidia-smi topo -m` ("GPU0  X  NV12 ... SYS") that sglang and vLLM print after their reports
_NOT_A_GPU_ROW = lazy(
    r"^GPU\s*[\d,\s-]+\s+Compute Capability\s*[:：]|^GPU\d+\s+(?:X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC)\s",
    re.IGNORECASE,
)
# transformers-cli env / accelerate env / diffusers-cli env: "`transformers` version: 4.36.2", "Accelerate version: 0.25.0"
_HF_PACKAGE_ROW = lazy(r"^`?([A-Za-z][\w.-]*)`?\s+version\s*[:：]\s*(\d[\w.+-]*)\s*$")
_PACKAGE_ROW = lazy(r"^([A-Za-z][\w.-]*)\s*[:：]\s*(\d[\w.+-]*)\s*$")
# vLLM's collect_env names its own release after the library list: "vLLM Version: 0.6.1.post2" (pip's vllm);
# "N/A" or "Latest (from PyPI)" say nothing of the release
_VLLM_VERSION = lazy(r"^vLLM Version\s*[:：]\s*(\d[\w.+-]*)")
_NVCC = (lazy(r"\bV(\d+\.\d+\.\d+)"), lazy(r"\brelease (\d+\.\d+)"))
_CODE = lazy(r"code=\[?(?P<codes>[a-z_0-9,]+)\]?")
_VERSION = lazy(r"^\d+(?:\.\d+)+")
_TORCH_VERSION = lazy(
    r"^\d{1,2}\.\d{1,3}(?:\.\d{1,3})?(?:[a-z]+\d*)*(?:\.(?:dev|post)\d+)?(?:\+[A-Za-z0-9.]+)?$"
)
_TOO_OLD = lazy(r"driver on your system is too old \(found version (\d{4,6})\)", re.IGNORECASE)
_ARCH = lazy(r"supports CUDA capabilities((?:\s+(?:sm|compute)_\d+[a-z]?)+)", re.IGNORECASE)
_CUDA_INIT = lazy(r"CUDA initialization:\s*(?P<text>.+?)\s*(?:\(Triggered internally.*)?$")


def looks_like_collect_env(report: CollectEnvReport) -> bool:
    return any(report.has(key) for key in KEY_LINES) or bool(report.libraries)


def parse_report(text: str) -> CollectEnvReport:
    lines = text.splitlines()
    wrapper = _wrapper(lines)
    labels = _labels(wrapper)
    found: dict[str, ReportLine] = {}
    libraries: list[Library] = []
    current: str | None = None
    first = True
    for number, raw in enumerate(lines, start=1):
        line = _clean(raw)
        if wrapper == HUGGINGFACE_ENV:
            line = line.removeprefix("- ")  # its rows are a Markdown list
            package = _HF_PACKAGE_ROW.match(line)
            if package is not None and package[1].lower() not in ("python", "pytorch"):
                libraries.extend(p for p in [_library("pip", f"{package[1]}=={package[2]}", raw)] if p)
                current = None
                continue
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
        vllm = _VLLM_VERSION.match(line) if line.startswith("vLLM") else None
        if vllm is not None and not any(lib.name == "vllm" for lib in libraries):
            libraries.extend(p for p in [_library("pip", f"vllm=={vllm[1]}", raw)] if p)
            current = None
            continue
        key, value = labels.match(line)
        if key is None and first:
            key, value = _cut_labels().match(line)
        first = False
        if key is None and wrapper == "sglang check_env" and "torch_version" in found:
            package = _PACKAGE_ROW.match(line)  # sglang's rows after PyTorch's: "vllm: 0.6.4.post1"
            if package is not None:
                libraries.extend(p for p in [_library("pip", f"{package[1]}=={package[2]}", raw)] if p)
                current = None
                continue
        if key is None and wrapper and _GPU.match(line) and not _NOT_A_GPU_ROW.match(line):  # stand alone
            prev = found.get("gpu_models")
            found["gpu_models"] = (
                ReportLine("gpu_models", line, raw, number)
                if prev is None
                else ReportLine("gpu_models", f"{prev.value}\n{line}", f"{prev.raw}\n{raw}", prev.line)
            )
            current = None
            continue
        if current == "torch_config" and key in _IN_CONFIG:
            found.setdefault(key, ReportLine(key, value, raw, number))
            key = None  # and the row stays in the block
        if key is not None and key not in found:
            found[key] = ReportLine(key, value, raw, number)
            current = key if key in CONTINUED else None
        elif key is None and current is not None:
            prev = found[current]
            joined = f"{prev.value}\n{line}" if prev.value else line
            found[current] = ReportLine(current, joined, f"{prev.raw}\n{raw}", prev.line)
    found, libraries, cut = _without_cut_end(text, lines, found, libraries)
    return _report(found, tuple(libraries), text, wrapper, cut)


def _wrapper(lines: list[str]) -> str | None:
    """ "detectron2", "huggingface env" (`transformers-cli env`, `accelerate env`, `diffusers-cli env`: the bug
    templates of Hugging Face's libraries), "sglang check_env" (`python -m sglang.check_env`: mmengine's labels
    and its own rows) or "mmengine" when the paste shows a row only their collect_env prints."""
    marks = [m for m in (_WRAPPER_MARK.match(_clean(raw)) for raw in lines) if m is not None]
    if not marks:
        return None
    if any(m.group("detectron2") for m in marks):
        return "detectron2"
    if any(m.group("huggingface") for m in marks):
        return HUGGINGFACE_ENV
    return "sglang check_env" if any(m.group("sglang") for m in marks) else "mmengine"


def _without_cut_end(
    text: str, lines: list[str], found: dict[str, ReportLine], libraries: list[Library]
) -> tuple[dict[str, ReportLine], list[Library], ReportLine | None]:
    """A paste that stops mid-line ends without a line break: its last token may be a fragment ("GPU models and
    configuration: G", "ROCM used to build PyTorch: N/"). Such a value is read as missing, unless it is whole
    whatever follows (True, No CUDA) or only its first token is read and more follows it."""
    last = len(lines)
    if not lines or text.endswith("\n") or not _clean(lines[-1]):
        return found, libraries, None
    if libraries and libraries[-1].raw == lines[-1]:
        kept = _uncut_library(libraries[-1])
        return found, libraries[:-1] + ([kept] if kept is not None else []), None
    ending = [i for i in found.values() if i.raw.split("\n")[-1] == lines[-1]]
    item = max(ending, key=lambda i: i.line) if ending else None
    if item is None:
        return found, libraries, None
    rows = item.value.split("\n")
    tail = rows[-1].strip()
    if item.raw.count("\n") and len(rows) > 1:  # a continuation row: the GPU list, cuDNN's files
        earlier = {_GPU.sub(r"\g<name>", row.strip()) for row in rows[:-1]}
        if item.key == "gpu_models" and _GPU.sub(r"\g<name>", tail) in earlier:
            return found, libraries, None  # the same model as the rows above: whole
        shorter = ReportLine(item.key, "\n".join(rows[:-1]), item.raw.rsplit("\n", 1)[0], item.line)
        return {**found, item.key: shorter}, libraries, ReportLine(item.key, tail, lines[-1], last)
    if tail.lower() in COMPLETE or (item.key in FIRST_TOKEN and len(tail.split()) > 1):
        return found, libraries, None
    if item.key in WORDS and len(tail.split()) > 1:  # "OS: Red Hat Enterprise Linux r"
        return (
            {**found, item.key: dataclasses.replace(item, value=tail.rsplit(maxsplit=1)[0])},
            libraries,
            None,
        )
    return {k: v for k, v in found.items() if k != item.key}, libraries, item


def _uncut_library(lib: Library) -> Library | None:
    """The last package line of a paste without a final line break: its last token may be a fragment. Most
    such pastes are whole (an issue form drops the final line break), so a version that ends as only a whole
    one can ("2.1.0", "0.16.0+cu118", "2.5.1+cpu") is kept; "0.16.0+cu1", "2.1" or "2.1.0.de" may be cut."""
    tokens = lib.raw.split()
    if tokens[-1] == lib.version or "==" in tokens[-1]:
        return lib if _WHOLE_VERSION.fullmatch(lib.version) else None
    if lib.build is not None and tokens[-1] == lib.build:
        return Library(lib.manager, lib.name, lib.version, None, lib.raw)
    return lib


# A version that a cut could not have left: three parts, a whole pre/post/dev tag, and a local tag that is a
# whole CUDA (cu75-cu92, cu100-cu130), CPU or XPU build (a ROCm tag is left out: rocm6.2 may be rocm6.2.4 cut).
_WHOLE_VERSION = lazy(
    r"\d+\.\d+\.\d+(?:(?:a|b|rc|\.post|\.dev)\d+)?(?:\+(?:cu[789]\d|cu1[0-3]\d|cpu|xpu))?", re.ASCII
)


def _clean(raw: str) -> str:
    line = raw.strip()
    while line.startswith(">"):  # quoted in a reply
        line = line[1:].strip()
    line = _HEADER.sub("", line)
    return "" if _MARKUP.match(line) else line


def _library(manager: str, rest: str, raw: str) -> Library | None:
    rest = rest.strip()
    if rest.lower() in NOT_COLLECTED:
        return None
    kind = "conda" if manager.lower() == "conda" else "pip"
    pinned = re.fullmatch(r"([A-Za-z0-9_.\-]+)\s*==\s*(\S+)", rest)
    if pinned is not None:
        return Library(kind, distribution_name(pinned.group(1)), pinned.group(2), None, raw)
    parts = rest.split()
    if len(parts) >= 2 and _VERSION.match(parts[1]):
        return Library(kind, distribution_name(parts[0]), parts[1], parts[2] if len(parts) > 2 else None, raw)
    return None  # a cut-off line ("[pip3] to") or a package without a version


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


def _nvcc_version(value: str | None) -> str | None:
    """ "12.1.105" (collect_env), or nvcc's own line the wrappers print: "Cuda compilation tools, release 12.2,
    V12.2.140"."""
    found = (m.group(1) for m in (pattern.search(value or "") for pattern in _NVCC) if m is not None)
    return _first_version(value) or next(found, None)


def _arch_flags(found: dict[str, ReportLine]) -> tuple[str, ...]:
    """ "-gencode;arch=compute_50,code=sm_50;...;arch=compute_90,code=compute_90" → ("sm_50", ..., "compute_90")."""
    line = found.get("arch_flags")
    codes = [c for m in _CODE.finditer(line.value if line else "") for c in m.group("codes").split(",") if c]
    return tuple(dict.fromkeys(codes))


def _ids(text: str) -> list[int]:
    """ "0,1,2" → [0, 1, 2]; "0-7" → [0, ..., 7]."""
    ids: list[int] = []
    for part in re.split(r"\s*,\s*", text.strip()):
        low, _, high = part.partition("-")
        ids.extend(range(int(low), int(high) + 1) if high.strip() else [int(low)])
    return ids


def _gpus(found: dict[str, ReportLine]) -> tuple[GpuLine, ...] | None:
    value = _value(found, "gpu_models")
    if value is None:
        return None
    rows = [row.strip() for row in value.splitlines() if row.strip()]
    listed = [m for m in (_GPU.match(row) for row in rows) if m is not None]
    if listed:
        by_index = {
            index: GpuLine(index, m.group("name").strip(), m.group(0), m.group("arch"))
            for m in reversed(listed)  # the first row of an index wins
            for index in _ids(m.group("ids"))
        }
        return tuple(by_index[index] for index in sorted(by_index))
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


def _report(
    found: dict[str, ReportLine],
    libraries: tuple[Library, ...],
    text: str,
    wrapper: str | None,
    cut: ReportLine | None,
) -> CollectEnvReport:
    torch_line = found.get("torch_version")
    gpu_said = None
    if torch_line is not None and torch_line.value.startswith(
        "(GPU?)"
    ):  # Hugging Face's env: "(GPU?): 2.1.2+cpu (False)"
        value = re.sub(r"^\(GPU\?\)\s*[:：]\s*", "", torch_line.value)
        said = re.search(r"\((True|False)\)\s*$", value)
        gpu_said = None if said is None else said[1] == "True"
        torch_line = dataclasses.replace(torch_line, value=value)
        found = {**found, "torch_version": torch_line}
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
        cuda_available=_bool(found, "cuda_available") if gpu_said is None else gpu_said,
        cuda_runtime=_nvcc_version(_value(found, "cuda_runtime")),
        gpus=_gpus(found),
        driver_version=_first_version(_value(found, "driver_version")),
        hip_runtime=_value(found, "hip_runtime"),
        libraries=libraries if "libraries" in found or libraries else None,
        warnings=_warnings(text),
        truncated=("libraries" not in found and not libraries) or cut is not None,
        arch_flags=_arch_flags(found),
        wrapper=wrapper,
        cut_line=cut,
    )
