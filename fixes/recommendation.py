"""One recommended torch install: the pins, the index, and why."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Recommendation:
    torch: str
    torchvision: str | None
    torchaudio: str | None
    variant: str  # cu126, cpu, ...
    index_url: str | None  # None: the plain PyPI wheel is this variant
    reason: str
    confirmed: bool
    already_installed: bool = False  # the installed torch is this version and variant

    def packages(self) -> tuple[str, ...]:
        pins = [f"torch=={self.torch}"]
        pins += [f"torchvision=={self.torchvision}"] if self.torchvision else []
        pins += [f"torchaudio=={self.torchaudio}"] if self.torchaudio else []
        return tuple(pins)

    def pip_argv(self, python: str) -> tuple[str, ...]:
        index = ("--index-url", self.index_url) if self.index_url else ()
        return (python, "-m", "pip", "install", "--force-reinstall", *self.packages(), *index)

    def uv_argv(self, python: str) -> tuple[str, ...]:
        index = ("--index-url", self.index_url) if self.index_url else ()
        return ("uv", "pip", "install", "--python", python, "--reinstall", *self.packages(), *index)
