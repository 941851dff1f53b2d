"""How the checks name a Jetson board: its model, GPU, L4T and JetPack release in one phrase."""

from __future__ import annotations

from torch_gpu_doctor.compat.jetson import load_jetson
from torch_gpu_doctor.facts.jetson import JetsonFacts


def board_line(jetson: JetsonFacts) -> str:
    """ "NVIDIA Jetson AGX Orin Developer Kit (Orin GPU, compute capability 8.7), L4T 36.4.3 (JetPack 6.1 / 6.2,
    CUDA 12.6)"."""
    data = load_jetson()
    soc, release = data.soc(jetson.soc), data.release(jetson.l4t)
    name = jetson.model or "A Jetson board"
    gpu = f" ({soc.name} GPU, compute capability {soc.capability})" if soc is not None else ""
    l4t = f", L4T {jetson.l4t}" if jetson.l4t else ", L4T release unknown"
    jetpack = f" (JetPack {release.jetpack}, CUDA {release.cuda})" if release is not None else ""
    return f"{name}{gpu}{l4t}{jetpack}"
