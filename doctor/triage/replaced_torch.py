"""Another package's install that replaced the CUDA build of torch, as the person says it ("Installing lightning
changes my pytorch version from cuda118 to cpu") or pip's log shows it (a +cuNNN torch uninstalled, an untagged
one installed): pip's resolver took PyPI's torch for a package that asks for torch without its build (blind set
28: Lightning#18968; meizhong986/WhisperJAV#334, the maintainer's fix an install with --no-deps). The build that
was there comes back from its own index, and the package goes in beside it without moving it."""

from __future__ import annotations

from torch_gpu_doctor.compat.torch_releases import INDEX_URL
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.recommendation import install_argv
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Evidence, Finding, Remediation, Status, Target
from torch_gpu_doctor.triage.outcome import Kind, Verdict
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS
from torch_gpu_doctor.triage.told import INSTALLED
from torch_gpu_doctor.unavailable import Unavailable

_TAGGED = lazy(r"\btorch[-=: \t`]{1,3}v?(?P<version>\d+\.\d+\.\d+\+(?P<variant>cu\d{2,3}|rocm[\d.]+))")
_INSTALL = lazy(r"\bpip3?[ \t]+install[ \t]+(?P<words>[^\n`'\"]*)")
# pip's options that take a value: the word after them is no package
_WITH_VALUE = frozenset(
    {"-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f", "--find-links",
     "-t", "--target", "--prefix", "--root", "--python", "-e", "--editable", "--src", "--cache-dir"}
)  # fmt: skip


def replaced_build(pasted: PastedText, facts: Facts) -> tuple[int, str, str] | None:
    """The line that says it, and the CUDA build that was replaced ("2.0.0+cu118") with its variant."""
    line = pasted.prose.replaced_torch
    if line is None:
        return None
    tagged = _TAGGED.search(pasted.paste.text, 0, MAX_CHARS)
    if tagged is not None:
        return line, tagged["version"], tagged["variant"]
    packages = facts.torch_packages  # a report from before the install ("PyTorch version: 2.0.0+cu118")
    if isinstance(packages, Unavailable) or not packages.version or "+" not in packages.version:
        return None
    variant = packages.version.split("+", 1)[1]
    if not variant.startswith(("cu", "rocm")):
        return None
    return line, packages.version, variant


def _package(text: str) -> tuple[str | None, bool]:
    """The package whose install it was (the first `pip install` of something other than torch, its options and
    their values skipped), and whether the paste installs torch itself (a deliberate change of build)."""
    torch_itself = False
    for found in _INSTALL.finditer(text):
        words = found["words"].split()
        skip = False
        for word in words:
            if skip:
                skip = False
                continue
            if word in _WITH_VALUE:
                skip = True
                continue
            if word.startswith("-") or ("://" in word and not word.startswith("git+")):
                continue
            if word.lower().split("=")[0].split("[")[0] in ("torch", "torchvision", "torchaudio"):
                torch_itself = True
                break
            return word, torch_itself
    return None, torch_itself


def replaced_by_an_install(
    verdicts: tuple[Verdict, ...], pasted: PastedText, facts: Facts, titles: dict[str, str]
) -> tuple[Verdict, ...]:
    found = replaced_build(pasted, facts)
    if found is None:
        return verdicts
    line, version, variant = found
    named, torch_itself = _package(pasted.paste.text[:MAX_CHARS])
    if named is None and torch_itself:
        return verdicts  # the person installed another torch build on purpose: no package to blame
    package = named or "PACKAGE"
    index = INDEX_URL + variant
    fix = Remediation(
        text=f"Put the CUDA build back from its own index, then install {package} beside it without letting pip "
        "move torch: with --no-deps (its other requirements installed by name), or with torch pinned in the same "
        "command. A package that asks for torch without a build lets pip take PyPI's, which is CPU-only on "
        "Windows and another CUDA on Linux; companions built for torch (torchvision, torchaudio, PyG's "
        "extensions) need the same build again.",
        commands=(
            Command(
                install_argv((f"torch=={version}",), variant),
                note="the build that was there, with the program's own Python",
            ),
            Command(
                ("python", "-m", "pip", "install", package, f"torch=={version}", "--extra-index-url", index),
                note="the package with torch held at that build",
                runs_here=package != "PACKAGE",
            ),
        ),
        needs_network=True,
        target=Target.PYTHON_ENV,
    )
    finding = Finding(
        INSTALLED,
        Status.FAIL,
        f"Installing {package if package != 'PACKAGE' else 'another package'} replaced torch {version}, a "
        f"{'ROCm' if variant.startswith('rocm') else 'CUDA'} build, with PyPI's torch (line {line} of the paste): pip took the build the package asked for, not "
        "the one installed.",
        evidence=(Evidence("torch before", version, f"line {line} of the paste"),),
        remediation=fix,
    )
    verdict = Verdict(finding, titles.get(INSTALLED, INSTALLED), Kind.PROBLEM, (), None, (line,))
    return (verdict, *(v for v in verdicts if v.finding.check_id != INSTALLED))
