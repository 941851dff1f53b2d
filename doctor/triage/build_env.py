"""What an extension project's environment dump says of its build tools: the nvcc that CUDA_HOME points at
beside the CUDA torch was built with.

detectron2's and OpenMMLab's `collect_env` are what their maintainers ask for when a CUDA extension does not
build or has no CUDA operators, and a toolkit of another CUDA than torch's is the first thing they look at:
torch.utils.cpp_extension refuses to build with it ("The detected CUDA version (10.0) mismatches the version
that was used to compile PyTorch (9.2)"), and a build that falls back leaves the operators without CUDA
(open-mmlab/mmdetection#4471: nvcc 10.0 beside torch 1.3.1 built for CUDA 9.2, "MMCV CUDA Compiler: not
available"). The dump shows both versions, so that message's signature and fix stand for it, at the line
that shows the nvcc.

Only another major is taken: every torch refuses it, while a minor mismatch was refused by old releases and
is a warning in newer ones (CUDA_MISMATCH_WARN in torch.utils.cpp_extension), and the dump's torch release
is not always said.
"""

from __future__ import annotations

import re

from torch_gpu_doctor.checks.support.signatures import Hit, load_catalogue
from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.triage.model import CollectEnvReport
from torch_gpu_doctor.triage.prose import line_number

MISMATCH = "other_cpp_extension_cuda_version_mismatch"
_MAJOR_MINOR = lazy(r"^(\d{1,2})\.(\d{1,2})")


def toolkit_mismatch(report: CollectEnvReport | None, lines: list[str]) -> Hit | None:
    """The nvcc of an extension project's dump that torch.utils.cpp_extension would refuse, as that message's
    hit; None when the dump is not such a project's, or does not show both versions, or they agree."""
    if report is None or report.wrapper not in EXTENSION_PROBES:  # not an extension project's dump
        return None
    nvcc, torch_cuda = (
        _major_minor(report.cuda_runtime),
        _major_minor(report.cuda_build or _pypi_cuda(report)),
    )
    shown = report.lines.get("cuda_runtime")
    if nvcc is None or torch_cuda is None or shown is None or not _refused(nvcc, torch_cuda):
        return None
    signature = next(s for s in load_catalogue() if s.id == MISMATCH)
    values = {"system_cuda": f"{nvcc[0]}.{nvcc[1]}", "torch_cuda": f"{torch_cuda[0]}.{torch_cuda[1]}"}
    return Hit(signature, shown.line, lines[shown.line - 1].strip(), values, {})


# nvcc -V's own line: "Cuda compilation tools, release 11.8, V11.8.89"
_NVCC_RELEASE = lazy(r"^[ \t`>]*Cuda compilation tools, release (?P<cuda>\d{1,2}\.\d)\b", re.MULTILINE)
# torch with its CUDA tag as a list, a pin or a version printout shows it: "torch 2.1.0+cu121", "torch==2.0.1+cu117"
_TORCH_TAGGED = lazy(
    r"(?<![\w.-])torch(?:==|[ \t:=]+|-)v?\d+\.\d+(?:\.\d+)?\+cu(?P<tag>\d{2,3})\b", re.IGNORECASE
)
# `pip show torch`: its version, and NVIDIA's CUDA wheels it requires (Linux only) with their CUDA major
_SHOWN_TORCH = lazy(
    r"^[ \t`]*Name:[ \t]*torch[ \t]*\n[ \t]*Version:[ \t]*(?P<version>\d+\.\d+\.\d+)[ \t]*$", re.MULTILINE
)
REQUIRES_CUDA = lazy(r"^[ \t]*Requires:[^\n]*\bnvidia-[a-z-]+-cu(?P<major>1\d)\b", re.MULTILINE)
# a build of something compiled against torch with that nvcc: pip installing such a package (its sdist builds
# there), setup.py, --no-build-isolation, torch's own extension builder
_BUILDS = lazy(
    r"\bpip3?[ \t]+install\b[^\n]*\b(?P<package>deepspeed|apex|flash[-_]attn|xformers|mmcv(?:-full)?|detectron2|"
    r"pytorch3d|mamba[-_]ssm|causal[-_]conv1d|torch[-_](?:scatter|sparse|cluster)|spconv|vllm)\b"
    r"|\bsetup\.py[ \t]+(?:install|build|develop|bdist_wheel)\b|--no-build-isolation\b|\bcpp_extension\b",
    re.IGNORECASE,
)


def toolkit_beside_torch(text: str, lines: list[str]) -> Hit | None:
    """The nvcc that `nvcc -V` shows beside a torch of another CUDA major, where the paste builds something
    against torch (DeepSpeed#5312: `pip install deepspeed` with nvcc 11.8 and PyPI's torch 2.2.1, a CUDA 12.1
    build): torch.utils.cpp_extension refuses that build, so that message's signature and fix stand for it, at
    the nvcc line. None without nvcc's line, torch's CUDA, a build, or with the same major."""
    if "compilation tools" not in text:  # most pastes: no nvcc, and no pattern compiled for it
        return None
    nvcc = _NVCC_RELEASE.search(text)
    if nvcc is None or _BUILDS.search(text) is None:
        return None
    torch_cuda = _shown_torch_cuda(text)
    system, built = _major_minor(nvcc["cuda"]), _major_minor(torch_cuda)
    if system is None or built is None or not _refused(system, built):
        return None
    number = line_number(text, nvcc)
    signature = next(s for s in load_catalogue() if s.id == MISMATCH)
    values = {"system_cuda": f"{system[0]}.{system[1]}", "torch_cuda": f"{built[0]}.{built[1]}"}
    return Hit(signature, number, lines[number - 1].strip(), values, {})


def _shown_torch_cuda(text: str) -> str | None:
    """torch's CUDA as the paste shows it: a +cuXYZ tag, else `pip show torch`'s release with NVIDIA's wheels of
    one CUDA major in its Requires: PyPI's Linux build of that release, where its CUDA is that major."""
    tagged = _TORCH_TAGGED.search(text)
    if tagged is not None:
        return f"{tagged['tag'][:-1]}.{tagged['tag'][-1]}"
    shown, required = _SHOWN_TORCH.search(text), REQUIRES_CUDA.search(text)
    if shown is None or required is None:
        return None
    cuda = load_torch_releases().pypi_cuda(shown["version"])
    return cuda if cuda is not None and cuda.split(".")[0] == required["major"] else None


def _pypi_cuda(report: CollectEnvReport) -> str | None:
    """The CUDA of an untagged torch a Linux pip environment holds: PyPI's own build of that release (torch
    1.5.0 is cu102), whose version alone carries no tag, where every other CUDA build's does (+cu101). Not for
    a conda torch (untagged too, of any CUDA) nor another system's wheel."""
    line = report.lines.get("torch_version")
    version = report.torch_version or ""
    where = line.value if line is not None else ""
    linux = "linux" in " ".join(
        x.lower() for x in (report.lines["sys_platform"].value if "sys_platform" in report.lines else "",
                            report.python_platform or "", report.os_name or "")
    )  # fmt: skip
    conda = any(word in where.lower() for word in ("conda", "forge", "mamba"))  # miniforge, mambaforge: conda
    if not version or "+" in version or not linux or conda or "site-packages" not in where:
        return None
    return load_torch_releases().pypi_cuda(version)


def _major_minor(version: str | None) -> tuple[int, int] | None:
    found = _MAJOR_MINOR.match(version or "")
    return None if found is None else (int(found[1]), int(found[2]))


def _refused(nvcc: tuple[int, int], torch_cuda: tuple[int, int]) -> bool:
    return nvcc[0] != torch_cuda[0]


# What each extension project's own build reports, asked of the module itself: the CUDA and compiler its
# operators were built with ("not available" when they were built without CUDA). Their collect_env prints the
# same rows ("Detectron2 CUDA Compiler", "MMCV CUDA Compiler"), which a dump cut short or pasted in part lacks.
EXTENSION_PROBES = {  # by the wrapper that printed the dump (triage/parse.py)
    "detectron2": '-c "from detectron2 import _C; print(_C.get_cuda_version(), _C.get_compiler_version())"',
    "mmengine": '-c "from mmcv.ops import get_compiling_cuda_version as v, get_compiler_version as c; print(v(), c())"',
}


def extension_probe(report: CollectEnvReport | None, python: str | None = None) -> str | None:
    """For an extension project's dump that shows nothing wrong: the command (with the paste's own Python,
    where it shows one) that says how its operators were built, the usual gap such a report is pasted about;
    None for any other paste."""
    probe = None if report is None or report.wrapper is None else EXTENSION_PROBES.get(report.wrapper)
    return None if probe is None else f"{python or 'python'} {probe}"
