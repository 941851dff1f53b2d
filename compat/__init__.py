"""Typed access to compat/cuda_matrix.json, validated on load.

The file is data with a date and a source on every entry; `compat/README.md` says how to update it.
"""

from __future__ import annotations

import functools
import json
import re
from functools import cached_property
from typing import Any

from packaging.version import Version

from torch_gpu_doctor import data_cache, pattern_cache
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.package_data import package_file, package_text
from torch_gpu_doctor.records import dataclass

MATRIX_SCHEMA = "gpu-doctor cuda_matrix v1"


class CompatDataError(ValueError):
    """cuda_matrix.json does not have the expected shape."""


@dataclass(frozen=True)
class CudaToolkit:
    cuda: str  # "12.4"
    release: str  # "GA", "Update 1"
    linux_min_driver: str | None
    windows_min_driver: str | None
    linux_branch: str | None  # "R615" where NVIDIA prints no exact minimum
    source: str
    unconfirmed: str | None


@dataclass(frozen=True)
class GpuModel:
    name: str
    compute_capability: str
    architecture: str
    source: str


@dataclass(frozen=True)
class GpuFamily:
    """A name pattern for GPUs the table does not list (a China-market part, a vGPU profile, an old card)."""

    regex: str  # matched case-insensitively against the device's name
    compute_capability: str
    architecture: str
    source: str

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """Compiled on first use: only a name the table lacks is tried against the families."""
        return pattern_cache.compile(self.regex, re.IGNORECASE)


@dataclass(frozen=True)
class ReportedCuda:
    """A branch's early driver that already reports a CUDA its toolkit's GA minimum is above (525.60.11: 12.0)."""

    system: str  # "linux" | "windows"
    from_driver: str
    cuda: str
    source: str


@dataclass(frozen=True)
class CompatMatrix:
    data_date: str
    toolkits: tuple[CudaToolkit, ...]
    gpus: tuple[GpuModel, ...]
    sm_to_arch: dict[str, str]
    families: tuple[GpuFamily, ...] = ()
    reported: tuple[ReportedCuda, ...] = ()
    # compute capability -> the first CUDA whose toolkit compiles for it ("8.6": "11.1"); first_cuda_for_cc
    first_cuda: tuple[tuple[str, str], ...] = ()

    def first_cuda_for(self, compute_capability: str) -> str | None:
        """The first CUDA that compiles for this compute capability: a torch built with an older one cannot
        have kernels for it. None where the table does not say."""
        return dict(self.first_cuda).get(compute_capability)

    def max_cuda_for_driver(self, driver: str, system: str = "linux") -> str | None:
        """The newest CUDA toolkit whose bundled driver is at most `driver` (what nvidia-smi shows as CUDA Version)."""
        installed = _version(driver)
        if installed is None:
            return None
        best: tuple[Version, str] | None = None
        for tk in self.toolkits:
            minimum = tk.linux_min_driver if system == "linux" else tk.windows_min_driver
            if minimum is not None:
                needed = _version(minimum)
                ok = needed is not None and installed >= needed
            else:  # only a branch is known: R615 → any 615.x or newer
                branch = tk.linux_branch or (
                    # NVIDIA prints no Windows minimum from CUDA 13.0 on ("N/A": the toolkit bundles no Windows
                    # driver since 13.1), but the branches are shared: 13.0 is R580, 13.2 R595 on both systems
                    # (CUDA 13.4 Update 1 release notes §2.2; compat-errata.md #61). Windows 595.95 is R595.
                    f"R{tk.linux_min_driver.split('.')[0]}"
                    if system != "linux" and tk.linux_min_driver
                    else None
                )
                ok = branch is not None and installed.major >= int(branch.lstrip("R"))
            cuda = _version(tk.cuda)
            if ok and cuda is not None and (best is None or cuda > best[0]):
                best = (cuda, tk.cuda)
        for row in self.reported:  # its branch's first drivers report the CUDA their toolkit came with
            start = _version(row.from_driver)
            cuda = _version(row.cuda)
            if (
                row.system == system
                and start is not None
                and cuda is not None
                and installed.major == start.major
                and installed >= start
                and (best is None or cuda > best[0])
            ):
                best = (cuda, row.cuda)
        if best is None and system != "linux":
            # NVIDIA printed no Windows minimum before CUDA 7.0; the branches are shared, so an older Windows
            # driver is placed by the Linux minimums (R340 is CUDA 6.5 on both)
            return self.max_cuda_for_driver(driver, "linux")
        return best[1] if best else None

    def min_driver_for(self, cuda: str, system: str = "linux") -> str | None:
        """The oldest driver NVIDIA lists for a CUDA toolkit ("10.2" -> "440.33"): what a program built with
        that toolkit needs without minor-version compatibility (before CUDA 11 there was none). None: the
        table has no such toolkit or no minimum for the system."""
        wanted = ".".join(cuda.split(".")[:2])
        found = [
            (version, m)
            for tk in self.toolkits
            if ".".join(tk.cuda.split(".")[:2]) == wanted
            and (m := tk.linux_min_driver if system == "linux" else tk.windows_min_driver)
            and (version := _version(m)) is not None
        ]
        return min(found)[1] if found else None

    def gpu_by_name(self, name: str) -> GpuModel | None:
        """Longest table entry whose words start the device's name ("NVIDIA H100 80GB HBM3" → "NVIDIA H100")."""
        words = _name_words(name)
        best: GpuModel | None = None
        best_len = 0
        for key, gpu in self._gpu_words:
            if key and words[: len(key)] == key and len(key) > best_len:
                best, best_len = gpu, len(key)
        if best is not None:
            return best
        family = next((f for f in self.families if f.pattern.search(name)), None)  # then the family patterns
        if family is None:
            return None
        return GpuModel(name.strip(), family.compute_capability, family.architecture, family.source)

    @cached_property
    def _gpu_words(self) -> tuple[tuple[list[str], GpuModel], ...]:
        """Each table entry's name words, worked out once: a paste's GPUs are looked up by name several times."""
        return tuple((_name_words(gpu.name), gpu) for gpu in self.gpus)

    def architecture(self, compute_capability: str) -> str | None:
        return self.sm_to_arch.get(compute_capability)


_NOISE = {"nvidia", "tesla"}
_NAME_SEPARATORS = lazy(r"[\s\-_/]+")
_BRANCH = lazy(r"R\d{1,6}", re.ASCII)
_MAJOR_MINOR = lazy(r"\d+\.\d+")


def _name_words(name: str) -> list[str]:
    return [w for w in _NAME_SEPARATORS.split(name.lower()) if w and w not in _NOISE]


def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except ValueError:  # InvalidVersion, or int() refusing a garbage component thousands of digits long
        return None


def _list(data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise CompatDataError(f"cuda_matrix.json: '{key}' must be a list")
    return value


def _str(entry: Any, key: str, where: str, optional: bool = False) -> Any:
    if not isinstance(entry, dict):
        raise CompatDataError(f"{where}: must be an object")
    value = entry.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise CompatDataError(f"{where}: '{key}' must be a non-empty string")
    return value


def parse_matrix(data: Any, prove_patterns: bool = True) -> CompatMatrix:
    """The validated table. With `prove_patterns`, each GPU family's pattern is compiled and must match its
    examples; load_matrix leaves that to tests/compat/test_gpu_families.py for the shipped file, so that a
    start compiles only the patterns a name needs."""
    if not isinstance(data, dict) or data.get("schema") != MATRIX_SCHEMA:
        raise CompatDataError(f"cuda_matrix.json: expected schema {MATRIX_SCHEMA!r}")
    toolkits = []
    for i, entry in enumerate(_list(data, "cuda_toolkits")):
        where = f"cuda_toolkits[{i}]"
        tk = CudaToolkit(
            cuda=_str(entry, "cuda", where),
            release=_str(entry, "release", where),
            linux_min_driver=_str(entry, "linux_min_driver", where, optional=True),
            windows_min_driver=_str(entry, "windows_min_driver", where, optional=True),
            linux_branch=_str(entry, "linux_branch", where, optional=True),
            source=_str(entry, "source", where),
            unconfirmed=_str(entry, "unconfirmed", where, optional=True),
        )
        if tk.linux_min_driver is None and tk.linux_branch is None:
            raise CompatDataError(f"{where}: needs linux_min_driver or linux_branch")
        if tk.linux_branch is not None and not _BRANCH.fullmatch(tk.linux_branch):
            raise CompatDataError(f"{where}: branch {tk.linux_branch!r} is not like 'R615'")
        for driver in (tk.linux_min_driver, tk.windows_min_driver):
            if driver is not None and _version(driver) is None:
                raise CompatDataError(f"{where}: {driver!r} is not a version")
        toolkits.append(tk)
    gpus = []
    for i, entry in enumerate(_list(data, "gpus")):
        where = f"gpus[{i}]"
        cc = _str(entry, "compute_capability", where)
        if not _MAJOR_MINOR.fullmatch(cc):
            raise CompatDataError(f"{where}: compute capability {cc!r}")
        gpus.append(
            GpuModel(
                _str(entry, "name", where),
                cc,
                _str(entry, "architecture", where),
                _str(entry, "source", where),
            )
        )
    sm = data.get("sm_to_arch", {})
    if (
        not toolkits
        or not gpus
        or not isinstance(sm, dict)
        or not all(isinstance(v, str) for v in sm.values())
    ):
        raise CompatDataError("cuda_matrix.json: cuda_toolkits, gpus and sm_to_arch are required")
    families = []
    for i, entry in enumerate(_list(data, "gpu_families")):
        where = f"gpu_families[{i}]"
        cc = _str(entry, "compute_capability", where)
        if not _MAJOR_MINOR.fullmatch(cc):
            raise CompatDataError(f"{where}: compute capability {cc!r}")
        family = GpuFamily(
            _str(entry, "pattern", where),
            cc,
            _str(entry, "architecture", where),
            _str(entry, "source", where),
        )
        examples = entry.get("examples", [])
        if not isinstance(examples, list) or not all(isinstance(e, str) for e in examples):
            raise CompatDataError(f"{where}: 'examples' must be a list of GPU names")
        if prove_patterns:
            try:
                pattern = family.pattern
            except re.error as exc:
                raise CompatDataError(f"{where}: the pattern does not compile: {exc}") from exc
            for example in examples:  # the data proves itself on the names it was written for
                if not pattern.search(example):
                    raise CompatDataError(f"{where}: its example {example!r} does not match")
        families.append(family)
    reported = []
    for i, entry in enumerate(_list(data, "driver_reported_cuda")):
        where = f"driver_reported_cuda[{i}]"
        row = ReportedCuda(
            _str(entry, "system", where),
            _str(entry, "from_driver", where),
            _str(entry, "cuda", where),
            _str(entry, "source", where),
        )
        if row.system not in ("linux", "windows") or _version(row.from_driver) is None:
            raise CompatDataError(f"{where}: needs system linux or windows and a driver version")
        if not _MAJOR_MINOR.fullmatch(row.cuda):
            raise CompatDataError(f"{where}: CUDA {row.cuda!r} is not like '12.0'")
        reported.append(row)
    first = data.get("first_cuda_for_cc", {})
    if not isinstance(first, dict) or not all(
        _MAJOR_MINOR.fullmatch(str(k)) and isinstance(v, str) and _MAJOR_MINOR.fullmatch(v)
        for k, v in first.items()
    ):
        raise CompatDataError("cuda_matrix.json: first_cuda_for_cc maps '8.6' to a CUDA like '11.1'")
    if first and not isinstance(data.get("first_cuda_for_cc_source"), str):
        raise CompatDataError("cuda_matrix.json: first_cuda_for_cc needs its first_cuda_for_cc_source")
    return CompatMatrix(
        _str(data, "data_date", "$"),
        tuple(toolkits),
        tuple(gpus),
        dict(sm),
        tuple(families),
        tuple(reported),
        tuple(sorted(first.items())),
    )


MATRIX = "cuda_matrix.json"


@functools.cache
def load_matrix() -> CompatMatrix:
    """The packaged matrix, parsed and validated (by this run or, through data_cache, by an earlier one)."""
    return data_cache.cached("cuda-matrix", _shipped_matrix, (package_file(__name__, MATRIX),))


def _shipped_matrix() -> CompatMatrix:
    return parse_matrix(json.loads(package_text(__name__, MATRIX)), prove_patterns=False)
