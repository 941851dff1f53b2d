"""Questions a paste asks that the data answers, where it shows no failure: which torch build runs on the CUDA
the person says they have."""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.compat import load_matrix
from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.compat.torch_releases import driver_runs_cuda, version_key
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.driver_plan import plan_driver
from torch_gpu_doctor.fixes.driver_update import driver_update
from torch_gpu_doctor.fixes.target import driver_system
from torch_gpu_doctor.fixes.torch_wheel import fix_for_torch
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Finding, Remediation, Status, Target
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.triage.outcome import Kind, Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.paste_facts import WORDS, pasted_driver
from torch_gpu_doctor.unavailable import Reason, Unavailable

DRIVER_COMPAT = "torch.driver_compat"
SAID_CUDA = "the CUDA the person says the machine has"
NO_BUILD_NEEDED = (
    "No torch build for CUDA"  # how the answer starts: the data's answer to words, not a message
)


MAX_ASKED_CHARS = 512 * 1024  # where a person's install command is: before the logs they paste
# The CUDA an install command asks for: conda's `cudatoolkit=10.1` or `pytorch-cuda=12.1`, pip's `/whl/cu118`
_ASKED_CUDA = lazy(
    r"^[^\n]*\b(?:pip3?|conda|mamba)\b[^\n]*\binstall\b[^\n]*?"
    r"(?:\b(?:cudatoolkit|pytorch-cuda)[ \t]*=+[ \t]*(?P<conda>\d{1,2}\.\d)\b|/whl/cu(?P<pip>\d{2,3})\b)",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass(frozen=True)
class AskedCuda:
    cuda: str  # "10.1"
    line: int  # 1-based: the install command's line
    conda: bool  # conda's (or mamba's) command, not pip's


def asked_cuda(text: str) -> AskedCuda | None:
    """The CUDA the paste's first install command asks for, where it names one."""
    found = _ASKED_CUDA.search(text, 0, MAX_ASKED_CHARS)
    if found is None:
        return None
    line = text.count("\n", 0, found.start()) + 1
    conda = re.search(r"\b(?:conda|mamba)\b", found[0], re.IGNORECASE) is not None
    digits = found["pip"]
    return AskedCuda(found["conda"] or f"{digits[:-1]}.{digits[-1]}", line, conda)


def asked_cuda_got_another(
    verdicts: tuple[Verdict, ...], asked: AskedCuda, facts: Facts, titles: dict[str, str]
) -> tuple[Verdict, ...]:
    """The install command asked for one CUDA build (`conda install pytorch cudatoolkit=10.1 -c pytorch`) and the
    report shows torch built for another: the installer settled on another build. Where the driver shown cannot
    run the CUDA asked for, that is why no such build could be used, and the driver comes first (blind set 21:
    cudatoolkit=10.1 asked, pytorch 1.0.0 for CUDA 9.0 installed, driver 398.36). Only where nothing else was
    found."""
    packages = facts.torch_packages
    if (
        any(v.kind == Kind.PROBLEM for v in verdicts)
        or isinstance(packages, Unavailable)
        or not packages.cuda
    ):
        return verdicts
    if version_key(asked.cuda)[:2] == version_key(packages.cuda)[:2]:
        return verdicts
    cuda, line = asked.cuda, asked.line
    driver = facts.driver
    runs = driver.cuda_version if not isinstance(driver, Unavailable) else None
    shown = f"torch {packages.version} is built for CUDA {packages.cuda}"
    if isinstance(runs, str) and not driver_runs_cuda(runs, cuda):
        version = driver.version if not isinstance(driver, Unavailable) else None
        needed = load_matrix().min_driver_for(cuda, driver_system(facts))
        summary = (
            f"The install asked for CUDA {cuda} (line {line} of the paste) and {shown}: the driver"
            + (f" {version}" if isinstance(version, str) else "")
            + f" runs CUDA ≤ {runs}, so no CUDA {cuda} build can run here."
        )
        fix = driver_update(
            facts,
            plan_driver(facts),
            f"Update the NVIDIA driver to one that runs CUDA {cuda}"
            + (f" ({needed} or newer)" if needed else "")
            + ", then install the CUDA build again.",
        )
    else:
        summary = (
            f"The install asked for CUDA {cuda} (line {line} of the paste) and {shown}: the installer found no "
            f"build of that torch for CUDA {cuda} on this platform and Python, and settled on another."
        )
        fix = fix_for_torch(facts)
    finding = Finding(DRIVER_COMPAT, Status.WARN, summary, remediation=fix)
    added = Verdict(finding, titles.get(DRIVER_COMPAT, DRIVER_COMPAT), Kind.PROBLEM, (), None, (line,))
    return (added, *verdicts)


CPU_BUILD = "torch.cpu_build"


def asked_cuda_got_cpu(verdict: Verdict, asked: AskedCuda, facts: Facts) -> Verdict:
    """A CPU build installed by a command that asked for a CUDA build its torch release never had
    (`conda install pytorch cudatoolkit=10.1` for pytorch 1.10, built for CUDA 10.2, 11.1 and 11.3): the installer
    fell back to the CPU build, and the fix is a CUDA the release has, in the installer the person used (blind
    set 21: conda's cpuonly plan for 1.10.0 on Windows)."""
    finding, packages = verdict.finding, facts.torch_packages
    if (
        finding.check_id != CPU_BUILD
        or finding.status is not Status.FAIL
        or isinstance(packages, Unavailable)
    ):
        return verdict
    if packages.cuda or not packages.version:
        return verdict
    cuda, line = asked.cuda, asked.line
    base = packages.version.split("+")[0]
    data = load_torch_releases()
    legacy = data.legacy_release(base)
    modern = data.release(base) if legacy is None else None
    builds = legacy.builds if legacy is not None else ()
    variants = [b.variant for b in builds] + (list(modern.variants) if modern is not None else [])
    cudas = sorted({v.cuda for v in variants if v.cuda}, key=version_key)
    if not cudas or any(version_key(c)[:2] == version_key(cuda)[:2] for c in cudas):
        return verdict  # the release has that CUDA: why the installer passed it by is not in the data
    above = [c for c in cudas if version_key(c) >= version_key(cuda)]
    pick = above[0] if above else cudas[-1]
    build = next((b for b in builds if b.variant.cuda == pick), None)
    said = (build.conda_install if asked.conda else build.install).get(base) if build else None
    summary = (
        f"The install asked for CUDA {cuda} (line {line} of the paste), and torch {base} has no build for it (its "
        f"CUDA builds: {', '.join(cudas)}): the installer fell back to the CPU build."
    )
    if said is None:
        return dataclasses.replace(verdict, finding=dataclasses.replace(finding, summary=summary))
    fix = Remediation(
        text=f"Ask for a CUDA build torch {base} has: CUDA {pick}, which the driver must run (nvidia-smi's 'CUDA "
        f"Version' at least {pick}), or a newer torch for the CUDA you wanted. Then check that the CUDA build, not "
        "the CPU one, was installed"
        + (
            " (conda's plan and `conda list pytorch` show a cuda build string, not cpu)."
            if asked.conda
            else "."
        ),
        commands=(
            Command(
                tuple(said.split()), note=f"pytorch.org's command for its CUDA {pick} build", runs_here=False
            ),
            Command(("nvidia-smi",), note=f"'CUDA Version' must be {pick} or newer"),
        ),
        needs_network=True,
        target=Target.PYTHON_ENV,
    )
    return dataclasses.replace(
        verdict, finding=dataclasses.replace(finding, summary=summary, remediation=fix), lines=(line,)
    )


def build_for_said_cuda(
    verdicts: tuple[Verdict, ...], pasted: PastedText, facts: Facts, titles: dict[str, str]
) -> tuple[Verdict, ...]:
    """'I have CUDA 11.4; PyTorch has no build for it, could you build one?' (pytorch/pytorch#75992,
    pyg-team/pytorch_geometric#5464, the K80 thread of blind set 19): no build per CUDA release is needed. A pip
    or conda torch brings its own CUDA runtime; only the driver must support the wheel's CUDA, and within a CUDA
    major a newer build runs on an older minor's driver. Answered with the build the data picks for a driver of
    that CUDA, where the paste shows no failure, no report and no driver of its own."""
    prose = pasted.prose
    if (
        prose.cuda is None
        or prose.asks_build is None
        or pasted.collect_env is not None
        or pasted.hits
        or any(v.kind == Kind.PROBLEM for v in verdicts)
    ):
        return verdicts
    driver = facts.driver
    if not isinstance(driver, Unavailable) and isinstance(driver.cuda_version, str):
        return verdicts  # the paste's own nvidia-smi or warning says the driver's CUDA: the checks judged it
    said = prose.cuda.value
    unsaid = Unavailable(Reason.NOT_FOUND, "not in the paste")
    assumed = dataclasses.replace(facts, driver=pasted_driver(unsaid, said, SAID_CUDA, WORDS))
    fix = fix_for_torch(assumed)
    check = Remediation(
        text="To be sure it is the driver's CUDA, not a toolkit's: nvidia-smi's 'CUDA Version' is the newest CUDA "
        "the driver runs, and the build's CUDA must not be newer (or only newer within the same major).",
        commands=(Command(("nvidia-smi",), note="'CUDA Version' in its header"),),
        target=fix.target,
    )
    finding = Finding(
        DRIVER_COMPAT,
        Status.WARN,
        f"{NO_BUILD_NEEDED} {said} is needed: a pip or conda torch brings its own CUDA runtime and runs "
        f"wherever the driver supports that CUDA, so a machine with CUDA {said} (line {prose.cuda.line}) runs "
        "the builds for CUDA up to it, and within the same major newer ones too.",
        details="The CUDA toolkit installed on the machine (nvcc) is not used by a torch wheel; it matters only for "
        "compiling extensions. " + check.text,
        remediation=dataclasses.replace(fix, commands=fix.commands + check.commands),
    )
    lines = tuple(sorted({prose.cuda.line, prose.asks_build}))
    added = Verdict(finding, titles.get(DRIVER_COMPAT, DRIVER_COMPAT), Kind.PROBLEM, (), None, lines)
    return (added, *verdicts)
