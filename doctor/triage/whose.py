"""Whose program failed, and so whose build a fix changes: torch's, a serving engine's that pins torch (vLLM,
SGLang), a compiled extension's, another runtime's (CTranslate2, DALI), a program not about torch at all; and the
versions and option names the paste's own stack uses."""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import TYPE_CHECKING

from torch_gpu_doctor import pattern_cache
from torch_gpu_doctor.checks.support.torch_state import built_for_one_torch
from torch_gpu_doctor.checks.torch_build import IN_AN_EXTENSION, JETSON_BUILDS_ONLY
from torch_gpu_doctor.compat.extensions import load_extensions
from torch_gpu_doctor.compat.jetson import load_jetson
from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.compat.torch_releases import parse_cc, version_key
from torch_gpu_doctor.compat.wrappers import Wrapper
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.cuda_init import init_error_fix, last_cuda11_build, with_older_build
from torch_gpu_doctor.fixes.driver_plan import plan_driver, planned_driver_cuda
from torch_gpu_doctor.fixes.library_path import extension_arch_fix
from torch_gpu_doctor.fixes.target import installed_torch, installed_variant, on_windows
from torch_gpu_doctor.fixes.torch_rocm import gfx_target_fix, no_rocm_target_fix
from torch_gpu_doctor.fixes.torch_wheel import fix_for_torch, gpus_older_than_every_build, program_floor_fix
from torch_gpu_doctor.lazy_re import OnLines, lazy
from torch_gpu_doctor.model import Command, Remediation, Status, Target
from torch_gpu_doctor.triage.model import distribution_name
from torch_gpu_doctor.triage.outcome import TORCH_VERSION, Kind, Verdict, installs_torch
from torch_gpu_doctor.triage.paste import INSTALL_COMMAND, PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS, line_around
from torch_gpu_doctor.triage.where import in_container
from torch_gpu_doctor.unavailable import Unavailable

if TYPE_CHECKING:
    pass


# A compiled extension's entry point in a message or the words around it (`causal_conv1d_cuda.causal_conv1d_fwd`,
# `selective_scan_cuda.fwd`, `my_ops_C.forward`), or the words "custom CUDA extension": where "no kernel image"
# comes from a binary that is not torch's. torch's own modules (torch._C, torch_cuda) are not extensions.
_EXTENSION_CALL = lazy(
    r"(?<![\w.])(?!torch)[a-z][a-z0-9]*(?:_[a-z0-9]+)*?_(?:cuda|cuda_kernels?|cuda_ext|ext|C|ops|kernels?)"
    r"(?=\.[A-Za-z_]\w*)",
    re.IGNORECASE,
)


_EXTENSION_WORDS = lazy(r"\bcustom CUDA (?:extension|kernel|op)s?\b", re.IGNORECASE)


# A library's own check of its kernel launch, in FlashInfer's format (sgl-kernel's and vLLM's FlashInfer ops
# raise it): "RMSNorm failed with error code no kernel image is available for execution on the device"
_OWN_KERNEL_CHECK = lazy(r"\b(?P<op>[A-Za-z]\w*) failed with error code no kernel image")


# The package a failing kernel's source path names: ".../torchvision/csrc/cuda/nms_cuda.cu",
# ".../detectron2/layers/csrc/ROIAlign/ROIAlign_cuda.cu" (the folder above csrc, or above its parent)
_EXTENSION_SOURCE = lazy(r"[/\\](?P<package>[A-Za-z_]\w*)[/\\](?:[A-Za-z_]\w*[/\\])?csrc[/\\][^\s:]*\.cu\b")


@functools.cache
def _extension_patterns() -> tuple[frozenset[str], re.Pattern[str], re.Pattern[str]]:
    """From compat/extensions.json: the projects whose CUDA sources live under <project>/csrc (a folder of
    another name there is a model's own: "models" in GroundingDINO's tree, "work" in a conda build of torch);
    a traceback frame in an extension's operator module, whose Python calls straight into its compiled kernels
    (File "/root/mmcv/mmcv/ops/focal_loss.py", flash_attn's interface); an extension the person just installed,
    said in words ("installed the latest flash-attention via "pip install flash-attn"")."""
    table = load_extensions()
    framed = "|".join(sorted(table.names("ops_frames"), key=len, reverse=True))
    frame = pattern_cache.compile(
        rf"File \"[^\"\n]*?[/\\](?P<package>{framed})[/\\]"
        r"(?:ops[/\\]|layers[/\\]|flash_attn_interface\.py|(?:\w+_)?ops\.py)",
        0,
    )
    installed = pattern_cache.compile(
        r"\bpip3?[ \t]+install[ \t]+(?:-\S+[ \t]+)*[\"']?(?P<package>"
        + table.pip_pattern("ops_frames")
        + r")\b",
        re.IGNORECASE,
    )
    return frozenset(table.names("csrc")), frame, installed


@functools.cache
def _kernel_check_named() -> re.Pattern[str]:
    """A library that words its kernel failures as FlashInfer does, named in the paste (sgl-kernel, flashinfer)."""
    return re.compile(
        rf"(?<![\w-])(?:{load_extensions().pip_pattern('kernel_check')})(?![\w-])", re.IGNORECASE
    )


_DETECTRON2_FLAGS = lazy(r"^[ \t]*detectron2 arch flags[ \t]+\S", re.MULTILINE)


def own_arch_flags_shown(pasted: PastedText) -> bool:
    """The extension's own report of the archs it was built for is in the paste (detectron2's collect_env),
    beside a kernel missing at run time ("no kernel image"; NVRTC's compiler too old for the GPU is torch's)."""
    return _DETECTRON2_FLAGS.search(pasted.paste.text, 0, MAX_CHARS) is not None and any(
        "no kernel image" in h.text.lower() for h in pasted.hits
    )


def failing_extension(pasted: PastedText) -> str | None:
    """The compiled extension a 'no kernel image' paste names as where it failed ("" when only words say it is
    a custom extension), or None."""
    if not any(h.signature.check == "torch.arch_compat" for h in pasted.hits):
        return None
    text = pasted.paste.text
    if own_arch_flags_shown(pasted):
        # detectron2's own report of the archs its ops were built for ("detectron2 arch flags   sm_70"): its ops
        # are where a kernel is missing (blind set 23: detectron2#251, sm_70 only on Tesla P40s)
        return "detectron2"
    source = _EXTENSION_SOURCE.search(text, 0, MAX_CHARS)
    in_csrc, in_frame, installed_words = _extension_patterns()
    if source is not None and source["package"] in in_csrc:  # the package, not its kernel's symbol
        return source["package"]
    called = _EXTENSION_CALL.search(text, 0, MAX_CHARS)
    if called is not None:
        return called[0]
    checked = _OWN_KERNEL_CHECK.search(text, 0, MAX_CHARS)
    if checked is not None:  # torch never words it so: the op's own library (FlashInfer, sgl-kernel)
        named = _kernel_check_named().search(text, 0, MAX_CHARS)
        if named is not None:  # "the `gemma_rmsnorm` kernel in `sgl-kernel`": the one the paste names
            row = load_extensions().by_pip_name(named[0])
            return row.name if row is not None else named[0]
        return f"the library whose {checked['op']} kernel failed"
    framed = in_frame.search(text, 0, MAX_CHARS)
    if framed is not None:
        return framed["package"]
    installed = installed_words.search(text, 0, MAX_CHARS) if 'File "' not in text[:MAX_CHARS] else None
    if installed is not None:  # the words alone: a traceback would show where the kernel was missing
        row = load_extensions().by_pip_name(installed["package"])
        return row.module if row is not None else installed["package"]
    if _MMCV_NAMED.search(text, 0, MAX_CHARS) is not None:
        # an OpenMMLab project whose traceback is not shown: its CUDA ops are mmcv's (blind set 22 #24: "the mmcv
        # and mmdet versions are set", OpenMMLab's collect_env, torch 1.8.1+cu111 with sm_86 on an RTX 3060)
        return "mmcv"
    return "" if _EXTENSION_WORDS.search(text, 0, MAX_CHARS) is not None else None


_MMCV_NAMED = lazy(r"(?<![\w-])mmcv(?:-full)?(?![\w-])", re.IGNORECASE)


_TORCH_HAS_NONE = lazy(r"torch(?: \S+)? has no kernels")


def extension_not_torch(
    verdict: Verdict, facts: Facts, extension: str, own_flags_shown: bool = False
) -> Verdict:
    """torch.arch_compat's 'torch has no kernels' where the paste says the kernel is an extension's: the
    extension needs a build for the GPU; another torch changes nothing."""
    finding = verdict.finding
    if finding.check_id != "torch.arch_compat" or finding.status is not Status.FAIL:
        return verdict
    capabilities = sorted(
        {g.compute_capability for g in facts.nvidia_gpus if isinstance(g.compute_capability, str)}
    )
    board = facts.jetson_board
    soc = load_jetson().soc(board.soc) if board is not None and not capabilities else None
    capabilities = capabilities or (
        [soc.capability] if soc is not None else []
    )  # a Jetson's GPU is its SoC's
    capability = capabilities[0] if len(capabilities) == 1 else None
    summary = finding.summary.replace(
        JETSON_BUILDS_ONLY, ""
    )  # the extension's build, not torch's, is the gap
    # "torch has no kernels", or with its version: "torch 1.4.0+cu100 has no kernels"
    said = _TORCH_HAS_NONE.match(summary)
    torch_said = said[0] if said is not None else "torch has no kernels"
    if said is not None:
        who = (
            f"{extension} (a compiled extension, not torch)"
            if extension
            else "A compiled extension (not torch)"
        )
        who = "The" + who[3:] if who.startswith("the ") else who  # the library named by its op's words
        summary = f"{who} has no kernels{summary[len(torch_said) :]}"
    elif extension and summary.endswith(
        f"{IN_AN_EXTENSION}."
    ):  # torch has them: name the extension that lacks them
        summary = summary.replace(
            IN_AN_EXTENSION, f"the kernel that is missing is in {extension}, not in torch"
        )
    row = load_extensions().by_pip_name(extension) if extension else None
    version, variant = installed_torch(facts), installed_variant(facts)
    minor = ".".join(version.split(".")[:2]) if version else None
    page_url = row.wheel_page(minor, variant) if row is not None and minor and variant else None
    # mmcv's CUDA ops for a torch 1.x come as mmcv-full (mmcv 1.x); for torch 2.x, mmcv 2.x itself
    package = (
        ("mmcv-full" if minor and minor.startswith("1.") else "mmcv") if row is not None and row.name == "mmcv"
        else row.name if row is not None else ""
    )  # fmt: skip
    fix = extension_arch_fix(
        extension or "a compiled extension",
        capability,
        row.wheels if row is not None and page_url is None else None,  # the page's command says it
        pip_build=row is None or not row.kernel_check,
        page=(package, page_url) if page_url is not None and variant and variant.startswith("cu") else None,
        torch_covers=IN_AN_EXTENSION in finding.summary,
        windows=on_windows(facts),
        rebuild_first=own_flags_shown,
    )
    finding = dataclasses.replace(finding, summary=summary, remediation=fix)
    return dataclasses.replace(verdict, finding=finding, find_out=None)


# torch's C++ namespaces in a mangled symbol (c10::, at::, torch::): an extension of torch failed, even
# where the word "torch" appears nowhere (flash_attn_2_cuda...so: undefined symbol: _ZN3c10...)
_TORCH_CPP = lazy(r"_ZN[KS]?\d*(?:3c10|2at|5torch)")


# torch's own wording of a CUDA error, where the paste never names torch: c10's "RuntimeError: CUDA error: ..."
# and the hint that follows it ("CUDA kernel errors might be asynchronously reported at some other API call")
_TORCH_WORDS = lazy(r"RuntimeError: CUDA error: |CUDA kernel errors might be asynchronously reported")


# The same words on a line of their own ("CUDA error: no kernel image is available ..." copied without its
# exception's name), which ggml's CUDA backend (llama.cpp, whisper.cpp) prints too, then "current device:"
_BARE_CUDA_ERROR = lazy(r"^[ \t]*CUDA error: [a-z]", re.MULTILINE)


_GGML = lazy(r"\bggml|current device: \d|\bllama\.cpp\b|\bwhisper\.cpp\b", re.IGNORECASE)


def mentions_torch(text: str) -> bool:
    lowered = text.lower()
    return (
        "torch" in lowered
        or _TORCH_CPP.search(text) is not None
        or _TORCH_WORDS.search(text, 0, MAX_CHARS) is not None
        or (
            "cuda error: " in lowered
            and _BARE_CUDA_ERROR.search(text, 0, MAX_CHARS) is not None
            and _GGML.search(text, 0, MAX_CHARS) is None
        )
    )


# listed packages that say nothing of torch: other frameworks, NumPy, CUDA's own packages
_NOT_TORCHS = lazy(r"^(?:jax|jaxlib|tensorflow.*|numpy|cupy.*|cuda-.*|nvidia-.*|cudatoolkit)$")


def lists_torchs_stack(pasted: PastedText) -> bool:
    """A pasted package list holds torch or a package built on it (accelerate, bitsandbytes, transformers):
    the environment is torch's, even where the list was cut before torch's own row."""
    return any(_NOT_TORCHS.match(lib.name) is None for listing in pasted.packages for lib in listing.packages)


# A package built for one torch, as a paste shows it without a package list: a traceback's path into its
# folder (site-packages/vllm/...), or a pin the person quotes (vllm==0.20.2) outside an install command
@functools.cache
def _pinned_stack_pattern() -> re.Pattern[str]:
    stack = "|".join(sorted(built_for_one_torch(), key=len, reverse=True)).replace("-", "[-_]")
    return re.compile(
        rf"(?:site|dist)-packages[/\\](?:{stack})[/\\]|(?<![\w-])(?:{stack})==\d", re.IGNORECASE
    )


# The serving engines that install the torch their compiled kernels were built against: a paste that runs one
# (its name in a command, a path or words: "vLLM Version: Latest (from PyPI)")
# ran: its command, its module, its package folder in a traceback, its log's worker, its version line, a pin
_ENGINE = OnLines(
    lazy(
        r"\b(?P<name>vllm|sglang)[ \t]+serve\b|-m[ \t]+(?P<name2>vllm|sglang)\b|[/\\](?P<name3>vllm|sglang)[/\\]"
        r"|\b(?P<name4>vllm)(?:Worker|\.entrypoints)|(?P<name5>vLLM|SGLang)[ \t]+Version\b|(?<![\w-])(?P<name6>vllm|sglang)==\d"
        # their images: "vllm/vllm-openai:latest", "lmsysorg/sglang:v0.5.2-cu126"
        r"|(?<![\w-])vllm/(?P<name7>vllm)-openai\b|\blmsysorg/(?P<name8>sglang)\b",
        re.IGNORECASE,
    ),
    ("-openai", "lmsysorg/", "serve", "sglang", "version", "vllm"),
)


def serving_engine(pasted: PastedText) -> str | None:
    """The serving engine the paste shows running (never one only mentioned: "HF Trainer (not vLLM)")."""
    found = _ENGINE.search(pasted.paste.text, endpos=MAX_CHARS)
    if found is None:
        listed = {lib.name for listing in pasted.packages for lib in listing.packages}
        return next((name for name in ("vllm", "sglang") if name in listed), None)
    return next(v for v in found.groups() if v is not None).lower()


def engine_not_torch(verdict: Verdict, engine: str, facts: Facts, image: str | None = None) -> Verdict:
    """torch.arch_compat's fix installs another torch where the program is vLLM or SGLang: their wheels pin
    the torch they were built with, so a torch installed under them breaks their own kernels (blind set 14:
    vLLM on an RTX 5090). Their release built on a torch with kernels for the GPU is the fix."""
    finding = verdict.finding
    if finding.check_id != "torch.arch_compat" or finding.status is not Status.FAIL:
        return verdict
    name = {"vllm": "vLLM", "sglang": "SGLang"}[engine]
    capabilities = [
        parse_cc(g.compute_capability) for g in facts.nvidia_gpus if isinstance(g.compute_capability, str)
    ]
    floor = load_torch_releases().program_floors.get(engine)  # compat data, from the engine's own docs
    if floor is not None and capabilities and all(cc is not None and cc < floor for cc in capabilities):
        fix = program_floor_fix(name, floor)
        return dataclasses.replace(verdict, finding=dataclasses.replace(finding, remediation=fix))
    if finding.summary.endswith(
        f"{IN_AN_EXTENSION}."
    ):  # torch has the GPU's kernels: the engine's own lack them
        cc = next((str(g.compute_capability) for g in facts.nvidia_gpus), "X.Y")
        fix = Remediation(
            text=f"torch has kernels for this GPU; {name}'s own compiled kernels (its _C extension, its attention "
            f"and MoE kernels) were built without compute capability {cc}. Install {name}'s release built for it "
            f"(its newest, on the CUDA its torch uses), or build {name} from source with TORCH_CUDA_ARCH_LIST={cc}; "
            "reinstalling torch changes nothing.",
            commands=(
                Command(("python", "-m", "pip", "install", "--upgrade", engine), note=f"{name}'s newest"),
            ),
            needs_network=True,
            target=Target.PYTHON_ENV,
        )
        return dataclasses.replace(verdict, finding=dataclasses.replace(finding, remediation=fix))
    if image is not None and not installs_torch(finding.remediation):
        # the GPU is not named, the engine runs from its image (blind set 22 #04: vllm/vllm-openai:latest on an
        # RTX 5090): the image's build is what lacks the kernels, and the image's own torch tells which
        fix = Remediation(
            text=f"The kernels that are missing are in the {image} image's build ({name}'s own kernels and the "
            "torch it pins), not in a torch installed on the host. See whether the image's torch has this GPU's "
            f"architecture; if not, use a newer tag of the image built for this GPU (or build {name}'s image from "
            "source with TORCH_CUDA_ARCH_LIST set to the GPU's compute capability).",
            commands=(
                Command(
                    (
                        "docker", "run", "--rm", "--gpus", "all", "--entrypoint", "python3", image, "-c",
                        "import torch; print(torch.__version__, torch.cuda.get_device_capability(), "
                        "torch.cuda.get_arch_list())",
                    ),
                    note="the GPU's capability beside the architectures the image's torch was built for",
                ),
            ),
            target=Target.SYSTEM,
        )  # fmt: skip
        summary = f"The {image} image's build has no kernels for this GPU's architecture ({name}'s own or its torch's)."
        return dataclasses.replace(
            verdict, finding=dataclasses.replace(finding, summary=summary, remediation=fix)
        )
    if not installs_torch(finding.remediation):
        return verdict
    fix = Remediation(
        text=f"{name} pins the torch its own compiled kernels were built against: installing another torch under "
        f"it breaks them. Upgrade {name} to a release built on a torch with kernels for this GPU (its newest "
        f"release; {name}'s docs name the torch each release uses), or build {name} from source against such a "
        "torch.",
        commands=(
            Command(
                ("python", "-m", "pip", "install", "--upgrade", engine),
                note=f"{name}'s newest release, with the torch it pins",
            ),
        ),
        needs_network=True,
        target=Target.PYTHON_ENV,
    )
    return dataclasses.replace(verdict, finding=dataclasses.replace(finding, remediation=fix))


def pinned_stack(pasted: PastedText) -> bool:
    """Whether the paste shows a package built for one torch: in a package list, or in its text (read only when
    a verdict would install another torch for the driver: a rare question, asked of one pass over the text)."""
    packages = pasted.packages
    if any(lib.name in built_for_one_torch() for listing in packages for lib in listing.packages):
        return True
    text = pasted.paste.text
    for found in _pinned_stack_pattern().finditer(text):
        if not INSTALL_COMMAND.match(line_around(text, found)):
            return True
    return False


# Whose CUDA runtime raised a driver-too-old error, when it is not torch's: a library's own message format
# (CTranslate2, behind faster-whisper and WhisperX: `THROW_RUNTIME_ERROR("CUDA failed with error " ...)`), or
# the last traceback frame's package before the error line (NVIDIA DALI: site-packages/nvidia/dali/backend.py)
_OWN_FORMATS = (("CUDA failed with error", "CTranslate2 (faster-whisper's engine)"),)


_FRAME = lazy(
    r'File "[^"]*[/\\](?:site|dist)-packages[/\\](?P<pkg>[A-Za-z_]\w*)(?:[/\\](?P<sub>[A-Za-z_]\w*))?'
)


# Only libraries that bring a CUDA runtime of their own: a library that calls `.cuda()` on a tensor (basicsr,
# mmcv, ultralytics) leaves its frame last while torch's runtime raises
_OWN_RUNTIMES = frozenset(
    {"nvidia.dali", "ctranslate2", "faster_whisper", "tensorflow", "onnxruntime", "cupy", "cupy_backends",
     "jax", "jaxlib", "paddle", "tensorrt", "llama_cpp", "bitsandbytes", "mxnet"}
)  # fmt: skip


def runtime_owner(pasted: PastedText) -> tuple[str, int] | None:
    """The library (not torch) whose CUDA runtime said the driver is too old, and the line that says so."""
    lines = pasted.paste.text.split("\n")
    for hit in pasted.hits:
        if hit.signature.cls != "driver_too_old" or not 0 < hit.line <= len(lines):
            continue
        said = lines[hit.line - 1]
        for words, owner in _OWN_FORMATS:
            if words in said:
                return owner, hit.line
        frames = list(_FRAME.finditer("\n".join(lines[max(0, hit.line - 40) : hit.line])))
        if frames:
            last = frames[-1]
            owner = f"{last['pkg']}.{last['sub']}" if last["pkg"] == "nvidia" and last["sub"] else last["pkg"]
            if owner in _OWN_RUNTIMES:
                return owner, hit.line
    return None


def not_torchs_runtime(verdict: Verdict, facts: Facts, pasted: PastedText, owner: tuple[str, int]) -> Verdict:
    """A driver too old for the CUDA runtime of a library that is not torch: the driver is the fix (that
    library's CUDA is its build's, which another torch does not change), and its first line names it."""
    finding = verdict.finding
    name, line = owner
    if finding.status is not Status.FAIL or not (
        finding.check_id == "torch.driver_compat"
        or (finding.check_id == "torch.cuda_init" and (line in verdict.lines or not verdict.lines))
    ):
        return verdict
    driver = facts.driver
    cuda = (
        driver.cuda_version
        if not isinstance(driver, Unavailable) and isinstance(driver.cuda_version, str)
        else None
    )
    # a GPU whose last driver branch runs no CUDA 12 (Kepler's R470: 11.4): no driver update can run a CUDA 12
    # runtime, so the program's CUDA 11 build (where it has one) or the CPU is the way
    cap = planned_driver_cuda(facts, load_torch_releases())
    # ... once the driver is at that cap: a driver below it (R418 on a Kepler) gets the update to the last branch
    # first, which the CUDA 11 build needs too (R450 or newer)
    at_the_cap = cuda is None or version_key(cuda) >= version_key(cap)
    ended = plan_driver(facts).end_of_life if int(cap.split(".")[0]) < 12 and at_the_cap else ()
    if ended:
        finding = dataclasses.replace(finding, remediation=_beyond_the_gpus_last_driver(name, ended))
    elif not gpus_older_than_every_build(facts):
        fix = init_error_fix("", "driver_too_old", facts, in_container=in_container(pasted))
        finding = dataclasses.replace(finding, remediation=with_older_build(fix, name, cuda))
    summary = (
        f"The NVIDIA driver is older than the CUDA runtime of {name}, which raised the error (line {line} of the "
        "paste)"
        + (f": the driver runs CUDA ≤ {cuda}." if cuda else ".")
        + (" No driver for this GPU runs it: its last driver branch is older." if ended else "")
    )
    finding = dataclasses.replace(finding, summary=summary)
    return dataclasses.replace(verdict, finding=finding, find_out="nvidia-smi")


def _beyond_the_gpus_last_driver(name: str, ended: tuple[str, ...]) -> Remediation:
    """A program's CUDA 12 runtime on a GPU whose architecture's last driver runs no CUDA 12 (a Kepler GT 710 on
    R470, CUDA 11.4, under CTranslate2 4.x, blind set 31): no driver update is possible, so the program's CUDA 11
    build (where compat/runtime_builds.json knows it) or the CPU."""
    older = last_cuda11_build(name, "last CUDA 11 build, which this GPU's last driver runs")
    instead = (
        f"install {older.pin.argv[-1]}, its last build for CUDA 11, which that driver runs"
        if older is not None
        else f"use a build of {name} (or an image) made for the CUDA that driver runs"
    )
    pin = (older.pin,) if older is not None else ()
    return Remediation(
        text=f"{' '.join(ended)} No newer driver exists for this GPU, so the CUDA runtime of {name} cannot run "
        f"on it: {instead}, run it on the CPU, or use a newer GPU. nvidia-smi on the machine (the host, for a "
        "container) shows the driver and its CUDA.",
        commands=(*pin, Command(("nvidia-smi",), note="'CUDA Version' is the newest CUDA this driver runs")),
        target=Target.PYTHON_ENV if pin else Target.SYSTEM,
    )


def torch_for_the_driver(verdict: Verdict) -> bool:
    return verdict.finding.check_id == "torch.driver_compat" and installs_torch(verdict.finding.remediation)


def driver_not_torch(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """torch.driver_compat where the program's stack pins its torch (vLLM, SGLang, xformers, flash-attn): another
    torch build would break it, so the fix is a driver that runs the CUDA it was built for."""
    if not torch_for_the_driver(verdict):
        return verdict
    if gpus_older_than_every_build(facts) or plan_driver(facts).end_of_life:
        return verdict  # the GPU's last driver branch is the ceiling: no newer driver to install
    return not_torch(verdict, facts, pasted)


# An AMD GPU shown anywhere: its gfx target in an error, its product line
_AMD_NAMED = lazy(r"\bgfx\d{3,4}\b|\bRadeon\b|\bInstinct\b|\bMI\d{2,3}X?\b|\bRX[ \t]?\d{4}\b", re.IGNORECASE)


def rocm_build_on_nvidia(verdict: Verdict, facts: Facts, about_torch: bool, pasted: PastedText) -> Verdict:
    """A ROCm failure (no code object for the GPU, no HIP device) where the paste names only NVIDIA GPUs: a ROCm
    build of torch was installed on an NVIDIA machine (an installer that chose AMD), and HIP has no GPU to run
    on; no gfx override or ROCm release helps, the CUDA build does (blind set 14: an RTX 3050 laptop)."""
    finding = verdict.finding
    nvidia = [g for g in facts.nvidia_gpus if isinstance(g.name, str)]  # named, not one a CUDA error assumes
    if (
        not finding.check_id.startswith("amd.")
        or finding.status is not Status.FAIL
        or not nvidia
        or any(g.vendor == "amd" for g in facts.gpus)
    ):
        return verdict
    if pasted.prose.amd_gpu is not None or _AMD_NAMED.search(pasted.paste.text, 0, MAX_CHARS) is not None:
        return (
            verdict  # an AMD GPU is there too: the ROCm build has a GPU to run on (another machine's NVIDIA)
        )
    finding = dataclasses.replace(
        finding,
        summary=f"A ROCm (AMD) build of torch is installed, but this machine's GPU is NVIDIA ({nvidia[0].name}): "
        "HIP finds no AMD GPU to run on.",
        details=f"{finding.summary} {finding.details}".strip(),
        remediation=fix_for_torch(facts) if about_torch else _program_cuda_build(),
    )
    return dataclasses.replace(verdict, finding=finding, find_out=TORCH_VERSION if about_torch else None)


# ROCm named as where the program runs: "in the rocm environment", a ROCm release, a +rocm build
# (never collect_env's own "ROCM used to build PyTorch: N/A", which every report prints)
_ROCM_SAID = lazy(
    r"\brocm\b(?![ \t]+used[ \t]+to[ \t]+build)(?![ \t]+version[ \t]*:[ \t]*(?:N/A|Could))|\+rocm\d",
    re.IGNORECASE,
)
LIBCUDA_NOT_FOUND = "no_driver_libcuda_not_found"


def cuda_build_on_rocm(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """NVIDIA's driver library libcuda.so.1 not found where the paste says the machine runs ROCm and names no
    NVIDIA GPU: a package built for CUDA was installed on an AMD machine, which has no NVIDIA driver to give
    it; its ROCm build is the fix, never an NVIDIA driver (blind set 21: sgl-kernel's CUDA build under SGLang on
    ROCm)."""
    finding = verdict.finding
    lines = {h.line for h in pasted.hits if h.signature.id == LIBCUDA_NOT_FOUND}
    if finding.check_id != "driver.installed" or not lines.intersection(verdict.lines):
        return verdict
    if any(isinstance(g.name, str) for g in facts.nvidia_gpus) or not _ROCM_SAID.search(
        pasted.paste.text, 0, MAX_CHARS
    ):
        return verdict
    line = min(lines.intersection(verdict.lines))
    finding = dataclasses.replace(
        finding,
        status=Status.FAIL,
        summary=f"A package built for CUDA asked for NVIDIA's driver library libcuda.so.1 (line {line} of the paste) "
        "on a ROCm (AMD) machine, which has no NVIDIA driver to give it.",
        details="libcuda.so.1 comes only with an NVIDIA driver. Under ROCm the same package must be its ROCm (HIP) "
        "build: the CUDA build was installed in its place (a plain `pip install` of a package whose PyPI wheels "
        "are CUDA's).",
        remediation=Remediation(
            text="Uninstall the CUDA build of the package whose import failed and install its ROCm build, as the "
            "program's ROCm instructions say (their ROCm image, or the package built from source for ROCm); "
            "torch itself must be a ROCm build too (torch.version.hip set). No NVIDIA driver is needed or "
            "wanted on this machine.",
            commands=(
                Command(
                    (
                        "python",
                        "-c",
                        "import torch; print(torch.__version__, torch.version.hip, torch.version.cuda)",
                    ),
                    note="torch's build: hip set, cuda None on ROCm",
                ),
                Command(("python", "-m", "pip", "list"), note="the package that brought a CUDA build"),
            ),
            needs_network=True,
            target=Target.PYTHON_ENV,
        ),
    )
    return dataclasses.replace(verdict, finding=finding, find_out=None)


def _program_cuda_build() -> Remediation:
    """A program's ROCm build on an NVIDIA machine, where the paste never names torch: the program's own
    installer or environment chose AMD; its NVIDIA (CUDA) build is the fix, not a torch command."""
    return Remediation(
        text="Reinstall the program choosing its NVIDIA (CUDA) build, or install the CUDA build of torch into "
        "the program's own environment (its installer folder), in place of the ROCm one it installed.",
        target=Target.PYTHON_ENV,
    )


_UNKNOWN_PIN = lazy(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]*)==VERSION$")


_VERSION_NOTE = lazy(r";?\s*VERSION: [^;]*")


def _without_version_note(note: str) -> str:
    """A command's note without its explanation of the VERSION placeholder, once the release is filled in."""
    return _VERSION_NOTE.sub("", note)


def versions_from_the_list(verdict: Verdict, listed: dict[str, str]) -> Verdict:
    """A fix's `PACKAGE==VERSION` placeholder, where the paste's package list names the version (blind set 17:
    `flash-attn==VERSION` beside a pip freeze with flash-attn==2.3.0): the rebuild keeps that release."""
    fix = verdict.finding.remediation
    if fix is None or not any("==VERSION" in a for c in fix.commands for a in c.argv):
        return verdict
    commands = []
    for command in fix.commands:
        argv = []
        for arg in command.argv:
            pin = _UNKNOWN_PIN.match(arg)
            version = listed.get(distribution_name(pin["name"])) if pin is not None else None
            argv.append(f"{pin['name']}=={version}" if pin is not None and version else arg)
        filled = tuple(argv) != command.argv
        note = _without_version_note(command.note) if filled else command.note
        commands.append(dataclasses.replace(command, argv=tuple(argv), note=note))
    finding = dataclasses.replace(
        verdict.finding, remediation=dataclasses.replace(fix, commands=tuple(commands))
    )
    return dataclasses.replace(verdict, finding=finding)


# vLLM's options as a fix names them (its LLM(...) keywords, its command-line flags)
VLLM_OPTIONS = {
    "max_model_len": lazy(r"max_model_len|--max-model-len"),
    "gpu_memory_utilization": lazy(r"gpu_memory_utilization|--gpu-memory-utilization"),
    "dtype": lazy(r"--dtype\b"),
}


def in_the_wrappers_words(verdict: Verdict, wrapper: Wrapper) -> Verdict:
    """A fix in vLLM's words for a program that runs vLLM under its own settings (blind set 17: LLaMA-Factory's
    vllm_maxlen, verl's actor_rollout_ref.rollout.dtype): its names lead, vLLM's follow as they are."""
    fix = verdict.finding.remediation
    if fix is None or verdict.kind != Kind.PROBLEM:
        return verdict
    named = [
        (ours, theirs) for ours, theirs in wrapper.options.items() if VLLM_OPTIONS[ours].search(fix.text)
    ]
    if not named:
        return verdict
    said = "; ".join(f"{theirs} for vLLM's {ours}" for ours, theirs in named)
    text = f"{wrapper.name} sets vLLM's options under its own names, {wrapper.how}: {said}. {fix.text}"
    finding = dataclasses.replace(verdict.finding, remediation=dataclasses.replace(fix, text=text))
    return dataclasses.replace(verdict, finding=finding)


# mmcv's release as a person or a pip command writes it: "mmcv=1.1.5", "mmcv-full==1.5.0", "mmcv_full 1.3.9"; 1.x
# with CUDA operators is the mmcv-full package, 2.x is mmcv
_MMCV_SAID = lazy(
    r"\bmmcv(?P<full>[-_]full)?[ \t]*(?:==?|:|[ \t])[ \t]*v?(?P<version>[12]\.\d{1,2}\.\d{1,2})\b",
    re.IGNORECASE,
)


def mmcv_said(text: str) -> tuple[str, str] | None:
    """The mmcv package and release the paste names (one of them: two different ones name neither)."""
    said = {
        ("mmcv-full" if found["full"] or found["version"].startswith("1.") else "mmcv", found["version"])
        for found in _MMCV_SAID.finditer(text, 0, MAX_CHARS)
    }
    return next(iter(said)) if len(said) == 1 else None


def with_mmcv(verdict: Verdict, name: str, version: str) -> Verdict:
    """An mmcv reinstall (a rebuild against torch, mim's prebuilt wheel) for the release the paste names, under
    its package name (mmcv 1.x is mmcv-full), in place of a placeholder or of mmcv 2.x."""
    fix = verdict.finding.remediation
    if fix is None:
        return verdict

    def named(command: Command) -> Command:
        argv = tuple(
            f"{name}=={version}"
            if arg in ("mmcv==VERSION", "mmcv-full==VERSION")
            or (arg == "mmcv>=2.0.0" and command.argv[:2] == ("mim", "install"))
            else arg
            for arg in command.argv
        )
        if argv == command.argv:
            return command
        note = (
            f"the {name} {version} wheel built for the installed torch and CUDA"
            if argv[:2] == ("mim", "install")
            else _without_version_note(command.note)  # the release is filled in: no VERSION to look up
        )
        return dataclasses.replace(command, argv=argv, note=note, runs_here=True)  # no placeholder is left

    commands = tuple(named(c) for c in fix.commands)
    if commands == fix.commands:
        return verdict
    finding = dataclasses.replace(verdict.finding, remediation=dataclasses.replace(fix, commands=commands))
    return dataclasses.replace(verdict, finding=finding)


def about_amd(facts: Facts, pasted: PastedText) -> bool:
    """An AMD GPU, a ROCm build of torch or a HIP error in the paste: what triage's AMD_CHECKS and the not-torch
    rule both go by (triage adds a collect_env report's ROCm line, which only it reads)."""
    packages = facts.torch_packages
    return (
        any(g.vendor == "amd" for g in facts.gpus)
        or any(h.signature.cls == "rocm" for h in pasted.hits)
        or (not isinstance(packages, Unavailable) and packages.hip is not None)
    )


def not_torch(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """A paste that never mentions torch is another program's error (a CUDA binary, JAX, llama.cpp): what
    settles it is nvidia-smi, not torch, and installing torch fixes nothing there."""
    check_id = verdict.finding.check_id
    if verdict.kind == Kind.UNKNOWN and (check_id.startswith("torch.") or check_id == "compat.data_age"):
        # what torch would say is no question for a program without it (nvidia-smi answers none of these)
        return dataclasses.replace(verdict, kind=Kind.NOT_APPLICABLE, missing=(), find_out=None)
    if verdict.find_out and "import torch" in verdict.find_out and not about_amd(facts, pasted):
        verdict = dataclasses.replace(verdict, find_out="nvidia-smi")  # an AMD machine has none: torch's own
    finding = verdict.finding
    driver_too_old = finding.check_id == "torch.driver_compat" and finding.status is Status.FAIL
    if not installs_torch(finding.remediation) and not driver_too_old:
        return verdict  # (a driver too old for another program's CUDA is said as such, whatever the fix was)
    if finding.check_id == "torch.driver_compat":
        driver = facts.driver
        cuda = (
            driver.cuda_version
            if not isinstance(driver, Unavailable) and isinstance(driver.cuda_version, str)
            else None
        )
        finding = dataclasses.replace(
            finding,
            summary="The NVIDIA driver is older than the CUDA the program was built with"
            + (f": it supports CUDA ≤ {cuda}." if cuda else "."),
            remediation=init_error_fix("", "driver_too_old", facts, in_container=in_container(pasted)),
        )
    elif finding.check_id == "amd.gfx_target":  # a ROCm library's gap: its ROCm release, not a torch
        # an AMD paste's check module, loaded for it only (start-up time of every other triage)
        from torch_gpu_doctor.checks.amd import release_for_target, sibling_override, target_without_build

        gfx = target_without_build(facts)
        # the program's own ROCm build lacks the target: a sibling's override reaches it without a rebuild, the
        # release AMD added it in where AMD supports it
        fix = (
            (sibling_override(facts) or release_for_target(facts)) if gfx is None else no_rocm_target_fix(gfx)
        )
        finding = dataclasses.replace(finding, remediation=fix or gfx_target_fix())
    else:
        fix = finding.remediation
        assert fix is not None
        capabilities = sorted(
            {g.compute_capability for g in facts.nvidia_gpus if isinstance(g.compute_capability, str)}
        )
        built_for = f" (compute capability {', '.join(capabilities)})" if capabilities else ""
        summary = finding.summary
        if summary.startswith("torch has no kernels"):  # the program's own CUDA code has none
            summary = (
                "The failing program (not torch) has no kernels" + summary[len("torch has no kernels") :]
            )
        finding = dataclasses.replace(
            finding,
            summary=summary,
            remediation=Remediation(
                text="The failing program is not torch, so a torch build changes nothing for it: use a release "
                f"of the program built for this GPU{built_for} and driver (or build it so), as its own "
                "documentation says.",
                target=fix.target,
            ),
        )
    return dataclasses.replace(verdict, finding=finding)


# PyTorch's own conda channel built pytorch for the same CUDA versions as its wheels (pytorch.github.io's
# previous-versions page: 2.5.1 with pytorch-cuda 11.8, 12.1 and 12.4, the cu118/cu121/cu124 wheels) and ended
# with 2.5: a pytorch-cuda pin the version has no build for leaves conda only the CPU build.
LAST_CONDA_CHANNEL_RELEASE = (2, 5)


def conda_pin_without_build(verdict: Verdict, pasted: PastedText) -> Verdict:
    """conda's CPU pytorch beside a pytorch-cuda pin that version was never built for (blind set 19: pytorch
    2.5.1 py3.12_cpu_0 beside pytorch-cuda 11.7, from DiT's environment.yml): the pin is why, and changing it to
    a CUDA the version has is the fix, through conda as it was installed."""
    finding = verdict.finding
    if finding.check_id != "torch.cpu_build" or finding.status is not Status.FAIL:
        return verdict
    conda = {
        lib.name: lib for listing in pasted.packages for lib in listing.packages if lib.manager == "conda"
    }
    torch, pin = conda.get("pytorch"), conda.get("pytorch-cuda")
    if torch is None or pin is None or "cpu" not in (torch.build or ""):
        return verdict
    release = load_torch_releases().release(torch.version)
    if release is None or tuple(int(p) for p in release.minor.split(".")) > LAST_CONDA_CHANNEL_RELEASE:
        return verdict
    built = sorted(
        {v.cuda for v in release.variants if v.cuda is not None},
        key=lambda c: tuple(int(p) for p in c.split(".")),
    )
    if not built or pin.version in built:
        return verdict
    best = built[-1]
    summary = (
        f"conda installed pytorch {torch.version}'s CPU build because the environment pins pytorch-cuda "
        f"{pin.version}, and PyTorch's conda channel built {torch.version} only for CUDA {', '.join(built)}."
    )
    fix = Remediation(
        text=f"Change the pin to a CUDA that pytorch {torch.version} has (pytorch-cuda={best}; "
        f"{', '.join(built[:-1])} as well), in the environment file too, so that a rebuild does not fall back to "
        "the CPU build again; the driver must support that CUDA (nvidia-smi's 'CUDA Version').",
        commands=(
            Command(
                (
                    "conda",
                    "install",
                    f"pytorch=={torch.version}",
                    f"pytorch-cuda={best}",
                    "-c",
                    "pytorch",
                    "-c",
                    "nvidia",
                ),
                note="in the environment torch is in (`conda activate` it first)",
            ),
        ),
        needs_network=True,
        target=Target.PYTHON_ENV,
    )
    return dataclasses.replace(
        verdict, finding=dataclasses.replace(finding, summary=summary, remediation=fix)
    )
