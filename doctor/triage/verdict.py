"""Which checks a collect_env report can decide, and how each result reads in triage: a problem, fine, or
unknown from this report (with the command that would find it out on that machine)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from torch_gpu_doctor.catalog import load_checks
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.model import Finding, Status, Target
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.runner import judge
from torch_gpu_doctor.triage.model import CollectEnvReport
from torch_gpu_doctor.unavailable import Unavailable

TORCH_VERSION = 'python -c "import torch; print(torch.__version__, torch.version.cuda, torch.version.hip)"'
FIND_OUT: dict[str, str] = {  # check id → the command that answers it on the reporter's machine
    "gpu.present": "nvidia-smi -L",
    "driver.installed": "nvidia-smi",
    "torch.installed": TORCH_VERSION,
    "torch.cpu_build": TORCH_VERSION,
    "torch.driver_compat": "nvidia-smi",
    "torch.arch_compat": 'python -c "import torch; print(torch.cuda.get_arch_list())"',
    "torch.cuda_init": 'python -c "import torch; torch.cuda.init()"',
    "torch.companions": "python -m pip list",
    "compat.data_age": TORCH_VERSION,
    "amd.torch_rocm": TORCH_VERSION,
}
TRIAGE_CHECKS = tuple(k for k in FIND_OUT if not k.startswith("amd."))
NVIDIA_ONLY = ("gpu.present", "driver.installed", "torch.driver_compat", "torch.arch_compat")
AMD_CHECKS = (*(k for k in TRIAGE_CHECKS if k not in NVIDIA_ONLY), "amd.torch_rocm")  # a ROCm report
WHOLE_MACHINE = "gpu-doctor --json"  # everything a collect_env report never has (PCIe, eGPU, storage, ...)


def _gpus_known(r: CollectEnvReport) -> list[str]:
    return [] if r.gpus is not None else ["GPU models"]


def _torch(r: CollectEnvReport) -> list[str]:
    return [] if r.torch_version is not None or r.torch_missing else ["PyTorch version"]


def _build(r: CollectEnvReport) -> list[str]:
    return _torch(r) + ([] if r.has("cuda_build") or r.rocm_build else ["CUDA used to build PyTorch"])


def _capabilities(r: CollectEnvReport, facts: Facts) -> list[str]:
    unknown = [g.name for g in facts.nvidia_gpus if not isinstance(g.compute_capability, str)]
    return _gpus_known(r) + [f"compute capability of {name}" for name in unknown if isinstance(name, str)]


def missing_fields(check_id: str, r: CollectEnvReport, facts: Facts) -> list[str]:
    """The report fields a check needs that this report lacks. A check missing one is "unknown from this
    report" whatever it concluded: a missing line is never "no GPU" or "no driver"."""
    cpu_build = r.cuda_build is None and r.rocm_build is None
    if check_id == "gpu.present":
        return _gpus_known(r)
    if check_id == "driver.installed":
        return [] if r.driver_version else ["Nvidia driver version"]
    if check_id in ("torch.installed", "compat.data_age"):
        return _torch(r)
    if check_id in ("torch.cpu_build", "amd.torch_rocm"):
        return _build(r) + (_gpus_known(r) if cpu_build else [])
    if check_id == "torch.driver_compat":
        driver = facts.driver
        driver_cuda = not isinstance(driver, Unavailable) and isinstance(driver.cuda_version, str)
        if cpu_build or driver_cuda:
            return _build(r)
        return _build(r) + (
            ["the CUDA version of driver " + r.driver_version]
            if r.driver_version
            else ["Nvidia driver version"]
        )
    if check_id == "torch.arch_compat":
        return _build(r) + ([] if r.cuda_build is None else _capabilities(r, facts))
    if check_id == "torch.cuda_init":
        return _build(r) + ([] if r.cuda_available is not None else ["Is CUDA available"])
    if check_id == "torch.companions":
        return _torch(r) + ([] if r.libraries is not None else ["Versions of relevant libraries"])
    return []


class Kind:
    PROBLEM = "problem"
    FINE = "fine"
    UNKNOWN = "unknown"
    NOT_APPLICABLE = "not_applicable"


@dataclass(frozen=True)
class Verdict:
    finding: Finding
    title: str
    kind: str  # Kind.*
    missing: tuple[str, ...]  # report fields the check needed and this report lacks
    find_out: str | None  # the command that would decide it on that machine


@dataclass(frozen=True)
class Triage:
    report: Report  # the checks that ran on the report's facts
    verdicts: tuple[Verdict, ...]
    not_in_report: tuple[str, ...]  # check ids that need facts a collect_env report never has

    def exit_problem(self) -> bool:
        return any(v.kind == Kind.PROBLEM and v.finding.status is Status.FAIL for v in self.verdicts)


def triage(parsed: CollectEnvReport, facts: Facts) -> Triage:
    amd = any(g.vendor == "amd" for g in facts.gpus) or parsed.rocm_build is not None
    needs = set(AMD_CHECKS if amd else TRIAGE_CHECKS)
    loaded = load_checks(plugins=False).checks
    chosen = [c for c in loaded if c.spec.id in needs]
    report = judge(facts, chosen)
    titles = {c.spec.id: c.spec.title for c in chosen}
    verdicts = tuple(
        _verdict(_for_report(f, parsed), titles[f.check_id], missing_fields(f.check_id, parsed, facts))
        for f in report.findings
    )
    not_in = tuple(c.spec.id for c in loaded if c.spec.id not in needs)
    return Triage(report, verdicts, not_in)


def _verdict(finding: Finding, title: str, missing: list[str]) -> Verdict:
    find_out = FIND_OUT.get(finding.check_id)
    if missing:
        return Verdict(finding, title, Kind.UNKNOWN, tuple(missing), find_out)
    if finding.status in (Status.FAIL, Status.WARN, Status.CRASH):
        return Verdict(finding, title, Kind.PROBLEM, (), None)
    if finding.status is Status.UNKNOWN:
        return Verdict(finding, title, Kind.UNKNOWN, (), find_out)
    kind = Kind.FINE if finding.status is Status.PASS else Kind.NOT_APPLICABLE
    return Verdict(finding, title, kind, (), None)


def _for_report(finding: Finding, r: CollectEnvReport) -> Finding:
    """The few places where a live check's wording would mislead about a pasted report."""
    if finding.check_id == "torch.cuda_init" and finding.status is Status.PASS:
        return dataclasses.replace(
            finding, summary=f"CUDA works in torch {r.torch_version} (Is CUDA available: True)."
        )
    if finding.check_id == "torch.cuda_init" and finding.status is Status.FAIL and not r.warnings.cuda_init:
        return dataclasses.replace(
            finding,
            summary="torch.cuda.is_available() is False; the report does not say why (see the other findings).",
        )
    fix = finding.remediation
    if r.gpus is None and fix is not None and fix.target is Target.PYTHON_ENV and fix.commands:
        # A wheel chosen without knowing the GPU would be the CPU build: say what to find out instead.
        return dataclasses.replace(
            finding,
            remediation=None,
            details=(finding.details + " " if finding.details else "")
            + "The right torch build depends on the GPU, which this report does not list (run nvidia-smi -L).",
        )
    return finding
