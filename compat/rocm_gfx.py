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

from dataclasses import dataclass


@dataclass(frozen=True)
class GfxSupport:
    target: str  # "gfx942"
    family: str  # "CDNA3 (Instinct MI300)"
    since_rocm: tuple[int, int]  # the oldest ROCm whose Linux support list names it (6.0: the oldest we have)
    deprecated: bool = False


OFFICIAL_LINUX: dict[str, GfxSupport] = {
    s.target: s
    for s in (
        GfxSupport("gfx908", "CDNA (Instinct MI100)", (6, 0), deprecated=True),
        GfxSupport("gfx90a", "CDNA2 (Instinct MI200)", (6, 0)),
        GfxSupport("gfx942", "CDNA3 (Instinct MI300)", (6, 0)),
        GfxSupport("gfx950", "CDNA4 (Instinct MI350)", (7, 0)),
        GfxSupport("gfx1030", "RDNA2", (6, 0)),
        GfxSupport("gfx1100", "RDNA3", (6, 0)),
        GfxSupport("gfx1200", "RDNA4", (6, 4)),
        GfxSupport("gfx1201", "RDNA4", (6, 4)),
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
