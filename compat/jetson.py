"""Jetson boards (compat/jetson.json): the compute capability of each Tegra GPU, and per L4T release the JetPack,
CUDA and Python it ships with and the torch that runs on it (NVIDIA's builds, never PyPI's)."""

from __future__ import annotations

import functools
import json
from typing import Any

from torch_gpu_doctor.compat import CompatDataError
from torch_gpu_doctor.package_data import package_text
from torch_gpu_doctor.records import dataclass


@dataclass(frozen=True)
class JetsonSoc:
    soc: str  # "tegra234"
    name: str  # "Orin"
    capability: str  # "8.7"
    source: str
    last_l4t: str | None = None  # the newest L4T release for this SoC, where NVIDIA's support ends ("32.7")


@dataclass(frozen=True)
class JetsonRelease:
    l4t: str  # "36.4": the rows match by prefix, most specific first
    jetpack: str
    cuda: str
    python: str
    index_url: str | None  # a pip index of NVIDIA's Jetson builds (JetPack 6.1 and later)
    wheel: str | None  # else one wheel file of NVIDIA's
    source: str

    def matches(self, l4t: str) -> bool:
        return l4t == self.l4t or l4t.startswith(self.l4t + ".")


@dataclass(frozen=True)
class JetsonData:
    socs: tuple[JetsonSoc, ...]
    releases: tuple[JetsonRelease, ...]

    def soc(self, name: str | None) -> JetsonSoc | None:
        return next((s for s in self.socs if s.soc == name), None)

    def release(self, l4t: str | None) -> JetsonRelease | None:
        return next((r for r in self.releases if l4t and r.matches(l4t)), None)

    def release_of_jetpack(self, jetpack: str) -> JetsonRelease | None:
        """The row whose JetPack list names `jetpack`: "6.2" is in "6.1 / 6.2", and "5.1.2" and "5.1" are in
        "5.1.x" (an x stands for any release of that minor)."""
        said = jetpack.split(".")
        for row in self.releases:
            for listed in (v.strip().split(".") for v in row.jetpack.split("/")):
                common = min(len(said), len(listed))
                if all(b in (a, "x") for a, b in zip(said[:common], listed[:common], strict=True)):
                    return row
        return None


def parse_jetson(data: Any) -> JetsonData:
    try:
        socs = tuple(
            JetsonSoc(
                str(s["soc"]),
                str(s["name"]),
                str(s["capability"]),
                str(s["source"]),
                str(s["last_l4t"]) if s.get("last_l4t") is not None else None,
            )
            for s in data["socs"]
        )
        releases = tuple(
            JetsonRelease(
                l4t=str(r["l4t"]),
                jetpack=str(r["jetpack"]),
                cuda=str(r["cuda"]),
                python=str(r["python"]),
                index_url=r["torch"].get("index_url"),
                wheel=r["torch"].get("wheel"),
                source=str(r["source"]),
            )
            for r in data["releases"]
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise CompatDataError(f"jetson.json: {exc!r}") from exc
    for r in releases:
        if (r.index_url is None) == (r.wheel is None):
            raise CompatDataError(
                f"jetson.json: L4T {r.l4t} needs exactly one of torch.index_url, torch.wheel"
            )
    return JetsonData(socs, releases)


@functools.cache
def load_jetson() -> JetsonData:
    text = package_text("torch_gpu_doctor.compat", "jetson.json")
    return parse_jetson(json.loads(text))
