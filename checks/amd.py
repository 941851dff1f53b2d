"""amd.*: AMD GPUs with PyTorch on ROCm: the kernel side (amdgpu, /dev/kfd), the torch build, the gfx target.

Facts from hardware.md §6: ROCm compute needs the amdgpu driver bound to the GPU, `/dev/kfd` and a
`/dev/dri/renderD*` node; PyTorch's ROCm wheels bring their own HIP runtime, so a system ROCm under /opt is
optional for torch. A ROCm build of torch has `torch.version.hip` set and uses the `torch.cuda` API.
torch.cpu_build already covers a ROCm build on an NVIDIA-only machine.
"""

from __future__ import annotations

import dataclasses

from torch_gpu_doctor.checks.support.amd import (
    amd_gpus,
    kfd_agents,
    not_applicable,
    rocm_minor,
    torch_is_rocm,
)
from torch_gpu_doctor.checks.support.signatures import reported, reported_evidence
from torch_gpu_doctor.compat.rocm_gfx import (
    DEPRECATED,
    OFFICIAL_LINUX,
    TORCH_WHEEL_TARGETS,
    gfx_of_product,
    override_for,
    wheel_targets,
)
from torch_gpu_doctor.compat.torch_releases import version_key
from torch_gpu_doctor.facts.describe import fact, gpu_label
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.reported_errors import ReportedError
from torch_gpu_doctor.facts.rocm import KFD_NODES, KfdAgent, RocmFacts, gfx_version_tuple
from torch_gpu_doctor.fixes.recommendation import as_installed
from torch_gpu_doctor.fixes.target import on_windows, target_platform
from torch_gpu_doctor.fixes.torch_rocm import (
    ROCM_PLATFORM,
    directml_or_cpu,
    gfx_target_fix,
    recommend_rocm,
    rocm_install_remediation,
    rocm_release_fix,
)
from torch_gpu_doctor.fixes.torch_wheel import cpu_build_command
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Reason, Unavailable

ACCESS_NOTE = (
    "Whether this user may open /dev/kfd and /dev/dri/renderD* cannot be read from files: if torch finds no GPU, "
    "add the user to the `render` and `video` groups (`sudo usermod -aG render,video $USER`) and log in again."
)


def _amdgpu_loaded(facts: Facts, rocm: RocmFacts) -> bool | None:
    kernel = facts.kernel
    if not isinstance(kernel, Unavailable) and not isinstance(kernel.modules, Unavailable):
        found = next((m for m in kernel.modules if m.name == "amdgpu"), None)
        if found is not None:
            return found.loaded
    return rocm.amdgpu_loaded if isinstance(rocm.amdgpu_loaded, bool) else None


def _stack_evidence(rocm: RocmFacts) -> tuple[Evidence, ...]:
    return (
        fact("ROCm version", rocm.version, rocm.version_source or "/opt/rocm/.info/version"),
        fact("amdgpu module", rocm.amdgpu_loaded, "/sys/module/amdgpu"),
        fact("/dev/kfd present", rocm.kfd_present, "/dev/kfd"),
        fact("render nodes", rocm.render_nodes, "/dev/dri"),
    )


def _in_container(facts: Facts) -> bool:
    return not isinstance(facts.os, Unavailable) and facts.os.container is not None


@check("amd.rocm_stack", "The AMD GPU has its kernel driver and ROCm device nodes", "amd")
def amd_rocm_stack(facts: Facts) -> Finding:
    """
    ## What it checks
    For each AMD GPU: that the `amdgpu` kernel driver is bound to it, that `/dev/kfd` (the ROCm compute
    device) and a `/dev/dri/renderD*` node exist, and which ROCm is installed under /opt (`.info/version`).

    ## Why it matters
    PyTorch on ROCm talks to the GPU through `/dev/kfd` and the render node, which only exist when amdgpu drives
    the GPU. Without them `torch.cuda.is_available()` is False on a ROCm build. A system ROCm is optional:
    PyTorch's ROCm wheels bring their own HIP runtime.

    ## How to fix
    Load the driver (`sudo modprobe amdgpu`; if it does not bind, `journalctl -k | grep amdgpu` usually names
    missing firmware). In a container pass `--device=/dev/kfd --device=/dev/dri`. Then make sure the user is
    in the `render` and `video` groups.
    """
    cid = "amd.rocm_stack"
    skip = not_applicable(facts, cid)
    if skip is not None:
        return skip
    rocm = facts.rocm
    if isinstance(rocm, Unavailable):
        return Finding(cid, Status.UNKNOWN, f"Could not read the AMD/ROCm facts: {rocm}.")
    evidence = _stack_evidence(rocm) + tuple(
        Evidence(gpu_label(g), f"driver {g.kernel_driver or 'none'}", "/sys/bus/pci/devices/*/driver")
        for g in amd_gpus(facts)
    )
    unbound = [g for g in amd_gpus(facts) if g.kernel_driver is None]
    if unbound:
        loaded = _amdgpu_loaded(facts, rocm)
        why = (
            "the amdgpu module is not loaded"
            if loaded is False
            else "amdgpu is loaded but did not take it (often missing firmware or a kernel too old for the GPU)"
        )
        return Finding(
            cid,
            Status.FAIL,
            f"No driver is bound to {', '.join(gpu_label(g) for g in unbound)}: {why}.",
            evidence=evidence,
            remediation=Remediation(
                text="Load amdgpu, then read the kernel log for its errors (missing firmware: install the "
                "distribution's linux-firmware package).",
                commands=(
                    Command(("sudo", "modprobe", "amdgpu")),
                    Command(("journalctl", "-k", "-g", "amdgpu")),
                ),
                requires_root=True,
                target=Target.SYSTEM,
            ),
        )
    other = [g for g in amd_gpus(facts) if g.kernel_driver not in (None, "amdgpu")]
    if other:
        return Finding(
            cid,
            Status.WARN,
            f"{', '.join(f'{gpu_label(g)} is bound to {g.kernel_driver}' for g in other)}, not amdgpu: ROCm "
            "cannot use it here.",
            details="vfio-pci means the GPU is reserved for a virtual machine; that may be intended.",
            evidence=evidence,
        )
    missing = [
        name
        for name, present in (
            ("/dev/kfd", rocm.kfd_present),
            ("/dev/dri/renderD*", bool(rocm.render_nodes) if isinstance(rocm.render_nodes, tuple) else True),
        )
        if present is False
    ]
    if missing:
        container = _in_container(facts)
        return Finding(
            cid,
            Status.FAIL,
            f"{' and '.join(missing)} missing: ROCm and torch cannot reach the AMD GPU.",
            details=(
                "Inside a container the devices must be passed in."
                if container
                else "amdgpu creates /dev/kfd when the kernel has HSA support (CONFIG_HSA_AMD)."
            ),
            evidence=evidence,
            remediation=Remediation(
                text="Start the container with `--device=/dev/kfd --device=/dev/dri --group-add video` "
                "(Docker/Podman)."
                if container
                else "Use a kernel built with CONFIG_HSA_AMD (distribution kernels are) and reboot into it.",
                requires_reboot=not container,
                target=Target.SYSTEM,
            ),
        )
    if isinstance(rocm.kfd_present, Unavailable):
        return Finding(
            cid, Status.UNKNOWN, f"Could not check /dev/kfd: {rocm.kfd_present}.", evidence=evidence
        )
    n = len(amd_gpus(facts)) or len(kfd_agents(facts))
    runtime = (
        f"ROCm {rocm.version} in {rocm.version_source.rsplit('/.info', 1)[0]}"
        if isinstance(rocm.version, str) and rocm.version_source
        else f"ROCm {rocm.version}"
        if isinstance(rocm.version, str)
        else "no system ROCm (pip's ROCm torch wheels bring their own runtime)"
    )
    return Finding(
        cid,
        Status.PASS,
        f"{n} AMD GPU{'s' if n != 1 else ''} on amdgpu, /dev/kfd present, {runtime}.",
        details=ACCESS_NOTE,
        evidence=evidence,
    )


@check("amd.torch_rocm", "torch is a ROCm build on a machine whose GPUs are AMD", "amd")
def amd_torch_rocm(facts: Facts) -> Finding:
    """
    ## What it checks
    On a machine whose only GPUs are AMD, that the installed torch is a ROCm build (`torch.version.hip` set).

    ## Why it matters
    The default `pip install torch` on Linux is a CUDA build: on AMD GPUs it runs on the CPU only, silently
    (`torch.cuda.is_available()` is False). Only the ROCm wheels from download.pytorch.org/whl/rocmX.Y use the GPU.

    ## How to fix
    Reinstall torch from the ROCm index: the command names the newest ROCm variant gpu-doctor's data lists for
    your torch version (ROCm wheels exist only for Linux x86_64).
    """
    cid = "amd.torch_rocm"
    skip = not_applicable(facts, cid)
    if skip is not None:
        return skip
    packages = facts.torch_packages
    if isinstance(packages, Unavailable):
        status = Status.SKIP if packages.reason is Reason.NOT_RECORDED else Status.UNKNOWN
        return Finding(cid, status, f"Could not see the installed torch: {packages}.")
    if packages.version is None:
        return Finding(cid, Status.SKIP, "torch is not installed (see torch.installed).")
    evidence = (
        Evidence("torch", packages.version, "torch/version.py"),
        Evidence("torch.version.hip", str(packages.hip), "torch/version.py"),
        Evidence("torch.version.cuda", str(packages.cuda), "torch/version.py"),
    )
    if torch_is_rocm(facts):
        return Finding(
            cid, Status.PASS, f"torch {packages.version} is a ROCm {packages.hip} build.", evidence=evidence
        )
    build = f"a CUDA {packages.cuda} build" if packages.cuda else "a CPU-only build"
    summary = f"torch {packages.version} is {build}: it cannot use the AMD GPU here."
    platform = target_platform(facts) or ("windows" if on_windows(facts) else None)
    if platform is not None and platform != ROCM_PLATFORM:
        return Finding(
            cid,
            Status.FAIL,
            summary,
            details="PyTorch publishes ROCm wheels only for Linux x86_64; "
            + ("this machine runs Windows." if platform == "windows" else f"this interpreter is {platform}."),
            evidence=evidence,
            remediation=directml_or_cpu() if platform == "windows" else None,
        )
    found = recommend_rocm(facts)
    rec = None if found is None else as_installed(found, facts.torch_packages)
    if rec is None:
        return Finding(
            cid,
            Status.FAIL,
            summary,
            details="gpu-doctor's data lists no ROCm wheel for this Python version.",
            evidence=evidence,
        )
    return Finding(
        cid, Status.FAIL, summary, evidence=evidence, remediation=rocm_install_remediation(facts, rec)
    )


def _runtime_arch(facts: Facts) -> set[str] | None:
    """gfx names the running ROCm torch has kernels for (`torch.cuda.get_arch_list()`), when the probe ran."""
    runtime = facts.torch
    if isinstance(runtime, Unavailable) or runtime.hip is None or not runtime.arch_list:
        return None
    return {a.split(":", 1)[0] for a in runtime.arch_list}


def _agent_label(agent: KfdAgent) -> str:
    where = agent.bdf if isinstance(agent.bdf, str) else f"KFD node {agent.node}"
    return f"{agent.gfx_target} at {where}"


def _verdict(agent: KfdAgent, built: set[str] | None, rocm: tuple[int, int] | None) -> tuple[Status, str]:
    name = agent.gfx_target
    if not isinstance(name, str):
        return Status.UNKNOWN, f"KFD node {agent.node}: unknown gfx target ({name})"
    label = _agent_label(agent)
    if built is not None and name not in built:
        return Status.FAIL, f"{label}: the installed torch has no kernels for {name}"
    official = OFFICIAL_LINUX.get(name)
    if official is not None:
        if rocm is not None and rocm < official.since_rocm:
            need = ".".join(map(str, official.since_rocm))
            return Status.WARN, f"{label}: supported from ROCm {need}, this is ROCm {rocm[0]}.{rocm[1]}"
        state = "deprecated (maintenance only) in current ROCm" if name in DEPRECATED else "supported"
        return Status.PASS, f"{label}: {official.family}, {state}"
    if name in TORCH_WHEEL_TARGETS:
        note = ", deprecated" if name in DEPRECATED else ""
        return (
            Status.PASS,
            f"{label}: not on AMD's official Linux list, but PyTorch's ROCm wheels build it{note}",
        )
    return Status.WARN, f"{label}: not supported by ROCm, and PyTorch's ROCm wheels have no kernels for it"


def _override_text(agents: list[KfdAgent]) -> str:
    parts = []
    for agent in agents:
        parsed = gfx_version_tuple(agent.gfx_target) if isinstance(agent.gfx_target, str) else None
        value = override_for(parsed) if parsed else None
        if value:
            parts.append(f"HSA_OVERRIDE_GFX_VERSION={value} makes ROCm treat {agent.gfx_target} as {value}")
    if not parts:
        return "No supported target of the same family exists to stand in for it."
    return (
        "; ".join(parts)
        + ". This is an unsupported community workaround: it runs kernels built for a sibling "
        "chip, which usually works within one family but can crash or compute wrong results; AMD does not test it."
    )


def _override_fix(gfx: str, override: str) -> Remediation:
    """The error names the target: the override of the closest target PyTorch's wheels carry."""
    return Remediation(
        text=f"Make ROCm load the kernels of {gfx}'s sibling with HSA_OVERRIDE_GFX_VERSION={override} in the "
        "program's environment (for a service such as ollama: `systemctl edit ollama`, then "
        f'Environment="HSA_OVERRIDE_GFX_VERSION={override}"). Unsupported by AMD but what most users of '
        "such cards do; the lasting fix is a ROCm build that includes the target.",
        commands=(
            Command(
                ("env", f"HSA_OVERRIDE_GFX_VERSION={override}", "PROGRAM"),
                note="PROGRAM: the failing command (python train.py, ollama serve, ...)",
                runs_here=False,
            ),
        ),
        target=Target.SYSTEM,
    )


def _source_build_fix(facts: Facts, gfx: str) -> Remediation:
    """The paste names a target no PyTorch ROCm wheel builds and no wheel target shares its family with (RDNA1's
    gfx1010, Vega APUs' gfx90c): asking rocminfo for it again settles nothing, and no supported install runs
    on it. Torch built for it is the one way to the GPU (ROCm's own libraries need the target too); the CPU
    build the other answer."""
    return Remediation(
        text=f"No PyTorch ROCm wheel has kernels for {gfx}, and none for a sibling of the same family that "
        "HSA_OVERRIDE_GFX_VERSION could stand in for: no supported install runs torch on this GPU. The one way to "
        f"it is building torch from source for it (in a PyTorch checkout, `python tools/amd_build/build_amd.py`, "
        f"then the build with PYTORCH_ROCM_ARCH={gfx}; PyTorch's README, 'AMD ROCm Support'), and ROCm's own "
        "libraries (rocBLAS, MIOpen) must have kernels for it as well; otherwise the CPU build, or a GPU ROCm "
        "supports.",
        commands=(
            Command(
                ("env", f"PYTORCH_ROCM_ARCH={gfx}", "python", "setup.py", "develop"),
                note="in a PyTorch source checkout, after python tools/amd_build/build_amd.py",
                runs_here=False,
            ),
            cpu_build_command(facts, note="or the CPU build"),
        ),
        needs_network=True,
        target=Target.PYTHON_ENV,
    )


def _wheel_fix(facts: Facts, gfx: str) -> Remediation:
    """The error names a target PyTorch's ROCm wheels do build (gfx1151 in the newer ROCm variants): the
    installed build, or a ROCm library of the program, predates it. The newest ROCm torch, then its arch list."""
    rec = recommend_rocm(facts)
    check_list = Command(
        ("python", "-c", "import torch; print(torch.version.hip, torch.cuda.get_arch_list())"),
        note=f"the build's targets: {gfx} must be among them",
    )
    if rec is None:
        return dataclasses.replace(gfx_target_fix(), commands=(check_list,))
    return Remediation(
        text=f"PyTorch's ROCm wheels have kernels for {gfx} in their newer ROCm variants; the torch that failed "
        f"(or a ROCm library the program brings) was built without it. Install torch {rec.torch} ({rec.variant}), "
        f"the newest ROCm build gpu-doctor knows, and check that its arch list names {gfx}.",
        commands=(Command(rec.pip_argv("python")), check_list),
        needs_network=True,
        target=Target.PYTHON_ENV,
    )


_GFX = lazy(r"\bgfx(?P<major>[0-9]{1,2})(?P<minor>[0-9a-f])(?P<stepping>[0-9a-f])\b")


def _parse_gfx(text: str) -> tuple[str, tuple[int, int, int]] | None:
    found = _GFX.search(text)
    if found is None:
        return None
    return found[0], (int(found["major"]), int(found["minor"], 16), int(found["stepping"], 16))


def sibling_override(facts: Facts) -> Remediation | None:
    """The override of a sibling target for the gfx target a "no code object" error names: the error says the
    build in use lacks that target, so a sibling of its family stands in (gfx1101 under a build without it:
    11.0.0). None where no sibling exists, no target is named, or AMD supports the target in a release of its
    own."""
    said = reported(facts, "rocm_no_binary")
    named = _named_gfx(facts, said) if said else None
    if named is None or named[0] in OFFICIAL_LINUX:
        return None  # a target AMD supports (gfx1201 from ROCm 6.4): the release that has it, not a stand-in
    override = override_for(named[1], _installed_targets(facts) - {named[0]})
    return _override_fix(named[0], override) if override is not None else None


def release_for_target(facts: Facts) -> Remediation | None:
    """The ROCm release for the gfx target a "no code object" error names where AMD supports that target from a
    release on (gfx1201 from 6.4): the program's ROCm libraries predate it. None for any other target."""
    said = reported(facts, "rocm_no_binary")
    named = _named_gfx(facts, said) if said else None
    support = OFFICIAL_LINUX.get(named[0]) if named is not None else None
    if support is None:
        return None
    return rocm_release_fix(support.target, support.family, support.first_release, on_windows(facts))


def target_without_build(facts: Facts) -> str | None:
    """The gfx target a "no code object" error names where no PyTorch ROCm wheel builds it and no sibling's
    override stands in for it (RDNA1's gfx1012): no supported install runs there."""
    said = reported(facts, "rocm_no_binary")
    named = _named_gfx(facts, said) if said else None
    if named is None or named[0] in TORCH_WHEEL_TARGETS or override_for(named[1]) is not None:
        return None
    return named[0]


def _named_gfx(facts: Facts, said: list[ReportedError]) -> tuple[str, tuple[int, int, int]] | None:
    """The gfx target the error (or a listed GPU's name, "RX 5700 XT (gfx1010:xnack-)") names, parsed; else
    the target of the card the error's line or a listed GPU names ("i have an rx 6600")."""
    texts = [e.values.get("gfx", "") for e in said] + [f"{e.text} {e.context}" for e in said]
    texts += [g.name for g in facts.gpus if isinstance(g.name, str)]
    for text in texts:
        parsed = _parse_gfx(text)
        if parsed is not None:
            return parsed
    product = next((gfx for text in texts if (gfx := gfx_of_product(text)) is not None), None)
    return _parse_gfx(product) if product is not None else None


_GFX_TARGET = "amd.gfx_target"


def _installed_targets(facts: Facts) -> frozenset[str]:
    """The targets the installed ROCm torch's variant carries (its `+rocm6.2` tag or its HIP version; every
    variant's when neither is known): rocm6.2's wheels lack gfx1102 though rocm6.2.4's have it."""
    packages = facts.torch_packages
    return wheel_targets(packages.hip if not isinstance(packages, Unavailable) else None)


def _variant(facts: Facts) -> str:
    packages = facts.torch_packages
    hip = packages.hip if not isinstance(packages, Unavailable) else None
    return f"ROCm {hip} " if hip else ""


def _unlisted_card_without_gpu(facts: Facts) -> Finding | None:
    """A card named without its KFD topology (a report, a paste) whose target the wheels lack and a sibling's
    override covers, beside a torch that finds no GPU: the missing target is the usual reason (an RX 6700 XT,
    gfx1031, under ROCm torch: is_available() False, or a crash at the first kernel)."""
    runtime, rocm, packages = facts.torch, facts.rocm, facts.torch_packages
    if not isinstance(rocm, Unavailable) and not isinstance(rocm.agents, Unavailable):
        return None  # the machine's own targets: judged below
    if isinstance(runtime, Unavailable) or runtime.cuda_available is not False:
        return None
    if not isinstance(packages, Unavailable) and packages.version is not None and packages.hip is None:
        return None  # not a ROCm build: amd.torch_rocm says so
    named = _named_gfx(facts, [])
    installed = _installed_targets(facts)
    if named is None or named[0] in installed:
        return None
    if named[0] in TORCH_WHEEL_TARGETS:  # a newer ROCm variant's wheels have it: that torch, not an override
        return Finding(
            _GFX_TARGET,
            Status.FAIL,
            f"This torch's {_variant(facts)}wheels have no kernels for {named[0]}, this GPU's gfx target (newer "
            "ROCm variants have): most often why torch finds no GPU on it (torch.cuda.is_available() is False).",
            details=f"PyTorch's ROCm wheels are built for a list of gfx targets that grows with each ROCm variant; "
            f"{named[0]} is not on this one's, so ROCm finds no code object for the card and torch reports no GPU, "
            "or the first kernel crashes.",
            evidence=(fact("torch.cuda.is_available()", "False", "the paste"),),
            remediation=_with_device_access(_wheel_fix(facts, named[0])),
        )
    override = override_for(named[1], installed)
    if override is None:
        return None
    return Finding(
        _GFX_TARGET,
        Status.FAIL,
        f"ROCm's torch wheels have no kernels for {named[0]}, this GPU's gfx target: most often why torch finds "
        "no GPU on it (torch.cuda.is_available() is False).",
        details=f"PyTorch's ROCm wheels are built for a list of gfx targets; {named[0]} is not on it, so ROCm "
        "finds no code object for the card and torch reports no GPU, or the first kernel crashes.",
        evidence=(fact("torch.cuda.is_available()", "False", "the paste"),),
        remediation=_with_device_access(_override_fix(named[0], override)),
    )


def _listed_card_without_gpu(facts: Facts) -> Finding | None:
    """A card named without its KFD topology whose target the ROCm wheels do build, beside a ROCm torch that
    finds no GPU: the target is not why, and the usual reason left is a user who may not open /dev/kfd and
    /dev/dri (blind set 20: legacy-rocm-build#3072, an RX 7900 XTX whose owner was not in render and video)."""
    runtime, rocm, packages = facts.torch, facts.rocm, facts.torch_packages
    if not isinstance(rocm, Unavailable) and not isinstance(rocm.agents, Unavailable):
        return None  # the machine's own targets: judged below
    if not isinstance(facts.os, Unavailable) and facts.os.is_wsl:
        return None  # WSL has no /dev/kfd: amd.torch_rocm names AMD's WSL setup
    if isinstance(runtime, Unavailable) or runtime.cuda_available is not False:
        return None
    if isinstance(packages, Unavailable) or packages.hip is None:
        return None  # the build is not known to be ROCm's: amd.torch_rocm says what it is
    named = _named_gfx(facts, [])
    if named is None or named[0] not in _installed_targets(facts):
        return None
    support = OFFICIAL_LINUX.get(named[0])
    hip = version_key(packages.hip)[:2]
    if support is not None and len(hip) == 2 and hip < support.since_rocm:
        return None  # this torch's ROCm predates the target (gfx1201 needs 6.4): not a question of access
    return Finding(
        _GFX_TARGET,
        Status.FAIL,
        f"torch (a ROCm build) finds no GPU although its wheels build {named[0]}, this GPU's target: most often "
        "this user may not open /dev/kfd and /dev/dri (not in the render and video groups).",
        details="ROCm reaches the GPU through /dev/kfd and /dev/dri/renderD*, which belong to the render (and "
        "video) group; a user outside them gets no GPU from ROCm, with no error. The GPU's target is among the "
        "ones PyTorch's ROCm wheels are built for, so no override is needed.",
        evidence=(fact("torch.cuda.is_available()", "False", "the paste"),),
        remediation=Remediation(
            text="Add the user to the render and video groups and log in again (a container needs --device "
            "/dev/kfd --device /dev/dri and those groups too); then torch.cuda.is_available() is True.",
            commands=(
                Command(
                    ("ls", "-l", "/dev/kfd", "/dev/dri"), note="their group (render, video) and this user's"
                ),
                Command(
                    ("sudo", "usermod", "-aG", "render,video", "USER"),
                    note="USER: your login name; then log out and in",
                ),
            ),
            requires_root=True,
            target=Target.SYSTEM,
        ),
    )


def _with_device_access(fix: Remediation) -> Remediation:
    """The override, then the other usual reason ROCm torch sees no GPU: a user who may not open /dev/kfd."""
    return dataclasses.replace(
        fix,
        text=fix.text
        + " If torch still finds no GPU, this user may not open /dev/kfd: add it to the render and "
        "video groups and log in again.",
        commands=(
            *fix.commands,
            Command(
                ("sudo", "usermod", "-aG", "render,video", "USER"),
                note="USER: your login name; then log out and in",
            ),
        ),
        requires_root=True,
    )


@check("amd.gfx_target", "ROCm and torch support the AMD GPU's gfx target", "amd")
def amd_gfx_target(facts: Facts) -> Finding:
    """
    ## What it checks
    Each AMD GPU's gfx target (from `gfx_target_version` in the KFD topology: 90402 is gfx942) against the
    targets ROCm officially supports on Linux, against the ROCm version that added it, and against the
    targets the installed ROCm torch was built for (`torch.cuda.get_arch_list()`) when that is known.

    ## Why it matters
    A ROCm build has kernels only for the gfx targets it was compiled for; on any other GPU torch fails with
    "HIP error: invalid device function" or finds no GPU. Consumer and integrated GPUs are often not on the list.

    ## How to fix
    Use a GPU ROCm supports, or a newer ROCm torch wheel that adds the target. For an unlisted GPU of a supported
    family the community sets `HSA_OVERRIDE_GFX_VERSION` (e.g. 10.3.0 for gfx1031) so ROCm loads a sibling's
    kernels: unsupported, and it can fail in ways that are hard to see.
    """
    cid = _GFX_TARGET
    said = reported(facts, "rocm_no_binary")
    if said:
        named = _named_gfx(facts, said)
        override = (
            override_for(named[1]) if named is not None and named[0] not in TORCH_WHEEL_TARGETS else None
        )
        target = f"{named[0]}, this GPU's gfx target" if named is not None else "this GPU's gfx target"
        return Finding(
            cid,
            Status.FAIL,
            f"ROCm has no kernels for {target} ({said[0].where}).",
            details=said[0].means,
            evidence=reported_evidence(said),
            remediation=_override_fix(named[0], override)
            if named is not None and override
            else _wheel_fix(facts, named[0])
            if named is not None and named[0] in TORCH_WHEEL_TARGETS
            else _source_build_fix(facts, named[0])
            if named is not None
            else gfx_target_fix(),
        )
    failed = reported(facts, "rocm_hip_error")
    named = _named_gfx(facts, []) if failed else None
    installed = _installed_targets(facts)
    if named is not None and named[0] not in installed and override_for(named[1], installed) is not None:
        # any HIP call can fail on a target the wheels lack: the sibling's kernels are the usual way out
        override = override_for(named[1], installed)
        assert override is not None
        return Finding(
            cid,
            Status.FAIL,
            f"ROCm's torch wheels have no kernels for {named[0]}, this GPU's gfx target, the usual reason for a "
            f"HIP error on it ({failed[0].where}).",
            details=failed[0].means,
            evidence=reported_evidence(failed),
            remediation=_override_fix(named[0], override),
        )
    unlisted = _unlisted_card_without_gpu(facts) if not failed else None
    if unlisted is not None:
        return unlisted
    access = _listed_card_without_gpu(facts) if not failed else None
    if access is not None:
        return access
    skip = not_applicable(facts, cid)
    if skip is not None:
        return skip
    rocm = facts.rocm
    agents_or_why = rocm if isinstance(rocm, Unavailable) else rocm.agents
    if isinstance(agents_or_why, Unavailable) or not agents_or_why:
        why = agents_or_why if isinstance(agents_or_why, Unavailable) else "no GPU node in the KFD topology"
        return Finding(cid, Status.UNKNOWN, f"Could not read the AMD GPUs' gfx targets: {why}.")
    built, version = _runtime_arch(facts), rocm_minor(facts)
    verdicts = [(a, *_verdict(a, built, version)) for a in agents_or_why]
    worst = max((status for _, status, _ in verdicts), key=lambda s: s.severity)
    evidence = tuple(
        Evidence(
            f"KFD node {a.node}",
            f"gfx_target_version {a.gfx_target_version}",
            f"{KFD_NODES}/{a.node}/properties",
        )
        for a in agents_or_why
    )
    if built is not None:
        evidence += (Evidence("torch arch list", ", ".join(sorted(built)), "torch.cuda.get_arch_list()"),)
    lines = "; ".join(text for _, _, text in verdicts)
    if worst in (Status.PASS, Status.UNKNOWN):
        return Finding(cid, worst, lines + ".", evidence=evidence)
    bad = [a for a, status, _ in verdicts if status in (Status.WARN, Status.FAIL)]
    return Finding(
        cid,
        worst,
        lines + ".",
        details=_override_text(bad),
        evidence=evidence,
        remediation=Remediation(
            text="Install a ROCm torch wheel built for this target (see amd.torch_rocm), or use a supported GPU. "
            + _override_text(bad),
            target=Target.SYSTEM,
        ),
    )
