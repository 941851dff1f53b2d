"""The Report: one model, many renderers."""

from __future__ import annotations

from torch_gpu_doctor.checks.support.causes import root_causes
from torch_gpu_doctor.exit_codes import ExitCode
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.recommendation import Recommendation
from torch_gpu_doctor.model import CheckSpec, Counts, Figure, Finding, FindingsSummary, Status, Target
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.unavailable import Unavailable


@dataclass(frozen=True)
class Derived:
    """What a report derives from the facts beside the checks' findings: the torch build to install (every
    front end offers it, `--json` carries it as `recommended_install`) and the smoke test's figures against
    their expectations."""

    recommended_install: Recommendation | None
    smoke_figures: tuple[Figure, ...]


def derive(facts: Facts) -> Derived:
    figures: tuple[Figure, ...] = ()
    if not isinstance(facts.smoke, Unavailable):
        from torch_gpu_doctor.checks.support.smoke_figures import smoke_figures  # only with a smoke run

        figures = smoke_figures(facts)
    # the wheel planner (distributions, drivers, candidates) loads for a diagnosis, not for a report that is
    # read back: the TUI unpickles one from its early child (tui/early.py)
    from torch_gpu_doctor.fixes.torch_wheel import recommend

    return Derived(recommended_install=recommend(facts), smoke_figures=figures)


# Roots whose fix is the environment, not the build: with one of them, the build recommended from what
# imports now is not the answer.
ENVIRONMENT_CAUSES = frozenset({"env.cuda_visible_devices", "env.library_path", "torch.installed"})


@dataclass(frozen=True)
class Report:
    tool_version: str
    generated_at: str  # ISO 8601 UTC
    duration_ms: float
    facts: Facts
    findings: tuple[Finding, ...]
    specs: tuple[CheckSpec, ...]  # the checks that ran, for titles and explanations
    fail_on: Status = Status.FAIL
    recommended_install: Recommendation | None = None
    smoke_figures: tuple[
        Figure, ...
    ] = ()  # each measured figure with its expectation, when the smoke test ran
    python_choice: str = (
        ""  # why this interpreter was diagnosed ("--python", "the active virtual environment ...")
    )

    def summary(self) -> FindingsSummary:
        return summarize(self.findings, self.specs, self.fail_on)

    def roots(self) -> tuple[Finding, ...]:
        """The problems no other problem causes, the most telling first (checks/support/causes.py)."""
        return root_causes(self.findings)

    def install_needed(self) -> bool:
        """Whether the recommended install must run (`recommended_install.needed`, the plan's torch step): only
        for a missing or wrong build (another build is recommended, or a root problem's own fix is a
        reinstall: a companion of the wrong variant, mixed nvidia-* wheels). A problem whose root cause lies
        elsewhere (CUDA_VISIBLE_DEVICES, a shadowing torch copy, LD_LIBRARY_PATH) never asks for a
        reinstall: it would change nothing."""
        rec = self.recommended_install
        if rec is None:
            return False
        roots = self.roots()
        if any(
            r.status is Status.FAIL
            and r.remediation is not None
            and r.remediation.target is Target.PYTHON_ENV
            for r in roots
        ):
            return True
        elsewhere = any(r.check_id in ENVIRONMENT_CAUSES for r in roots)
        return not rec.already_installed and not elsewhere


def count(findings: tuple[Finding, ...]) -> Counts:
    by = {s: sum(1 for f in findings if f.status is s) for s in Status}
    return Counts(
        passed=by[Status.PASS],
        warn=by[Status.WARN],
        fail=by[Status.FAIL],
        skip=by[Status.SKIP],
        unknown=by[Status.UNKNOWN],
        crash=by[Status.CRASH],
    )


def summarize(
    findings: tuple[Finding, ...], specs: tuple[CheckSpec, ...], fail_on: Status
) -> FindingsSummary:
    worst = max((f.status for f in findings), key=lambda s: s.severity, default=Status.SKIP)
    required = {s.id for s in specs if s.required}
    threshold = {Status.FAIL: (Status.FAIL,), Status.WARN: (Status.FAIL, Status.WARN)}[fail_on]
    if any(f.status in threshold for f in findings):
        code = ExitCode.FINDINGS
    elif any(
        f.status is Status.CRASH or (f.status is Status.UNKNOWN and f.check_id in required) for f in findings
    ):
        code = ExitCode.INCOMPLETE
    else:
        code = ExitCode.OK
    return FindingsSummary(status=worst, exit_code=int(code), counts=count(findings))
