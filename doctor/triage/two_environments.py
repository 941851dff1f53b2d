"""torch answering `is_available()` True in one part of a paste and False in another: two Python environments,
and the difference between them is the cause, whatever else either shows (blind set 30: a Jetson container with
PyPI's torch 1.12.0 beside one with NVIDIA's 1.12.0a0+...nv22.3, isaac_ros_common#29; `yolo` on Python 3.10.9
with torch 2.1.0 beside the person's own Python 3.11.3 with 2.3.0+cu121, ultralytics#12690).

A part is what lies between Python banners and code fences: each interactive session, each pasted output."""

from __future__ import annotations

import dataclasses
import re

from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.torch_wheel import fix_for_torch
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Finding, Remediation, Status, Target
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.triage.facts import shown_packages
from torch_gpu_doctor.triage.outcome import Kind, Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS

CUDA_INIT = "torch.cuda_init"
JETSON = "platform.jetson"
# where one part of a paste ends: an interpreter's banner ("Python 3.8.10 (default, ...)") or a code fence
_PART_START = lazy(r"^\s*(?:Python[ \t]+\d+\.\d+\.\d+[ \t]+\(|```)")
_BANNER_PYTHON = lazy(r"^\s*Python[ \t]+(?P<python>\d+\.\d+\.\d+)[ \t]+\(")
# a program's own start-up line naming its Python and torch: Ultralytics' "Python-3.10.9 torch-2.1.0 CPU"
_PROGRAM_BANNER = lazy(r"\bPython-(?P<python>\d+\.\d+\.\d+)[ \t]+torch-(?P<torch>\d+\.\d+(?:\.\d+)?[\w.+-]*)")
_EXPECTED = lazy(r"\bexpect", re.IGNORECASE)
# catalogue classes whose error says why CUDA failed where it did: that error, not the other environment, is why
_EXPLAINS_FALSE = frozenset(
    {
        "driver_too_old", "no_driver", "container", "driver_library_mismatch", "nvml", "forward_compat",
        "unknown_error", "no_visible_gpu", "wsl", "mig", "secure_boot", "driver_unsupported_gpu",
    }
)  # fmt: skip
# catalogue classes whose error says why CUDA failed where it did: that error, not the other environment, is why
_EXPLAINS_FALSE = frozenset(
    {
        "driver_too_old", "no_driver", "container", "driver_library_mismatch", "nvml", "forward_compat",
        "unknown_error", "no_visible_gpu", "wsl", "mig", "secure_boot", "driver_unsupported_gpu",
    }
)  # fmt: skip
_CUDA_TAG = lazy(r"\+cu(?P<cuda>\d{2,3})$")


@dataclass(frozen=True)
class Environment:
    available: bool
    line: int  # the line of its is_available() answer
    torch: str | None
    python: str | None


def environments(pasted: PastedText) -> tuple[Environment, Environment] | None:
    """The environment where CUDA fails and the one where it works, where the paste shows both."""
    session = pasted.session
    if session is None:
        return None
    answers = [a for a in session.every if a[1] in ("version", "available")]
    if {a[2] for a in answers if a[1] == "available"} != {True, False}:
        return None
    lines = pasted.paste.text[:MAX_CHARS].split("\n")
    starts = [n for n, raw in enumerate(lines, 1) if _PART_START.match(raw)]

    def part(line: int) -> int:
        return sum(1 for s in starts if s <= line)

    found: dict[bool, Environment] = {}
    for line, what, value in answers:
        if what != "available" or not isinstance(value, bool) or value in found:
            continue
        if any(_EXPECTED.search(raw) for raw in lines[max(0, line - 5) : line - 1]):
            continue  # what the person expected, not what a Python answered
        here = part(line)
        versions = [str(v) for n, w, v in answers if w == "version" and part(n) == here]
        banner = next(
            (
                m["python"]
                for n, raw in enumerate(lines, 1)
                if part(n) == here and (m := _BANNER_PYTHON.match(raw))
            ),
            None,
        )
        found[value] = Environment(value, line, versions[0] if versions else None, banner)
    if len(found) < 2:
        return None
    failing, working = found[False], found[True]
    # a True alone is no environment: an issue form's "Expected behaviour: CUDA available: True"
    if working.torch is None and working.python is None:
        return None
    if any(h.signature.cls in _EXPLAINS_FALSE for h in pasted.hits) or pasted.no_gpus_line is not None:
        return None  # the paste says why CUDA failed there (a driver too old, a container without the GPUs)
    program = _PROGRAM_BANNER.search(pasted.paste.text, 0, MAX_CHARS)
    if program is not None and failing.torch is None and program["torch"] != working.torch:
        # the program's own banner names the environment it runs in: the failing one
        failing = Environment(False, failing.line, program["torch"], program["python"])
    # two environments only where the paste shows them differ: two torch builds, where both are known (the same
    # build answering both ways is a GPU that came back, a setting, another machine's driver), else two Pythons
    if failing.torch is not None and working.torch is not None:
        return (failing, working) if failing.torch != working.torch else None
    pythons = failing.python is not None and working.python is not None and failing.python != working.python
    return (failing, working) if pythons else None


def _named(env: Environment) -> str:
    python = f" (Python {env.python})" if env.python else ""
    return f"torch {env.torch}{python}" if env.torch else f"the torch there{python}"


def _same_version_build(failing: Environment, facts: Facts) -> tuple[Command, ...] | None:
    """The CUDA build of the failing environment's own torch version, with its companions (its programs were
    installed against that version: torchvision, ultralytics' pins), run with that environment's interpreter."""
    if failing.torch is None:
        return None
    version = failing.torch.split("+")[0]
    shown = shown_packages(f"line {failing.line} of the paste", version, (None, None))
    fix = fix_for_torch(dataclasses.replace(facts, torch_packages=shown))
    install = next(
        (
            c
            for c in fix.commands
            if "install" in c.argv and any(a.startswith(f"torch=={version}") for a in c.argv)
        ),
        None,
    )
    if install is None or "pip" not in install.argv[:3]:
        return None
    python = f"Python {failing.python}" if failing.python else "the failing program's Python"
    return (
        dataclasses.replace(
            install,
            argv=("PYTHON", *install.argv[1:]),
            note=f"PYTHON: {python}, the one the failing program runs; the same version, with CUDA",
            runs_here=False,
        ),
    )


def two_environments(
    verdicts: tuple[Verdict, ...],
    found: tuple[Environment, Environment],
    facts: Facts,
    titles: dict[str, str],
) -> tuple[Verdict, ...]:
    """The failing environment against the working one (see environments), put first: the difference is what
    to change."""
    failing, working = found
    jetson = facts.jetson_board is not None
    why = ""
    if failing.torch is not None and jetson and "nv" not in failing.torch and "nv" in (working.torch or ""):
        why = " PyPI's torch for aarch64 has no CUDA for a Jetson's GPU; NVIDIA's builds for JetPack (the '.nv' versions) do."
    elif failing.torch is not None and failing.torch.endswith("+cpu"):
        why = " It is a CPU-only build."
    summary = (
        f"CUDA works in one Python environment and not in another: {_named(working)} answers True (line "
        f"{working.line} of the paste), {_named(failing)} answers False (line {failing.line}): the failing program "
        "runs the other environment."
    )
    tag = _CUDA_TAG.search(working.torch or "")
    python = f"Python {failing.python}" if failing.python else "the failing program's Python"
    if jetson:
        text = (
            f"Install NVIDIA's torch for this JetPack into the failing environment ({_named(working)} is one), "
            "or build the failing container on the image that works (its torch is NVIDIA's); PyPI's torch must "
            "not replace it there."
        )
        commands: tuple[Command, ...] = (
            Command(
                ("PYTHON", "-c", "import sys, torch; print(sys.executable, torch.__version__)"),
                note="PYTHON: the failing environment's interpreter; an '.nv' version is NVIDIA's Jetson build",
                runs_here=False,
            ),
        )
    elif (same := _same_version_build(failing, facts)) is not None:
        text = (
            f"Run the program with the interpreter that works, or install the CUDA build of its own torch "
            f"{failing.torch} into {python} with that interpreter's own pip (its other packages were installed "
            f"for that version).{why}"
        )
        commands = same
    elif tag is not None and working.torch is not None:
        text = (
            f"Run the program with the interpreter that works, or install the working build (torch {working.torch}) "
            f"into {python} with that interpreter's own pip.{why}"
        )
        commands = (
            Command(
                (
                    "PYTHON",
                    "-m",
                    "pip",
                    "install",
                    "--force-reinstall",
                    f"torch=={working.torch}",
                    "--index-url",
                    f"https://download.pytorch.org/whl/cu{tag['cuda']}",
                ),
                note=f"PYTHON: {python}, the one the failing program runs",
                runs_here=False,
            ),
        )
    else:
        text = (
            "Run the program with the interpreter that works, or install a CUDA build of torch into the failing "
            f"environment with its own pip.{why}"
        )
        commands = (
            Command(
                (
                    "PYTHON",
                    "-c",
                    "import sys, torch; print(sys.executable, torch.__version__, torch.cuda.is_available())",
                ),
                note="PYTHON: the failing program's interpreter: its path, and a +cpu or PyPI build there",
                runs_here=False,
            ),
        )
    finding = Finding(
        CUDA_INIT,
        Status.FAIL,
        summary + why,
        remediation=Remediation(text=text, commands=commands, target=Target.PYTHON_ENV),
    )
    added = Verdict(
        finding,
        titles.get(CUDA_INIT, CUDA_INIT),
        Kind.PROBLEM,
        (),
        None,
        tuple(sorted({failing.line, working.line})),
    )
    if jetson:  # the Jetson check's reading of the working image (its L4T tag) is no question beside this
        verdicts = tuple(v for v in verdicts if not (v.kind == Kind.PROBLEM and v.finding.check_id == JETSON))
    return (added, *verdicts)
