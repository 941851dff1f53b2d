"""Which AMD gfx targets ROCm supports on Linux, and which ones PyTorch's ROCm wheels carry kernels for.

Sources (../shared/reference/hardware.md §6 and compat.md, uv section):
- AMD's compatibility matrix (ROCm/ROCm docs/compatibility/compatibility-matrix.rst @e396b4898f45, ROCm 6.0-6.3.3):
  gfx1100, gfx1030, gfx942, gfx90a, gfx908. ROCm 6.4 adds RDNA4 gfx1200/gfx1201 (llama.cpp PR 15994 against the 6.4.1
  requirements page); ROCm 7.x lists gfx950 (MI355X), gfx942 and gfx90a for Instinct (rocm.docs.amd.com, 7.2.3).
  gfx906/gfx908 are deprecated (maintenance) on current ROCm.
- The gfx names uv (crates/uv-torch accelerator.rs) accepts from `rocm_agent_enumerator`, i.e. the targets its
  LINUX_AMD_GPU_DRIVERS table says PyTorch's ROCm wheels were built for (inferred by the uv authors from
  `torch.cuda.get_arch_list()`; rocm6.2 lacks 1101/1102/1200/1201, gfx950 from rocm7.0, gfx1150/1151 from rocm7.2).
"""

from __future__ import annotations

import re

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.records import dataclass


@dataclass(frozen=True)
class GfxSupport:
    target: str  # "gfx942"
    family: str  # "CDNA3 (Instinct MI300)"
    since_rocm: tuple[int, int]  # the oldest ROCm whose Linux support list names it (6.0: the oldest we have)
    deprecated: bool = False
    since_release: str = ""  # that release to the patch, where its support list names one ("6.4.1")

    @property
    def first_release(self) -> str:
        return self.since_release or ".".join(map(str, self.since_rocm))


OFFICIAL_LINUX: dict[str, GfxSupport] = {
    s.target: s
    for s in (
        GfxSupport("gfx908", "CDNA (Instinct MI100)", (6, 0), deprecated=True),
        GfxSupport("gfx90a", "CDNA2 (Instinct MI200)", (6, 0)),
        GfxSupport("gfx942", "CDNA3 (Instinct MI300)", (6, 0)),
        GfxSupport("gfx950", "CDNA4 (Instinct MI350)", (7, 0)),
        GfxSupport("gfx1030", "RDNA2", (6, 0)),
        GfxSupport("gfx1100", "RDNA3", (6, 0)),
        # the 6.4.1 requirements page lists the RX 9000 series (llama.cpp PR 15994 cites it)
        GfxSupport("gfx1200", "RDNA4", (6, 4), since_release="6.4.1"),
        GfxSupport("gfx1201", "RDNA4", (6, 4), since_release="6.4.1"),
    )
}

DEPRECATED = frozenset({"gfx906", "gfx908"})

# Targets PyTorch's ROCm wheels have kernels for in at least one published variant (uv's list).
TORCH_WHEEL_TARGETS = frozenset(
    {
        "gfx900",
        "gfx906",
        "gfx908",
        "gfx90a",
        "gfx942",
        "gfx950",
        "gfx1030",
        "gfx1100",
        "gfx1101",
        "gfx1102",
        "gfx1150",
        "gfx1151",
        "gfx1200",
        "gfx1201",
    }
)


# Each ROCm variant's own list: uv's LINUX_AMD_GPU_DRIVERS (crates/uv-torch/src/backend.rs, the 2026 copy with
# rocm7.2; "the GPU architectures supported by each ROCm version, from torch.cuda.get_arch_list()"). rocm6.2 lacks
# gfx1101 and gfx1102 although rocm6.1 has gfx1101; RDNA4 comes with rocm6.2.4, gfx950 with 7.0, gfx1150/1151 with 7.2.
_BASE = ("gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100")
_RDNA3_4 = ("gfx1101", "gfx1102", "gfx1200", "gfx1201")
WHEEL_TARGETS_BY_ROCM: dict[str, frozenset[str]] = {
    "6.0": frozenset(_BASE),
    "6.1": frozenset((*_BASE, "gfx1101")),
    "6.2": frozenset(_BASE),
    "6.2.4": frozenset((*_BASE, *_RDNA3_4)),
    "6.3": frozenset((*_BASE, *_RDNA3_4)),
    "6.4": frozenset((*_BASE, *_RDNA3_4)),
    "7.0": frozenset((*_BASE, "gfx950", *_RDNA3_4)),
    "7.1": frozenset((*_BASE, "gfx950", *_RDNA3_4)),
    "7.2": frozenset((*_BASE, "gfx950", *_RDNA3_4, "gfx1150", "gfx1151")),
}
_ROCM_RELEASE = lazy(r"^(\d+)\.(\d+)(?:\.(?:(\d{1,2})|(?P<hip>\d{3,})))?(?!\d)")


def wheel_targets(rocm: str | None) -> frozenset[str]:
    """The targets the PyTorch wheels of one ROCm variant carry: "6.2" (a `+rocm6.2` wheel), "6.2.4"; a HIP
    version ("6.2.41133-dd7f95766") names its minor release only, so it gets what any variant of that minor has.
    Every variant's (TORCH_WHEEL_TARGETS) where the data has none of that release."""
    found = _ROCM_RELEASE.match(rocm) if rocm else None
    if found is None:
        return TORCH_WHEEL_TARGETS
    minor = f"{found[1]}.{found[2]}"
    exact = None if found["hip"] else WHEEL_TARGETS_BY_ROCM.get(f"{minor}.{found[3]}" if found[3] else minor)
    if exact is not None:
        return exact
    same_minor = [
        t for key, t in WHEEL_TARGETS_BY_ROCM.items() if key == minor or key.startswith(f"{minor}.")
    ]
    return frozenset().union(*same_minor) if same_minor else TORCH_WHEEL_TARGETS


def override_for(target: tuple[int, int, int], known: frozenset[str] = TORCH_WHEEL_TARGETS) -> str | None:
    """The HSA_OVERRIDE_GFX_VERSION value of the closest target the wheels do have: same major and minor, lowest
    stepping (gfx1031 -> "10.3.0" for gfx1030). None when no target of that family is built."""
    major, minor, _ = target
    steppings = []
    for name in known:
        digits = name.removeprefix("gfx")
        if len(digits) < 3 or not digits[:-2].isdigit():
            continue
        if int(digits[:-2]) == major and int(digits[-2], 16) == minor:
            steppings.append(int(digits[-1], 16))
    if not steppings:
        return None
    return f"{major}.{minor}.{min(steppings)}"


# "5700XT", "7900 XTX" without "RX": Radeon's suffix (GeForce's is Ti); never a Ryzen 5000 XT processor
BARE_XT = r"(?<![A-Za-z0-9])(?<!Ryzen [3579] )[5-9]\d{3}[ \t]?XTX?(?![A-Za-z0-9])"
_BARE_XT = lazy(BARE_XT, re.IGNORECASE)

# Product names -> gfx target, for pastes that name the card but not its target (mobile and "M" parts first).
# Sources: Gentoo's amdgpu_targets_* USE flag descriptions (packages.gentoo.org/useflags/amdgpu_targets_gfxNNNN:
# gfx1010, gfx1012, gfx1030, gfx1031, gfx1100, gfx1101, gfx1102, gfx1103, gfx1150 "Strix Point", gfx1151 "Strix
# Halo", the Ryzen AI Max APUs); gfx1032 (RX 6600 /
# 6650 XT), gfx1200 (RX 9060 XT) and gfx1201 (RX 9070) from VecSzn/PolyStrata discussion #49, whose owners ran them.
PRODUCT_TARGETS: tuple[tuple[str, str], ...] = (
    (r"RX\s?6(?:800|700)M\b|RX\s?6(?:750|700)(?:\s?XT)?\b", "gfx1031"),
    (r"RX\s?6(?:950|900|800)(?:\s?XT)?\b", "gfx1030"),
    (r"RX\s?66[05]0(?:\s?XT)?\b|RX\s?6600M?\b", "gfx1032"),
    (r"RX\s?5[67]00(?:\s?XT|M)?\b", "gfx1010"),
    (r"RX\s?5[35]00(?:\s?XT|M)?\b", "gfx1012"),
    (r"RX\s?7900(?:\s?XTX?|\s?GRE)?\b", "gfx1100"),
    (r"RX\s?7[78]00(?:\s?XT)?\b", "gfx1101"),
    (r"RX\s?7600(?:\s?XT|M)?\b", "gfx1102"),
    (r"Radeon\s?7[4-8]0M\b", "gfx1103"),
    (r"Radeon\s?8[89]0M\b", "gfx1150"),
    (r"Radeon\s?80[456]0S\b|Strix\s?Halo\b|Ryzen\s?AI\s?Max", "gfx1151"),
    (r"Strix\s?Point\b", "gfx1150"),
    (r"RX\s?9060(?:\s?XT)?\b", "gfx1200"),
    (r"RX\s?9070(?:\s?XT|\s?GRE)?\b", "gfx1201"),
    # The chips' code names, as people and rocminfo's marketing names write them ("navi10", "Navi 21"): the
    # same Gentoo descriptions for navi10/12/14/21/22/31/32/33; navi23 "dimgrey cavefish" = gfx1032 and navi24
    # "beige goby" = gfx1034 (LLVM's AMDGPUUsage processor table); navi44 = RX 9060 XT, navi48 = RX 9070 (above).
    (r"Navi\s?10\b", "gfx1010"),
    (r"Navi\s?12\b", "gfx1011"),
    (r"Navi\s?14\b", "gfx1012"),
    (r"Navi\s?21\b", "gfx1030"),
    (r"Navi\s?22\b", "gfx1031"),
    (r"Navi\s?23\b", "gfx1032"),
    (r"Navi\s?24\b", "gfx1034"),
    (r"Navi\s?31\b", "gfx1100"),
    (r"Navi\s?32\b", "gfx1101"),
    (r"Navi\s?33\b", "gfx1102"),
    (r"Navi\s?44\b", "gfx1200"),
    (r"Navi\s?48\b", "gfx1201"),
)


def gfx_of_product(text: str) -> str | None:
    """The gfx target of the first AMD card named in `text` ("an rx 6600", "AMD Radeon RX 6700 XT", "5700XT",
    "navi10"), if known. A number with XT and no RX before it is the Radeon RX of that number."""
    text = _BARE_XT.sub(r"RX \g<0>", text)
    for pattern, target in PRODUCT_TARGETS:
        if re.search(pattern, text, re.IGNORECASE):
            return target
    return None
