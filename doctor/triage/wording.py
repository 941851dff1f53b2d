"""Where a live check's wording would mislead about a paste, and the findings a paste says in its own words."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.compat.torch_releases import INDEX_URL, version_key
from torch_gpu_doctor.facts.container import ContainerRuntime
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.wsl import WSL_GPU_MIN_BUILD
from torch_gpu_doctor.fixes.container_gpus import pass_gpus
from torch_gpu_doctor.fixes.target import python_command
from torch_gpu_doctor.fixes.torch_wheel import fix_for_torch
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Evidence, Finding, Remediation, Status, Target, printable
from torch_gpu_doctor.triage.line_kinds import warned_and_went_on
from torch_gpu_doctor.triage.outcome import (
    FALSE_IN_A_CONTAINER,
    PROGRAM_BUGS,
    TORCH_BUILD_AND_REASON,
    UNEXPLAINED_FALSE,
    Kind,
    Verdict,
    installs_torch,
)
from torch_gpu_doctor.triage.paste import INFORMATIONAL, PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS
from torch_gpu_doctor.triage.where import GPUS_PASSED, container_said, gpu_listed_by_a_tool
from torch_gpu_doctor.unavailable import Unavailable

if TYPE_CHECKING:
    pass


def _unexplained_false(finding: Finding, facts: Facts, cpu_said: int | None = None) -> Finding:
    """is_available() False with no error that says why: the usual causes the paste leaves open (a CPU-only
    build when it does not show torch's build, a driver too old when it does not show the driver), and the
    question that tells them apart. Where it shows both, and both are fine, torch's own reason is all that is
    left (the to-be-sure command). `cpu_said`: the line whose words say torch is the CPU version."""
    packages, driver = facts.torch_packages, facts.driver
    build_shown = not isinstance(packages, Unavailable) and packages.version is not None
    if cpu_said is not None and not build_shown:  # the words say which case it is: the CUDA build is the fix
        return dataclasses.replace(
            finding,
            summary=f"torch.cuda.is_available() is False: torch is a CPU-only build (line {cpu_said} of the paste "
            "says so).",
            details="A CPU-only torch has no CUDA, whatever the driver: reinstalling the same command gets it "
            "again. The CUDA build comes from PyTorch's index for one CUDA version.",
            remediation=fix_for_torch(facts),
        )
    driver_shown = not isinstance(driver, Unavailable) and isinstance(driver.version, str)
    oldest = load_torch_releases().oldest_cuda
    old_cuda = (
        driver.cuda_version
        if not isinstance(driver, Unavailable)
        and isinstance(driver.cuda_version, str)
        and version_key(driver.cuda_version) < version_key(oldest)
        else None
    )
    if build_shown and driver_shown:  # both look right here: torch's own reason is what is left
        return dataclasses.replace(
            finding,
            summary=f"{UNEXPLAINED_FALSE}: its build and driver, as the paste shows them, fit; torch's own reason "
            "is what is left.",
            remediation=Remediation(
                text="Ask torch why, on that machine and with the Python that runs the program: torch.cuda.init() "
                "raises the reason (a CUDA_VISIBLE_DEVICES that hides every GPU, a driver that does not answer "
                "there, a container without the GPUs).",
                commands=(
                    Command(
                        (python_command(facts), "-c", "import torch; torch.cuda.init()"), note="its reason"
                    ),
                ),
                target=Target.PYTHON_ENV,
            ),
        )
    windows = not isinstance(facts.os, Unavailable) and facts.os.system == "Windows"
    cpu_build = (
        "torch is the CPU-only build, which is what `pip install torch` gets from PyPI on Windows"
        if windows
        else "torch is a CPU-only build"
    )
    causes = [c for c, shown in ((cpu_build, build_shown), ("the NVIDIA driver is older than "
              "the CUDA its build needs (or none is loaded)", driver_shown)) if not shown]  # fmt: skip
    best = fix_for_torch(facts) if old_cuda is not None or (windows and not build_shown) else None
    runs = _index_variant(best)  # the CUDA build the driver runs (minor-version compatibility), if any
    if old_cuda is not None and runs is None:  # shown, and older than every build gpu-doctor knows
        causes.insert(
            0,
            f"the NVIDIA driver, which runs CUDA ≤ {old_cuda}, is older than the CUDA a torch build of the last "
            f"years needs ({oldest} or newer)",
        )
    elif old_cuda is not None and runs is not None:  # older than the newest builds' CUDA, not every build's
        causes.insert(
            0,
            f"torch is built for a newer CUDA than the NVIDIA driver runs (CUDA ≤ {old_cuda}; torch's {runs} "
            "builds still run on it)",
        )
    asks = []
    if not build_shown:
        asks.append(
            Command(
                (python_command(facts), "-c", TORCH_BUILD_AND_REASON),
                note="its build's CUDA (None: CPU-only), then the reason CUDA does not start",
            )
        )
    if not driver_shown:
        asks.append(Command(("nvidia-smi",), note="'CUDA Version' is the newest CUDA the driver runs"))
    if best is not None and best.commands and (runs is not None or not old_cuda):
        # the likely fix, once the first line printed +cpu (or a CUDA the driver lacks)
        first = best.commands[0]
        said = "if it printed +cpu / None" + (f" or a CUDA newer than {old_cuda}" if old_cuda else "")
        asks.append(dataclasses.replace(first, note=f"{said}: the CUDA build, from PyTorch's index"))
    return dataclasses.replace(
        finding,
        summary=f"{UNEXPLAINED_FALSE}: most often {', or '.join(causes)}.",
        details="torch.cuda.init() raises the reason: 'Torch not compiled with CUDA enabled' is the CPU-only "
        "build, 'The NVIDIA driver on your system is too old (found version N)' the driver, 'Found no NVIDIA "
        "driver' no driver at all, 'No CUDA GPUs are available' a CUDA_VISIBLE_DEVICES (in the shell, or set by "
        "the program itself) that hides every GPU. torch.version.cuda is None for the CPU build; set beside "
        "nvidia-smi's 'CUDA Version' it shows whether the driver is new enough.",
        remediation=Remediation(
            text="Ask which case it is, on that machine and with the Python that runs the program; then install "
            "the CUDA build the driver runs (for a CPU-only build), or update the driver (for one too old).",
            commands=tuple(asks),
            target=Target.PYTHON_ENV,
        ),
    )


def _index_variant(fix: Remediation | None) -> str | None:
    """The CUDA variant a torch install command takes from PyTorch's index ("cu118" -> "CUDA 11.8"), or None."""
    for command in fix.commands if fix is not None else ():
        for arg in command.argv:
            variant = arg.removeprefix(INDEX_URL)
            if arg.startswith(INDEX_URL) and variant.startswith("cu") and variant[2:].isdigit():
                return f"CUDA {variant[2:-1]}.{variant[-1]}"
    return None


def explained_false(verdict: Verdict) -> Verdict:
    finding = verdict.finding
    if finding.check_id != "torch.cuda_init" or not finding.summary.startswith(UNEXPLAINED_FALSE):
        return verdict
    said = "torch.cuda.is_available() is False: the most likely cause above explains it."
    return dataclasses.replace(verdict, finding=dataclasses.replace(finding, summary=said))


def with_own_causes(
    verdicts: tuple[Verdict, ...], pasted: PastedText, titles: dict[str, str]
) -> tuple[Verdict, ...]:
    """A known error that the check it names did not turn into a problem (a program's bug, a build tool's
    refusal, another program's CUDA error) is still what went wrong: the catalogue's own cause and fix stand
    in for that check's verdict, so a paste with an error the doctor read never says "no problem found"."""
    # a refinement of a signature (its id extends the other's: other_cuda_kernel_assertion_condition, the
    # kernel's own `t < n_classes`) speaks for its check before the general one, wherever each stands
    ids = {h.signature.id for h in pasted.hits}
    refined = {i for i in ids if any(other.startswith(f"{i}_") for other in ids)}
    # so does an error whose own fix explains a general one beside it (NCCL's 'Last error: Bootstrap : no
    # socket interface found' under its 'internal error' wrapper): the catalogue's `explains`
    explaining = [
        h for h in pasted.hits if h.signature.fix is not None and ids.intersection(h.signature.explains)
    ]
    explained = {e for h in explaining for e in h.signature.explains if e in ids}
    # ... also where the general one made the check's problem (NCCL's IB failure, refined by its status 4), and
    # so does a bug of the program's after warnings it went on from (torch's driver warning, then a shape
    # mismatch on the CPU): the problem those lines alone made gives way
    # (xFormers' 'built for the torch you have', refining its warning two lines above: both lines)
    fixing = {
        i
        for i in refined
        for h in pasted.hits
        if h.signature.fix is not None and h.signature.id.startswith(f"{i}_")
    }
    fixed_refinements = {
        h.line
        for h in pasted.hits
        if h.signature.id in fixing | explained
        or (h.signature.fix is not None and h.signature.id.startswith(tuple(f"{i}_" for i in fixing)))
    }
    fixed_refinements |= {h.line for h in explaining}
    refined |= explained
    went_on = warned_and_went_on(pasted, PROGRAM_BUGS)
    bugs = {h.line for h in pasted.hits if h.signature.id in PROGRAM_BUGS}
    problems = {
        v.finding.check_id
        for v in verdicts
        if v.kind == Kind.PROBLEM
        and not (went_on and set(v.lines) - bugs <= went_on)
        and not (fixed_refinements and set(v.lines) <= fixed_refinements)
    }
    undecided = {v.finding.check_id: v for v in verdicts if v.kind == Kind.UNKNOWN}
    own: dict[str, Verdict] = {}
    # a hit whose cause explains another's (CUDA_HOME a list → an extension built without CUDA) goes first
    hits = sorted(pasted.hits, key=lambda h: not ids.intersection(h.signature.explains))
    for hit in (h for h in hits if h.signature.id not in refined and h.signature.id not in INFORMATIONAL):
        signature, told = hit.signature, hit.own_cause()
        check = signature.check
        says_only_error = set(signature.implies) <= {"error"}  # no fact the check could weigh: only the error
        if (
            check in problems
            or check in own
            or (told is None and not (check in undecided and says_only_error))
        ):
            continue
        # no fix of its own, and the check could not weigh it (what it needs is not in the paste): what the
        # error means is still the cause, and the check's own question is what settles the rest
        cause, fix = told if told is not None else (signature.means, None)
        find_out = undecided[check].find_out if told is None else None
        finding = printable(
            Finding(
                check,
                Status.FAIL,
                cause,
                details=signature.means if told is not None else "",  # else the cause already says it
                evidence=(Evidence("reported", hit.text, f"line {hit.line} of the paste"),),
                remediation=fix,
            )
        )  # the paste's words in it: shown, never sent
        lines = tuple(h.line for h in pasted.hits if h.signature.id == signature.id)
        own[check] = Verdict(finding, titles.get(check, check), Kind.PROBLEM, (), find_out, lines)
    if not own:
        return verdicts
    kept = tuple(v for v in verdicts if v.finding.check_id not in own)
    return kept + tuple(own.values())


_NO_HIP_VERSION = lazy(r"0(?:\.0)*")


def for_paste(finding: Finding, pasted: PastedText, gpus_listed: bool, facts: Facts) -> Finding:
    """The few places where a live check's wording would mislead about a paste."""
    r = pasted.collect_env
    if (
        finding.check_id == "amd.torch_rocm"
        and r is not None
        and r.rocm_build is not None
        and _NO_HIP_VERSION.fullmatch(r.rocm_build)
        and r.hip_runtime is None
        and r.cuda_available is False
    ):
        # "ROCM used to build PyTorch: 0.0.0" with HIP runtime N/A: a source build that recorded no ROCm version
        # and loads no HIP runtime: it did not pick up a usable ROCm (pytorch/pytorch#103874, unresolved there;
        # LoadHIP.cmake looks in /opt/rocm or ROCM_PATH and returns quietly when neither exists)
        return dataclasses.replace(
            finding,
            status=Status.FAIL,
            summary=f"{'torch ' + r.torch_version if r.torch_version else 'torch'} was built without a usable "
            f"ROCm (ROCM used to build PyTorch: {r.rocm_build}, HIP runtime N/A): it cannot use an AMD GPU.",
            details="A source build records the ROCm version it compiled against; 0.0.0 beside a HIP runtime of N/A "
            "means it picked up no usable ROCm installation (the build looks in /opt/rocm, or ROCM_PATH), which is "
            "why CUDA is not available.",
            remediation=Remediation(
                text="Make sure ROCm is installed where the build looks and lists the GPU, then rebuild with it: "
                "`python setup.py clean`, then USE_ROCM=1, ROCM_PATH=/opt/rocm and PYTORCH_ROCM_ARCH set to the "
                "GPU's gfx target before the build. Or install the ROCm wheel from download.pytorch.org's rocm "
                "index instead of building.",
                commands=(
                    Command(
                        ("rocminfo",), note="ROCm is installed and sees the GPU: its gfx target is the arch"
                    ),
                ),
                target=Target.PYTHON_ENV,
            ),
        )
    if finding.check_id == "torch.installed" and r is not None and r.torch_missing:
        listed = [lib for lib in r.libraries or () if lib.name in ("torch", "pytorch")]
        where = (
            f"The report's package list has {listed[0].name} {listed[0].version}: it is installed, so either its "
            "import fails in that interpreter or it belongs to another Python."
            if listed
            else "The report's package list has no torch either: it is not installed for the Python that ran "
            "collect_env, or its import fails before pip's metadata is read."
        )
        return dataclasses.replace(
            finding,
            summary="torch did not import in the Python that ran collect_env (PyTorch version: N/A).",
            details=where,
            remediation=Remediation(
                text='Run `python -c "import torch"` with that same Python: its error says why (a missing library, '
                "a broken install, another interpreter). Install torch only if it really is not installed there.",
                target=Target.PYTHON_ENV,
            ),
        )
    if (
        finding.check_id == "driver.installed"
        and finding.status is Status.FAIL
        and pasted.container_line is not None
        # a GPU a tool listed may be the host's answer; one named in words ("win10 + docker + GTX 1660") is not
        and not gpu_listed_by_a_tool(facts)
        and not any(h.signature.check == "platform.container_gpus" for h in pasted.hits)  # its own words win
    ):
        # No driver answers inside a container: it was started without the GPUs far more often than the host
        # lacks a driver (the host's driver is what a container uses)
        return dataclasses.replace(
            finding,
            summary="No NVIDIA driver answers inside this container (line "
            f"{pasted.container_line} of the paste shows one): it was most likely started without the GPUs.",
            details="A container uses the host's driver, passed in with the GPUs by the NVIDIA Container Toolkit "
            "(`docker run --gpus all`). Without them it has no /dev/nvidia* and no driver libraries, so nothing "
            "answers. If `nvidia-smi` fails on the host too, the host's driver is the problem. "
            + finding.details,
            remediation=pass_gpus(ContainerRuntime.DOCKER),
        )
    build = pasted.prose.windows_build
    if (
        finding.check_id == "platform.wsl_gpu"
        and finding.status is Status.FAIL
        and build is not None
        and int(build.value) < WSL_GPU_MIN_BUILD  # the build says why /dev/dxg is missing
    ):
        return dataclasses.replace(
            finding,
            summary=f"Windows build {build.value} has no GPU support for WSL 2: it needs Windows 10 21H2 "
            "(build 19044) or newer, or Windows 11.",
            remediation=Remediation(
                text="Update Windows (Settings, Windows Update: Windows 10 21H2 or newer, or Windows 11), then "
                "update WSL and restart it; a current NVIDIA driver on Windows gives WSL its GPU. Nothing "
                "inside WSL can replace this, and a Linux driver installed there only gets in the way.",
                commands=(
                    Command(
                        ("wsl.exe", "--update"),
                        note="from Windows, after the Windows update",
                        runs_here=False,
                    ),
                    Command(("wsl.exe", "--shutdown"), note="restarts WSL", runs_here=False),
                ),
                needs_network=True,
                target=Target.SYSTEM,
            ),
        )
    if finding.check_id == "torch.installed" and finding.status is Status.PASS and r is not None:
        return dataclasses.replace(
            finding, summary=f"torch {r.torch_version} (the report does not say where it is installed)."
        )
    if finding.check_id == "torch.cuda_init" and finding.status is Status.PASS and r is not None:
        return dataclasses.replace(
            finding, summary=f"CUDA works in torch {r.torch_version} (Is CUDA available: True)."
        )
    if (
        finding.check_id == "torch.cuda_init"
        and finding.status is Status.FAIL
        and finding.summary.endswith(": no error message")
    ):
        started = pasted.no_gpus_line
        if started is not None:  # the container it ran in was started without the GPUs
            return dataclasses.replace(
                finding,
                summary="torch.cuda.is_available() is False in a container started without the GPUs (line "
                f"{started} of the paste runs it with no --gpus).",
                remediation=pass_gpus(ContainerRuntime.DOCKER),
            )
        inside = container_said(pasted)
        if (
            inside is not None
            and not gpu_listed_by_a_tool(facts)
            and GPUS_PASSED.search(pasted.paste.text, 0, MAX_CHARS) is None  # its start passes them in
        ):
            # said to run in a container and no tool there listed a GPU: as for a driver that does not answer
            # inside one, a container started without the GPUs is far more common than a host without them
            return dataclasses.replace(
                finding,
                summary=f"{FALSE_IN_A_CONTAINER} (line {inside} of the paste): it was most likely started "
                "without the GPUs.",
                details="A container sees the GPUs only when it is started with them (`docker run --gpus all`, "
                "a GPU reservation in compose or Kubernetes) on a host with the NVIDIA Container Toolkit. "
                "`nvidia-smi` inside it settles it: no GPU there means the container, one there means torch.",
                remediation=pass_gpus(ContainerRuntime.DOCKER),
            )
        said = pasted.prose.torch_fails
        return _unexplained_false(finding, facts, said.line if said and said.value == "cpu_build" else None)
    fix = finding.remediation
    gpu_dependent = finding.check_id in ("torch.arch_compat", "torch.companions", "torch.nvidia_wheels")
    if (
        gpu_dependent
        and not gpus_listed
        and facts.jetson_board is None  # a Jetson's torch depends on its JetPack, not on a GPU to name
        and fix is not None
        and fix.target is Target.PYTHON_ENV
        and installs_torch(fix)
    ):
        # A wheel chosen without knowing the GPU could be the wrong one: say what to find out instead.
        return dataclasses.replace(
            finding,
            remediation=dataclasses.replace(fix, commands=()),
            details=(finding.details + " " if finding.details else "")
            + "Which torch build to install depends on the GPU, which the paste does not name: run nvidia-smi -L "
            "on that machine (or gpu-doctor there, which picks the build).",
        )
    return finding
