"""Which torch wheel fits this machine, and the exact command that installs it into the target environment.

Pure: facts in, a Recommendation out. Policy (issue 2/6): keep the installed torch version when one of its
variants works here; otherwise the newest release that has kernels for every GPU, loads on the installed
driver and exists for this Python and platform; within a release prefer the plain PyPI wheel. Confirmed data
first; entries marked unconfirmed are used only when nothing confirmed fits, and the result says so.
"""

from __future__ import annotations

import functools
from dataclasses import replace

from packaging.version import InvalidVersion, Version

from torch_gpu_doctor.compat import load_matrix
from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.compat.torch_releases import (
    INDEX_URL,
    LegacyBuild,
    LegacyRelease,
    TorchCompat,
    TorchRelease,
    TorchVariant,
    arch_supported,
    driver_runs_cuda,
    version_key,
)
from torch_gpu_doctor.compat.wheel_candidates import (
    Candidate,
    supporting_candidates,
)
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.distro import recipe
from torch_gpu_doctor.fixes.driver_plan import plan_driver, planned_driver_cuda
from torch_gpu_doctor.fixes.driver_update import driver_update
from torch_gpu_doctor.fixes.hidden_gpu import hidden_gpu_reason
from torch_gpu_doctor.fixes.jetson import jetson_torch_remediation
from torch_gpu_doctor.fixes.recommendation import Recommendation, as_installed
from torch_gpu_doctor.fixes.target import (
    driver_max_cuda,
    driver_system,
    gpu_capabilities,
    installed_torch,
    installed_variant,
    platform_gap,
    python_command,
    python_minor,
    target_platform,
)
from torch_gpu_doctor.fixes.torch_rocm import recommend_rocm
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Remediation, Target
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Reason, Unavailable

INDEX_CPU = "https://download.pytorch.org/whl/cpu"
BROAD_CUDA_MAJOR = (
    12  # CUDA 12 builds run on every driver from R525 and every GPU from Maxwell; 13 needs R580
)


def _from_candidate(
    candidate: Candidate, version: str, reason: str, already_installed: bool = False
) -> Recommendation:
    companion = candidate.release.companions.for_version(version)
    return Recommendation(
        torch=version,
        torchvision=companion.torchvision or None,
        torchaudio=companion.torchaudio or None,
        untagged=tuple(sorted(companion.untagged)),
        variant=candidate.variant.name,
        index_url=None if candidate.pypi_default else candidate.variant.index_url,
        reason=reason,
        confirmed=candidate.confirmed,
        already_installed=already_installed,
    )


def recommend(
    facts: Facts,
    data: TorchCompat | None = None,
    platform: str | None = None,
    unknown_driver_cuda: str | None = None,
) -> Recommendation | None:
    """The wheel to install, or None when no wheel can work here with the installed driver. `platform`
    stands in for the interpreter's when the facts do not give it (a paste), and `unknown_driver_cuda` for
    the driver's CUDA when no driver version is known (else: the driver gpu-doctor would install).

    Only the companions that are installed come along (a paste that does not show them keeps both), and
    another installed build is replaced by its exact local version (recommendation.py). None on a Jetson:
    no PyPI or download.pytorch.org wheel uses its GPU (fixes/jetson.py gives NVIDIA's)."""
    if facts.jetson_board is not None:
        return None
    rec = _recommend(facts, data, platform, unknown_driver_cuda)
    return None if rec is None else as_installed(rec, facts.torch_packages)


def _recommend(
    facts: Facts,
    data: TorchCompat | None,
    platform: str | None,
    unknown_driver_cuda: str | None,
) -> Recommendation | None:
    data = data or load_torch_releases()
    platform = target_platform(facts) or platform
    python = python_minor(facts)
    if platform is None:
        return None
    capabilities = gpu_capabilities(facts)
    driver_cuda = driver_max_cuda(facts)
    installed = installed_torch(facts)
    if not capabilities:
        if unnamed_nvidia_gpu(facts):  # a pasted error about a GPU it does not name: see unnamed_gpu_fix
            return None
        if any(g.vendor == "amd" for g in facts.gpus):
            return recommend_rocm(facts, data)
        kept = _keep_hidden_gpu_build(facts, data, installed)
        if kept is None and any(g.vendor == "nvidia" for g in facts.gpus):
            return (
                None  # an NVIDIA GPU whose capability is not known ("NVIDIA Graphics Device"): no blind pick
            )
        return kept or _cpu_recommendation(data, python, installed, installed_variant(facts) == "cpu")
    assumed = driver_cuda is None  # no driver, or one we cannot read: choose for the driver these GPUs need
    if driver_cuda is None:
        driver_cuda = unknown_driver_cuda or planned_driver_cuda(facts, data)

    def after(candidate: Candidate) -> str:
        if not assumed:
            return ""
        system = driver_system(facts)
        needs = data.min_driver_for_cuda(candidate.variant.cuda or "", system)
        firsts = [f for f in (data.first_linux_driver(cc) for cc in capabilities) if f is not None]
        if firsts and system == "linux":  # a GPU newer than the wheel's CUDA floor: its own first driver
            needs = max([*firsts, *([needs] if needs else [])], key=version_key)
        elif firsts:
            branch = f"of the R{max(firsts, key=version_key).split('.')[0]} branch or newer for this GPU"
            needs = f"{needs}, and {branch}" if needs else branch
        if _no_driver(facts):
            return f", once the NVIDIA driver (≥ {needs}) is installed: install the driver first"
        return f", if the driver is ≥ {needs} (its version could not be read here)"

    variant = installed_variant(facts)
    itself = [
        c
        for c in supporting_candidates(data, capabilities, python, platform, driver_cuda, True)
        if installed in c.release.all_versions and c.variant.name == variant
    ]
    if installed and itself:  # no reinstall just to switch to the PyPI default or to confirmed data
        return _from_candidate(
            itself[0], installed, "the installed build already fits this machine" + after(itself[0]), True
        )
    for include_unconfirmed in (False, True):
        candidates = supporting_candidates(
            data, capabilities, python, platform, driver_cuda, include_unconfirmed
        )
        if not candidates:
            continue
        same = [c for c in candidates if installed and installed in c.release.all_versions]
        if same:
            return _from_candidate(
                same[0],
                installed or same[0].release.latest,
                "keeps the installed torch version" + after(same[0]),
            )
        closest = _closest_upgrade(candidates, installed)
        best = closest or candidates[0]
        which = f"the release closest to torch {installed}" if closest else "the newest torch"
        return _from_candidate(
            best,
            best.release.latest,
            f"{which} with kernels for compute capability {', '.join(sorted(set(capabilities)))}"
            + (after(best) or f" on CUDA ≤ {driver_cuda}"),
        )
    return None


def _closest_upgrade(candidates: list[Candidate], installed: str | None) -> Candidate | None:
    """The oldest release at or after the installed torch's minor that works here: a project pinned to an old
    torch (a 2022 repository's 1.7) moves as little as the GPU needs (1.13, not today's newest), since every
    minor release between breaks some API. None when nothing installed is known or every candidate is older
    (a downgrade: the newest that works is the closest)."""
    if not installed:
        return None
    floor = version_key(installed.split("+")[0])[:2]
    newer = [c for c in candidates if version_key(c.release.version)[:2] >= floor]
    if not newer:
        return None
    oldest = newer[-1].release
    return next(c for c in newer if c.release is oldest)


def _no_driver(facts: Facts) -> bool:
    """True when no NVIDIA driver is installed (not merely unreadable: permission denied stays unknown)."""
    driver = facts.driver
    if isinstance(driver, Unavailable):
        return driver.reason is Reason.NOT_FOUND
    return isinstance(driver.version, Unavailable) and driver.version.reason is Reason.NOT_FOUND


def _keep_hidden_gpu_build(facts: Facts, data: TorchCompat, installed: str | None) -> Recommendation | None:
    """The installed CUDA build, unchanged, when the GPU is hidden rather than absent (fixes/hidden_gpu.py)."""
    variant = installed_variant(facts)
    why = hidden_gpu_reason(facts)
    if why is None or installed is None or variant is None or not variant.startswith("cu"):
        return None
    release = next((r for r in data.releases if installed in r.all_versions), None)
    found = release.variant(variant) if release is not None else None
    if release is None or found is None:
        return None
    platform = target_platform(facts) or ""
    candidate = Candidate(release, found, platform, found.unconfirmed is None)
    return _from_candidate(candidate, installed, f"keeps the installed {variant} build: {why}", True)


def _cpu_recommendation(
    data: TorchCompat, python: str | None, installed: str | None, cpu_installed: bool
) -> Recommendation | None:
    releases = [r for r in data.releases if python is None or python in r.python_versions]
    kept = next((r for r in releases if installed and installed in r.all_versions), None)
    rel = kept or (releases[0] if releases else None)
    if rel is None:
        return None
    version = installed if kept is not None and installed else rel.latest
    companion = rel.companions.for_version(version)
    return Recommendation(
        torch=version,
        torchvision=companion.torchvision or None,
        torchaudio=companion.torchaudio or None,
        untagged=tuple(sorted(companion.untagged)),
        variant="cpu",
        index_url=INDEX_CPU,
        reason="no usable NVIDIA GPU here: the CPU build avoids several GB of CUDA libraries",
        confirmed=(cpu := rel.variant("cpu")) is not None and cpu.unconfirmed is None,
        already_installed=cpu_installed and kept is not None,
    )


def cpu_build_command(facts: Facts, data: TorchCompat | None = None, note: str = "the CPU build") -> Command:
    """The CPU build into the diagnosed environment, replacing whatever build is there: a plain `pip install
    torch --index-url .../cpu` over an installed CUDA torch prints "Requirement already satisfied" and changes
    nothing (blind set 23), so the local versions (`torch==2.9.1+cpu`) and the companions are pinned, as every
    other replacement here (recommendation.py)."""
    data = data or load_torch_releases()
    python = python_command(facts)
    rec = _cpu_recommendation(
        data, python_minor(facts), installed_torch(facts), installed_variant(facts) == "cpu"
    )
    if rec is None:  # no release for this Python in the data: the index's newest for it
        return Command((python, "-m", "pip", "install", "torch", "--index-url", INDEX_CPU), note=note)
    return Command(as_installed(rec, facts.torch_packages).pip_argv(python), note=note)


def driver_remediation(facts: Facts) -> Remediation:
    """When no wheel can run on the installed driver, the fix is the driver, where the driver lives."""
    plan = plan_driver(facts)
    needed = " ".join(t for t in (plan.summary(), *plan.end_of_life) if t)
    oldest = load_torch_releases().releases[-1].version  # newest first: the oldest the data knows
    lead = (
        f"No torch release from {oldest} on (the releases gpu-doctor knows) supports {_gpus(facts)} with the "
        f"installed driver{_driver_cuda(facts)}; older releases may, without the fixes and features since."
    )
    return driver_update(facts, plan, lead, needed)


def _gpus(facts: Facts) -> str:
    caps = sorted(set(gpu_capabilities(facts)))
    return f"compute capability {', '.join(caps)}" if caps else "this GPU"


def _driver_cuda(facts: Facts) -> str:
    driver = facts.driver
    if isinstance(driver, Unavailable) or not isinstance(driver.cuda_version, str):
        return ""
    return f" (CUDA ≤ {driver.cuda_version})"


def fix_for_torch(facts: Facts) -> Remediation:
    """The recommended wheel; what keeps a wheel from being chosen (an unknown or unsupported platform or
    Python); else the driver, when no wheel can work on it."""
    if facts.jetson_board is not None:  # NVIDIA's build for the board's JetPack, never a PyPI wheel
        return jetson_torch_remediation(facts)
    data = load_torch_releases()
    same_version = other_legacy_build(facts, data)
    if same_version is not None:
        return same_version
    rec = recommend(facts, data)
    if rec is not None:
        return install_remediation(facts, rec)
    assumed = _assumed_platform(facts)
    # a paste: the driver on that machine, if unknown, is taken as one that runs every CUDA 12 build
    rec = recommend(facts, data, assumed, f"{BROAD_CUDA_MAJOR}.9") if assumed is not None else None
    if rec is not None:  # the CUDA variant does not depend on the Python: pip picks the file for it
        # always from the variant's own index: PyPI's default build differs between platforms (CPU on Windows)
        python = facts.python
        named = not isinstance(python, Unavailable) and python.executable not in (None, "", "python")
        unsaid = (
            "; the interpreter's version is not known here, so the index is named and pip picks its file"
            if named
            else "; the interpreter is not known here, so the index is named and pip picks its file"
        )
        return install_remediation(
            facts, replace(rec, index_url=INDEX_URL + rec.variant, reason=rec.reason + unsaid)
        )
    unnamed = unnamed_gpu_fix(facts, data) if unnamed_nvidia_gpu(facts) else None
    if unnamed is not None:
        return unnamed
    too_old = older_than_every_build(facts, data)
    if too_old is not None:
        return too_old
    older_torch = _driver_for_an_older_torch(facts, data)
    if older_torch is not None:
        return older_torch
    platform = platform_gap(facts) if assumed is None else None  # a paste's unsaid platform was assumed above
    python_gap = _python_gap(facts, data)
    old_python = legacy_for_python(facts, data) if python_gap and not platform else None
    if old_python is not None:
        return old_python
    gaps = [g for g in (platform, python_gap) if g]
    if gaps and not _driver_blocks(facts, data):
        return Remediation(
            text=f"gpu-doctor cannot choose a torch wheel: {'; '.join(gaps)}.", target=Target.PYTHON_ENV
        )
    return driver_remediation(facts)


def legacy_for_the_driver(facts: Facts, data: TorchCompat) -> Remediation | None:
    """A driver too old for every current release (CUDA 10.x and before), with no installed torch to keep, on a
    machine whose driver the person cannot change (a cluster's is its administrators'): the newest torch of
    1.4-1.12 built for a CUDA it runs, beside the driver that runs current torch (blind set 23: found version
    10010 on a SLURM node). Elsewhere the driver is the fix; triage offers this where the paste shows such a
    machine."""
    driver_cuda, capabilities = driver_max_cuda(facts), gpu_capabilities(facts)
    if driver_cuda is None or installed_torch(facts) is not None:
        return None
    fit = _LegacyFit(data, wheel_platform(facts), driver_cuda, capabilities)
    found = fit.newest(python_minor(facts))  # wheels for the environment's Python, where the paste shows it
    if found is None:
        return None
    build, version, words = found
    kernels = (
        f" and kernels for compute capability {', '.join(sorted(set(capabilities)))}" if capabilities else ""
    )
    plan = plan_driver(facts)
    needed = " ".join(t for t in (plan.summary(), *plan.end_of_life) if t)
    return _legacy_install(
        facts,
        build,
        words,
        f"Keep the driver (CUDA ≤ {driver_cuda}) and install torch {version} ({build.variant.name}), the newest "
        f"torch built for a CUDA it runs{kernels}",
        "Current torch needs a newer driver instead" + (f": {needed}" if needed else "") + ".",
    )


PREVIOUS_VERSIONS = "https://pytorch.org/get-started/previous-versions/"


def other_legacy_build(facts: Facts, data: TorchCompat) -> Remediation | None:
    """An installed torch of 1.4-1.12 whose own build does not fit (no kernels for a GPU, a CUDA the driver does
    not run, or CPU only) while another build of the same version does: keep the version the project pinned
    (torch==1.7.1+cu101 on an RTX 3090 -> 1.7.1+cu110), with pytorch.org's own command for that build."""
    installed, capabilities = installed_torch(facts), gpu_capabilities(facts)
    legacy = data.legacy_release(installed) if installed else None
    if legacy is None or installed is None or not capabilities:
        return None
    fit = _LegacyFit(data, wheel_platform(facts), driver_max_cuda(facts), capabilities)
    current = legacy.build(installed_variant(facts) or "")
    if current is not None and fit.command(legacy, current, installed) is not None:
        return None  # its own build fits: what fails is not the build
    for build in _newest_cuda_first(legacy):  # the newest CUDA that fits: the one most drivers and GPUs take
        words = fit.command(legacy, build, installed)
        if words is not None:
            return _legacy_install(
                facts,
                build,
                words,
                f"Keep torch {installed} and install its CUDA {build.variant.cuda} build ({build.variant.name}), "
                f"whose kernels run on compute capability {', '.join(sorted(set(capabilities)))}",
                "A newer torch is the other way, if the project allows it.",
            )
    return None


def _driver_for_an_older_torch(facts: Facts, data: TorchCompat) -> Remediation | None:
    """A torch older than every release in the data (1.6.0+cu102 on driver 418): its CUDA still names the
    driver it needs, from NVIDIA's toolkit table, and its other builds are on pytorch.org. None: the torch is
    in the data, not a CUDA build, or its driver is not the problem."""
    installed, packages = installed_torch(facts), facts.torch_packages
    cuda = packages.cuda if not isinstance(packages, Unavailable) else None
    driver_cuda = driver_max_cuda(facts)
    oldest = data.releases[-1].version  # newest first
    if installed is None or cuda is None or driver_cuda is None or driver_runs_cuda(driver_cuda, cuda):
        return None
    try:
        if Version(installed) >= Version(oldest):
            return None
    except InvalidVersion:
        return None
    cuda = ".".join(cuda.split(".")[:2])  # 10.1.243 -> 10.1
    need = load_matrix().min_driver_for(cuda, driver_system(facts))
    # the lead names the driver it needs; the plan keeps only how to install one (no branch: any current one)
    plan = replace(plan_driver(facts), min_driver=None, branch=None, torch=None, variant=None)
    return driver_update(
        facts,
        plan,
        f"torch {installed} was built for CUDA {cuda}"
        + (f", which needs NVIDIA driver ≥ {need}" if need else "")
        + f"; the installed driver runs CUDA ≤ {driver_cuda}.",
        alternative=f"Or keep the driver and install torch {installed}'s build for CUDA ≤ {driver_cuda}, from "
        f"{PREVIOUS_VERSIONS} (gpu-doctor's wheel data starts at torch {oldest}).",
    )


def legacy_for_python(facts: Facts, data: TorchCompat) -> Remediation | None:
    """A Python no current release is built for (3.6, 3.7 in an old project's environment): the newest torch of
    1.4-1.12 with wheels for it, kernels for every GPU and a CUDA the driver runs, with pytorch.org's command
    for it. None when no such build is in the data."""
    python, capabilities = python_minor(facts), gpu_capabilities(facts)
    if python is None or not capabilities:
        return None
    fit = _LegacyFit(data, wheel_platform(facts), driver_max_cuda(facts), capabilities)
    found = fit.newest(python)
    if found is None:
        return None
    build, version, words = found
    return _legacy_install(
        facts,
        build,
        words,
        f"Install torch {version} ({build.variant.name}): the newest torch with wheels for Python {python} and "
        f"kernels for compute capability {', '.join(sorted(set(capabilities)))}",
        f"Current releases no longer have Python {python} wheels; a newer Python in a new environment is the way "
        "to current torch.",
    )


@dataclass(frozen=True)
class _LegacyFit:
    """What a pre-1.13 build must meet here: kernels for every GPU on this platform, a CUDA the driver runs
    (when its version is known), and a pytorch.org command that installs it on this platform."""

    data: TorchCompat
    platform: str
    driver_cuda: str | None
    capabilities: list[str]

    def command(self, release: LegacyRelease, build: LegacyBuild, version: str) -> tuple[str, ...] | None:
        """The build's command (argv from `pip`) when it fits, else None."""
        arch, cuda = build.arch_list(version, self.platform), build.variant.cuda
        if cuda is None or not arch:
            return None
        if self.driver_cuda is not None and not driver_runs_cuda(self.driver_cuda, cuda):
            return None
        if not all(arch_supported(arch, (), cc, self.data.device_rule) for cc in self.capabilities):
            return None
        return legacy_command(release, build, version, self.platform)

    def newest(self, python: str | None) -> tuple[LegacyBuild, str, tuple[str, ...]] | None:
        """The newest 1.4-1.12 build that fits (newest release, its newest patch, its newest CUDA), with wheels
        for `python` where it is given: the build, its version and its command."""
        for release in self.data.legacy:  # newest first
            for version in reversed(release.all_versions):  # its newest patch first
                if python is not None and python not in release.pythons(version):
                    continue
                for build in _newest_cuda_first(release):
                    words = self.command(release, build, version)
                    if words is not None:
                        return build, version, words
        return None


def _newest_cuda_first(release: LegacyRelease) -> list[LegacyBuild]:
    return sorted(release.builds, key=lambda b: version_key(b.variant.cuda or "0"), reverse=True)


def legacy_command(
    release: LegacyRelease, build: LegacyBuild, version: str, platform: str
) -> tuple[str, ...] | None:
    """pytorch.org's pip command for this build of `version`, as argv from `pip`; None where it would not install
    this build here. A line without the build's tag (`torch==1.7.1`, PyPI's own build) installs that build only
    on a platform whose PyPI default it is (Windows gets the CPU build), and pip takes `==1.7.1` as met by an
    installed 1.7.1+cpu: it is forced."""
    line = build.install.get(version)
    if line is None:
        return None
    words = tuple(line.split())
    if f"torch=={version}+" in line or ("--extra-index-url" in line and "/lts/" in line):
        return words
    if release.pypi_default.get(platform) != build.variant.name:
        return None
    return (*words[:2], "--force-reinstall", *words[2:])


_TORCH_PIN = lazy(r"\btorch==(?P<version>\d+(?:\.\d+)+)")


def _legacy_install(
    facts: Facts, build: LegacyBuild, words: tuple[str, ...], lead: str, after: str
) -> Remediation:
    """pytorch.org's command for a pre-1.13 build, run by the paste's Python; the driver it needs where the
    driver's own version is not known."""
    need = (
        load_matrix().min_driver_for(build.variant.cuda or "", driver_system(facts))
        if driver_max_cuda(facts) is None
        else None
    )
    conda = None if isinstance(facts.python, Unavailable) else facts.python.conda_prefix
    said = _TORCH_PIN.search(" ".join(words))
    version = said["version"] if said is not None else None
    pixi = isinstance(conda, str) and "/.pixi/envs/" in conda  # a pixi project changes through its own file
    line = build.conda_install.get(version or "") if isinstance(conda, str) and not pixi else None
    if isinstance(conda, str) and line is not None:  # conda installed torch: its build changes through conda
        where = ("--prefix", conda) if conda else ()
        active = "" if conda else "in the conda environment torch is in (`conda activate` it first)"
        conda_words = line.split()
        return Remediation(
            text=lead
            + (f" (it needs an NVIDIA driver ≥ {need})" if need else "")
            + f"; conda installed this torch, so the command is pytorch.org's conda one for that build "
            f"({PREVIOUS_VERSIONS}), after removing `cpuonly`, which holds the CPU build in place. {after}",
            commands=(
                Command(
                    ("conda", "remove", *where, "cpuonly"),
                    note="only if it is installed" + (f"; {active}" if active else ""),
                ),
                Command((*conda_words[:2], *where, *conda_words[2:]), note=active),
                Command(
                    (python_command(facts), "-m", "pip", *words[1:]), note="or pip, into the same environment"
                ),
            ),
            needs_network=True,
            target=Target.PYTHON_ENV,
        )
    return Remediation(
        text=lead
        + (f" (it needs an NVIDIA driver ≥ {need})" if need else "")
        + f"; the command is pytorch.org's for that build ({PREVIOUS_VERSIONS}). {after}",
        commands=(Command((python_command(facts), "-m", "pip", *words[1:])),),
        needs_network=True,
        target=Target.PYTHON_ENV,
    )


def wheel_platform(facts: Facts) -> str:
    """The wheel platform to judge a build on: the interpreter's, else the one a paste's OS implies, else
    Linux x86_64 (where most pasted reports come from)."""
    return target_platform(facts) or _assumed_platform(facts) or "linux_x86_64"


def _assumed_platform(facts: Facts) -> str | None:
    """The wheel platform to choose a CUDA variant for when the interpreter is not known (a paste without a
    Python line): the OS the paste shows, x86_64 unless it says otherwise. None when the interpreter is
    known (its platform, or why it has none, stands)."""
    python = facts.python
    machine = python.machine if not isinstance(python, Unavailable) else python
    if not isinstance(machine, Unavailable) or machine.reason is not Reason.NOT_RECORDED:
        return None  # known, or unreadable on a live machine: that reason stands
    os_facts = facts.os
    if not isinstance(os_facts, Unavailable) and os_facts.system == "Windows":
        return "windows"
    if not isinstance(os_facts, Unavailable) and os_facts.system == "Darwin":
        return None
    return "linux_x86_64"


def oldest_build_cc(data: TorchCompat | None = None) -> tuple[int, int] | None:
    """The oldest compute capability any build in the data has kernels for (the shipped data's, once)."""
    return _oldest_shipped_cc() if data is None else _oldest_built(data)


@functools.cache
def _oldest_shipped_cc() -> tuple[int, int] | None:
    return _oldest_built(load_torch_releases())


def _oldest_built(data: TorchCompat) -> tuple[int, int] | None:
    built = {
        (int(sm[3:-1]), int(sm[-1]))
        for r in data.releases
        for v in r.variants
        for arch in v.arch_list.values()
        for sm in arch
        if sm.startswith("sm_") and sm[3:].isdigit()
    }
    return min(built) if built else None


def gpus_older_than_every_build(facts: Facts, data: TorchCompat | None = None) -> bool:
    """Every GPU's compute capability is below every build's: no wheel and no driver can help."""
    capabilities, oldest = gpu_capabilities(facts), oldest_build_cc(data)
    if not capabilities or oldest is None:
        return False
    return all(tuple(int(x) for x in cc.split(".")[:2]) < oldest for cc in capabilities)


FIRST_CUDA_WITHOUT_FERMI = 9  # nvcc 9.0 dropped sm_20/sm_21 (compat/cuda_matrix.json, Fermi's row)


def older_than_every_build(facts: Facts, data: TorchCompat) -> Remediation | None:
    """When every GPU is older than the oldest architecture any build in the data compiles for, no driver and
    no wheel helps: say so, and offer the CPU build."""
    capabilities, oldest = gpu_capabilities(facts), oldest_build_cc(data)
    if oldest is None or not gpus_older_than_every_build(facts, data):
        return None
    names = ", ".join(sorted(set(capabilities)))
    toolkits = [t for t in (data.last_codegen_major(cc) for cc in sorted(set(capabilities))) if t is not None]
    source = (
        ""
        if toolkits and min(toolkits) < FIRST_CUDA_WITHOUT_FERMI  # torch's own source needs a newer CUDA
        else f" A build from source still can: TORCH_CUDA_ARCH_LIST={';'.join(sorted(set(capabilities)))} with a CUDA "
        f"{min(toolkits)}.x toolkit, the last that compiles for it, and a torch release that still supports that CUDA."
        if toolkits
        else ""
    )
    return Remediation(
        text=f"No PyTorch build in gpu-doctor's data (torch {data.releases[-1].version} and later) has kernels for "
        f"compute capability {names}: the oldest architecture any of them reaches is {oldest[0]}.{oldest[1]}, and "
        "current releases start at Maxwell (5.0)"
        + (
            f"; the last CUDA that compiles for it is {min(toolkits)}.x, older than every release here"
            if toolkits and min(toolkits) < FIRST_CUDA_WITHOUT_FERMI
            else "; only much older releases shipped kernels for it"
        )
        + ". No driver "
        f"changes that. Run PyTorch on the CPU build, or use a newer GPU.{source}",
        commands=(cpu_build_command(facts, data),),
        needs_network=True,
        target=Target.PYTHON_ENV,
    )


def _driver_blocks(facts: Facts, data: TorchCompat) -> bool:
    """True when the driver's CUDA is known and no wheel for these GPUs runs on it, whatever the platform
    and Python: then the driver is the fix even where those are unknown."""
    capabilities, driver = gpu_capabilities(facts), facts.driver
    if not capabilities or isinstance(driver, Unavailable) or not isinstance(driver.cuda_version, str):
        return False
    platforms = {p for r in data.releases for v in r.variants for p in v.platforms}
    return not any(
        supporting_candidates(data, capabilities, None, p, driver.cuda_version, True) for p in platforms
    )


def _python_gap(facts: Facts, data: TorchCompat) -> str | None:
    """Why no release fits this Python (one none of them is built for), or None."""
    python = python_minor(facts)
    if python is None or not data.releases or any(python in r.python_versions for r in data.releases):
        return None
    oldest, newest = data.releases[-1].latest, data.releases[0].latest
    return f"no torch release in its data ({oldest} to {newest}) is built for Python {python}"


def _venv_folder(facts: Facts) -> str:
    """~/venv spelled out (a shell does not expand a quoted ~): HOME, else the home of the user site, else a
    folder `venv` where the command runs."""
    home = facts.env.get("HOME")
    packages = facts.torch_packages
    if (
        not home
        and not isinstance(packages, Unavailable)
        and packages.user_site
        and "/.local/" in packages.user_site
    ):
        home = packages.user_site.split("/.local/", 1)[0]
    return f"{home.rstrip('/')}/venv" if home else "venv"


def install_remediation(facts: Facts, rec: Recommendation) -> Remediation:
    python = python_command(facts)
    end_of_life = " ".join(plan_driver(facts).end_of_life)
    text = (
        f"Install torch {rec.torch} ({rec.variant}) into {python}: {rec.reason}."
        + ("" if rec.confirmed else " (Some of the data behind this choice is unconfirmed.)")
        + (f" {end_of_life}" if end_of_life else "")
    )
    if _externally_managed(facts):
        return _in_new_venv(facts, rec, python, text)
    conda = None if isinstance(facts.python, Unavailable) else facts.python.conda_prefix
    if isinstance(conda, str):
        return _in_conda(rec.variant == "cpu", rec.pip_argv(python), text, conda)
    return Remediation(
        text=text,
        commands=(
            Command(rec.pip_argv(python)),
            Command(rec.uv_argv(python), note="the same with uv"),
        ),
        needs_network=True,
        target=Target.PYTHON_ENV,
    )


def _externally_managed(facts: Facts) -> bool:
    """A system Python marked EXTERNALLY-MANAGED (PEP 668) and not an environment: pip refuses it."""
    packages, py = facts.torch_packages, facts.python
    managed = not isinstance(packages, Unavailable) and packages.externally_managed
    in_env = not isinstance(py, Unavailable) and (
        py.in_virtualenv is True or isinstance(py.conda_prefix, str)
    )
    return managed and not in_env


def _in_new_venv(facts: Facts, rec: Recommendation, python: str, text: str) -> Remediation:
    """PEP 668: a virtual environment of that Python, then torch into it (never --break-system-packages)."""
    venv_package = recipe(facts.os).venv
    venv = _venv_folder(facts)
    venv_python = f"{venv}/bin/python"
    fresh = replace(rec, torchvision=None, torchaudio=None, replaces=False, already_installed=False)
    return Remediation(
        text="Make a virtual environment and install torch there, then run Python (and `gpu-doctor --python PATH`) "
        "from it: pip refuses an externally managed Python (PEP 668), and --break-system-packages would mix "
        "pip's files with the distribution's. " + text.replace(python, venv, 1),
        commands=(
            *((venv_package,) if venv_package is not None else ()),
            Command((python, "-m", "venv", venv)),
            Command(fresh.pip_argv(venv_python)),
        ),
        requires_root=venv_package is not None,
        needs_network=True,
        target=Target.PYTHON_ENV,
    )


def _in_conda(cpu: bool, pip: tuple[str, ...], text: str, prefix: str) -> Remediation:
    """A conda environment: conda-forge's build through conda first (PyTorch's own conda channel ended with
    2.5), pip into the same environment as the alternative. conda-forge picks the CUDA variant for the
    driver itself (its __cuda virtual package). An empty `prefix`: a pasted `conda list` shows conda owns torch
    but not where the environment is, so the commands act on the activated one."""
    package = "pytorch-cpu" if cpu else "pytorch-gpu"
    where = ("--prefix", prefix) if prefix else ()
    active = "" if prefix else "in the conda environment torch is in (`conda activate` it first)"
    pixi = "/.pixi/envs/" in prefix
    return Remediation(
        text=text
        + f" In a conda environment, install conda-forge's build with conda ({package}); pip over conda's own "
        "torch leaves two package managers owning the same files. The pytorch channel's `cpuonly` package "
        "holds its CPU build in place: remove it first where it is installed.",
        commands=(
            *(
                ()
                if pixi or cpu
                else (
                    Command(
                        ("conda", "remove", *where, "cpuonly"),
                        note="only if it is installed" + (f"; {active}" if active else ""),
                    ),
                )
            ),
            # a pixi environment (CONDA_PREFIX .../.pixi/envs/NAME) is changed through its project file
            Command(("pixi", "add", package), note="in the pixi project")
            if pixi
            else Command(("conda", "install", *where, "--channel", "conda-forge", package), note=active),
            Command(pip, note="or pip, into the same environment"),
        ),
        needs_network=True,
        target=Target.PYTHON_ENV,
    )


def unnamed_nvidia_gpu(facts: Facts) -> bool:
    """An NVIDIA GPU known to be there but neither named nor measured: what a pasted CUDA error implies."""
    return any(
        g.vendor == "nvidia"
        and isinstance(g.name, Unavailable)
        and isinstance(g.compute_capability, Unavailable)
        for g in facts.gpus
    )


def _unnamed_variant(release: TorchRelease, driver_cuda: str | None) -> TorchVariant | None:
    """The newest confirmed CUDA variant the driver runs; with the driver unknown, the newest CUDA 12 (or
    older) variant: the widest reach in drivers and GPUs."""
    cuda_variants = sorted(
        (v for v in release.variants if v.cuda is not None and v.unconfirmed is None),
        key=lambda v: tuple(int(p) for p in (v.cuda or "0.0").split(".")),
        reverse=True,
    )
    if driver_cuda is not None:
        fitting = [v for v in cuda_variants if driver_runs_cuda(driver_cuda, v.cuda or "")]
    else:
        fitting = [v for v in cuda_variants if int((v.cuda or "0").split(".")[0]) <= BROAD_CUDA_MAJOR]
    return fitting[0] if fitting else None


def _oldest_cc(variant: TorchVariant) -> str | None:
    built = sorted(
        (int(sm[3:-1]), int(sm[-1]))
        for arch in variant.arch_list.values()
        for sm in arch
        if sm.startswith("sm_") and sm[3:].isdigit()
    )
    return f"{built[0][0]}.{built[0][1]}" if built else None


def unnamed_gpu_fix(facts: Facts, data: TorchCompat | None = None) -> Remediation | None:
    """A CUDA build to install when the NVIDIA GPU is not named (a pasted error): the installed torch version
    (else the newest with a fitting build), in the newest CUDA variant the driver runs, or with the driver
    unknown the newest CUDA 12 variant. The text says which driver it needs and how to check the GPU. None
    when the data has no CUDA build to offer."""
    data = data or load_torch_releases()
    driver_cuda = driver_max_cuda(facts)
    installed = installed_torch(facts)
    releases = sorted(data.releases, key=lambda r: installed not in r.all_versions if installed else False)
    python = python_minor(facts)
    for release in releases:
        keeps = bool(installed) and installed in release.all_versions
        if not keeps and python is not None and python not in release.python_versions:
            continue  # no wheel of this release for the Python the paste shows
        variant = _unnamed_variant(release, driver_cuda)
        if variant is None:
            continue
        version = installed if installed and keeps else release.latest
        needs = data.min_driver_for_cuda(variant.cuda or "", driver_system(facts))
        oldest = _oldest_cc(variant)
        reach = f" It has kernels for compute capability {oldest} and newer." if oldest else ""
        if driver_cuda is not None:
            why = f"the newest CUDA build of torch {version} that the driver (CUDA ≤ {driver_cuda}) runs.{reach}"
        else:
            why = f"it runs on NVIDIA driver ≥ {needs} (`nvidia-smi` shows yours; update an older one first).{reach}"
        companion = release.companions.for_version(version)  # as pytorch.org's command: the three together,
        pins = [f"torch=={version}"]  # so a CPU torchvision left behind cannot break the CUDA torch
        pins += [f"torchvision=={companion.torchvision}"] if companion.torchvision else []
        pins += [f"torchaudio=={companion.torchaudio}"] if companion.torchaudio else []
        text = (
            f"Install torch {version} built for CUDA {variant.cuda} ({variant.name}): {why} The paste does not "
            "name the GPU: gpu-doctor on that machine checks that this build has kernels for it."
        )
        pip = (python_command(facts), "-m", "pip", "install", "--force-reinstall", *pins, "--index-url")
        conda = None if isinstance(facts.python, Unavailable) else facts.python.conda_prefix
        if isinstance(
            conda, str
        ):  # conda owns torch there: its CUDA build through conda, pip the alternative
            return _in_conda(False, (*pip, variant.index_url), text, conda)
        return Remediation(
            text=text,
            commands=(
                Command((*pip, variant.index_url)),
                Command(
                    ("nvidia-smi", "--query-gpu=name,compute_cap,driver_version", "--format=csv"),
                    note="the GPU and its driver",
                ),
            ),
            needs_network=True,
            target=Target.PYTHON_ENV,
        )
    return None


def program_floor_fix(name: str, floor: tuple[int, int]) -> Remediation:
    """No release of `name` (a program with CUDA kernels of its own: vLLM) runs on GPUs older than its floor:
    another engine, or a newer GPU. No torch, driver or reinstall changes it."""
    return Remediation(
        text=f"No {name} release runs on this GPU: {name}'s CUDA kernels need compute capability "
        f"{floor[0]}.{floor[1]} or newer (its installation docs), whatever torch is installed. Serve the model "
        "with another engine that supports older GPUs (llama.cpp, transformers), or on a newer GPU.",
        target=Target.PYTHON_ENV,
    )
