"""torch.companions, torch.cudnn, torch.nvidia_wheels, env.library_path: the packages and libraries around torch."""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

from torch_gpu_doctor.checks.support.signatures import catalogue_fix, reported, reported_evidence
from torch_gpu_doctor.checks.support.torch_state import no_cuda_torch
from torch_gpu_doctor.compat.builds import UNKNOWN_DEFAULT, companion_default_cuda, tag_build
from torch_gpu_doctor.compat.library_bugs import library_bugs
from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.torch import CompanionPackage, Distribution
from torch_gpu_doctor.fixes.target import pip_reinstall, python_command, target_platform
from torch_gpu_doctor.fixes.torch_wheel import fix_for_torch
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Unavailable

_LOCAL = lazy(r"\+.*$")
_CU_SUFFIX = lazy(r"-cu(\d+)$")


def _base(version: str) -> str:
    return _LOCAL.sub("", version)


def _cuda_tag(version: str | None) -> str | None:
    """`0.20.1+cu124` → "12.4"; `2.5.1+cpu` → "cpu"; no local tag → None."""
    if not version or "+" not in version:
        return None
    tag = version.split("+", 1)[1]
    if tag == "cpu":
        return "cpu"
    match = re.fullmatch(r"cu(\d+)(\d)", tag)
    return f"{match.group(1)}.{match.group(2)}" if match else None


@check("torch.companions", "torchvision, torchaudio and other packages built for torch match it", "torch")
def torch_companions(facts: Facts) -> Finding:
    """
    ## What it checks
    The installed torchvision and torchaudio against the versions released with the installed torch, and
    their CUDA variant against torch's.

    ## Why it matters
    torchvision and torchaudio contain compiled code built against one exact torch: with another torch they
    fail to import ("undefined symbol", "operator torchvision::nms does not exist") or silently run their
    CUDA ops on the CPU.

    ## How to fix
    Reinstall the three together from the same index; the command pins all three.
    """
    cid = "torch.companions"
    packages = facts.torch_packages
    said = reported(facts, "companion_mismatch")
    if said:
        return Finding(
            cid,
            Status.FAIL,
            f"A package built for another torch or CUDA is installed beside torch ({said[0].where}).",
            details=said[0].means,
            evidence=reported_evidence(said),
            # a message with a fix of its own (xFormers without CUDA kernels) says more than a torch reinstall;
            # companions shown at other versions than torch's are put back beside the torch other packages pin
            remediation=catalogue_fix(said[0])
            or _companions_for_this_torch(facts)
            or (fix_for_torch(facts) if not isinstance(packages, Unavailable) else None),
        )
    if isinstance(packages, Unavailable) or packages.version is None:
        return Finding(cid, Status.SKIP, "torch is not installed (see torch.installed).")
    release = load_torch_releases().release(packages.version)
    installed = [c for c in packages.companions if c.version]
    if not installed:
        return Finding(
            cid, Status.PASS, "Neither torchvision nor torchaudio is installed (both are optional)."
        )
    crossed = _other_backend(packages.version, installed)
    if crossed:  # known from the tags alone, whatever release: no compat data needed
        return Finding(
            cid,
            Status.FAIL,
            "Mismatched companions: " + "; ".join(crossed) + ".",
            details="A companion built for another GPU platform than torch's (ROCm beside CUDA, CUDA beside "
            "ROCm) links against the other platform's torch: it fails to import or its operators are missing.",
            evidence=tuple(Evidence(c.name, c.version or "", f"{c.name}/version.py") for c in installed),
            remediation=fix_for_torch(facts),
        )
    if release is None:
        return Finding(cid, Status.UNKNOWN, f"torch {packages.version} is not in the compat data.")
    expected = release.companions.for_version(_base(packages.version))
    problems, cpu_only, minor = [], [], []
    evidence = []
    for comp in installed:
        assert comp.version is not None
        want = expected.torchvision if comp.name == "torchvision" else expected.torchaudio
        evidence.append(Evidence(comp.name, comp.version, f"{comp.name}/version.py"))
        if want and _base(comp.version) != want:
            problems.append(f"{comp.name} {comp.version} (torch {_base(packages.version)} goes with {want})")
            continue
        if comp.name != "torchvision" or packages.cuda is None or comp.cuda == packages.cuda:
            continue
        built = _companion_build(comp, target_platform(facts))
        if built is None or built.cuda == packages.cuda:  # a source build, or a release the data lacks
            continue
        if built.cuda is None:
            cpu_only.append(f"{comp.name} {comp.version} is a CPU build{built.note}")
        elif built.cuda.split(".")[0] != packages.cuda.split(".")[0]:  # torchvision refuses another major
            problems.append(
                f"{comp.name} {comp.version} is built for CUDA {built.cuda}{built.note}, torch for CUDA "
                f"{packages.cuda}"
            )
        else:  # torchvision/extension.py: current releases compare the major only, older ones major.minor
            minor.append(
                f"{comp.name} {comp.version} is built for CUDA {built.cuda}{built.note}, torch for CUDA "
                f"{packages.cuda}"
            )
    if problems:
        return Finding(
            cid,
            Status.FAIL,
            "Mismatched companions: " + "; ".join(problems + cpu_only) + ".",
            evidence=tuple(evidence),
            remediation=fix_for_torch(facts),
        )
    if minor and not cpu_only:
        return Finding(
            cid,
            Status.WARN,
            f"{'; '.join(minor)}: current torchvision accepts another CUDA minor version, older releases refuse "
            'it at import ("compiled with different CUDA versions").',
            evidence=tuple(evidence),
            remediation=fix_for_torch(facts),
        )
    if cpu_only:
        return Finding(
            cid,
            Status.WARN,
            f"{'; '.join(cpu_only + minor)}, beside torch {packages.version} for CUDA {packages.cuda}: its GPU operators "
            "(nms, roi_align, deform_conv2d) fail on CUDA tensors.",
            details="torch itself uses the GPU; torchvision's compiled operators run on the CPU only. Reinstall "
            "the companions from the same index as torch.",
            evidence=tuple(evidence),
            remediation=fix_for_torch(facts),
        )
    names = ", ".join(f"{c.name} {c.version}" for c in installed)
    return Finding(cid, Status.PASS, f"{names} match torch {packages.version}.", evidence=tuple(evidence))


def _companions_for_this_torch(facts: Facts) -> Remediation | None:
    """The companions shown at another release than the installed torch's, reinstalled at the releases that go
    with it, from the index of torch's own build: torch stays, as the packages built for it (xFormers, an
    app's pins) need (blind set 23: sdnext#3531, torch 2.4.0+cu121 beside torchvision 0.20.1+cu124). Called
    where a mismatch was reported: a companion at torch's release but without torch's build tag is another
    build of it (PyPI's, which is the CPU one on Windows: blind set 32, ComfyUI#10517, torchvision 0.24.0 beside
    torch 2.9.0+cu130, "torchvision::nms does not exist"), reinstalled from torch's index too."""
    packages = facts.torch_packages
    if isinstance(packages, Unavailable) or packages.version is None or "+" not in packages.version:
        return None
    release = load_torch_releases().release(packages.version)
    tag = packages.version.split("+", 1)[1]
    if release is None or not re.fullmatch(r"cu\d+|cpu|rocm[\d.]+", tag):
        return None
    expected = release.companions.for_version(_base(packages.version))
    wanted = []
    # the companions torch's own listing shows, else those a listing beside a torch said in words shows
    shown = [(c.name, c.version) for c in packages.companions] or [
        (d.name, d.version) for d in packages.distributions if d.name in ("torchvision", "torchaudio")
    ]
    for name, version in shown:
        want = expected.torchvision if name == "torchvision" else expected.torchaudio
        if version and want and (_base(version) != want or version.partition("+")[2] != tag):
            wanted.append(f"{name}=={want}+{tag}")
    if not wanted:
        return None
    index = f"https://download.pytorch.org/whl/{tag}"
    return Remediation(
        text=f"Keep torch {packages.version} and install the {' and '.join(w.split('==')[0] for w in wanted)} "
        f"released with it, from torch's own index ({tag}); or move torch and every package built for it to "
        "another release together.",
        commands=(
            pip_reinstall(facts, "--no-deps", *wanted, "--index-url", index, note="torch stays as it is"),
        ),
        target=Target.PYTHON_ENV,
    )


def _backend(version: str) -> str | None:
    """ "cuda", "rocm" or "cpu" from a local version tag; None without one (or a source build's tag)."""
    build = tag_build(version)
    if build is None:
        return None
    cuda, rocm = build
    return "cuda" if cuda is not None else "rocm" if rocm is not None else "cpu"


def _other_backend(torch_version: str, companions: list[CompanionPackage]) -> list[str]:
    """Companions whose tag names another GPU platform than torch's (a CPU build is judged apart: torch
    itself still works there)."""
    mine = _backend(torch_version)
    if mine not in ("cuda", "rocm"):
        return []
    other = {"cuda": "rocm", "rocm": "cuda"}[mine]
    names = {"cuda": "CUDA", "rocm": "ROCm"}
    return [
        f"{c.name} {c.version} is built for {names[other]}, torch {torch_version} for {names[mine]}"
        for c in companions
        if c.version is not None and _backend(c.version) == other
    ]


@dataclass(frozen=True)
class _Built:
    cuda: str | None  # None: a CPU (or ROCm, XPU) build
    note: str  # how it is known, for an untagged version


def _companion_build(comp: CompanionPackage, platform: str | None) -> _Built | None:
    """What a companion is built for: its local tag's CUDA (`+cu130`), a CPU build (`+cpu`, `+rocm…`), or, for
    an untagged version, PyPI's default build of its release on this platform. None: not known (a source
    build's `+git…` tag, or a release or platform the compat data lacks)."""
    assert comp.version is not None
    if comp.cuda is not None:
        return _Built(comp.cuda, "")
    if tag_build(comp.version) is not None:
        return _Built(None, "")
    if "+" in comp.version:
        return None
    default = companion_default_cuda(comp.name, comp.version, platform)
    if default == UNKNOWN_DEFAULT:
        return None
    where = {"windows": "Windows", "linux_aarch64": "Linux aarch64"}.get(platform or "", "Linux x86_64")
    return _Built(default, f" (no local tag: PyPI's default build for {where})")


@check("torch.cudnn", "cuDNN loads in torch", "torch")
def torch_cudnn(facts: Facts) -> Finding:
    """
    ## What it checks
    Whether torch can use cuDNN (`torch.backends.cudnn.is_available()`) and which version it loaded, against
    the version the wheel was built with.

    ## Why it matters
    Convolutions, RNNs and attention kernels go through cuDNN. A missing or foreign cuDNN (another version
    found first through LD_LIBRARY_PATH or a conda `cudnn`) makes them fail or fall back to slow paths.

    ## How to fix
    Let torch use the cuDNN of its own `nvidia-cudnn-*` wheel: remove other cuDNN directories from
    LD_LIBRARY_PATH, or reinstall torch so its pinned cuDNN wheel comes back.
    """
    cid = "torch.cudnn"
    runtime, packages = facts.torch, facts.torch_packages
    if isinstance(packages, Unavailable) or packages.cuda is None:
        return no_cuda_torch(cid, packages)
    if isinstance(runtime, Unavailable) or runtime.outcome != "ok":
        return Finding(cid, Status.SKIP, "torch could not be imported (see torch.cuda_init).")
    if not runtime.cuda_available:
        return Finding(cid, Status.SKIP, "CUDA does not initialise (see torch.cuda_init).")
    if not runtime.cudnn_available or runtime.cudnn_version is None:
        return Finding(
            cid, Status.FAIL, "torch cannot load cuDNN: convolutions and RNNs on the GPU will fail."
        )
    loaded = _cudnn_text(runtime.cudnn_version)
    release = load_torch_releases().release(packages.version or "")
    variant = release.variant("cu" + packages.cuda.replace(".", "")) if release else None
    expected = variant.cudnn if variant else None
    evidence = (Evidence("cuDNN loaded", loaded, "torch.backends.cudnn.version()"),)
    if expected and not expected.startswith(loaded.rsplit(".", 1)[0] + "."):
        return Finding(
            cid,
            Status.WARN,
            f"torch loaded cuDNN {loaded}, but this wheel ships cuDNN {expected}: another copy was found first.",
            evidence=evidence,
        )
    return Finding(cid, Status.PASS, f"cuDNN {loaded} is available.", evidence=evidence)


def _cudnn_text(version: int) -> str:
    """torch reports 90100 for 9.1.0 (cuDNN ≥ 9: major*10000 + minor*100 + patch; 8.x: major*1000 + ...)."""
    if version >= 10000:
        return f"{version // 10000}.{version // 100 % 100}.{version % 100}"
    return f"{version // 1000}.{version // 100 % 10}.{version % 100}"


@check("torch.nvidia_wheels", "The nvidia-* CUDA wheels are the ones torch needs", "torch")
def torch_nvidia_wheels(facts: Facts) -> Finding:
    """
    ## What it checks
    The `nvidia-*` packages (cuBLAS, cuDNN, NCCL, ...) installed next to torch: whether they satisfy torch's
    own requirements, and whether CUDA 11, 12 and 13 families are mixed.

    ## Why it matters
    PyTorch's Linux wheels load their CUDA libraries from these packages. A missing one fails at import
    ("libcudnn.so.9: cannot open shared object file"); a wrong version or a second CUDA family installed by
    another package can be loaded instead and crash or slow down.

    ## How to fix
    Reinstall torch (which reinstalls its pinned nvidia-* wheels) and uninstall the packages of the other
    CUDA family. A library version with a known bug on this GPU (compat/library_bugs.json: cuBLAS before 12.3
    on the H20) gets the version that ends it.
    """
    cid = "torch.nvidia_wheels"
    packages = facts.torch_packages
    if isinstance(packages, Unavailable) or packages.version is None or packages.cuda is None:
        return no_cuda_torch(cid, packages)
    dists = {d.name: d for d in packages.distributions}
    torch_dist = dists.get("torch")
    problems = []
    families = sorted({m.group(1) for name in dists if (m := _CU_SUFFIX.search(name))})
    if len(families) > 1:
        problems.append("CUDA families mixed: " + ", ".join(f"cu{f}" for f in families))
    if torch_dist is not None and torch_dist.requires:
        problems += _unmet_requirements(torch_dist.requires, dists)
    evidence = tuple(
        Evidence(d.name, d.version, d.location or "-")
        for d in packages.distributions
        if d.name.startswith("nvidia-")
    )
    if problems:
        return Finding(
            cid,
            Status.FAIL,
            "The nvidia-* wheels do not match torch: " + "; ".join(problems) + ".",
            evidence=evidence,
            remediation=fix_for_torch(facts),
        )
    buggy = known_library_bug(facts, packages.cuda, dists)
    if buggy is not None:
        return buggy
    count = sum(1 for d in packages.distributions if d.name.startswith("nvidia-"))
    if count == 0:
        return Finding(
            cid,
            Status.PASS,
            "torch requires no nvidia-* wheel here, and none is installed.",
            evidence=evidence,
        )
    wheels = "1 nvidia-* wheel, as" if count == 1 else f"{count} nvidia-* wheels, all as"
    return Finding(cid, Status.PASS, f"{wheels} torch requires.", evidence=evidence)


KNOWN_BUG = "has a known bug"


def known_library_bug(facts: Facts, cuda: str, dists: dict[str, Distribution]) -> Finding | None:
    """A bundled library's version with a known bug on one of these GPUs: the pip list's version where it is
    known, else the one torch's CUDA build pins (torch 2.4.0+cu121 brings cuBLAS 12.1)."""
    for bug in library_bugs():
        gpu = next((g.name for g in facts.nvidia_gpus if isinstance(g.name, str) and bug.on(g.name)), None)
        if gpu is None:
            continue
        have = dists.get(bug.distribution)
        try:
            affected = (
                Version(have.version) < Version(bug.fixed_in) if have is not None else cuda in bug.torch_cuda
            )
        except InvalidVersion:
            affected = False
        if not affected:
            continue
        which = (
            f"The installed {bug.distribution} {have.version}"
            if have is not None
            else f"The {bug.distribution} that torch's CUDA {cuda} build brings"
        )
        return Finding(
            "torch.nvidia_wheels",
            Status.WARN,
            f"{which} {KNOWN_BUG} on the {gpu}: {bug.symptom}.",
            details=f"Fixed in {bug.distribution} {bug.fixed_in}; found in {', '.join(bug.sources[:2])}.",
            evidence=(
                Evidence(bug.distribution, have.version if have else f"torch CUDA {cuda}", "pip / torch"),
            ),
            remediation=Remediation(
                text=f"Install {bug.distribution} {bug.install} into torch's environment (pip warns that torch pinned "
                "an older one; the newer library still serves it), or a torch built for a newer CUDA.",
                commands=(
                    Command(
                        (python_command(facts), "-m", "pip", "install", f"{bug.distribution}=={bug.install}")
                    ),
                ),
                needs_network=True,
                target=Target.PYTHON_ENV,
            ),
        )
    return None


def _unmet_requirements(requires: tuple[str, ...], dists: dict[str, Distribution]) -> list[str]:
    """torch's nvidia-* requirements (Linux markers) that the installed distributions do not meet."""
    # packaging.requirements imports packaging.tags, which imports subprocess: only for a torch with requires
    from packaging.requirements import InvalidRequirement, Requirement

    problems = []
    for raw in requires:
        try:
            req = Requirement(raw)
        except InvalidRequirement:
            continue
        if not req.name.lower().startswith("nvidia-"):
            continue
        if req.marker is not None and not req.marker.evaluate(
            {"platform_system": "Linux", "sys_platform": "linux"}
        ):
            continue
        have = dists.get(req.name.lower().replace("_", "-"))
        if have is None:
            problems.append(f"{req.name} is missing")
            continue
        try:
            if req.specifier and Version(have.version) not in req.specifier:
                problems.append(f"{req.name} {have.version} does not satisfy {req.specifier}")
        except InvalidVersion:
            problems.append(f"{req.name} has an unreadable version {have.version!r}")
    return problems
