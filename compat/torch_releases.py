"""Typed access to the torch-release sections of compat/cuda_matrix.json, validated on load.

Sections: `torch_releases` (one entry per torch minor release: published variants, compiled SASS/PTX per platform,
PyPI default, Python, cuDNN, companions), `wheel_bundled_cuda_runtime`, `pytorch_device_rule` (PyTorch's own
cubin -> device rule), `architecture_last_driver`, and `pci_device_ids` on `gpus` entries. `compat/README.md`
says where each fact comes from and how to update it. Everything here is pure: no torch, no I/O beyond reading the
packaged JSON once.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import field
from enum import Enum

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass

PLATFORMS = ("linux_x86_64", "linux_aarch64", "windows", "macos")
INDEX_URL = "https://download.pytorch.org/whl/"

_VERSION = lazy(r"([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})", re.ASCII)
_MINOR = lazy(r"([0-9]{1,3})\.([0-9]{1,3})", re.ASCII)
_CC = lazy(r"([0-9]{1,2})\.([0-9])", re.ASCII)
_SM = lazy(r"sm_([0-9]{1,2})([0-9])([af]?)", re.ASCII)
_PTX = lazy(r"compute_([0-9]{1,2})([0-9])([af]?)", re.ASCII)
_MINOR_PREFIX = lazy(r"([0-9]{1,3})\.([0-9]{1,3})(?![0-9])", re.ASCII)
_LOCAL = lazy(r"\+.*\Z", re.DOTALL)

CC = tuple[int, int]


# --- data classes --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TorchVariant:
    """One wheel flavour of a release on download.pytorch.org/whl/<name> (cu130, rocm7.2, cpu)."""

    name: str
    cuda: str | None  # "13.0"; None for ROCm and CPU
    platforms: tuple[str, ...]
    arch_list: Mapping[
        str, tuple[str, ...]
    ]  # platform -> SASS targets ("sm_86"); a platform missing = unknown
    ptx: Mapping[str, tuple[str, ...]]  # platform -> PTX targets ("compute_120")
    cudnn: str | None
    nccl: str | None
    source: str
    unconfirmed: str | None = None  # existence / contents not confirmed by a primary source
    arch_unconfirmed: Mapping[str, str] = field(
        default_factory=dict
    )  # platform -> why its arch list is doubtful
    cudnn_unconfirmed: str | None = None

    @property
    def kind(self) -> str:
        if self.cuda is not None:
            return "cuda"
        return "cpu" if self.name == "cpu" else "rocm"

    @property
    def index_url(self) -> str:
        return INDEX_URL + self.name

    def confirmed_for(self, platform: str) -> bool:
        """Existence and (for CUDA) the arch list on this platform rest on a primary source."""
        return self.unconfirmed is None and platform not in self.arch_unconfirmed


@dataclass(frozen=True)
class Companion:
    torchvision: str
    torchaudio: str
    untagged: frozenset[str] = frozenset()  # those published as one wheel for every variant (no +cuXXX)


@dataclass(frozen=True)
class Companions:
    torchvision: str
    torchaudio: str
    for_patches: Mapping[str, Companion]
    note: str | None
    source: str
    unconfirmed: str | None
    untagged: frozenset[str] = frozenset()

    def for_version(self, version: str) -> Companion:
        return self.for_patches.get(version, Companion(self.torchvision, self.torchaudio, self.untagged))


@dataclass(frozen=True)
class TorchRelease:
    version: str  # "2.13.0"
    patches: tuple[str, ...]  # later patch releases ("2.14.1",)
    release_date: str
    requires_python: str  # ">=3.10"
    python_versions: tuple[str, ...]  # "3.10" ... "3.14t"
    pypi_default: Mapping[
        str, str | None
    ]  # platform -> variant a plain `pip install torch` gets (None = unknown)
    variants: tuple[TorchVariant, ...]
    companions: Companions
    linux_x86_64_glibc_min: str | None
    notes: str | None
    source: str
    unconfirmed: str | None

    @property
    def minor(self) -> str:
        return self.version.rsplit(".", 1)[0]

    @property
    def latest(self) -> str:
        return self.patches[-1] if self.patches else self.version

    @property
    def all_versions(self) -> tuple[str, ...]:
        return (self.version, *self.patches)

    def variant(self, name: str) -> TorchVariant | None:
        return next((v for v in self.variants if v.name == name), None)


@dataclass(frozen=True)
class LegacyBuild:
    """One CUDA/ROCm/CPU build of a pre-1.13 release: what it compiled, and pytorch.org's command for it."""

    variant: TorchVariant
    install: Mapping[str, str]  # version ("1.7.1") -> the previous-versions page's pip command, verbatim
    # version -> the same page's conda command for this build on Linux, verbatim (conda's own torch is changed
    # through conda)
    conda_install: Mapping[str, str] = field(default_factory=dict)
    # version -> platform -> SASS targets, where a patch's build differs from `variant.arch_list`
    arch_for_patches: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)

    def arch_list(self, version: str, platform: str) -> tuple[str, ...] | None:
        """The SASS targets of this build of `version` on `platform`; None: not in the data."""
        lists = self.arch_for_patches.get(version, self.variant.arch_list)
        return lists.get(platform)


@dataclass(frozen=True)
class LegacyRelease:
    """A torch release older than `torch_releases` (1.4 to 1.12): read to judge an installed old torch and to
    offer another build of the same version, never a candidate for a new install."""

    version: str
    patches: tuple[str, ...]
    release_date: str
    pypi_default: Mapping[str, str | None]  # platform -> the build a plain `pip install torch==X` gets
    builds: tuple[LegacyBuild, ...]
    source: str
    unconfirmed: str | None
    python_versions: tuple[str, ...] = ()  # CPython minors with wheels ("3.6")
    python_for_patches: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # where a patch differs

    def pythons(self, version: str) -> tuple[str, ...]:
        """The Pythons `version` (this release or one of its patches) has wheels for."""
        return self.python_for_patches.get(version, self.python_versions)

    @property
    def all_versions(self) -> tuple[str, ...]:
        return (self.version, *self.patches)

    def build(self, name: str) -> LegacyBuild | None:
        return next((b for b in self.builds if b.variant.name == name), None)


@dataclass(frozen=True)
class BundledRuntime:
    """The CUDA runtime a variant's wheels bundle, and the toolkit row whose driver gives full compatibility."""

    variant: str
    releases: tuple[str, ...]  # minors ("2.13",)
    cuda_runtime: str
    toolkit_cuda: str
    toolkit_release: str
    source: str
    unconfirmed: str | None


@dataclass(frozen=True)
class CubinRule:
    sm: str
    only: tuple[CC, ...]  # non-empty: runs on exactly these CCs
    min_cc: CC | None
    below_cc: CC | None
    except_ccs: tuple[CC, ...]

    def runs_on(self, cc: CC) -> bool:
        if self.only:
            return cc in self.only
        assert self.min_cc is not None and self.below_cc is not None
        return self.min_cc <= cc < self.below_cc and cc not in self.except_ccs


@dataclass(frozen=True)
class DeviceRule:
    """PyTorch's DEVICE_REQUIREMENT: which device compute capabilities can run a cubin / PTX."""

    rule: str
    integrated_ccs: frozenset[CC]
    renamed_ccs: Mapping[CC, CC]
    cubins: Mapping[CC, CubinRule]  # keyed by the cubin's own CC (sm_86 -> (8, 6))
    source: str


class KernelModule(str, Enum):
    """NVIDIA's guidance on its open kernel modules for an architecture (R560 and later)."""

    OPEN_REQUIRED = "open_required"  # Blackwell, Grace Hopper: the proprietary module does not support them
    OPEN_RECOMMENDED = "open_recommended"  # Turing to Hopper
    PROPRIETARY_ONLY = "proprietary_only"  # no GSP: Maxwell, Pascal, Volta (and Kepler, R470 and older)


@dataclass(frozen=True)
class ArchitectureLastDriver:
    architecture: str
    compute_capabilities: tuple[str, ...]
    last_driver_branch: str | None  # "R580"; None = still supported
    max_driver_cuda: str | None  # newest CUDA the last driver exposes ("13.0")
    last_toolkit_major_with_codegen: int | None  # newest CUDA major that can still compile for it
    note: str | None
    kernel_module: KernelModule  # which NVIDIA kernel module flavour drives it
    kernel_module_source: str
    source: str
    unconfirmed: str | None
    # the first Linux driver that lists a GPU of this compute capability ("12.0" -> "570.86.16"), where known
    first_linux_driver: tuple[tuple[str, str], ...] = ()
    first_driver_source: str | None = None
    # compute capabilities whose codegen ended before the architecture's ("3.0" -> 10: CUDA 11.0 dropped sm_30)
    codegen_ended_earlier: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class PciGpu:
    device_id: str  # "2684" (vendor 10de)
    name: str
    compute_capability: str
    architecture: str


def version_key(version: str) -> tuple[int, ...]:
    """A dotted version's numbers, for ordering ("12.8" < "12.10"); what is not a number is left out."""
    return tuple(int(p) for p in version.split(".") if p.isdigit())


@dataclass(frozen=True)
class TorchCompat:
    data_date: str
    releases: tuple[TorchRelease, ...]  # newest first
    bundled_runtimes: tuple[BundledRuntime, ...]
    device_rule: DeviceRule
    architectures: tuple[ArchitectureLastDriver, ...]
    pci_gpus: Mapping[str, PciGpu]
    toolkit_drivers: Mapping[
        tuple[str, str], tuple[str | None, str | None]
    ]  # (cuda, release) -> (linux, windows)
    mvc_min_driver: Mapping[
        int, tuple[str, str]
    ]  # CUDA major -> (linux, windows) minimum driver, minor-version compat
    legacy: tuple[LegacyRelease, ...] = ()  # releases before `releases`, newest first
    # program -> the oldest compute capability its own kernels support (vLLM: 7.0), as its docs state
    program_floors: Mapping[str, CC] = field(default_factory=dict)
    program_names: Mapping[str, str] = field(
        default_factory=dict
    )  # program -> how its docs write it ("vLLM")

    @property
    def newest(self) -> TorchRelease:
        return self.releases[0]

    @property
    def oldest_cuda(self) -> str:
        """The oldest CUDA among the wheels of the releases in the data (1.13.0's cu116 today)."""
        return min({v.cuda for r in self.releases for v in r.variants if v.cuda}, key=version_key)

    def release(self, version: str) -> TorchRelease | None:
        """By exact or patch version ("2.14.1", "2.13.0+cu130") or by minor ("2.13")."""
        text = _LOCAL.sub("", version.strip())
        if _MINOR.fullmatch(text):
            return next((r for r in self.releases if r.minor == text), None)
        return next((r for r in self.releases if text in r.all_versions), None)

    def pypi_cuda(self, version: str, platform: str = "linux_x86_64") -> str | None:
        """The CUDA of PyPI's own build of a release on a platform (what an untagged `pip install torch==X`
        gets: torch 2.2.1 is cu121 on Linux), also for the 1.4-1.12 releases; None: a CPU build or unknown."""
        release = self.release(version)
        if release is not None:
            name = release.pypi_default.get(platform)
            variant = release.variant(name) if name else None
            return variant.cuda if variant is not None else None
        legacy = self.legacy_release(version)
        name = legacy.pypi_default.get(platform) if legacy is not None else None
        build = legacy.build(name) if legacy is not None and name else None
        return build.variant.cuda if build is not None else None

    def legacy_release(self, version: str) -> LegacyRelease | None:
        """A pre-1.13 release by exact or patch version ("1.7.1", "1.7.1+cu101")."""
        text = _LOCAL.sub("", version.strip())
        return next((r for r in self.legacy if text in r.all_versions), None)

    def is_newer_than_data(self, version: str) -> bool:
        """True when `version` (e.g. an installed torch) is a minor release newer than anything in this file."""
        found = _minor_tuple(_LOCAL.sub("", version.strip()))
        return found is not None and found > _minor_tuple_strict(self.newest.minor)

    def bundled_runtime(self, release: TorchRelease, variant: str) -> BundledRuntime | None:
        return next(
            (b for b in self.bundled_runtimes if b.variant == variant and release.minor in b.releases), None
        )

    def full_compat_min_driver(
        self, release: TorchRelease, variant: str, system: str = "linux"
    ) -> str | None:
        """Minimum driver for full (not minor-version) compatibility with the wheel's bundled runtime."""
        runtime = self.bundled_runtime(release, variant)
        if runtime is None:
            return None
        linux, windows = self.toolkit_drivers.get(
            (runtime.toolkit_cuda, runtime.toolkit_release), (None, None)
        )
        return linux if system == "linux" else windows

    def gpu_by_pci_id(self, device_id: str) -> PciGpu | None:
        """By NVIDIA PCI device id: "2684", "0x2684" or "10de:2684"."""
        key = device_id.strip().lower()
        if ":" in key:
            vendor, _, key = key.partition(":")
            if vendor.removeprefix("0x") != "10de":
                return None
        return self.pci_gpus.get(key.removeprefix("0x"))

    def architecture_last_driver(self, compute_capability: str) -> ArchitectureLastDriver | None:
        return next((a for a in self.architectures if compute_capability in a.compute_capabilities), None)

    def first_linux_driver(self, compute_capability: str) -> str | None:
        """The first Linux driver whose open-module README lists GPUs of this compute capability (Blackwell:
        R570), where known: the floor to quote for them, whatever CUDA a wheel needs (an earlier beta of that
        branch may already have driven some)."""
        arch = self.architecture_last_driver(compute_capability)
        return None if arch is None else dict(arch.first_linux_driver).get(compute_capability)

    def last_codegen_major(self, compute_capability: str) -> int | None:
        """The newest CUDA major whose nvcc still compiles for this compute capability; None: still current,
        or not known."""
        arch = self.architecture_last_driver(compute_capability)
        if arch is None:
            return None
        return dict(arch.codegen_ended_earlier).get(compute_capability, arch.last_toolkit_major_with_codegen)

    def min_driver_for_cuda(self, cuda: str, system: str = "linux") -> str | None:
        """The oldest driver that loads a wheel built for `cuda` ("12.6"), through minor-version compatibility."""
        major = cuda.split(".", maxsplit=1)[0]
        row = self.mvc_min_driver.get(int(major)) if major.isdigit() else None
        return None if row is None else row[0] if system == "linux" else row[1]


# --- pure query helpers --------------------------------------------------------------------------------------


def parse_cc(text: str) -> CC | None:
    """'8.6' -> (8, 6); anything else -> None."""
    return _parse_cc(text) if isinstance(text, str) else None


def _code(text: str, pattern: re.Pattern[str]) -> tuple[CC, str] | None:
    return _parse_code(text, pattern) if isinstance(text, str) else None


# Choosing a wheel asks about the same few strings thousands of times (every release x variant x GPU).
@functools.lru_cache(maxsize=1024)
def _parse_cc(text: str) -> CC | None:
    match = _CC.fullmatch(text.strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


@functools.lru_cache(maxsize=1024)
def _parse_code(text: str, pattern: re.Pattern[str]) -> tuple[CC, str] | None:
    match = pattern.fullmatch(text.strip())
    if not match:
        return None
    return (int(match.group(1)), int(match.group(2))), match.group(3)


def cubin_runs_on(sm: str, cc: str, rule: DeviceRule) -> bool:
    """Can a cubin compiled for `sm` ("sm_86") run on a device of compute capability `cc` ("8.9")?

    Uses PyTorch's own table where it has the SM, else the general rule (same major, minor >=, integrated CCs only
    run their own cubins). Arch-specific "a"/"f" cubins run only on exactly their CC (conservative). Malformed input
    never runs."""
    parsed, device = _code(sm, _SM), parse_cc(cc)
    if parsed is None or device is None:
        return False
    code, suffix = parsed
    if suffix:
        return device == code or rule.renamed_ccs.get(code) == device
    table = rule.cubins.get(code)
    if table is not None:
        return table.runs_on(device)
    return _general_cubin_rule(code, device, rule)


def _general_cubin_rule(code: CC, device: CC, rule: DeviceRule) -> bool:
    if device == code or rule.renamed_ccs.get(code) == device:
        return True
    if code in rule.integrated_ccs or device in rule.integrated_ccs:
        return False
    return device[0] == code[0] and device[1] >= code[1]


def ptx_runs_on(ptx: str, cc: str) -> bool:
    """Can PTX `ptx` ("compute_80") be JIT-compiled for a device of compute capability `cc`? (driver age aside)"""
    parsed, device = _code(ptx, _PTX), parse_cc(cc)
    if parsed is None or device is None:
        return False
    code, suffix = parsed
    return device == code if suffix else device >= code


def arch_supported(arch_list: Iterable[str], ptx_list: Iterable[str], cc: str, rule: DeviceRule) -> bool:
    """Does a build with these SASS targets and PTX targets have kernels for a device of compute capability `cc`?

    `arch_list` may be torch.cuda.get_arch_list() as is: its compute_XY entries count as PTX."""
    sass = list(arch_list)
    ptx = [a for a in sass if a.startswith("compute_")] + list(ptx_list)
    return any(cubin_runs_on(a, cc, rule) for a in sass if a.startswith("sm_")) or any(
        ptx_runs_on(p, cc) for p in ptx
    )


def driver_runs_cuda(driver_max_cuda: str, wheel_cuda: str, minor_version_compat: bool = True) -> bool:
    """Can a driver whose newest CUDA is `driver_max_cuda` ("12.8", as nvidia-smi shows) load a wheel built for
    `wheel_cuda`? Newer drivers run older CUDA; with minor-version compatibility the same major is enough from
    CUDA 11.1 on (CUDA 11.0-era drivers may be below 450.80.02, so 11 needs a driver reporting >= 11.1)."""
    driver, wheel = _minor_tuple(driver_max_cuda), _minor_tuple(wheel_cuda)
    if driver is None or wheel is None:
        return False
    if driver >= wheel:
        return True
    if not minor_version_compat or driver[0] != wheel[0] or wheel[0] < 11:
        return False
    return not (wheel[0] == 11 and driver < (11, 1))


def _minor_tuple(text: str) -> CC | None:
    if not isinstance(text, str):
        return None
    match = _MINOR_PREFIX.match(text.strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


def _minor_tuple_strict(text: str) -> CC:
    found = _minor_tuple(text)
    assert found is not None, text
    return found


def _version_tuple(text: str) -> tuple[int, int, int]:
    match = _VERSION.fullmatch(text)
    assert match is not None, text
    return int(match.group(1)), int(match.group(2)), int(match.group(3))
