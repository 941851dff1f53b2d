"""One recommended torch install: the pins, the index, and why.

The commands change only what must change. A fresh install pins the versions. Replacing another build of
the same or another version pins the exact local version (`torch==2.6.0+cu124`) from the variant's own index:
pip then swaps torch (and the companions named) and leaves every other package alone, where
`--force-reinstall` would download every dependency again. Only a repair of the installed build itself (a
companion of the wrong variant, mixed nvidia-* wheels) reinstalls it with its dependencies.
"""

from __future__ import annotations

from dataclasses import replace

from torch_gpu_doctor.compat.torch_releases import INDEX_URL
from torch_gpu_doctor.facts.torch import TorchPackages
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Unavailable


@dataclass(frozen=True)
class Recommendation:
    torch: str
    torchvision: str | None  # None: not installed, so not installed by this command either
    torchaudio: str | None
    variant: str  # cu126, cpu, ...
    index_url: str | None  # None: the plain PyPI wheel is this variant
    reason: str
    confirmed: bool
    already_installed: bool = False  # the installed torch is this version and variant
    replaces: bool = False  # another build of torch is installed: pin the local version from the index
    untagged: tuple[str, ...] = ()  # companions published as one wheel for every variant: no local version

    def packages(self) -> tuple[str, ...]:
        local = f"+{self.variant}" if self.replaces else ""
        pins = [f"torch=={self.torch}{local}"]
        for name, version in (("torchvision", self.torchvision), ("torchaudio", self.torchaudio)):
            if version:
                pins.append(f"{name}=={version}{'' if name in self.untagged else local}")
        return tuple(pins)

    def index(self) -> str | None:
        """The index to install from: a replacement's local versions live only on the variant's index."""
        if self.index_url is None and self.replaces:
            return INDEX_URL + self.variant
        return self.index_url

    def pip_argv(self, python: str) -> tuple[str, ...]:
        index = ("--index-url", found) if (found := self.index()) else ()
        # a repair: the installed files may be damaged, so neither pip's cache nor what is there is trusted
        repair = ("--force-reinstall", "--no-cache-dir") if self.already_installed else ()
        return (python, "-m", "pip", "install", *repair, *self.packages(), *index)

    def uv_argv(self, python: str) -> tuple[str, ...]:
        """uv chooses PyTorch's index itself with --torch-backend (uv 0.6.9 and newer)."""
        repair = ("--reinstall",) if self.already_installed else ()
        backend = ("--torch-backend", self.variant) if self.index() else ()
        return ("uv", "pip", "install", "--python", python, *repair, *self.packages(), *backend)


def install_argv(pins: tuple[str, ...], variant: str) -> tuple[str, ...]:
    """`python -m pip install PINS` from PyTorch's index for `variant` (cu126, cpu)."""
    return ("python", "-m", "pip", "install", *pins, "--index-url", INDEX_URL + variant)


def reinstall_argv(pins: tuple[str, ...], variant: str, *, no_deps: bool = False) -> tuple[str, ...]:
    """`python -m pip install --force-reinstall PINS` from PyTorch's index for `variant` (cu126, cpu): the build
    named, where pip would keep an installed one whose version already satisfies the pins."""
    deps = ("--no-deps",) if no_deps else ()
    return install_argv(("--force-reinstall", *deps, *pins), variant)


def as_installed(rec: Recommendation, packages: TorchPackages | Unavailable) -> Recommendation:
    """Fit the commands to what is installed: the local version pinned whenever another build may be there
    (unless torch is known to be absent), and a companion known not to be installed left out."""
    if isinstance(packages, Unavailable):  # not known: a paste without a package list
        return replace(rec, replaces=not rec.already_installed)
    absent = {c.name for c in packages.companions if c.version is None and not c.paths}
    return replace(
        rec,
        torchvision=None if "torchvision" in absent else rec.torchvision,
        torchaudio=None if "torchaudio" in absent else rec.torchaudio,
        replaces=packages.version is not None and not rec.already_installed,
    )
