"""The GPUs llama.cpp's ggml backends list as they start ("ggml_cuda_init: found 2 ROCm devices:", then
"  Device 1: AMD Radeon 740M Graphics, gfx1103 (0x1103), VMM: no, ..."), and what its own "invalid device
function" on one of them means: that device's gfx target is missing from the build, and an integrated GPU beside a
card is the usual one (blind set 23: llama.cpp#22013, a Radeon RX 9070 with a Ryzen's 740M)."""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Remediation, Status, Target
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS

GGML_INVALID_FUNCTION = "rocm_ggml_invalid_device_function"
GGML_DEVICES = "llama.cpp's device list"  # the source of GPUs named by it

_DEVICE = lazy(
    r"^[ \t]*Device[ \t]+(?P<index>\d{1,2}):[ \t]+(?P<name>[^,\n]+),[ \t]+(?P<gfx>gfx[0-9a-f]{3,4})\b", re.M
)
_CURRENT = lazy(r"current device:[ \t]*(?P<index>\d{1,2})")
# AMD's integrated GPUs: named "... Graphics" ("AMD Radeon 740M Graphics", "AMD Radeon Graphics") or by the
# targets of Ryzen APUs (Renoir/Cezanne gfx90c, Rembrandt gfx1035, Raphael gfx1036, Phoenix gfx1103, Strix
# Point gfx1150, Krackan gfx1152); Strix Halo's gfx1151 is the machine's main GPU and not counted
_INTEGRATED_TARGETS = frozenset(
    {"gfx902", "gfx909", "gfx90c", "gfx1035", "gfx1036", "gfx1103", "gfx1150", "gfx1152"}
)


@dataclass(frozen=True)
class GgmlDevice:
    index: int
    name: str
    gfx: str

    @property
    def integrated(self) -> bool:
        return self.gfx in _INTEGRATED_TARGETS or self.name.rstrip().endswith("Graphics")


def ggml_devices(text: str) -> tuple[GgmlDevice, ...]:
    """The ROCm devices ggml lists, each once, in its order."""
    seen: dict[int, GgmlDevice] = {}
    for found in _DEVICE.finditer(text, 0, MAX_CHARS):
        index = int(found["index"])
        seen.setdefault(index, GgmlDevice(index, found["name"].strip(), found["gfx"]))
    return tuple(seen.values())


def on_a_device_the_build_lacks(verdict: Verdict, pasted: PastedText) -> Verdict:
    """ggml's "invalid device function" on the device it names: where that device is an integrated GPU beside a
    card, hiding it (HIP_VISIBLE_DEVICES) keeps the model on the card; otherwise the build needs its gfx target."""
    lines = {h.line for h in pasted.hits if h.signature.id == GGML_INVALID_FUNCTION}
    finding = verdict.finding
    if finding.status is not Status.FAIL or not lines.intersection(verdict.lines):
        return verdict
    text = pasted.paste.text[:MAX_CHARS]
    devices = ggml_devices(text)
    current = _CURRENT.search(text)
    failing = next((d for d in devices if current is not None and d.index == int(current["index"])), None)
    if failing is None:
        return verdict
    cards = [d for d in devices if not d.integrated and d.index != failing.index]
    ollama = "ollama" in text.lower()  # Ollama ships ggml built: its own targets, no build to change
    if failing.integrated and cards:
        keep = ",".join(str(d.index) for d in cards)
        summary = (
            f"llama.cpp put work on the integrated GPU, device {failing.index} ({failing.name}, {failing.gfx}), "
            f"which its ROCm build has no kernels for; the card, {cards[0].name} ({cards[0].gfx}), is device "
            f"{cards[0].index}."
        )
        fix = Remediation(
            text=f"Hide the integrated GPU from ROCm so the model runs on the card alone: start the program with "
            f"HIP_VISIBLE_DEVICES={keep} (or pick the card with llama.cpp's --device option). To use both, build "
            f'llama.cpp for both targets (-DGPU_TARGETS="{";".join([*(d.gfx for d in cards), failing.gfx])}"); '
            "disabling the integrated GPU in the firmware settings also works.",
            commands=(
                Command(
                    ("env", f"HIP_VISIBLE_DEVICES={keep}", "COMMAND"),
                    note="COMMAND: llama-server or llama-cli as you run it",
                ),
            ),
            target=Target.SYSTEM,
        )
    elif ollama:
        summary = f"Ollama's ROCm libraries have no kernels for device {failing.index}, {failing.name} ({failing.gfx})."
        fix = Remediation(
            text="Ollama's ROCm build covers the gfx targets ROCm supports: for another target of a supported family, "
            "set HSA_OVERRIDE_GFX_VERSION in Ollama's environment to that family's supported target (10.3.0 for "
            "gfx103x, 11.0.0 for gfx110x), as Ollama's GPU documentation says, and restart it; an integrated GPU beside "
            "a card is hidden with HIP_VISIBLE_DEVICES instead.",
            target=Target.SYSTEM,
        )
    else:
        summary = (
            f"llama.cpp's ROCm build has no kernels for device {failing.index}, {failing.name} ({failing.gfx}): its "
            "GPU targets do not include it."
        )
        fix = Remediation(
            text=f"Build llama.cpp with the GPU's target: -DGPU_TARGETS={failing.gfx} (AMDGPU_TARGETS in releases "
            "before 2025), beside -DGGML_HIP=ON. A target ROCm itself does not support needs HSA_OVERRIDE_GFX_VERSION "
            "to a supported one of its family instead.",
            commands=(
                Command(
                    (
                        "cmake",
                        "-S",
                        ".",
                        "-B",
                        "build",
                        "-DGGML_HIP=ON",
                        f"-DGPU_TARGETS={failing.gfx}",
                        "-DCMAKE_BUILD_TYPE=Release",
                    ),
                    note="in llama.cpp's checkout, then cmake --build build",
                ),
            ),
            target=Target.SYSTEM,
        )
    finding = dataclasses.replace(finding, summary=summary, remediation=fix)
    return dataclasses.replace(verdict, finding=finding, find_out=None)
