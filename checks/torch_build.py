"""torch.*: is the installed torch the right build for this driver and these GPUs, and does CUDA start?"""

from __future__ import annotations

from torch_gpu_doctor.checks.support.cuda_messages import explain
from torch_gpu_doctor.checks.support.signatures import explain as signature_of
from torch_gpu_doctor.checks.support.signatures import reported, reported_evidence
from torch_gpu_doctor.checks.support.torch_state import built_for_one_torch, no_cuda_torch
from torch_gpu_doctor.compat import load_matrix
from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.compat.torch_releases import (
    arch_supported,
    cubin_runs_on,
    driver_runs_cuda,
    version_key,
)
from torch_gpu_doctor.facts.describe import fact, gpu_label
from torch_gpu_doctor.facts.gpus import Gpu
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.reported_errors import ReportedError
from torch_gpu_doctor.facts.torch import TorchPackages
from torch_gpu_doctor.fixes.cuda_init import init_error_fix
from torch_gpu_doctor.fixes.driver_plan import plan_driver
from torch_gpu_doctor.fixes.jetson import jetson_torch_remediation, openblas_core_type_fix
from torch_gpu_doctor.fixes.library_path import extension_arch_fix
from torch_gpu_doctor.fixes.target import on_windows, python_command, target_platform
from torch_gpu_doctor.fixes.torch_wheel import (
    driver_remediation,
    fix_for_torch,
    older_than_every_build,
    program_floor_fix,
    unnamed_gpu_fix,
    unnamed_nvidia_gpu,
    wheel_platform,
)
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.registry import check
from torch_gpu_doctor.unavailable import Reason, Unavailable

FLOOR_CC = (
    3,
    0,
)  # below: Tesla and Fermi GPUs (CUDA 8 was Fermi's last), which no PyTorch of the data builds for


def _python(facts: Facts) -> str:
    return facts.python.executable if not isinstance(facts.python, Unavailable) else "the target Python"


def _built_for_this_torch(packages: TorchPackages) -> list[str]:
    """Installed packages tied to this torch build: by name, or by an exact `torch==` requirement."""
    return sorted(
        {
            d.name
            for d in packages.distributions
            if d.name not in ("torch", "torchvision", "torchaudio")
            and (
                d.name in built_for_one_torch()
                or any(r.replace(" ", "").startswith("torch==") for r in d.requires)
            )
        }
    )


def _install_fix(facts: Facts) -> Remediation:
    return fix_for_torch(facts)


def _packages_evidence(packages: TorchPackages) -> tuple[Evidence, ...]:
    items = [
        Evidence("torch copy on sys.path", path, "torch_packages probe") for path in packages.torch_paths
    ]
    items.append(Evidence("torch.version.cuda", str(packages.cuda), "torch/version.py"))
    return tuple(items)


@check("torch.installed", "torch is installed once, where the interpreter imports it", "torch", required=True)
def torch_installed(facts: Facts) -> Finding:
    """
    ## What it checks
    Which copies of torch the diagnosed interpreter can import (every `torch/` package on its `sys.path`, in
    import order), read from package metadata without importing torch.

    ## Why it matters
    Without torch there is nothing to run; with two copies (a user-site install over a virtual environment,
    an old copy left in another site-packages, a source checkout on `PYTHONPATH`) the one that is imported is
    not the one pip reports, so reinstalling "fixes" nothing.

    ## How to fix
    Install the recommended wheel into the diagnosed interpreter with `python -m pip`, and remove the
    shadowing copies (uninstall from the other location or drop it from `PYTHONPATH`).
    """
    cid = "torch.installed"
    packages = facts.torch_packages
    if isinstance(packages, Unavailable):
        status = Status.SKIP if packages.reason is Reason.NOT_RECORDED else Status.UNKNOWN
        return Finding(cid, status, f"Could not see the packages of {_python(facts)}: {packages}.")
    evidence = _packages_evidence(packages)
    if not packages.torch_paths:
        return Finding(
            cid,
            Status.FAIL,
            f"torch is not installed for {_python(facts)}.",
            evidence=evidence,
            remediation=_install_fix(facts),
        )
    if len(packages.torch_paths) > 1:
        first, *others = packages.torch_paths
        return Finding(
            cid,
            Status.WARN,
            f"{len(packages.torch_paths)} copies of torch are importable; {first} wins.",
            details="The others are shadowed: "
            + ", ".join(others)
            + ". pip may report or upgrade a different copy "
            "from the one Python imports.",
            evidence=evidence,
            remediation=_shadow_fix(facts, first, packages.user_site),
        )
    py = facts.python
    in_venv = not isinstance(py, Unavailable) and py.in_virtualenv is True
    user_site = packages.user_site
    if in_venv and user_site and packages.torch_paths[0].startswith(user_site.rstrip("/") + "/"):
        return Finding(
            cid,
            Status.WARN,
            f"torch {packages.version} comes from the user site ({user_site}), not from the virtual environment.",
            details="The venv sees ~/.local because it was made with --system-site-packages: `pip install` in "
            "the venv will not replace this copy, and other environments see it too.",
            evidence=evidence,
            remediation=_shadow_fix(facts, packages.torch_paths[0], user_site),
        )
    return Finding(
        cid, Status.PASS, f"torch {packages.version} at {packages.torch_paths[0]}.", evidence=evidence
    )


def _shadow_fix(facts: Facts, first: str, user_site: str | None) -> Remediation:
    """Take away the copy that imports first: it is not the one this environment installed, so installing
    another build here would change nothing."""
    python = python_command(facts)
    which = Command(
        (python, "-c", "import torch; print(torch.__version__, torch.__file__)"),
        note="which torch imports now",
    )
    folders = [p.rstrip("/") for p in facts.env.get("PYTHONPATH", "").split(":") if p]
    added = next((p for p in folders if first.startswith(p + "/")), None)
    if added is not None:
        return Remediation(
            text=f"Take {added} out of PYTHONPATH (or unset PYTHONPATH) wherever this Python runs: that folder "
            "puts its torch ahead of the environment's own. pip cannot uninstall it there.",
            commands=(
                Command(("env", "-u", "PYTHONPATH", *which.argv), note="which torch imports without it"),
            ),
            target=Target.SYSTEM,
        )
    if user_site and first.startswith(user_site.rstrip("/") + "/"):
        return Remediation(
            text=f"Uninstall the torch in the user site ({user_site}) with the interpreter that owns it, outside "
            "any virtual environment; the environment's own torch then imports.",
            commands=(
                Command(
                    ("python3", "-m", "pip", "uninstall", "torch"), note="outside the venv", runs_here=False
                ),
                which,
            ),
            target=Target.SYSTEM,
        )
    return Remediation(
        text=f"Remove the torch at {first}, or the path entry (a .pth file, sys.path in a script) that puts it "
        "first; then check which torch imports.",
        commands=(which,),
        target=Target.SYSTEM,
    )


@check("torch.cpu_build", "A GPU build of torch on a machine with an NVIDIA GPU", "torch")
def torch_cpu_build(facts: Facts) -> Finding:
    """
    ## What it checks
    Whether the installed torch is a CPU-only build (`torch.version.cuda` is None) while this machine has an
    NVIDIA GPU the driver exposes.

    ## Why it matters
    A CPU build never uses the GPU: `torch.cuda.is_available()` is False with no error at all. It is what
    `pip install torch` gives on Windows and macOS, and what the `/whl/cpu` index gives everywhere.

    ## How to fix
    Reinstall torch from the CUDA index that matches the driver and the GPU's architecture; the exact
    command is shown.
    """
    cid = "torch.cpu_build"
    packages = facts.torch_packages
    if isinstance(packages, Unavailable) or packages.version is None:
        return Finding(cid, Status.SKIP, "torch is not installed (see torch.installed).")
    usable = [g for g in facts.nvidia_gpus if g.nvml_index is not None]
    if packages.cuda is not None:
        return Finding(cid, Status.PASS, f"torch {packages.version} is a CUDA {packages.cuda} build.")
    amd = [g for g in facts.gpus if g.vendor == "amd"]
    if packages.hip is not None and (amd or not usable):
        return Finding(cid, Status.PASS, f"torch {packages.version} is a ROCm {packages.hip} build.")
    if packages.hip is not None:
        return Finding(
            cid,
            Status.FAIL,
            f"torch {packages.version} is a ROCm build for AMD GPUs: it cannot use the NVIDIA GPU"
            f"{'s' if len(usable) > 1 else ''} here.",
            evidence=_packages_evidence(packages),
            remediation=_install_fix(facts),
        )
    if not usable and facts.jetson_board is not None:  # an integrated GPU, outside NVML and PCI
        return Finding(
            cid,
            Status.FAIL,
            f"torch {_shown(packages)}is a CPU-only build: it will not use this Jetson's GPU.",
            evidence=_packages_evidence(packages),
            remediation=_install_fix(facts),
            caused_by=("platform.jetson",),
        )
    if not usable:
        return Finding(
            cid, Status.PASS, f"torch {packages.version} is a CPU build, and no NVIDIA GPU is usable here."
        )
    named = all(isinstance(g.compute_capability, str) for g in usable)
    gpus = (
        # no count for one: a GPU named in a paste's words ("4x 2080ti") is one entry whatever the number said
        f"it will not use the {f'{len(usable)} NVIDIA GPUs' if len(usable) > 1 else 'NVIDIA GPU'} here"
        if not unnamed_nvidia_gpu(facts)
        else "it cannot use an NVIDIA GPU, whatever the driver"
    )
    return Finding(
        cid,
        Status.FAIL,
        f"torch {_shown(packages)}is a CPU-only build: {gpus}.",
        evidence=_packages_evidence(packages),
        remediation=_install_fix(facts) if named else (unnamed_gpu_fix(facts) or _install_fix(facts)),
    )


@check("torch.driver_compat", "The driver can load torch's CUDA runtime", "torch")
def torch_driver_compat(facts: Facts) -> Finding:
    """
    ## What it checks
    The CUDA version torch was built with (`torch.version.cuda`) against the newest CUDA the installed driver
    supports, with NVIDIA's minor-version compatibility (any driver of the same CUDA major: ≥ 525 for 12.x,
    ≥ 580 for 13.x).

    ## Why it matters
    A wheel built for a newer CUDA major than the driver supports cannot start CUDA: PyTorch says "The NVIDIA
    driver on your system is too old". Within the same major it works, except that PTX newer than the
    driver cannot be JIT-compiled (PyTorch's release wheels carry no PTX, some extensions do).

    ## How to fix
    Either update the driver to the branch the wheel needs, or install the wheel built for the CUDA your
    driver supports; both commands are shown.
    """
    cid = "torch.driver_compat"
    packages, driver, runtime = facts.torch_packages, facts.driver, facts.torch
    said_text = "" if isinstance(runtime, Unavailable) else runtime.cuda_init_error or ""
    said = signature_of(said_text) if said_text else None
    if (
        said is not None
        and said.cls == "driver_too_old"
        and (isinstance(packages, Unavailable) or packages.cuda is None)
    ):
        limit = (
            f": it supports CUDA ≤ {driver.cuda_version}"
            if not isinstance(driver, Unavailable) and isinstance(driver.cuda_version, str)
            else ""
        )
        return Finding(
            cid,
            Status.FAIL,
            f"The driver is too old for this torch{limit}; torch was built for a newer CUDA (torch says so).",
            details=said.means,
            evidence=(Evidence("torch", said_text, "torch's CUDA initialisation"),),
            # a GPU the paste names has a compute capability: the build chosen for it, not for any GPU
            remediation=(unnamed_gpu_fix(facts) if unnamed_nvidia_gpu(facts) else _install_fix(facts))
            or driver_remediation(facts),
        )
    if isinstance(packages, Unavailable) or packages.cuda is None:
        return no_cuda_torch(cid, packages)
    if isinstance(driver, Unavailable) or not isinstance(driver.cuda_version, str):
        return Finding(cid, Status.SKIP, "No NVIDIA driver version to compare with (see driver.installed).")
    evidence = (
        Evidence("torch.version.cuda", packages.cuda, "torch/version.py"),
        fact("newest CUDA of the driver", driver.cuda_version, driver.cuda_version_source or "-"),
    )
    if not driver_runs_cuda(driver.cuda_version, packages.cuda):
        tied = _built_for_this_torch(packages)
        fix = driver_remediation(facts) if tied else _install_fix(facts)
        return Finding(
            cid,
            Status.FAIL,
            f"The driver is too old for this torch: it supports CUDA ≤ {driver.cuda_version}, torch needs CUDA "
            f"{packages.cuda.split('.')[0]}.x.",
            details="torch.cuda.is_available() will be False with 'The NVIDIA driver on your system is too old'."
            + (
                f" {', '.join(tied)} {'is' if len(tied) == 1 else 'are'} built for this torch and its CUDA: "
                "another torch build would break them, so the driver is the fix."
                if tied
                else f" Or keep this torch and update the driver: {needed}"
                if (needed := plan_driver(facts).summary())
                else ""
            ),
            evidence=evidence,
            remediation=fix,
        )
    if tuple(int(p) for p in packages.cuda.split(".")[:2]) > tuple(
        int(p) for p in driver.cuda_version.split(".")[:2]
    ):
        return Finding(
            cid,
            Status.PASS,
            f"CUDA {packages.cuda} torch runs on this CUDA {driver.cuda_version} driver through minor-version "
            "compatibility.",
            details="PTX newer than the driver cannot be JIT-compiled; PyTorch's own kernels are unaffected.",
            evidence=evidence,
        )
    return Finding(
        cid,
        Status.PASS,
        f"CUDA {packages.cuda} torch, driver supports CUDA ≤ {driver.cuda_version}.",
        evidence=evidence,
    )


JETSON_BUILDS_ONLY = "; only NVIDIA's Jetson builds of torch target it"


@check(
    "torch.arch_compat",
    "torch and its compiled extensions have kernels for every GPU's architecture",
    "torch",
)
def torch_arch_compat(facts: Facts) -> Finding:
    """
    ## What it checks
    Every visible GPU's compute capability against the architectures compiled into the installed torch
    (`torch.cuda.get_arch_list()`, or the published list for that release, variant and platform), using
    PyTorch's own rule: a cubin for sm_XY runs on X.Z with Z ≥ Y of the same major, never on an integrated
    (Jetson) GPU of another CC; PTX runs on any newer CC.

    ## Why it matters
    Without kernels for the GPU's architecture, CUDA initialises but every operation fails with "no kernel
    image is available for execution on the device". New wheels drop old GPUs (CUDA 13 wheels have nothing
    for Maxwell, Pascal or Volta) and old wheels lack new ones (RTX 50 needs sm_120).

    ## How to fix
    Install a torch release and CUDA variant that still (or already) compiles for your GPU; the command
    names the newest one that also suits your driver.
    """
    cid = "torch.arch_compat"
    packages, runtime = facts.torch_packages, facts.torch
    said = reported(facts, "no_kernel_image")  # CUDA's own error: an operation found no kernel
    warned = reported(facts, "torch_arch_warning")  # torch's warning at start-up, from its arch list
    # A paste may show torch's CUDA warnings without its version: the warning itself is a CUDA build's
    seen_cuda = isinstance(packages, Unavailable) and (
        said or warned or (not isinstance(runtime, Unavailable) and bool(runtime.arch_list))
    )
    too_old = (
        older_than_every_build(facts, load_torch_releases()) if isinstance(packages, Unavailable) else None
    )
    if not seen_cuda and too_old is not None:  # whichever torch it is: no build has kernels for these GPUs
        named = ", ".join(gpu_label(g) for g in facts.nvidia_gpus)
        return Finding(
            cid,
            Status.FAIL,
            f"No current PyTorch build has kernels for {named}: whichever recent torch is installed, CUDA operations on it fail "
            "with 'no kernel image is available'.",
            remediation=too_old,
        )
    if not seen_cuda and (isinstance(packages, Unavailable) or packages.cuda is None):
        return no_cuda_torch(cid, packages)
    gpus = [g for g in facts.nvidia_gpus if isinstance(g.compute_capability, str)]
    said = said or ([] if any(isinstance(g.compute_capability, str) for g in facts.nvidia_gpus) else warned)
    if said and not gpus and facts.jetson_board is not None:  # its GPU is the SoC's: NVIDIA's builds have it
        return Finding(
            cid,
            Status.FAIL,
            f"torch {_shown(packages)}has no kernels for this Jetson's GPU: CUDA said so ({said[0].where})"
            f"{JETSON_BUILDS_ONLY}.",
            details=said[0].means,
            evidence=reported_evidence(said),
            remediation=jetson_torch_remediation(facts),
        )
    if said and not gpus:
        return Finding(
            cid,
            Status.FAIL,
            f"torch {_shown(packages)}has no kernels for this GPU's architecture: CUDA said so ({said[0].where}).",
            details=said[0].means,
            evidence=reported_evidence(said),
            remediation=_for_this_gpu(facts),
        )
    if not gpus:
        return Finding(cid, Status.SKIP, "No NVIDIA GPU with a known compute capability.")
    arch, source = _arch_list(facts, packages)
    if arch is None and warned and not said:
        return _from_warning(cid, facts, gpus, warned)
    if arch is None and said:
        return Finding(
            cid,
            Status.FAIL,
            f"torch {_shown(packages)}has no kernels for {gpu_label(gpus[0])} (compute capability "
            f"{gpus[0].compute_capability}): CUDA said so ({said[0].where}).",
            details=said[0].means,
            evidence=reported_evidence(said),
            remediation=_install_fix(facts),
        )
    built_before = _cuda_before_the_gpus(packages, gpus) if arch is None else []
    if built_before:  # a release the data does not know (torch 0.4.1), built before the GPU's architecture
        gpu, first, cuda = built_before[0]
        return Finding(
            cid,
            Status.FAIL,
            f"torch {_shown(packages)}is built with CUDA {cuda}, older than CUDA {first}, the first that compiles "
            f"for {gpu_label(gpu)}'s architecture (compute capability {gpu.compute_capability}): it has no kernels "
            "for it.",
            details="Whatever else fails (cuDNN's EXECUTION_FAILED, 'no kernel image is available'), a build made "
            "before the GPU's architecture existed cannot run on it: a torch built with a CUDA that knows it can.",
            evidence=(Evidence("torch's CUDA", cuda, "torch.version.cuda"),),
            remediation=_install_fix(facts),
        )
    ancient = [g for g in gpus if tuple(int(x) for x in str(g.compute_capability).split(".")[:2]) < FLOOR_CC]
    if arch is None and len(ancient) == len(gpus):
        names = _named(ancient)
        return Finding(
            cid,
            Status.FAIL,
            f"No PyTorch build has kernels for {names}: Fermi and older GPUs have not been supported for years.",
            evidence=tuple(
                Evidence("compute capability", str(g.compute_capability), g.compute_capability_source or "-")
                for g in ancient
            ),
            remediation=_install_fix(facts),
        )
    if arch is None:
        return Finding(
            cid,
            Status.UNKNOWN,
            f"The compiled architectures of torch {_shown(packages)}are unknown: {source}.",
        )
    data = load_torch_releases()
    missing = [g for g in gpus if not arch_supported(arch, (), str(g.compute_capability), data.device_rule)]
    evidence = (Evidence("compiled architectures", " ".join(arch), source),)
    if missing:
        names = _named(missing)
        return Finding(
            cid,
            Status.FAIL,
            f"torch {_shown(packages)}has no kernels for {names}.",
            details="CUDA starts, but every operation on that GPU fails with 'no kernel image is available'.",
            evidence=evidence,
            remediation=_install_fix(facts),
        )
    if said:  # torch's architectures cover the GPU, yet an operation found no kernel
        cc = str(gpus[0].compute_capability)
        if not any(cubin_runs_on(a, cc, data.device_rule) for a in arch if a.startswith("sm_")):
            # only PTX reaches it: kernels written for an architecture (cutlass attention) have nothing to run
            return Finding(
                cid,
                Status.FAIL,
                f"An operation of torch {_shown(packages)}has no kernel for {gpu_label(gpus[0])} (compute "
                f"capability {cc}): its architectures ({' '.join(arch)}) reach it only through PTX.",
                details=said[0].means,
                evidence=(*evidence, *reported_evidence(said)),
                remediation=_install_fix(facts),
            )
        return Finding(
            cid,
            Status.FAIL,
            f"An operation found no kernel for {gpu_label(gpus[0])} (compute capability {cc}), although torch "
            f"{_shown(packages)}has kernels for it ({' '.join(arch)}): {IN_AN_EXTENSION}.",
            details=said[0].means,
            evidence=(*evidence, *reported_evidence(said)),
            remediation=extension_arch_fix(EXTENSION_IN_TRACEBACK, cc),
        )
    if warned:  # torch itself warns: a cubin of the same major runs (cosmetic), PTX alone does not count
        ptx_only = [
            g
            for g in gpus
            if not any(
                cubin_runs_on(a, str(g.compute_capability), data.device_rule)
                for a in arch
                if a.startswith("sm_")
            )
        ]
        if ptx_only:
            names = _named(ptx_only)
            return Finding(
                cid,
                Status.FAIL,
                f"torch {_shown(packages)}has no compiled kernels for {names}, and says so: only PTX "
                f"({' '.join(a for a in arch if a.startswith('compute_'))}) would have to be JIT-compiled for it.",
                details="torch warns that this GPU is not compatible with the build. PTX from a CUDA older than "
                "the GPU's architecture does not make it usable: cuBLAS and cuDNN of that CUDA have no kernels "
                "for it either.",
                evidence=(*evidence, *reported_evidence(warned, 2)),
                remediation=_install_fix(facts),
            )
        return _cosmetic(cid, packages, gpus, warned, evidence)
    below = _below_program_floor(cid, packages, gpus)  # torch's kernels cover the GPUs: a program's may not
    if below is not None:
        return below
    caps = ", ".join(sorted({str(g.compute_capability) for g in gpus}))
    return Finding(
        cid,
        Status.PASS,
        f"torch {_shown(packages)}has kernels for compute capability {caps}.",
        evidence=evidence,
    )


def _named(gpus: list[Gpu]) -> str:
    """The GPUs with their compute capability, each kind once: "2 × NVIDIA GeForce RTX 3090 (compute capability
    8.6)" for two of a kind, not the same words twice."""
    labels = [f"{gpu_label(g)} (compute capability {g.compute_capability})" for g in gpus]
    counted = {label: labels.count(label) for label in labels}  # first seen first
    return "; ".join(label if n == 1 else f"{n} × {label}" for label, n in counted.items())


def _below_program_floor(cid: str, packages: TorchPackages | Unavailable, gpus: list[Gpu]) -> Finding | None:
    """An installed program with CUDA kernels of its own (vLLM) whose oldest supported compute capability
    (compat data, from its docs) is above every GPU's: none of its releases runs here, whatever torch has.
    Some GPUs below it: a warning naming them (it runs on the others)."""
    if isinstance(packages, Unavailable):
        return None
    data = load_torch_releases()
    for d in packages.distributions:
        floor = data.program_floors.get(d.name)
        if floor is None:
            continue
        name = data.program_names.get(d.name, d.name)
        below = [g for g in gpus if _cc(str(g.compute_capability)) < floor]
        if not below:
            continue
        names = _named(below)
        evidence = (Evidence(d.name, d.version, "installed"),)
        if len(below) == len(gpus):
            return Finding(
                cid,
                Status.FAIL,
                f"{name} {d.version} cannot run on {names}: its kernels need compute capability "
                f"{floor[0]}.{floor[1]} or newer.",
                details=f"{name} starts and then fails in its own kernels (often 'no kernel image is available' or "
                "a Triton error) on older GPUs; torch's own kernels are not the gap.",
                evidence=evidence,
                remediation=program_floor_fix(name, floor),
            )
        usable = ",".join(str(g.nvml_index) for g in gpus if g not in below and g.nvml_index is not None)
        return Finding(
            cid,
            Status.WARN,
            f"{name} {d.version} cannot use {names}: its kernels need compute capability {floor[0]}.{floor[1]} "
            "or newer. It runs on the other GPUs.",
            evidence=evidence,
            remediation=Remediation(
                text=f"Start {name} with only the GPUs it supports: CUDA_VISIBLE_DEVICES set to them "
                "(nvidia-smi -L numbers them).",
                commands=(
                    Command(
                        ("env", f"CUDA_VISIBLE_DEVICES={usable or 'N'}", "PROGRAM"),
                        runs_here=False,
                        note="PROGRAM: the command that starts it",
                    ),
                ),
                target=Target.PYTHON_ENV,
            ),
        )
    return None


_RANGE = lazy(r"\((\d+\.\d+)\)\s*-\s*\((\d+\.\d+)\)")  # torch's "(8.0) - (12.0)", min and max


def _cc(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return int(major), int(minor or 0)


def _from_warning(cid: str, facts: Facts, gpus: list[Gpu], warned: list[ReportedError]) -> Finding:
    """Only torch's start-up warning to go on (its arch list is not in the paste). A GPU of the highest
    supported major with a newer minor (GB10, 12.1, beside 12.0) runs the major's cubins: the warning is
    cosmetic. Otherwise torch says it has nothing for the GPU."""
    ranges = [_RANGE.search(f"{e.text} {e.context}") for e in warned]
    top = max((_cc(m.group(2)) for m in ranges if m is not None), default=None)
    same_major = top is not None and all(
        _cc(str(g.compute_capability))[0] == top[0] and _cc(str(g.compute_capability)) > top for g in gpus
    )
    packages = facts.torch_packages
    evidence = reported_evidence(warned)
    if same_major:
        return _cosmetic(cid, packages, gpus, warned, evidence)
    names = _named(gpus)
    return Finding(
        cid,
        Status.FAIL,
        f"torch {_shown(packages)}has no kernels for {names}: torch says so ({warned[0].where}).",
        details=warned[0].means,
        evidence=evidence,
        remediation=_install_fix(facts),
    )


def _cosmetic(
    cid: str,
    packages: TorchPackages | Unavailable,
    gpus: list[Gpu],
    warned: list[ReportedError],
    evidence: tuple[Evidence, ...],
) -> Finding:
    caps = ", ".join(sorted({str(g.compute_capability) for g in gpus}))
    return Finding(
        cid,
        Status.WARN,
        f"torch {_shown(packages)}warns about compute capability {caps}, but its kernels for the same major run "
        "on this newer minor revision: the warning is cosmetic.",
        details="Cubins built for sm_X0 run on every X.Y GPU of that major. Confirm with a small matmul on the "
        "GPU; no reinstall is needed.",
        evidence=(*evidence, *reported_evidence(warned, 2)),
        remediation=Remediation(
            text="Run one matmul on the GPU: if it prints a result, torch works here and the warning can be "
            "ignored.",
            commands=(
                Command(
                    (
                        "python",
                        "-c",
                        'import torch; x = torch.ones(64, 64, device="cuda"); print((x @ x).sum())',
                    )
                ),
            ),
            target=Target.PYTHON_ENV,
        ),
    )


def _import_failed(python: str, windows: bool) -> Remediation:
    loader = (
        "a folder on PATH with another CUDA or cuDNN DLL, a missing Visual C++ runtime"
        if windows
        else "LD_PRELOAD or LD_LIBRARY_PATH pointing at another CUDA or cuDNN (unset them for this run)"
    )
    return Remediation(
        text=f"See where the import breaks, then remove what gets in its way: {loader}, a second torch earlier on "
        "sys.path (a per-user install), or "
        "a broken install, which a clean reinstall of the same version repairs "
        f"(`{python} -m pip install --force-reinstall --no-cache-dir torch==<version>` from the same index).",
        commands=(
            Command(
                (python, "-X", "faulthandler", "-c", "import torch; print(torch.__file__)"),
                note="where it fails",
            ),
        ),
        # a look first, not a package change: the reinstall is for after it (recommended_install stays unneeded)
        target=Target.SYSTEM,
    )


def _cuda_before_the_gpus(
    packages: TorchPackages | Unavailable, gpus: list[Gpu]
) -> list[tuple[Gpu, str, str]]:
    """The GPUs of a major architecture that came after the CUDA torch was built with (cuda_matrix.json's
    first_cuda_for_cc of its X.0), each with that first CUDA and torch's own. The major, not the GPU's own
    capability: a cubin for X.0 runs on X.y, so a CUDA 9.2 build (sm_70) runs on a 7.5 RTX 2080 Ti, while
    nothing of it runs on an 8.6 RTX 3090 (PyTorch warns on the same rule)."""
    if isinstance(packages, Unavailable) or not packages.cuda:
        return []
    built = version_key(packages.cuda)[:2]
    matrix = load_matrix()
    found = []
    for gpu in gpus:
        first = matrix.first_cuda_for(f"{str(gpu.compute_capability).split('.')[0]}.0")
        if first is not None and len(built) == 2 and built < version_key(first)[:2]:
            found.append((gpu, first, packages.cuda))
    return found


def _shown(packages: TorchPackages | Unavailable) -> str:
    """The version and a space ("2.1.0 "), or "" when it is not known (a paste that does not say it)."""
    if isinstance(packages, Unavailable) or not packages.version or packages.version.startswith("("):
        return ""
    return f"{packages.version} "


# the end of the summary when torch has the GPU's kernels: triage names a serving engine's own kernels then
IN_AN_EXTENSION = "the kernel that is missing is in a compiled extension the program loads, not in torch"
EXTENSION_IN_TRACEBACK = (
    "the compiled extension the traceback names (the program's own ops, flash-attn, xformers)"
)
# torch's own answer: the GPU, its compute capability and the architectures this build has kernels for. A
# "no kernel image" error comes after CUDA started, so torch can say it; nvidia-smi's compute_cap field is
# missing before driver 510 (blind set 17: a 2020 report told to query it)
ARCH_QUESTION = (
    "import torch; print(torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0), "
    "torch.cuda.get_arch_list())"
)


def _for_this_gpu(facts: Facts) -> Remediation:
    if isinstance(facts.torch_packages, Unavailable):  # no torch shown (an app of its own): the driver says
        return Remediation(
            text="Install a build whose compiled architectures include this GPU's compute capability. "
            "`nvidia-smi --query-gpu=name,compute_cap --format=csv` names the GPU and its capability (drivers "
            "510 and newer; `nvidia-smi -L` names the GPU on older ones); gpu-doctor on that machine picks the "
            "build and prints its pip command.",
            commands=(Command(("nvidia-smi", "--query-gpu=name,compute_cap", "--format=csv")),),
            target=Target.SYSTEM,
        )
    return Remediation(
        text="Install a torch build whose compiled architectures include this GPU's compute capability: the "
        "command below prints the GPU, its capability and the architectures the installed build has. Then "
        "rebuild what was compiled against the old torch (detectron2, mmcv, custom ops); gpu-doctor on that "
        "machine picks the build and prints its pip command.",
        commands=(Command((python_command(facts), "-c", ARCH_QUESTION)),),
        target=Target.PYTHON_ENV,
    )


def _arch_list(facts: Facts, packages: TorchPackages | Unavailable) -> tuple[tuple[str, ...] | None, str]:
    runtime = facts.torch
    if not isinstance(runtime, Unavailable) and runtime.arch_list:
        return runtime.arch_list, "torch.cuda.get_arch_list()"
    if isinstance(packages, Unavailable):
        return None, "neither torch itself nor the compat data lists them"
    data = load_torch_releases()
    rel = data.release(packages.version or "")
    name = "cu" + (packages.cuda or "").replace(".", "")
    variant = rel.variant(name) if rel else None
    platform = target_platform(facts)
    legacy = data.legacy_release(packages.version or "") if rel is None else None
    build = legacy.build(name) if legacy else None
    if (
        legacy is not None and build is not None
    ):  # 1.4-1.12: the builder's lists, which Linux and Windows differ in
        version = (packages.version or "").split("+", 1)[0]
        platform = platform or wheel_platform(facts)
        listed = build.arch_list(version, platform)
        if listed is None:
            return None, "neither torch itself nor the compat data lists them"
        return listed, f"compat data for {version} {name} {platform} (pytorch/builder's list)"
    if platform is None and variant is not None and isinstance(facts.python, Unavailable):
        platform = next(iter(variant.arch_list), None)  # a paste without the interpreter: the builds agree
    if variant is None or platform is None or platform not in variant.arch_list:
        return None, "neither torch itself nor the compat data lists them"
    return variant.arch_list[
        platform
    ], f"compat data for {rel.version if rel else '?'} {variant.name} {platform}"


@check("torch.cuda_init", "CUDA initialises in torch", "torch")
def torch_cuda_init(facts: Facts) -> Finding:
    """
    ## What it checks
    Imports torch in a child process of the diagnosed interpreter and calls `torch.cuda.is_available()`,
    keeping its exact warning, the exception of `torch.cuda.init()`, and any crash or hang.

    ## Why it matters
    This is the ground truth: everything else predicts, this observes. A segfault or a hang on import, or a
    CUDA error, is what your training script would hit.

    ## How to fix
    Read the raw message: a too-old driver, no driver, a broken install or a GPU hidden by
    CUDA_VISIBLE_DEVICES each have their own check with the exact fix.
    """
    cid = "torch.cuda_init"
    runtime = facts.torch
    packages = facts.torch_packages
    if not isinstance(packages, Unavailable) and packages.version is None:
        return Finding(cid, Status.SKIP, "torch is not installed (see torch.installed).")
    if not isinstance(packages, Unavailable) and packages.cuda is None and packages.hip is None:
        return Finding(cid, Status.SKIP, "A CPU build: there is no GPU runtime to initialise.")
    if isinstance(runtime, Unavailable):
        if isinstance(packages, Unavailable):
            return Finding(cid, Status.SKIP, f"torch was not looked at: {packages}.")
        status = Status.SKIP if runtime.reason is Reason.NOT_RECORDED else Status.UNKNOWN
        return Finding(cid, status, f"torch was not imported: {runtime}.")
    evidence = (Evidence("stderr (last lines)", runtime.stderr_tail or "(empty)", "torch_runtime probe"),)
    if runtime.outcome != "ok":
        where = f" during {runtime.failed_stage}" if runtime.failed_stage else ""
        if runtime.outcome == "crashed" and "SIGILL" in runtime.message and facts.jetson_board is not None:
            return Finding(  # platform.jetson names the cause: numpy's OpenBLAS, never a reinstall of torch
                cid,
                Status.FAIL,
                f"Importing torch crashed{where}: {runtime.message} (see platform.jetson: numpy's OpenBLAS).",
                evidence=evidence,
                remediation=openblas_core_type_fix(),
            )
        return Finding(
            cid,
            Status.FAIL,
            f"Importing torch {runtime.outcome.replace('_', ' ')}{where}: {runtime.message}",
            details=explain(runtime.message) or "",
            evidence=evidence,
            remediation=_import_failed(python_command(facts), on_windows(facts)),
        )
    if runtime.cuda_available:
        return Finding(
            cid,
            Status.PASS,
            # no device listed (a paste that says only is_available()): no count, never "0 device(s)"
            "CUDA works in torch"
            + (f" {runtime.version}" if runtime.version else "")  # a paste may show only is_available()
            + (f": {len(runtime.devices)} device(s)." if runtime.devices else "."),
            evidence=evidence,
        )
    message = runtime.cuda_init_error or "; ".join(runtime.cuda_warnings) or "no error message"
    if not facts.nvidia_gpus:
        return Finding(cid, Status.SKIP, "No NVIDIA GPU here, so CUDA cannot initialise.", evidence=evidence)
    known = signature_of(message)
    carried = known is not None and "803" in known.id and _nvml_mismatch(facts)  # driver.nvml has the reboot
    # a message the catalogue gives to another check (driver too old, no driver...) has its fix there
    ours = known is not None and known.check == cid
    fix = init_error_fix(known.id, known.cls, facts) if known is not None and ours and not carried else None
    fabric = reported(facts, "fabric_manager_mismatch")
    if known is not None and known.cls == "forward_compat" and fabric:  # the service's log says why
        fix = init_error_fix(fabric[0].signature, known.cls)
    said = known.pattern.search(message) if known is not None else None
    return Finding(
        cid,
        Status.FAIL,
        f"CUDA does not initialise: {said.group(0).strip()}."
        if said is not None
        else f"torch.cuda.is_available() is False: {message}",
        details=explain(message) or "",
        evidence=(*evidence, Evidence("message", message, "torch's CUDA initialisation")),
        remediation=fix,
    )


def _nvml_mismatch(facts: Facts) -> bool:
    nvml = facts.nvml
    return (
        not isinstance(nvml, Unavailable)
        and nvml.init_error is not None
        and nvml.init_error.name == "LibRmVersionMismatch"
    )
