"""pip's "Could not find a version that satisfies the requirement torch==X (from versions: none)" where the
paste shows the Python that ran it: the release's wheels are for other Pythons (blind set 25: a launcher pinning
torch 2.7.1, whose wheels stop at Python 3.13, run by Python 3.14). The compat data's `python_versions` per
release say which, so the answer names the Python to use and the first release with wheels for this one."""

from __future__ import annotations

import dataclasses

from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.compat.torch_releases import TorchCompat, version_key
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.target import on_windows, python_command, python_minor
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Remediation, Target
from torch_gpu_doctor.triage.outcome import Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS

SIGNATURE = "pip_no_matching_torch_version"
# the PyTorch index pip searched: an install command's --index-url, pip's "Looking in indexes:"
_INDEX = lazy(r"download\.pytorch\.org/whl/(?P<variant>cu\d{2,3}|rocm\d[\d.]*)(?![\w.])")


def no_wheel_for_this_python(verdict: Verdict, pasted: PastedText, facts: Facts) -> Verdict:
    """The catalogue's general answer, made exact where the wanted release (or every release) has no wheel for
    the Python the paste shows."""
    hit = next((h for h in pasted.hits if h.signature.id == SIGNATURE and h.line in verdict.lines), None)
    python = python_minor(facts)
    if hit is None or python is None:
        return verdict
    data = load_torch_releases()
    wanted = hit.values.get("wanted")
    found = _for_release(data, wanted, python) if wanted else _for_any(data, python)
    if found is None:
        return verdict
    summary, text, use = found
    command = (
        Command(
            ("py", f"-{use}", "-m", "venv", "venv"),
            note=f"a venv with Python {use} (py, the Python launcher)",
        )
        if on_windows(facts)
        else Command(
            (f"python{use}", "-m", "venv", ".venv"), note=f"a venv with Python {use}, installed first"
        )
    )
    fix = Remediation(text=text, commands=(command,), target=Target.PYTHON_ENV)
    finding = dataclasses.replace(verdict.finding, summary=summary, remediation=fix)
    return dataclasses.replace(verdict, finding=finding)


def _pythons(data: TorchCompat, version: str) -> tuple[str, ...] | None:
    """The CPython minors a release (or one of its patches) has wheels for, free-threaded ones left out."""
    release = data.release(version)
    if release is not None:
        found: tuple[str, ...] = release.python_versions
    else:
        legacy = data.legacy_release(version)
        if legacy is None:
            return None
        found = legacy.pythons(version)
    return tuple(sorted((p for p in found if not p.endswith("t")), key=version_key)) or None


def _for_release(data: TorchCompat, wanted: str, python: str) -> tuple[str, str, str] | None:
    pythons = _pythons(data, wanted)
    if pythons is None or python in pythons:
        return None  # the release has that Python's wheels: the platform or the index is why
    newer = version_key(python) > version_key(pythons[-1])
    use = pythons[-1] if newer else pythons[0]
    first = next(
        (r.version for r in reversed(data.releases) if python in r.python_versions), None
    )  # releases are newest first
    other = (
        f", or a torch release with Python {python} wheels ({first} or newer) where the program allows it"
        if first is not None and newer
        else ""
    )
    summary = (
        f"torch {wanted} has no wheel for Python {python}: its wheels are for Python {pythons[0]} to "
        f"{pythons[-1]}, so pip finds none."
    )
    text = (
        f"Install the program into an environment with Python {use} (a Python torch {wanted} has wheels for){other}. "
        f"Python {python} itself cannot install torch {wanted} from any index."
    )
    return summary, text, use


def _for_any(data: TorchCompat, python: str) -> tuple[str, str, str] | None:
    """No version asked for: only a Python newer than every release's wheels is certain."""
    newest = _pythons(data, data.newest.version)
    if newest is None or version_key(python) <= version_key(newest[-1]):
        return None
    summary = (
        f"No torch release has wheels for Python {python} yet (the newest, {data.newest.version}, stops at "
        f"{newest[-1]}), so pip finds none."
    )
    text = f"Install the program into an environment with Python {newest[-1]} or older."
    return summary, text, newest[-1]


def no_wheel_on_an_old_index(verdict: Verdict, pasted: PastedText, facts: Facts) -> Verdict:
    """pip found no torch on the index of a CUDA PyTorch no longer builds for: its last release's wheels are for
    old Pythons only, so a current Python finds nothing there (blind set 32: RVC's cu117 index, whose torch stops
    at 2.0.1 for Python 3.8 to 3.11, was answered with a Python version check). A current index is the fix."""
    hit = next((h for h in pasted.hits if h.signature.id == SIGNATURE and h.line in verdict.lines), None)
    index = _INDEX.search(pasted.paste.text, 0, MAX_CHARS) if hit is not None else None
    if (
        index is None or hit is None or hit.values.get("wanted")
    ):  # a release asked for: its own Pythons decide
        return verdict
    data = load_torch_releases()
    with_it = [r for r in data.releases if r.variant(index["variant"]) is not None]  # newest first
    if not with_it or with_it[0] is data.releases[0]:
        return verdict  # a current index: the Python or the platform is why
    last = with_it[0]
    pythons = _pythons(data, last.latest) or ()
    python = python_minor(facts)
    if python is not None and python in pythons:
        return verdict
    span = f" (wheels for Python {pythons[0]} to {pythons[-1]})" if pythons else ""
    summary = (
        f"The {index['variant']} index pip searched holds torch only up to {last.latest}{span}: PyTorch no longer "
        "builds for that CUDA, so a newer Python finds no torch there."
    )
    current = sorted(
        (v for v in data.releases[0].variants if v.cuda is not None), key=lambda v: version_key(v.cuda or "")
    )
    if not current:
        return verdict
    oldest = current[0]
    blackwell = next((v for v in current if any("sm_120" in a for a in v.arch_list.values())), None)
    fix = Remediation(
        text=f"Install from the index of a CUDA PyTorch builds for today: torch {data.releases[0].latest} is built "
        f"for {', '.join(v.name for v in current)}. The oldest of them ({oldest.name}) runs on the most drivers"
        + (
            f"; an RTX 50 series (compute capability 12.0) needs {blackwell.name} or newer"
            if blackwell is not None and blackwell is not oldest
            else ""
        )
        + f". Keeping {index['variant']} means an older Python and torch {last.latest}.",
        commands=(
            Command((python_command(facts), "-m", "pip", "install", "torch", "torchvision", "torchaudio",
                     "--index-url", oldest.index_url),
                    note="with the program's Python; nvidia-smi there shows the newest CUDA its driver runs"),
        ),
        target=Target.PYTHON_ENV,
    )  # fmt: skip
    finding = dataclasses.replace(verdict.finding, summary=summary, remediation=fix)
    return dataclasses.replace(verdict, finding=finding)
