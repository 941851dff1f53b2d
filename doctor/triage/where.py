"""Where the failing program runs, as the paste shows it (a container started without the GPUs, a pod, a hosted
notebook, a Mac, WSL, a machine with no NVIDIA GPU, an environment named for the CPU), and how that changes a
verdict: the live checks judge the machine they run on; a paste's machine may be any of these."""

from __future__ import annotations

import dataclasses
import re
import shlex
from typing import TYPE_CHECKING

from torch_gpu_doctor.checks.driver_nvml import MISSED_REBOOT
from torch_gpu_doctor.checks.support.signatures import Hit, reported
from torch_gpu_doctor.compat.library_bugs import library_bugs
from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.compat.torch_releases import INDEX_URL
from torch_gpu_doctor.facts.container import ContainerRuntime
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.facts.wsl import WSL_GPU_MIN_BUILD
from torch_gpu_doctor.fixes.container_gpus import (
    GPU_TEST,
    default_runtime_for_builds,
    docker_desktop_on_linux_fix,
    docker_desktop_on_windows_fix,
    driver_libraries_in_image,
    k3s_runtime,
    kubernetes_runtime,
    kubernetes_shm,
    libcuda_link_in_container,
    pass_gpus,
    pod_without_driver_libraries,
    rocm_container_on_windows_fix,
    user_space_for_the_module,
)
from torch_gpu_doctor.fixes.cuda_init import init_error_fix
from torch_gpu_doctor.fixes.gpu_state import (
    engine_on_a_mac,
    hosted_notebook_gpu,
    hosted_notebook_without_gpu,
    no_cuda_on_a_mac,
    pod_devices_under_cpu_manager,
    pod_lost_devices,
)
from torch_gpu_doctor.fixes.kernel_modules import (
    mismatch_after_reboot,
    operator_beside_a_node_driver,
    reload_after_upgrade,
)
from torch_gpu_doctor.fixes.library_path import wheel_of
from torch_gpu_doctor.fixes.target import on_windows
from torch_gpu_doctor.fixes.torch_wheel import legacy_for_the_driver
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Evidence, Finding, Remediation, Status, Target, printable
from torch_gpu_doctor.triage.outcome import (
    FALSE_IN_A_CONTAINER,
    LINUX_ONLY,
    NVIDIA_ONLY,
    Kind,
    Verdict,
    error_reported,
    installs_torch,
)
from torch_gpu_doctor.triage.paste import PastedText
from torch_gpu_doctor.triage.paste_facts import WORDS
from torch_gpu_doctor.triage.prose import MAX_CHARS, line_number
from torch_gpu_doctor.unavailable import Unavailable

if TYPE_CHECKING:
    pass


def seen_from_the_container(verdict: Verdict, driver_known: bool = False) -> Verdict:
    """A finding of a driver missing or too old, read inside a container started without the GPUs: the container
    has no driver at all. `driver_known`: the paste shows the driver's version or its CUDA (torch's "found
    version 12040"), which is then the host's own and stays a question of its own."""
    finding = verdict.finding
    if finding.check_id == "torch.driver_compat" and finding.status is Status.FAIL and not driver_known:
        # the CUDA runtime's "driver version is insufficient" where no libcuda was mounted (Triton's banner "The
        # NVIDIA Driver was not detected" beside it, blind set 30): no driver, not an old one
        said = (
            "The CUDA runtime's 'driver version is insufficient' comes from the container having no NVIDIA driver "
            "at all (the most likely cause above), not from an old one."
        )
        return dataclasses.replace(
            verdict, finding=dataclasses.replace(finding, summary=said, remediation=None)
        )
    if finding.check_id not in ("driver.installed", "torch.cuda_init") or finding.status is not Status.FAIL:
        return verdict
    if "container" in finding.summary:  # it says so already ("nvidia-smi inside the container reaches ...")
        return verdict
    said = (
        "No NVIDIA driver answers inside the container: it was started without the GPUs (the most likely cause "
        "above), whatever the host has."
    )
    return dataclasses.replace(verdict, finding=dataclasses.replace(finding, summary=said, remediation=None))


# Checks whose failure on a paste assumes an NVIDIA GPU is there to use (a driver to load, a CUDA torch to install)
ASSUMES_NVIDIA = frozenset(
    {
        "driver.installed",
        "driver.nvml",
        "torch.cpu_build",
        "torch.driver_compat",
        "torch.cuda_init",
        "torch.arch_compat",
    }
)


NO_NVIDIA_GPU = "The machine has no NVIDIA GPU"


# An extension's report that its CUDA operators were not built: on a machine without an NVIDIA GPU that is
# as it should be, and a CUDA rebuild is not the fix
_OPS_WITHOUT_CUDA = frozenset(
    {
        "other_detectron2_ops_without_cuda",
        "other_mmcv_ops_without_cuda",
        "other_extension_not_compiled_with_gpu",
    }
)


def no_nvidia_gpu(
    verdicts: tuple[Verdict, ...], pasted: PastedText, facts: Facts, titles: dict[str, str]
) -> tuple[Verdict, ...]:
    """The person says the machine has no NVIDIA GPU (triage/prose.py: "I don't have any NVIDIA adapter", an
    integrated Intel GPU) and nothing in the paste names one or shows a driver answering: a driver to install or
    a CUDA torch would change nothing. What fails is the program asking
    for CUDA on a machine without it; that is the cause, in place of every verdict that assumed a GPU."""
    said = (
        pasted.prose.no_nvidia or pasted.prose.amd_gpu
    )  # or its only GPU named is an AMD one ("Radeon 780M")
    if (
        said is None
        or pasted.prose.gpu is not None
        or any(isinstance(g.name, str) for g in facts.nvidia_gpus)
    ):
        return verdicts
    amd = said is pasted.prose.amd_gpu
    driver, nvml = facts.driver, facts.nvml
    driver_said = not isinstance(driver, Unavailable) and (
        isinstance(driver.version, str) or isinstance(driver.cuda_version, str)
    )
    if pasted.smi is not None or not isinstance(nvml, Unavailable) or driver_said:
        return verdicts  # a driver answered there: whatever the words say, that machine has an NVIDIA GPU
    built_without_cuda = {h.line for h in pasted.hits if h.signature.id in _OPS_WITHOUT_CUDA}
    cuda_library_missing = any(  # one of NVIDIA's CUDA libraries (fixes/library_path.py's wheel families)
        wheel_of(e.values.get("library", "")) is not None for e in reported(facts, "missing_library")
    )
    assumed = [
        v
        for v in verdicts
        if v.kind == Kind.PROBLEM
        and (
            v.finding.check_id in ASSUMES_NVIDIA
            or (v.finding.check_id == "torch.companions" and built_without_cuda.intersection(v.lines))
            # a CUDA library a program cannot find (cuDNN for faster-whisper): it asked for CUDA there
            or (v.finding.check_id == "env.library_path" and cuda_library_missing)
        )
    ]
    if not assumed:
        return verdicts
    intel = "intel" in said.value.lower() or "iris" in said.value.lower()
    device = (  # detectron2's configs default MODEL.DEVICE to 'cuda' (its defaults.py)
        "its device option, e.g. `--device cpu`, detectron2's cfg.MODEL.DEVICE = 'cpu'"
        if "detectron2" in pasted.paste.text[:MAX_CHARS]
        else "its device option, e.g. `--device cpu`"
    )
    comfy = "comfy" in pasted.paste.text[:MAX_CHARS].lower()
    ways = f"on the CPU ({device}, or device='cpu' / no `.cuda()` in its code), " + (
        "on the Intel GPU with torch's XPU build (device 'xpu') where the program supports it, "
        if intel
        else (
            "on the AMD GPU through DirectML (the torch-directml package"
            + (", ComfyUI's `--directml`" if comfy else "")
            + ") where the program supports it, "
            if on_windows(facts)
            else "on the AMD GPU with torch's ROCm build where ROCm supports the card (gpu-doctor there names "
            "it), "
        )
        if amd
        else ""
    )
    xpu = (
        (
            Command(
                ("python", "-m", "pip", "install", "torch", "--index-url", f"{INDEX_URL}xpu"),
                note="torch's "
                "build for Intel GPUs: the program must ask for the device 'xpu' instead of 'cuda'",
            ),
        )
        if intel
        else ()
    )
    wants_cpu = pasted.prose.asks_for_cpu  # "How can I run this code on CPU": whatever GPU the machine has
    finding = printable(
        Finding(
            "gpu.present",
            Status.FAIL,
            "The program asks for CUDA, and the paste asks to run it on the CPU: the program, not torch, has to "
            "choose the CPU."
            if wants_cpu
            else f"{NO_NVIDIA_GPU} (the paste names only an AMD GPU, {said.value}), and the program asks for CUDA, "
            "which only an NVIDIA GPU runs."
            if amd
            else f"{NO_NVIDIA_GPU} (the paste says so), and the program asks for CUDA, which only an NVIDIA GPU "
            "runs.",
            details="Installing CUDA or a CUDA build of torch is not what is missing."
            if wants_cpu
            else "No driver and no CUDA build of torch can change that.",
            evidence=(Evidence("said", said.value, f"line {said.line} of the paste"),),
            remediation=Remediation(
                text=f"Run the program {ways}or on a machine with an NVIDIA GPU.",
                commands=xpu,
                target=Target.PYTHON_ENV,
            ),
        )
    )
    lines = tuple(sorted({said.line, *(n for v in assumed for n in v.lines)}))
    kept = tuple(v for v in verdicts if v not in assumed and v.finding.check_id != "gpu.present")
    return (Verdict(finding, titles.get("gpu.present", "gpu.present"), Kind.PROBLEM, (), None, lines), *kept)


_ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang"}
_CUDA_OR_GPU = lazy(r"\b(?:cuda|gpu|nvidia)\b", re.IGNORECASE)
_NVIDIA_NAMED = lazy(r"\b(?:nvidia|quadro|geforce|gtx|rtx|tesla|egpu)\b", re.IGNORECASE)


_NEEDS_AN_NVIDIA_DRIVER = frozenset({"no_driver", "driver_too_old", "forward_compat", "no_visible_gpu"})


def on_a_mac(
    verdicts: tuple[Verdict, ...],
    pasted: PastedText,
    facts: Facts,
    titles: dict[str, str],
    engine: str | None = None,
) -> tuple[Verdict, ...]:
    """The paste is from a Mac (its OS line, or the person says so: "在Mac M1上面运行") and names no NVIDIA GPU:
    PyTorch's macOS builds have no CUDA and Macs of the last years have no NVIDIA GPU, so a verdict that
    assumes one (a driver, a CUDA torch) or xFormers' CUDA kernels not loading is answered by that. torch.cpu_build
    keeps its own Mac answer (MPS)."""
    os_facts = facts.os
    if isinstance(os_facts, Unavailable) or os_facts.system != "Darwin":
        return verdicts
    if any(isinstance(g.name, str) for g in facts.nvidia_gpus):
        return verdicts  # an older Mac with an NVIDIA GPU: the verdicts about it stand
    # xFormers' CUDA kernels, bitsandbytes' CUDA library: CUDA-only parts no Mac can load (blind set 29:
    # bitsandbytes#853 from a venv under /Users)
    xformers = {h.line for h in pasted.hits if "xformers" in h.signature.id}
    bnb = {h.line for h in pasted.hits if "bitsandbytes" in h.signature.id}
    cuda_only = "xFormers" if xformers else "bitsandbytes" if bnb else None
    assumed = [
        v
        for v in verdicts
        if v.kind == Kind.PROBLEM
        and (
            (v.finding.check_id in ASSUMES_NVIDIA and v.finding.check_id != "torch.cpu_build")
            or v.finding.check_id == "env.cuda_visible_devices"  # accelerate's "requires a GPU (not 'mps')"
            or (v.finding.check_id == "torch.companions" and (xformers | bnb).intersection(v.lines))
        )
    ]
    failing = pasted.prose.fails
    # "I get Cuda Environment was not detected" and nothing else found (blind set 22 #13: an Intel Mac)
    about_cuda = (
        failing is not None
        and _NVIDIA_NAMED.search(pasted.paste.text, 0, MAX_CHARS) is None  # a Mac's NVIDIA eGPU (a Quadro)
        and _CUDA_OR_GPU.search(failing.value) is not None
        and not any(v.kind == Kind.PROBLEM for v in verdicts)
    )
    # an error that needs an NVIDIA driver ("Found no NVIDIA driver", from an image run by Docker on the Mac),
    # with nothing else found: the Mac has none to give (blind set 27: ai-dock/comfyui#6 on a Mac M1)
    asks_nvidia = not any(v.kind == Kind.PROBLEM for v in verdicts) and any(
        h.signature.cls in _NEEDS_AN_NVIDIA_DRIVER for h in pasted.hits
    )
    if not assumed and not about_cuda and not asks_nvidia and engine is None:
        return verdicts
    said = pasted.prose.macos
    # vLLM or SGLang on a Mac (blind set 23 #33: vLLM's report on an Intel Mac, `pip install vllm` building its
    # source): a GPU engine built for CUDA or ROCm on Linux, with no GPU build for macOS at all
    summary = (
        f"This is a Mac: {_ENGINE_NAMES.get(engine, engine)} serves models on NVIDIA or AMD GPUs under Linux and has "
        "no GPU build for macOS, so it cannot use this machine's GPU."
        if engine is not None
        else "This is a Mac: it has no NVIDIA GPU and PyTorch's macOS builds have no CUDA, so what asks for CUDA "
        + (f"({cuda_only}' CUDA code here) " if cuda_only else "")  # both names end in s
        + "cannot run on it."
    )
    finding = Finding(
        "gpu.present",
        Status.FAIL,
        summary,
        details="No driver, CUDA toolkit or torch build changes that. Apple's GPU runs torch through its MPS "
        "backend (device 'mps'), where the program supports it.",
        evidence=(Evidence("said", "a Mac", f"line {said} of the paste"),) if said is not None else (),
        remediation=engine_on_a_mac(_ENGINE_NAMES.get(engine, engine))
        if engine is not None
        else no_cuda_on_a_mac(cuda_only),
    )
    lines = tuple(
        sorted(
            {
                *([said] if said is not None else []),
                *([failing.line] if failing is not None and about_cuda else []),
                *(n for v in assumed for n in v.lines),
            }
        )
    )
    kept = tuple(v for v in verdicts if v not in assumed and v.finding.check_id != "gpu.present")
    return (Verdict(finding, titles.get("gpu.present", "gpu.present"), Kind.PROBLEM, (), None, lines), *kept)


# What a Mac without an NVIDIA GPU cannot have: an NVIDIA driver and its log, CUDA, a Jetson's L4T
# ... nor ROCm: an AMD GPU in a Mac is driven by macOS itself and reached through MPS (blind set 22 #13)
_NOT_ON_A_MAC = (
    NVIDIA_ONLY
    + tuple(LINUX_ONLY)
    + (
        "torch.nvidia_wheels",
        "torch.cuda_init",
        "amd.gfx_target",
        "amd.rocm_stack",
        "amd.torch_rocm",
    )
)


def none_on_a_mac(verdicts: tuple[Verdict, ...], facts: Facts) -> tuple[Verdict, ...]:
    """On a Mac that names no NVIDIA GPU, what the paste leaves open about an NVIDIA driver, CUDA or a Jetson
    is not "unknown, run nvidia-smi there": no such thing exists there to ask."""
    os_facts = facts.os
    if isinstance(os_facts, Unavailable) or os_facts.system != "Darwin":
        return verdicts
    if any(isinstance(g.name, str) for g in facts.nvidia_gpus):
        return verdicts
    return tuple(
        dataclasses.replace(v, kind=Kind.NOT_APPLICABLE, missing=(), find_out=None)
        if v.kind == Kind.UNKNOWN and v.finding.check_id in _NOT_ON_A_MAC
        else v
        for v in verdicts
    )


# A shell prompt with an activated environment: "(vllm-cpu) root@gpu-3090:~/oss#", "(cpu-env) PS C:\\work>"
_ENV_PROMPT = lazy(
    r"^[ \t>`]*\((?P<env>[\w.-]{1,60})\)[ \t]+(?:\S+@\S+|PS[ \t]|[A-Za-z]:\\|~|/)", re.MULTILINE
)


_CPU_WORD = lazy(r"(?:^|[-_.])cpu(?:$|[-_.])", re.IGNORECASE)


GPU_ENV = "gpu-env"


def cpu_environment(verdict: Verdict, pasted: PastedText, facts: Facts) -> Verdict:
    """A CPU-only build in an environment named for the CPU ("(vllm-cpu) root@gpu-3090"): the CPU build is what
    that environment is for, and replacing torch in it would break what it serves (blind set 11's e20). The GPU
    gets an environment of its own."""
    finding = verdict.finding
    if (
        finding.check_id != "torch.cpu_build"
        or finding.status is not Status.FAIL
        or finding.remediation is None
    ):
        return verdict
    env = next(
        (
            m["env"]
            for m in _ENV_PROMPT.finditer(pasted.paste.text, 0, MAX_CHARS)
            if _CPU_WORD.search(m["env"])
        ),
        None,
    )
    if env is None:
        return verdict
    fix = finding.remediation
    old_python = next((c.argv[0] for c in fix.commands if c.argv[1:3] == ("-m", "pip")), None)
    windows = on_windows(facts)
    new_python = f"{GPU_ENV}\\Scripts\\python.exe" if windows else f"{GPU_ENV}/bin/python"
    commands = tuple(
        dataclasses.replace(c, argv=tuple(new_python if a == old_python else a for a in c.argv))
        for c in fix.commands
    )
    fix = dataclasses.replace(
        fix,
        text=f"The environment ({env}) is named for the CPU, and its CPU build is what it is for: replacing torch "
        f"there would break what it serves. For the GPU, make an environment of its own and install the CUDA "
        f"build there. {fix.text}",
        commands=(
            Command(("python", "-m", "venv", GPU_ENV), note=f"a new environment; {env} keeps its CPU build"),
            *commands,
        ),
    )
    summary = f"{finding.summary.rstrip('.')}, in an environment named for the CPU ({env})."
    return dataclasses.replace(
        verdict, finding=dataclasses.replace(finding, summary=summary, remediation=fix)
    )


ROCM_ON_WSL = (
    "https://rocm.docs.amd.com/projects/radeon-ryzen/en/latest/docs/install/installrad/wsl/howto_wsl.html"
)


def rocm_on_wsl(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """A ROCm error ("No HIP GPUs are available") under WSL2: WSL has no /dev/kfd, its GPU comes through /dev/dxg,
    so a native ROCm install and the stock ROCm wheel's own HSA runtime cannot see it, and render groups, device
    passthrough or HSA_OVERRIDE_GFX_VERSION change nothing (blind set 11's e18). AMD's WSL setup is the fix."""
    finding = verdict.finding
    wsl = not isinstance(facts.os, Unavailable) and facts.os.is_wsl
    if not wsl or finding.status is not Status.FAIL or not finding.check_id.startswith("amd."):
        return verdict
    if not any(h.signature.cls == "rocm" and h.signature.check == finding.check_id for h in pasted.hits):
        return verdict
    fix = Remediation(
        text="ROCm under WSL2 works only through AMD's WSL support: a current AMD Adrenalin driver on Windows, then "
        f"AMD's ROCm-for-WSL setup inside the distribution and the PyTorch it names ({ROCM_ON_WSL}). WSL has no "
        "/dev/kfd: the render and video groups, passing /dev/kfd, and HSA_OVERRIDE_GFX_VERSION do not apply here, "
        "and the stock ROCm wheel's bundled HSA runtime does not see a WSL GPU.",
        commands=(
            Command(("ls", "-l", "/dev/dxg", "/dev/kfd"), note="WSL2: /dev/dxg is there, /dev/kfd is not"),
        ),
        needs_network=True,
        target=Target.SYSTEM,
    )
    summary = (
        "ROCm finds no AMD GPU under WSL2: the GPU reaches WSL through /dev/dxg, which only AMD's WSL setup uses; "
        "a native ROCm install and the stock ROCm wheel do not."
    )
    details = (
        "The paste runs under WSL2 (its kernel or words say so). There the render groups, /dev/kfd and the gfx "
        "override that a native Linux install needs are beside the point: ROCm reaches the GPU only through "
        "AMD's WSL runtime."
    )
    finding = dataclasses.replace(finding, summary=summary, details=details, remediation=fix)
    return dataclasses.replace(verdict, finding=finding)


# the words of a container run: its driver is the host's (a shell prompt is container_shell_line's); no \b,
# which a CJK letter beside the word defeats ("进入docker内部": inside docker)
_CONTAINER_WORDS = lazy(
    r"(?<![A-Za-z])(?:docker(?:file)?|podman|nvidia-container-cli|kubernetes|kubectl|k8s|containers?)(?![A-Za-z])"
    r"|\bNVIDIA_(?:DISABLE_)?REQUIRE(?:_CUDA)?\b|容器",
    re.IGNORECASE,
)


# a container started with the GPUs: `--gpus`, the nvidia runtime, a device request or a Kubernetes limit
GPUS_PASSED = lazy(
    r"--gpus\b|--runtime[= ]nvidia\b|--device[= ]nvidia\.com/gpu|nvidia\.com/gpu\b|capabilities:\s*\[\s*gpu"
)


KUBERNETES = lazy(r"\b(?:kubernetes|kubeflow|k8s|kubectl)\b", re.IGNORECASE)


# A hosted notebook: Colab's /content folder in a traceback or its module, Kaggle's /kaggle folders
# (the machine's own paths or modules, never the word "Colab": "runs fine on Colab, but on our own server")
# Colab's /content, Kaggle's /kaggle, Paperspace Gradient's /notebooks (blind set 27: ComfyUI#1865)
HOSTED_NOTEBOOK = lazy(
    r"File \"/content/|\bgoogle\.colab\b|File \"/kaggle/|/kaggle/working\b|File \"/notebooks/|\bPaperspace\b"
)


GPU_FAULTS = frozenset({"driver.xid_errors", "gpu.memory_errors"})


def on_a_hosted_notebook(verdict: Verdict) -> Verdict:
    """A GPU fault on Colab, Kaggle or Paperspace (blind set 15: reset steps for an uncorrectable ECC error on
    Colab): a new runtime is the only fix there. No NVIDIA driver there is no GPU given to the runtime: its
    machine type, not modprobe or a driver install, which the notebook cannot do (set 27: Paperspace)."""
    finding = verdict.finding
    if finding.status is not Status.FAIL:
        return verdict
    if finding.check_id == "driver.installed":
        finding = dataclasses.replace(
            finding,
            summary="No NVIDIA driver answers in this hosted notebook: the runtime has no GPU attached.",
            details="A hosted notebook's runtime sees an NVIDIA GPU, and its driver, only where its machine type "
            "has one; a CPU runtime has neither, and none can be installed from inside.",
            remediation=hosted_notebook_without_gpu(),
        )
        return dataclasses.replace(verdict, finding=finding, find_out=None)
    if finding.check_id not in GPU_FAULTS:
        return verdict
    fix = hosted_notebook_gpu()
    return dataclasses.replace(verdict, finding=dataclasses.replace(finding, remediation=fix), find_out=None)


_INSIDE_WORDS = lazy(
    r"\b(?:inside|in|within)[ \t]+(?:the|a|my|our)[ \t]+(?:docker[ \t]+|lxc[ \t]+)?container\b|在容器[内里中]"
    # "the container is raising a mismatch error" (blind set 30): the mismatch its own programs print, said in one
    # sentence ("my docker container is throwing CUDA errors, so I checked the GPU" is no such account)
    r"|\b(?:the|my|our)[ \t]+(?:docker[ \t]+|lxc[ \t]+)?container[ \t]+(?:is[ \t]+|was[ \t]+)?"
    r"(?:rais|throw|giv|show|report)(?:es|s|ing)\b[^.\n:]{0,30}\bmismatch",
    re.I,
)
NVRM_MODULE_VERSION = "driver_library_nvrm_loaded_module_version"
# a system container of Proxmox or LXD/LXC, whose NVIDIA user-space is installed by hand inside it
_LXC = lazy(r"\bLXC\b|\bpct[ \t]+(?:enter|exec)\b|\bProxmox\b", re.IGNORECASE)


# The paste puts the failure on the host, or shows the container started with its GPUs and a variable that
# hides them: "on the host: $ nvidia-smi", `--gpus all`, CUDA_VISIBLE_DEVICES set
_HOST_SIDE = lazy(r"\bon[ \t]+the[ \t]+host\b|--gpus\b|CUDA_VISIBLE_DEVICES\s*=", re.IGNORECASE)


def ran_inside_a_container(pasted: PastedText) -> bool:
    """The failing commands ran in a container's own shell (its prompt, or words that put them inside one);
    never nvidia-container-cli's relay of the host's NVML error, which is the host's own."""
    text = pasted.paste.text[:MAX_CHARS]
    if "nvidia-container-cli" in text:
        return False  # the toolkit relays the host's NVML
    if pasted.container_line is not None:  # its own prompt shows it
        return True
    # words only: unless the person shows it on the host, or a container started with its GPUs
    return _INSIDE_WORDS.search(text) is not None and _HOST_SIDE.search(text) is None


def lxc_module(pasted: PastedText) -> str | None:
    """In an LXC container (Proxmox, LXD) the host kernel module's version, as NVRM's mismatch line names it
    ("this kernel module has the version 570.148.06"), or "" where the paste says LXC without it; None
    elsewhere."""
    if _LXC.search(pasted.paste.text, 0, MAX_CHARS) is None:
        return None
    # NVRM's own words for the module; never NVML's "NVML library version", the container's own libraries
    return next(
        (h.values["driver_version"] for h in pasted.hits if h.signature.id == NVRM_MODULE_VERSION), ""
    )


def mismatch_in_a_container(verdict: Verdict, lxc: str | None = None) -> Verdict:
    """NVML's driver/library mismatch where the paste shows or says a container: the image's own driver
    libraries against the host's module (blind sets 13 and 14), not a host that missed a reboot. `lxc`: the
    host module's version in an LXC container (see lxc_module), whose user-space was installed by hand."""
    finding = verdict.finding
    if finding.remediation not in (reload_after_upgrade(), mismatch_after_reboot()):
        return verdict
    details = finding.details.removesuffix(MISSED_REBOOT)  # the host's upgrade story does not apply
    finding = dataclasses.replace(
        finding,
        summary="Driver/library version mismatch inside a container: its NVIDIA libraries are another version "
        "than the host's kernel module.",
        remediation=driver_libraries_in_image() if lxc is None else user_space_for_the_module(lxc),
        details=details,
    )
    return dataclasses.replace(verdict, finding=finding, find_out=None)


# a node whose Docker already names nvidia its default runtime: `"default-runtime": "nvidia"` in daemon.json
_DOCKER_DEFAULT_NVIDIA = lazy(r"\"default-runtime\"\s*:\s*\"nvidia\"")
# Kubernetes' version as said or printed: "kubernetes 1.18.2", "k8s v1.20", kubectl version's "Server Version: v1.21.3"
_KUBERNETES_VERSION = lazy(
    r"\b(?:kubernetes|k8s|kubeadm|kubelet|server[ \t]+version:?)[ \t]+(?:version[ \t]+)?v?1\.(?P<minor>\d{1,2})(?:\.\d+)?\b",
    re.IGNORECASE,
)
_K3S = lazy(r"\b(?:k3s|rke2)\b", re.IGNORECASE)  # Rancher's distributions, with a containerd of their own
_CONTAINERD_SAID = lazy(r"\b(?:containerd|cri-o|crio)\b", re.IGNORECASE)


def _through_docker(text: str) -> bool:
    """A node that runs its pods through Docker: a Kubernetes before 1.24 (dockershim), with no other runtime said."""
    said = _KUBERNETES_VERSION.search(text, 0, MAX_CHARS)
    return (
        said is not None and int(said["minor"]) < 24 and _CONTAINERD_SAID.search(text, 0, MAX_CHARS) is None
    )


NVML_LIBRARY_NOT_FOUND = "nvml_library_not_found"


# the NVIDIA GPU Operator, which installs the driver on the node from a container: its name, its pods, its values
_GPU_OPERATOR = lazy(
    r"\bgpu[- ]operator\b|\bnvidia-operator-validator\b|\bnvidia-driver-daemonset\b|\bClusterPolicy\b",
    re.IGNORECASE,
)
# nvidia-smi run on the Kubernetes node itself: a debug pod's host, or a shell there
_ON_THE_NODE = lazy(r"\bkubectl[ \t]+debug[ \t]+node/|\bchroot[ \t]+/host\b")


# the kubelet's static CPU manager: `--cpu-manager-policy=static`, or `cpuManagerPolicy: static`
_STATIC_CPU_MANAGER = lazy(r"cpu-?manager-?policy\W{1,3}static\b", re.IGNORECASE)


def in_a_pod(verdict: Verdict, facts: Facts, text: str = "", pasted_hits: tuple[Hit, ...] = ()) -> Verdict:
    """NCCL's /dev/shm too small, in a Kubernetes pod: the emptyDir, not `docker run --shm-size`; a pod without
    its GPUs: the runtime Kubernetes uses, not docker's (blind set 19: k8s-device-plugin#250)."""
    finding = verdict.finding
    if (
        finding.check_id == "platform.container_gpus"
        and finding.status is Status.FAIL
        and error_reported(facts, "container_runtime")
    ):
        return dataclasses.replace(  # docker's own check would prove nothing of the pods: the node's advertising does
            verdict,
            finding=dataclasses.replace(
                finding,
                remediation=k3s_runtime()
                if _K3S.search(text) is not None  # its own containerd, never the system's
                else kubernetes_runtime(
                    _DOCKER_DEFAULT_NVIDIA.search(text) is not None, through_docker=_through_docker(text)
                ),
            ),
            find_out="kubectl describe node NODE   # Capacity and Allocatable list nvidia.com/gpu",
        )
    docker_test = (
        finding.remediation is not None
        and bool(finding.remediation.commands)
        and finding.remediation.commands[0].argv == GPU_TEST
    )  # a plain Docker container's GPUs prove nothing of a pod's (blind set 32: vLLM pods found no platform)
    if docker_test or (
        finding.remediation is not None
        and any(h.signature.id == NVML_LIBRARY_NOT_FOUND and h.line in verdict.lines for h in pasted_hits)
    ):  # NVML's library missing in a pod: the pod's runtime and GPU request, not the node's driver install
        return dataclasses.replace(
            verdict,
            finding=dataclasses.replace(finding, remediation=pod_without_driver_libraries()),
            find_out=None,
        )
    if (
        finding.check_id == "driver.nvml"
        and any(h.signature.cls == "driver_library_mismatch" for h in pasted_hits)
        and _GPU_OPERATOR.search(text) is not None
    ):  # the Operator's driver container beside a driver of the node's own: one of them goes, a reboot is no fix
        mismatch = next(h for h in pasted_hits if h.signature.cls == "driver_library_mismatch")
        return dataclasses.replace(
            verdict,
            finding=dataclasses.replace(
                finding,
                summary="Driver/library version mismatch under the NVIDIA GPU Operator (line "
                f"{mismatch.line} of the paste): the driver its container loaded and a driver installed on the "
                "node itself are different versions.",
                details="",
                remediation=operator_beside_a_node_driver(),
            ),
        )
    if (
        finding.check_id == "driver.nvml"
        and any(h.signature.id == "nvml_unknown_error" and h.line in verdict.lines for h in pasted_hits)
        and _ON_THE_NODE.search(text) is None  # the node's own nvidia-smi failing is no pod's cgroup
    ):  # a pod's GPUs lost to its node's cgroup rewrites: the lasting fix on the node, then the pods recreated
        static = _STATIC_CPU_MANAGER.search(text) is not None
        fix = pod_devices_under_cpu_manager() if static else pod_lost_devices()
        return dataclasses.replace(verdict, finding=dataclasses.replace(finding, remediation=fix))
    if finding.check_id != "nccl.communication" or finding.status is not Status.FAIL:
        return verdict
    if not error_reported(facts, "nccl_shm"):
        return verdict
    return dataclasses.replace(verdict, finding=dataclasses.replace(finding, remediation=kubernetes_shm()))


def in_container_fix(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """torch.cuda_init's fix for error 803 or 804 as it reads inside a container; for a False with no error,
    `nvidia-smi` in the container is what settles it (no GPU there: the container; one there: torch)."""
    finding = verdict.finding
    if finding.check_id == "torch.cuda_init" and finding.summary.startswith(FALSE_IN_A_CONTAINER):
        return dataclasses.replace(verdict, find_out="nvidia-smi   # inside the container")
    no_driver = next((h for h in pasted.hits if h.signature.cls in ("no_driver", "no_visible_gpu")), None)
    if (
        finding.check_id in ("torch.cuda_init", "driver.installed")
        and finding.status is Status.FAIL
        and no_driver
        and ran_inside_a_container(
            pasted
        )  # a container's own prompt or "inside the container", not a mention
    ):
        # "Found no NVIDIA driver" or no GPU in a container's shell: its libcuda comes from the host through the
        # NVIDIA runtime, so the container was started without the GPUs (the host's own nvidia-smi may well work)
        passed = pass_gpus(
            ContainerRuntime.DOCKER
        )  # a shell prompt says a container, as the other fixes here
        # the summary says what the fix does (gpu-jupyter#22: the headline blamed the driver's age)
        summary = (  # driver.installed's own words on a container come later (told.module_not_loaded)
            f"{FALSE_IN_A_CONTAINER} where no NVIDIA driver answers (line {no_driver.line} of the paste): it was "
            "most likely started without the GPUs."
            if finding.check_id == "torch.cuda_init" and "container" not in finding.summary
            else finding.summary
        )
        return dataclasses.replace(
            verdict, finding=dataclasses.replace(finding, summary=summary, remediation=passed)
        )
    hit = next((h for h in pasted.hits if "803" in h.signature.id or "804" in h.signature.id), None)
    if finding.check_id != "torch.cuda_init" or finding.status is not Status.FAIL or hit is None:
        return verdict
    fix = init_error_fix(hit.signature.id, "forward_compat", facts, in_container=True)
    details = (
        "Inside a container the libcuda loaded is the host driver's (mounted by the NVIDIA Container Toolkit) "
        "unless the image brings its own: CUDA's forward-compatibility libcuda of a newer CUDA than the host "
        "driver runs is the usual one."
    )
    unchecked = _REQUIREMENT_OFF.search(pasted.paste.text, 0, MAX_CHARS)
    if unchecked is not None and fix is not None:  # the toolkit's start-up check would have said so
        line = line_number(pasted.paste.text, unchecked)
        said = (
            f"NVIDIA_DISABLE_REQUIRE (line {line} of the paste) turned off the container toolkit's check that the "
            "host driver runs the image's CUDA, so the container started and CUDA failed inside it: remove it to "
            "see that requirement at start-up, and run it on a host (a node) whose driver runs the image's CUDA."
        )
        fix = dataclasses.replace(fix, text=f"{said} {fix.text}")
    finding = dataclasses.replace(finding, details=details, remediation=fix)
    return dataclasses.replace(verdict, finding=finding)


# the container toolkit's CUDA requirement switched off: `ENV NVIDIA_DISABLE_REQUIRE=true`, `-e NVIDIA_DISABLE_REQUIRE=1`
_REQUIREMENT_OFF = lazy(r"\bNVIDIA_DISABLE_REQUIRE[ \t]*[=:][ \t]*[\"']?(?:true|1|yes)\b", re.IGNORECASE)


# A `docker run` typed on one line, after whatever prompt precedes it (`D:\FacePoke>`, `$ `, `user@host:~$ `)
_THEIR_RUN = lazy(
    r"(?:^(?:[^\n]*?[>$#%][ \t]*|[ \t]*)|(?<=`))(?P<sudo>sudo[ \t]+)?(?P<tool>docker|podman)[ \t]+run[ \t]+"
    r"(?P<rest>[^\n`^\\|;&<>$%]+?)(?:[ \t]*$|(?=`))"
)  # a prompt's line or markdown's `inline code`; never one with a variable or a substitution ($(pwd), %CD%):
# quoted again, it would no longer expand


def their_docker_run(verdict: Verdict, pasted: PastedText, line: int) -> Verdict:
    """The fix's `docker run --gpus all IMAGE` with the person's own command in place of IMAGE (blind set 16:
    `docker run -p 8080:8080 facepoke` lost its port): their options and image, the GPUs added. A command
    continued on other lines, or one the shell's rules cannot split, keeps the placeholder."""
    fix = verdict.finding.remediation
    if fix is None or not any(c.argv[-1:] == ("IMAGE",) and c.argv[1:2] == ("run",) for c in fix.commands):
        return verdict
    found = _THEIR_RUN.search(pasted.paste.text.split("\n")[line - 1])
    if found is None:
        return verdict
    try:
        theirs = tuple(shlex.split(found["rest"]))
    except ValueError:
        return verdict
    if not theirs or theirs[-1].startswith("-"):
        return verdict

    def filled(command: Command) -> Command:
        if command.argv[-1:] != ("IMAGE",) or command.argv[0] != found["tool"]:
            return command
        sudo = ("sudo",) if found["sudo"] else ()
        return dataclasses.replace(
            command,
            argv=(*sudo, *command.argv[:-1], *theirs),
            note="your `docker run`, with the GPUs passed in",
        )

    commands = tuple(filled(c) for c in fix.commands)
    text = fix.text.replace(" (IMAGE is your image)", "")
    finding = dataclasses.replace(
        verdict.finding, remediation=dataclasses.replace(fix, text=text, commands=commands)
    )
    return dataclasses.replace(verdict, finding=finding)


def toolkit_explains_the_driver(pasted: PastedText) -> bool:
    """The container toolkit's own error is in the paste: it says why no driver answers inside the container
    (an image's own nvidia-smi, a device plugin without libnvidia-ml). Unless the driver's fault it relays is
    the host's ("nvidia-container-cli: ... nvml error: driver/library version mismatch"): then the host's
    driver stays the cause, and a reboot its fix."""
    if not any(h.signature.check == "platform.container_gpus" for h in pasted.hits):
        return False
    return not any(h.signature.check == "driver.nvml" and "mismatch" in h.signature.id for h in pasted.hits)


def in_container(pasted: PastedText) -> bool:
    return container_said(pasted) is not None


# a container engine's command in the paste (never a word such as "no docker")
_CONTAINER_COMMAND = lazy(
    r"\b(?:docker|podman|nerdctl)[ \t]+(?:container[ \t]+)?(?:run|compose|exec|start)\b|\bdocker-compose\b|\bkubectl\b",
    re.IGNORECASE,
)


def host_first_without_a_container(verdict: Verdict, pasted: PastedText) -> Verdict:
    """A fix that tests a container first (`docker run --rm --gpus all ubuntu nvidia-smi`, vLLM's missing
    platform) where the paste shows no container and names none ("pip install vllm on bare metal"): the host's
    own command that follows it comes first."""
    fix = verdict.finding.remediation
    test = fix.commands[0].argv if fix is not None and fix.commands else ()
    if fix is None or len(fix.commands) < 2 or test[:2] != ("docker", "run") or test[-1] != "nvidia-smi":
        return verdict  # a container test, not the container's own start that a fix replaces
    # a container's prompt or an engine's command; words alone may deny one ("on bare metal, no docker")
    shown = pasted.container_line is not None or _CONTAINER_COMMAND.search(pasted.paste.text, 0, MAX_CHARS)
    if shown or _IN_A_CONTAINER_SAID.search(pasted.paste.text, 0, MAX_CHARS) is not None:
        return verdict
    remediation = dataclasses.replace(fix, commands=fix.commands[1:])
    return dataclasses.replace(verdict, finding=dataclasses.replace(verdict.finding, remediation=remediation))


def gpu_listed_by_a_tool(facts: Facts) -> bool:
    """A GPU named by a tool's output (nvidia-smi, collect_env), not only in the person's words: inside a
    container, proof that the GPUs were passed in."""
    return any(isinstance(g.name, str) and g.name_source != WORDS for g in facts.gpus)


def container_said(pasted: PastedText) -> int | None:
    """The first line that shows (a container's prompt) or says (its words) that this ran in a container."""
    if pasted.container_line is not None:
        return pasted.container_line
    said = _CONTAINER_WORDS.search(pasted.paste.text, 0, MAX_CHARS)
    return None if said is None else line_number(pasted.paste.text, said)


def in_an_l4t_image(verdict: Verdict, pasted: PastedText) -> Verdict:
    """platform.jetson's "torch was built for another JetPack" where torch fails inside a container: the image's
    torch matches the image, and before L4T R34 (JetPack 5) the container takes CUDA from the host through
    NVIDIA's runtime, so it needs `--runtime nvidia` and the host's own L4T release (blind set 18: libnvToolsExt
    missing in l4t-pytorch:r32.4.2 on a TX2; set 19: libcurand.so.10 in ros:noetic-pytorch-l4t-r32.5.0, and in
    jetson-inference after the host updated itself while torch still worked on the host)."""
    image = pasted.prose.l4t_image
    finding = verdict.finding
    if finding.check_id != "platform.jetson" or finding.status is not Status.FAIL:
        return verdict
    if image is None and _own_cuda_release(pasted):  # JetPack 5 and later: the image brings its own CUDA
        return verdict
    if image is None and not (
        pasted.container_line or _IN_A_CONTAINER_SAID.search(pasted.paste.text, 0, MAX_CHARS)
    ):
        return verdict
    from torch_gpu_doctor.compat.jetson import load_jetson  # the Jetson data loads for a Jetson only

    release = load_jetson().release(image.value) if image is not None else None
    jetpack = f" (JetPack {release.jetpack}, CUDA {release.cuda})" if release is not None else ""
    mounted = image is None or int(image.value.split(".")[0]) < L4T_OWN_CUDA
    # their `docker run` has the runtime already (jetson-containers#9, #126): only the host's release is left
    with_runtime = _NVIDIA_RUNTIME.search(pasted.paste.text, 0, MAX_CHARS) is not None
    runtime = Command(
        ("docker", "run", "--runtime", "nvidia", "IMAGE"),
        note='IMAGE: the image and its options as you run them; or "default-runtime": "nvidia" in '
        "/etc/docker/daemon.json",
        runs_here=False,
    )
    host = Command(
        ("cat", "/etc/nv_tegra_release"), note="on the host: its R and REVISION name the image tag"
    )
    if image is None:
        summary = (
            "torch fails inside a container on a Jetson: before JetPack 5 a container takes CUDA from the host "
            "through NVIDIA's runtime, so without `--runtime nvidia`, or with an image for another L4T release "
            "than the host's (after the host updated), the libraries torch needs are missing."
        )
        text = (
            'Start the container with NVIDIA\'s runtime (`--runtime nvidia`, or "default-runtime": "nvidia" '
            "in the host's /etc/docker/daemon.json), and use the image tag of the host's own L4T release "
            "(/etc/nv_tegra_release on the host; the project's run script picks it)."
        )
        commands: tuple[Command, ...] = (host,) if with_runtime else (runtime, host)
    else:
        summary = (
            f"The container image is built for L4T R{image.value}{jetpack} (line {image.line} of the paste)"
            + (
                ", and before L4T R34 an image takes CUDA from the host through NVIDIA's runtime: "
                + (
                    "the host runs another L4T release"
                    if with_runtime
                    else "it was started without `--runtime nvidia`, or the host runs another L4T release"
                )
                + ", so the libraries its torch needs are missing."
                if mounted
                else ", and its torch is built for that release: the host's L4T release must match it."
            )
        )
        text = (
            (
                'Start it with `--runtime nvidia` (or "default-runtime": "nvidia" in /etc/docker/daemon.json). '
                if mounted and not with_runtime
                else ""
            )
            + "Run the image tag of the host's own L4T release (the same image, tag rXX.Y.Z of "
            f"/etc/nv_tegra_release on the host), or upgrade the host to L4T R{image.value}{jetpack} to keep "
            "this image."
        )
        commands = (runtime, host) if mounted and not with_runtime else (host,)
    finding = dataclasses.replace(
        finding,
        summary=summary,
        details="",  # "install the build for this board's JetPack": not inside an image whose torch is its own
        remediation=Remediation(text=text, commands=commands, target=Target.SYSTEM),
    )
    lines = {*verdict.lines, image.line} if image is not None else set(verdict.lines)
    # the library torch's import could not find is what the container lacks: this cause stands for that line
    lines |= {h.line for h in pasted.hits if h.signature.cls == "missing_library"}
    return dataclasses.replace(verdict, finding=finding, lines=tuple(sorted(lines)), find_out=None)


_NVIDIA_RUNTIME = lazy(r"--runtime[ \t=]+nvidia\b|\"default-runtime\"[ \t]*:[ \t]*\"nvidia\"")
# an image being built: docker's own report of a failed RUN step ("The command '/bin/sh -c ...' returned a
# non-zero code"), BuildKit's, or the build command or script named
_DOCKER_BUILD = lazy(
    r"The command '/bin/sh -c |\bdocker[ \t]+build\b|\bdocker_build\w*\.sh\b|\bRUN [^\n]*\bexit code:|"
    r"failed to solve: process \"/bin/sh -c"
)


def building_on_a_jetson(verdict: Verdict, pasted: PastedText) -> Verdict:
    """A CUDA library missing while an image builds on a Jetson before JetPack 5: there the host's CUDA reaches a
    container only through NVIDIA's runtime, and `docker build` uses the default runtime, so the build's steps see
    no CUDA until "default-runtime": "nvidia" is set in /etc/docker/daemon.json (blind set 23: jetson-containers#121,
    libcurand.so.10 while building torchvision on a TX2 with JetPack 4.6)."""
    finding = verdict.finding
    missing = {h.line for h in pasted.hits if h.signature.cls == "missing_library"}
    if finding.status is not Status.FAIL or not missing.intersection(verdict.lines):
        return verdict
    text = pasted.paste.text[:MAX_CHARS]
    if pasted.prose.jetson is None or _own_cuda_release(pasted) or _DOCKER_BUILD.search(text) is None:
        return verdict
    if _NVIDIA_RUNTIME.search(text) is not None:
        return verdict  # the runtime is set already: something else is missing
    finding = dataclasses.replace(
        finding,
        summary="The image is built without the NVIDIA runtime: before JetPack 5 a Jetson's containers get CUDA from "
        "the host only through it, and `docker build` uses the default runtime, so the build sees no CUDA libraries.",
        details="",
        remediation=default_runtime_for_builds(),
    )
    return dataclasses.replace(verdict, finding=finding, find_out=None)


def _own_cuda_release(pasted: PastedText) -> bool:
    """The words name a JetPack 5+ or L4T R34+ host, where containers bring their own CUDA."""
    l4t, jetpack = pasted.prose.l4t, pasted.prose.jetpack
    jetpack_major = jetpack.value.split(".")[0] if jetpack is not None else ""
    return (l4t is not None and int(l4t.value.split(".")[0]) >= L4T_OWN_CUDA) or (
        jetpack_major.isdigit() and int(jetpack_major) >= JETPACK_OWN_CUDA
    )


JETPACK_OWN_CUDA = 5
L4T_OWN_CUDA = 34  # from L4T R34 (JetPack 5) a container brings its own CUDA instead of the host's
# "in the jetson-inference container", "inside docker": the person says torch fails in a container
_IN_A_CONTAINER_SAID = lazy(
    # never "not in docker", "from docker hub"
    r"(?<!not )(?<!never )(?<!n't )\b(?:in|inside)[ \t]+(?:the[ \t]+|a[ \t]+|my[ \t]+)?(?:[\w-]+[ \t]+)?"
    r"(?:container|docker)\b",
    re.IGNORECASE,
)


# The paste builds its own image: "installing using docker compose", a Dockerfile, `docker build`
_BUILDS_AN_IMAGE = lazy(r"\bdocker[ \t-]compose\b|\bDockerfile\b|\bdocker[ \t]+build\b", re.IGNORECASE)


def builds_an_image(pasted: PastedText) -> int | None:
    """The line that says the program runs from an image the person builds (compose, a Dockerfile), or None."""
    found = _BUILDS_AN_IMAGE.search(pasted.paste.text, 0, MAX_CHARS)
    return line_number(pasted.paste.text, found) if found is not None else None


ARCH_GAPS = frozenset({"torch.arch_compat", "amd.gfx_target"})
_NEWEST_TAGS = frozenset({"latest", "main", "nightly", "dev"})
_NOT_TORCH_IMAGES = ("nvidia/cuda", "/ubuntu", "/debian", "/python", "library/ubuntu")


def in_the_image(verdict: Verdict, line: int, built: bool = True, image: str | None = None) -> Verdict:
    """A fix that installs another torch, where the program runs from an image: a pip install inside a running
    container is gone when it is recreated, so the lasting fix is the image. `built`: the person builds it
    (compose, a Dockerfile; blind set 18: Kokoro-FastAPI's compose image with a torch that stops at sm_90 on an
    RTX 5060 Ti), else it is a project's published image they run (set 26: WhisperLive's GPU image, the same).
    A published `image` (repository:tag) with no kernels for the GPU: a newer release of that image first, since a
    current torch pip-installed into an old one fails on its older Python or breaks the compiled code it ships
    (sets 27 and 28: a vendor's sensorsim image on an RTX 5090D, rocm/pytorch's py3.7 image on gfx1030)."""
    finding = verdict.finding
    fix = finding.remediation
    if verdict.kind != Kind.PROBLEM or fix is None or not installs_torch(fix):
        return verdict
    if built:
        said = (
            f"The program runs from an image built with docker compose or a Dockerfile (line {line} of the paste): "
            "make this change in the image (the Dockerfile's pip install line, or the project's image or tag built "
            "for this GPU's CUDA where it publishes one) and rebuild it; a pip install inside the running "
            "container is lost when it is recreated. "
        )
        rebuild = Command(
            ("docker", "compose", "build", "--no-cache"),
            note="after the change, in the project's folder",
            runs_here=False,
        )
        commands = (*fix.commands, rebuild)
    else:
        said = (
            f"The program runs in a container (line {line} of the paste): run this install inside it to try it, "
            "but it is lost when the container is recreated; to keep it, build an image from the project's "
            "(a Dockerfile of `FROM` that image and a `RUN` line with this pip install), or use the project's "
            "image built for this GPU's CUDA where it publishes one. "
        )
        commands = fix.commands
        repository, _, tag = (image or "").rpartition(":")
        if (
            image is not None
            and finding.check_id in ARCH_GAPS
            and tag not in _NEWEST_TAGS
            and not repository.endswith(_NOT_TORCH_IMAGES)  # a CUDA or OS base image ships no torch
            and "." not in repository.rsplit("/", 1)[-1]  # "modules/attention/flash.py:45" is a file and line
        ):
            # a pinned release of the image: a newer one first (`:latest` is the newest already)
            said = (
                f"The torch that failed is the one the {image} image ships (line {line} of the paste): first run "
                f"a newer release of that image, built for this GPU's architecture; installing a current torch "
                "into an old image fails on its older Python or breaks the compiled code it ships. Only where "
                "no release of it fits, build an image `FROM` it with the install below. "
            )
            pull = Command(
                ("docker", "pull", f"{repository}:latest"),
                note="its newest release; the project's tags or release notes name the one built for this GPU",
                runs_here=False,
            )
            commands = (pull, *fix.commands)
    fix = dataclasses.replace(fix, text=said + fix.text, commands=commands)
    return dataclasses.replace(verdict, finding=dataclasses.replace(finding, remediation=fix))


# A container image by its reference, as `docker run` or a title names it: "vllm/vllm-openai:v0.15.1"
_IMAGE_REF = lazy(r"(?<![\w./-])(?:[\w.-]+/)+[\w.-]+:[\w][\w.-]*(?![\w/])")


def image_ref(pasted: PastedText) -> str | None:
    """The first container image the paste names by its reference (repository/name:tag)."""
    found = _IMAGE_REF.search(pasted.paste.text, 0, MAX_CHARS)
    return found[0] if found is not None else None


# NVIDIA's NGC framework images for discrete GPUs ("nvcr.io/nvidia/tritonserver:23.08-py3"): never an L4T image
# (l4t-pytorch, l4t-ml) nor a tag built for Jetson's integrated GPU ("-igpu", "jetson", an L4T release "r35.2.1")
_NGC_FRAMEWORK = lazy(r"^nvcr\.io/nvidia/(?!l4t)(?P<name>[\w.-]+):(?P<tag>\d{2}\.\d{2}[\w.-]*)$")


def dgpu_image_on_a_jetson(verdict: Verdict, pasted: PastedText, facts: Facts) -> Verdict:
    """platform.jetson's "torch is not NVIDIA's build for its JetPack" where the paste runs an NGC image built
    for discrete GPUs: the image, not a torch inside it, is the wrong build (blind set 30: tritonserver:23.08-py3
    on an AGX Xavier with L4T 35.2.1, "NVIDIA Tegra driver detected" and status 35, triton-server#6373)."""
    finding = verdict.finding
    if (
        facts.jetson_board is None
        or finding.check_id != "platform.jetson"
        or finding.status is not Status.FAIL
    ):
        return verdict
    image = image_ref(pasted)
    found = _NGC_FRAMEWORK.match(image) if image is not None else None
    if found is None or any(w in found["tag"].lower() for w in ("igpu", "jetson", "l4t")):
        return verdict
    summary = (
        f"{image} is NVIDIA's image for discrete GPUs (x86-64 and Arm servers); a Jetson's integrated GPU needs "
        "the image's Jetson build, for its own L4T release."
    )
    fix = Remediation(
        text=f"Run the Jetson build of {found['name']} instead: NGC publishes '-igpu' tags of its framework images "
        "for Jetson and IGX with JetPack 6, and NVIDIA's Jetson containers or release packages (for Triton, its "
        "JetPack release tarball) for older JetPack; their release notes name the JetPack each needs. Nothing "
        "installed inside the discrete-GPU image can reach this GPU.",
        target=Target.SYSTEM,
    )
    details = (
        "Its CUDA and libraries are built for discrete GPUs and their driver: under L4T's Tegra driver its CUDA "
        "cannot start ('NVIDIA Tegra driver detected', then status 35 or 'driver version is insufficient')."
    )
    changed = dataclasses.replace(finding, summary=summary, details=details, remediation=fix)
    return dataclasses.replace(verdict, finding=changed, find_out=None)


NO_GPU_RUNTIME = "container_could_not_select_device_driver"
HOST_NVML_MISSING = "container_toolkit_cannot_load_host_nvml"
ROCM_DEVICE_MISSING = "rocm_docker_device_missing"
_WINDOWS_PROMPT = lazy(r"(?<![\w/])[A-Za-z]:\\[^\n]*>")


def docker_on_windows(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """Docker's missing GPU runtime, or the toolkit in Docker Desktop's VM without the driver's NVML library,
    where the host is Windows (Docker Desktop): there is no NVIDIA Container Toolkit to install or systemctl to
    run on Windows; GPU containers need Docker Desktop's WSL 2 engine and the Windows NVIDIA driver, on a Windows
    whose WSL 2 has GPU support (blind set 20: nvidia-docker#1352, `--gpus all` on Windows 10 with driver 451.67;
    blind set 32: docker/for-win#13835, Windows 10 19042, was told `nvidia-smi` and `ldconfig` on the host)."""
    finding = verdict.finding
    if (
        finding.check_id != "platform.container_gpus"
        or finding.status is not Status.FAIL
        or not on_windows(facts)
        or not any(h.signature.id in (NO_GPU_RUNTIME, HOST_NVML_MISSING) for h in pasted.hits)
    ):  # with the runtime there, the container was started without the GPUs (facepoke#12): its own fix stands
        return verdict
    said = pasted.prose.windows_build
    build = int(said.value) if said is not None else None
    fix = docker_desktop_on_windows_fix(build)
    details = (
        "Docker on Windows registers no NVIDIA runtime: its Linux containers reach the GPU through WSL 2."
    )
    summary = finding.summary
    nvml = next((h for h in pasted.hits if h.signature.id == HOST_NVML_MISSING), None)
    if (
        nvml is not None
    ):  # the toolkit ran in Docker Desktop's VM: no host driver to install or ldconfig to run
        details = (  # the runtime is there (its nvidia-container-cli ran): what WSL 2 projects is not
            "Docker Desktop's toolkit loads the driver's libraries from what WSL 2 projects from the Windows "
            "driver (/usr/lib/wsl/lib); nothing there means WSL 2 does not reach the GPU."
        )
        summary = (
            f"Docker Desktop's WSL 2 machine has no NVIDIA driver library (line {nvml.line} of the paste): "
            + (
                f"Windows build {build} is older than 21H2 ({WSL_GPU_MIN_BUILD}), the first whose WSL 2 reaches the GPU."
                if build is not None and build < WSL_GPU_MIN_BUILD
                else "WSL 2 does not reach the Windows NVIDIA driver."
            )
        )
    return dataclasses.replace(
        verdict, finding=dataclasses.replace(finding, summary=summary, details=details, remediation=fix)
    )


# Docker Desktop by its name, its service or its context: "I use Docker Desktop", `systemctl --user start
# docker-desktop`, "Current context is now "desktop-linux""
_DOCKER_DESKTOP = lazy(r"\bdocker[ \t-]desktop\b|\bdesktop-linux\b", re.IGNORECASE)


def docker_desktop_on_linux(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """A GPU container that Docker cannot start (no GPU runtime, no /dev/kfd) where the paste names Docker Desktop
    and the host is not Windows or a Mac: Docker Desktop for Linux runs its containers in a VM with no GPU, so the
    toolkit or driver the plain readings ask for is not what is missing (docker/docs#19366, docker/roadmap#497;
    blind set 22 #31: ROCm's --device=/dev/kfd fails 'only when Docker Desktop is running')."""
    finding = verdict.finding
    ids = {h.signature.id for h in pasted.hits if h.line in verdict.lines}
    if finding.status is not Status.FAIL or not ids.intersection((NO_GPU_RUNTIME, ROCM_DEVICE_MISSING)):
        return verdict
    os_facts = facts.os
    if on_windows(facts) or (not isinstance(os_facts, Unavailable) and os_facts.system == "Darwin"):
        return verdict
    text = pasted.paste.text[:MAX_CHARS]
    if _DOCKER_DESKTOP.search(text) is None or _WINDOWS_PROMPT.search(text) is not None:
        return verdict
    amd = ROCM_DEVICE_MISSING in ids
    finding = dataclasses.replace(
        finding,
        summary="The docker command reaches Docker Desktop's virtual machine, which has no GPU: Docker Desktop for "
        "Linux cannot give a container the GPU.",
        details="",
        remediation=docker_desktop_on_linux_fix(amd),
    )
    return dataclasses.replace(verdict, finding=finding)


# CDI, how Podman (and Docker 25+) passes GPUs: `--device nvidia.com/gpu=all`, a quadlet's
# `AddDevice=nvidia.com/gpu=all`
_CDI_DEVICE = lazy(r"\bnvidia\.com/gpu=(?:all|\d+|[\w-]+)")
# the bare libcuda.so not found: cuDNN's words for it, or any program's ("OSError: libcuda.so: cannot open ...")
_LIBCUDA_UNVERSIONED = ("missing_library_libcuda_unversioned", "missing_library_libcuda_bare")


def libcuda_in_a_container(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """cuDNN's bare libcuda.so missing inside a container on a Linux host: not WSL's folder, which the plain
    reading guesses, but the container toolkit's mounts, which hold libcuda.so.1 without that link (blind set 23:
    whisper-asr-webservice#205, a Podman quadlet with AddDevice=nvidia.com/gpu=all)."""
    finding = verdict.finding
    lines = {h.line for h in pasted.hits if h.signature.id in _LIBCUDA_UNVERSIONED}
    if finding.status is not Status.FAIL or not lines.intersection(verdict.lines):
        return verdict
    os_facts = facts.os
    if (not isinstance(os_facts, Unavailable) and os_facts.is_wsl) or pasted.prose.wsl is not None:
        return verdict
    text = pasted.paste.text[:MAX_CHARS]
    cdi = _CDI_DEVICE.search(text) is not None
    if not cdi and not in_container(pasted):
        return verdict
    finding = dataclasses.replace(
        finding,
        summary=f"{'cuDNN' if 'libcudnn' in finding.summary else 'The program'} could not open the bare libcuda.so "
        "inside the container: the container runtime mounted the host driver's libcuda.so.1 without that link.",
        details="",
        remediation=libcuda_link_in_container(cdi),
    )
    return dataclasses.replace(verdict, finding=finding)


def on_a_shared_machine(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """A driver too old for every current torch, on a machine the paste shows is shared (a SLURM job, `module
    load`, a university cluster, no root): its driver is its administrators', so the newest torch built for a CUDA
    that driver runs comes first, the driver upgrade second (blind set 23: found version 10010 on a SLURM node)."""
    line = pasted.prose.shared
    finding = verdict.finding
    if (
        line is None
        or finding.check_id not in ("torch.driver_compat", "torch.cuda_init")
        or finding.status is not Status.FAIL
        or installs_torch(finding.remediation)
    ):
        return verdict
    legacy = legacy_for_the_driver(facts, load_torch_releases())
    if legacy is None:
        return verdict
    legacy = dataclasses.replace(
        legacy,
        text=f"On a shared machine (line {line} of the paste) the driver is its administrators'. "
        + legacy.text,
    )
    return dataclasses.replace(
        verdict,
        finding=dataclasses.replace(finding, remediation=legacy),
        lines=tuple(sorted({*verdict.lines, line})),
    )


BUSY = "other_cuda_devices_busy_or_unavailable"
TOOLKIT_WITHOUT_NVML = "container_toolkit_cannot_load_host_nvml"
_WINDOWS_SIDE = Command(
    ("wsl.exe", "--update"),
    note="in Windows (PowerShell), then `wsl --shutdown`: WSL's kernel and GPU layer; update the Windows NVIDIA "
    "driver and Windows too",
    runs_here=False,
)


def on_wsl(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """CUDA errors whose native-Linux reading has no meaning under WSL 2 (blind set 20): error 46 'busy or
    unavailable' is not a compute mode or a GPU to reset there (WSL has neither; the GPU is Windows' through
    /dev/dxg), it is the Windows side's GPU layer: microsoft/WSL#6014, CUDA broken on two machines by one Windows
    Insider build. Error 801 is no vGPU profile there: WSL 2 lacks some CUDA features (its unified memory has
    Windows' feature set, without full managed memory), and a program that needs one fails (rapidsai/cudf#11382)."""
    finding = verdict.finding
    if isinstance(facts.os, Unavailable) or not facts.os.is_wsl or finding.remediation is None:
        return verdict
    ids = {h.signature.id for h in pasted.hits if h.line in verdict.lines}
    if BUSY in ids:
        summary = (
            "CUDA could not create a context on the GPU under WSL 2 (error 46, 'busy or unavailable'): WSL has no "
            "compute mode or GPU reset of its own, so most likely the Windows side's GPU layer failed: a Windows or "
            "WSL build whose GPU support is broken, or a Windows driver without it."
        )
        fix = Remediation(
            text="Update WSL, the Windows NVIDIA driver and Windows itself, then restart WSL (wsl --shutdown). If it "
            "began with a Windows update (an Insider build), the next build or rolling back is the fix; CUDA under "
            "WSL needs no Linux driver, and none may be installed inside it.",
            commands=(_WINDOWS_SIDE,),
            target=Target.SYSTEM,
        )
    elif (
        TOOLKIT_WITHOUT_NVML in ids
    ):  # Docker Desktop's engine or a toolkit in WSL: the Windows driver's NVML
        summary = (
            "The container toolkit under WSL 2 could not load libnvidia-ml.so.1, which WSL gets from the Windows "
            "NVIDIA driver (/usr/lib/wsl/lib): that driver, WSL or Windows itself does not provide GPU support."
        )
        fix = Remediation(
            text="Under WSL 2 (and Docker Desktop's WSL 2 engine) the NVIDIA libraries come from the Windows driver, "
            "mounted at /usr/lib/wsl/lib; no Linux driver is installed inside WSL, and `ldconfig` there changes "
            "nothing. GPU support in WSL 2 needs Windows 11 or Windows 10 21H2 or newer (`winver` shows it), a "
            "current NVIDIA driver for Windows and an updated WSL: update what is older, run `wsl --shutdown`, then "
            "restart Docker Desktop.",
            commands=(
                _WINDOWS_SIDE,
                Command(
                    ("ls", "-l", "/usr/lib/wsl/lib/libnvidia-ml.so.1"),
                    note="inside WSL: missing means the Windows side gives WSL no GPU",
                ),
            ),
            target=Target.SYSTEM,
        )
    elif OPERATION_NOT_SUPPORTED in ids:
        summary = (
            "CUDA refused an operation under WSL 2 (error 801): WSL 2 does not offer every CUDA feature (its "
            "unified memory has Windows' feature set, without full managed memory), and the program uses one it "
            "lacks."
        )
        fix = Remediation(
            text="Run the program on native Linux, or configure it without the feature (a library's managed-memory "
            "pool or allocator option). Check the GPU too: libraries drop old GPUs (RAPIDS needs compute "
            "capability 7.0 or newer from its 24.02 release).",
            commands=(Command(("nvidia-smi", "-L"), note="the GPU, for its compute capability"),),
            target=Target.SYSTEM,
        )
    else:
        return verdict
    details = (
        "Under WSL 2 the GPU is Windows': CUDA reaches it through /dev/dxg and the Windows driver's libraries in "
        "/usr/lib/wsl/lib; NVIDIA's CUDA on WSL user guide lists what WSL 2 does not support."
    )
    finding = dataclasses.replace(finding, summary=summary, details=details, remediation=fix)
    return dataclasses.replace(verdict, finding=finding)


def image_compat_on_wsl(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """No GPU for CUDA inside a container on WSL2, while nvidia-smi there lists them: CUDA images register their
    forward-compatibility libcuda (/usr/local/cuda/compat) with the loader, and under WSL that copy is loaded in
    place of WSL's own /usr/lib/wsl/lib/libcuda.so.1, which alone reaches the GPU (blind set 18: vLLM's
    v0.15.1 image finds no GPU on two RTX 4090s where 0.10.1.1 works)."""
    finding = verdict.finding
    if (
        finding.check_id != "torch.cuda_init"
        or finding.status is not Status.FAIL
        or isinstance(facts.os, Unavailable)
        or not facts.os.is_wsl
        or pasted.smi is None
        or not any(h.signature.cls in ("no_visible_gpu", "forward_compat") for h in pasted.hits)
    ):
        return verdict
    image = _IMAGE_REF.search(pasted.paste.text, 0, MAX_CHARS)
    if image is None:
        return verdict
    line = line_number(pasted.paste.text, image)
    finding = dataclasses.replace(
        finding,
        summary=f"CUDA finds no GPU in the {image[0]} container (line {line} of the paste) though nvidia-smi "
        "lists them under WSL2: most likely the image's forward-compatibility libcuda is loaded in place of "
        "WSL's.",
        remediation=Remediation(
            text="Under WSL2 only /usr/lib/wsl/lib/libcuda.so.1 reaches the GPU. CUDA images register their "
            "forward-compatibility libcuda (/usr/local/cuda/compat, through a file in /etc/ld.so.conf.d) with the "
            "loader, and where that copy comes first CUDA sees no GPU. Start the container with that file removed "
            "and `ldconfig` run before the program (or /usr/lib/wsl/lib first on LD_LIBRARY_PATH), or use a "
            "release of the image that does not register it.",
            commands=(
                Command(
                    ("ldconfig", "-p"),
                    note="in the container: a libcuda.so.1 under .../compat listed before /usr/lib/wsl/lib is the "
                    "image's",
                ),
            ),
            target=Target.SYSTEM,
        ),
    )
    return dataclasses.replace(verdict, finding=finding, lines=tuple(sorted({*verdict.lines, line})))


# An NVIDIA vGPU profile's name: the board (GRID A16, V100D, L40S, H100XM, RTX6000-Ada), then "-<frame buffer in
# GB><series>"; the series says what the profile may run (NVIDIA's vGPU user guide: A virtual applications,
# B virtual PC, Q RTX Virtual Workstation, C compute). compat/cuda_matrix.json's families note spells the same.
_VGPU_PROFILE = lazy(
    r"(?<![\w-])(?:GRID[ \t]+)?(?P<board>(?:A(?:2|10|16|30|40|100|800)|L(?:4|20|40S?)|H(?:20|100|200|800)|T4"
    r"|V100|P(?:4|6|40|100)|M(?:10|60)|RTX[ \t]?A?\d{4}(?:-Ada)?)[A-Z]{0,2})-(?P<fb>\d{1,3})(?P<series>[ABCQ])\b"
)
_SERIES = {"A": "virtual applications", "B": "virtual PC", "C": "compute", "Q": "RTX Virtual Workstation"}
OPERATION_NOT_SUPPORTED = "other_cuda_operation_not_supported"


# The driver API of CUDA's virtual memory management, named where it failed ("cuMemGetAllocationGranularity
# returned CUDA_ERROR_NOT_SUPPORTED"): the operation a vGPU refused, not the allocator or unified memory
_VMM_CALL = lazy(
    r"\bcuMem(?:Create|Map|Unmap|AddressReserve|AddressFree|GetAllocationGranularity|SetAccess|Release"
    r"|ExportToShareableHandle|ImportFromShareableHandle)\b"
)


def on_a_vgpu_profile(verdict: Verdict, pasted: PastedText) -> Verdict:
    """CUDA's "operation not supported" beside the vGPU profile the paste names: an A- or B-series profile
    runs no CUDA, so that is the answer, with no `nvidia-smi -L` to learn the name it already shows; a Q- or
    C-series one does, which leaves the allocator (blind set 18: "NVidia A16-8A" in ComfyUI#6843)."""
    finding = verdict.finding
    if finding.remediation is None or not any(
        h.signature.id == OPERATION_NOT_SUPPORTED and h.line in verdict.lines for h in pasted.hits
    ):
        return verdict
    named = _VGPU_PROFILE.search(pasted.paste.text, 0, MAX_CHARS)
    if named is None:
        return verdict
    profile, series = named.group(0), named.group("series")
    board, size = named.group("board"), named.group("fb")
    line = line_number(pasted.paste.text, named)
    if series in "AB":
        summary = (
            f"The GPU is the vGPU profile {profile} (line {line}), a {_SERIES[series]} ({series}-series) profile: "
            "those run no CUDA, so every CUDA call fails with 'operation not supported'."
        )
        fix = Remediation(
            text=(
                f"Ask the VM's administrator for the board's 8Q profile ({board}-8Q): on Maxwell boards (M10, M60) "
                "only the 8Q profile runs CUDA, and they have no C-series"
                if board.upper().startswith("M")
                else f"Ask the VM's administrator for a CUDA profile of the same board: {board}-{size}Q (RTX "
                "Virtual Workstation) or one of its C-series (compute) profiles"
            )
            + ", with the vGPU guest driver of the host's release. NVIDIA's vGPU documentation lists CUDA for the "
            "Q- and C-series profiles only. Until then the program runs on the CPU only.",
            target=Target.SYSTEM,
        )
    elif (vmm := _VMM_CALL.search(pasted.paste.text, 0, MAX_CHARS)) is not None:
        summary = (
            f"CUDA refused {vmm.group(0)} (line {line_number(pasted.paste.text, vmm)}) on the vGPU profile {profile}: "
            "the program allocates through CUDA's virtual memory management (VMM) API, which this vGPU does not "
            "offer, though its profile runs CUDA."
        )
        fix = Remediation(
            text="Make the program allocate with plain cudaMalloc: for torch, leave expandable_segments out of "
            "PYTORCH_CUDA_ALLOC_CONF (it maps memory through VMM); for a library that picks a VMM allocator by "
            "itself (XGBoost 3.x, some memory pools), its release before that allocator, or an RMM pool it is "
            "told to use. Or ask the VM's administrator whether the host's vGPU release offers VMM to this "
            "profile.",
            target=Target.SYSTEM,
        )
    else:
        summary = (
            f"CUDA refused an operation on the vGPU profile {profile} (line {line}): a {_SERIES[series]} profile "
            "runs CUDA, so it is an operation this vGPU does not offer, most often CUDA's asynchronous allocator "
            "(cudaMallocAsync) or unified memory."
        )
        fix = Remediation(
            text="Run without CUDA's asynchronous allocator: ComfyUI's --disable-cuda-malloc, or "
            "PYTORCH_CUDA_ALLOC_CONF=backend:native in the program's environment for torch. Unified memory is off "
            "on a vGPU unless the host enables it for the VM (the vGPU's enable_uvm setting): ask its "
            "administrator if the program needs it.",
            target=Target.SYSTEM,
        )
    return dataclasses.replace(
        verdict, finding=dataclasses.replace(finding, summary=summary, remediation=fix)
    )


def driver_of_a_vgpu_guest(verdict: Verdict, pasted: PastedText) -> Verdict:
    """A driver too old for the program's CUDA on a vGPU guest (the GPU is a profile: GRID T4-8C): the guest's
    driver comes with the host's vGPU software release and cannot be upgraded alone, nor from the distribution
    (blind set 20: FasterTransformer#406 on a GRID T4-8C with guest driver 450.102.04)."""
    finding = verdict.finding
    if finding.check_id != "torch.driver_compat" or finding.status is not Status.FAIL:
        return verdict
    named = _VGPU_PROFILE.search(pasted.paste.text, 0, MAX_CHARS)
    if named is None or named.group("series") not in "CQ":
        return verdict
    fix = Remediation(
        text=f"The GPU is the vGPU profile {named.group(0)} (line {line_number(pasted.paste.text, named)}): a "
        "guest's driver must be the guest driver of the vGPU software release the host runs, so it is not "
        "upgraded alone or from the distribution's packages. Ask the host's administrator for a newer vGPU "
        "software release (the host's vGPU manager and this guest driver together, from NVIDIA's licensing "
        "portal), or use a build of the program for a CUDA no newer than the guest driver's (nvidia-smi's 'CUDA "
        "Version').",
        commands=(Command(("nvidia-smi", "-q"), note="'Driver Version' and the vGPU software licence"),),
        target=Target.SYSTEM,
    )
    return dataclasses.replace(verdict, finding=dataclasses.replace(finding, remediation=fix))


# Data-centre GPUs by name (NVML's, or the words'): servers that never suspend, where a lost context is the GPU's
# or the program's fault, told apart by the driver's Xid
_DATACENTER_GPU = lazy(
    r"\b(?:Tesla|GH200|GB200|(?<!RTX )[ABHL]\d{1,3}[A-Z]?(?:-(?:SXM|PCIE|NVL)\w*)?)\b", re.IGNORECASE
)
_PORTABLE = lazy(r"\b(?:Laptop|Mobile|Max-Q)\b", re.IGNORECASE)
_SMI_ERR = lazy(r"\bERR!")
# words that the machine slept: only then is a lost context the driver's lost state rather than a kernel's fault
# (never "resuming from checkpoint", nor time.sleep() in a traceback)
_SLEPT = lazy(
    r"\b(?:suspend\w*|hibernat\w*|(?<![.\w])sleep(?:s|ing)?(?![ \t]*\()|slept|standby|wak(?:e|es|ing)[ \t]+up|lid)\b",
    re.I,
)
LAUNCH_FAILURE = "unknown_error_unspecified_launch_failure"


SIGFPE = "sigfpe_cublas_gemm"


def sigfpe_without_an_h20(verdict: Verdict, pasted: PastedText, facts: Facts) -> Verdict:
    """SIGFPE where no H20 is in the paste: the catalogue's cuBLAS-on-H20 cause does not hold (an RTX 4090, a
    cu118 torch that another cuBLAS would only mix up); the backtrace names the library that divided by zero."""
    finding = verdict.finding
    if not any(h.signature.id == SIGFPE and h.line in verdict.lines for h in pasted.hits):
        return verdict
    names = " ".join(g.name for g in facts.nvidia_gpus if isinstance(g.name, str))
    text = pasted.paste.text[:MAX_CHARS]
    if any(
        bug.on(names) or bug.on(text) for bug in library_bugs()
    ):  # compat/library_bugs.json's GPU is there
        return verdict
    fix = Remediation(
        text="The signal's backtrace names the library where it happened: run the program again with Python's "
        "fault handler on (it prints the Python stack at the signal), or under gdb for the native one; a crash "
        "inside cublasLt on an NVIDIA H20 is cuBLAS 12.1's known bug, elsewhere report it to that library.",
        commands=(
            Command(
                ("python", "-X", "faulthandler", "SCRIPT.py"),
                note="SCRIPT.py: the failing program",
                runs_here=False,
            ),
        ),
        target=Target.PYTHON_ENV,
    )
    summary = (
        "The process died of SIGFPE (an integer division by zero in native code): the paste does not show where; "
        "on an NVIDIA H20 it is cuBLAS 12.1's known bug, and no H20 is named here."
    )
    return dataclasses.replace(
        verdict, finding=dataclasses.replace(finding, summary=summary, remediation=fix)
    )


UNKNOWN_AT_INIT = frozenset(
    {
        "unknown_error_cuda_unknown_error_torch",
        "unknown_error_999_legacy_runtime",
        "unknown_error_999_driver_init",
        "unknown_error_driver_api_cuda_error_unknown",
    }
)
# a vGPU guest said: its GRID driver's installer ("NVIDIA-Linux-x86_64-390.75-grid.run"), "nvidia grid license",
# the word vGPU; never a bare "License:" (pip show prints one for every package)
_VGPU_GUEST = lazy(r"-grid\b|\bnvidia[ \t-]grid\b|\bGRID[ \t]+(?:driver|licen[cs]e)|\bvGPU\b", re.IGNORECASE)
# the person says the device node is missing: "no `/dev/nvidia-uvm` file" (dsnote#111, a Flatpak sandbox),
# "/dev/nvidia-uvm does not exist", "ls: cannot access '/dev/nvidia-uvm': No such file or directory"
_NO_UVM_NODE = lazy(
    r"\b(?:no|missing|without|lacks?|cannot access)\b[^\n]{0,12}/dev/nvidia-uvm\b(?!-)"
    r"|/dev/nvidia-uvm\b(?!-)[^\n]{0,20}(?:\bmissing\b|\bnot (?:found|exist|there|present)|does(?: not|n'?t) exist"
    r"|No such file)",
    re.IGNORECASE,
)


def unknown_error_on_a_server(verdict: Verdict, pasted: PastedText, facts: Facts) -> Verdict:
    """CUDA's unknown error (999) at initialisation on a data-centre GPU or a vGPU guest: the catalogue's
    suspend-and-resume lead fits a laptop, not a server or a VM that never sleeps (blind set 20: an L20 in a VM,
    ComfyUI#9713; a GRID 390.75 guest, nvidia-docker#1510). There, nvidia_uvm not loaded (no /dev/nvidia-uvm,
    common in VMs and containers) is the usual cause; on a vGPU guest, a guest driver that does not match the
    host's vGPU release or an unlicensed vGPU."""
    finding = verdict.finding
    if finding.remediation is None or not any(
        h.signature.id in UNKNOWN_AT_INIT and h.line in verdict.lines for h in pasted.hits
    ):
        return verdict
    names = " ".join(
        g.name for g in facts.nvidia_gpus if isinstance(g.name, str) and not _PORTABLE.search(g.name)
    )
    text = pasted.paste.text[:MAX_CHARS]
    vgpu = _VGPU_PROFILE.search(text) is not None or _VGPU_GUEST.search(text) is not None
    said = _NO_UVM_NODE.search(text)
    if not vgpu and not _DATACENTER_GPU.search(names) and said is None:
        return verdict
    load = Command(
        ("sudo", "nvidia-modprobe", "-u", "-c=0"), note="loads nvidia_uvm and creates its device nodes"
    )
    if said is not None:  # the paste says the node is missing: no `ls` to learn it, the fix on the host first
        return _no_uvm_node(verdict, load, line_number(text, said))
    commands = [Command(("ls", "-l", "/dev/nvidia-uvm"), note="missing: nvidia_uvm is not loaded"), load]
    text_fix = (
        "Load nvidia_uvm and create /dev/nvidia-uvm (nvidia-modprobe -u, or modprobe nvidia_uvm), then start the "
        "program again; a container started before it existed must be restarted so it gets the node."
    )
    if vgpu:
        text_fix += (
            " On a vGPU guest, the guest driver must be the one of the host's vGPU software release, and the vGPU "
            "licensed (nvidia-smi -q shows both); a program built for a newer CUDA than the guest driver runs needs "
            "a newer vGPU release."
        )
        commands.append(
            Command(("nvidia-smi", "-q"), note="'Driver Version' and 'vGPU Software Licensed Product'")
        )
    summary = (
        "CUDA does not initialise (unknown error) on a "
        + ("vGPU guest" if vgpu else "data-centre GPU")
        + ", which does not sleep: most often nvidia_uvm is not loaded (no /dev/nvidia-uvm), as in VMs and "
        "containers started before it"
        + ("; or the guest driver does not match the host's vGPU release" if vgpu else "")
        + "."
    )
    fix = Remediation(text=text_fix, commands=tuple(commands), requires_root=True, target=Target.SYSTEM)
    return dataclasses.replace(
        verdict, finding=dataclasses.replace(finding, summary=summary, details="", remediation=fix)
    )


def _no_uvm_node(verdict: Verdict, load: Command, line: int) -> Verdict:
    """CUDA's unknown error where the paste says /dev/nvidia-uvm is missing: that is the cause, on any machine."""
    fix = Remediation(
        text="On the host (not inside a container or a Flatpak sandbox, which cannot create device nodes), load "
        "nvidia_uvm and create /dev/nvidia-uvm, then start the program again (a container started before it "
        "existed must be restarted). To keep it across reboots, add nvidia-uvm to /etc/modules-load.d/.",
        commands=(load,),
        requires_root=True,
        target=Target.SYSTEM,
    )
    summary = (
        f"CUDA does not initialise (unknown error) because /dev/nvidia-uvm is missing, as the paste says (line "
        f"{line}): the nvidia_uvm module is not loaded, or its device node was never created."
    )
    finding = dataclasses.replace(verdict.finding, summary=summary, details="", remediation=fix)
    return dataclasses.replace(verdict, finding=finding, lines=tuple(sorted({*verdict.lines, line})))


def launch_failure_on_a_server(verdict: Verdict, pasted: PastedText, facts: Facts) -> Verdict:
    """CUDA's "unspecified launch failure" on a data-centre GPU, beside nvidia-smi's ERR!, or where nothing says
    the machine slept: the catalogue's suspend-and-resume lead fits a laptop woken up, not a server that never
    sleeps nor a training run that failed hours in; the driver's Xid says whether the program or the GPU failed
    (blind set 19: vLLM on 8x A100-SXM4 with ERR! in nvidia-smi; set 24: FastVideo and cryoSBI, hours in)."""
    finding = verdict.finding
    if finding.remediation is None or not any(
        h.signature.id == LAUNCH_FAILURE and h.line in verdict.lines for h in pasted.hits
    ):
        return verdict
    names = " ".join(
        g.name for g in facts.nvidia_gpus if isinstance(g.name, str) and not _PORTABLE.search(g.name)
    )
    erred = _SMI_ERR.search(pasted.paste.text, 0, MAX_CHARS) is not None
    server = _DATACENTER_GPU.search(names) is not None
    if not erred and not server and _SLEPT.search(pasted.paste.text, 0, MAX_CHARS) is not None:
        return verdict  # the person says the machine slept: the catalogue's lead is theirs
    summary = (
        "A GPU kernel failed (unspecified launch failure) and nvidia-smi shows ERR! for the GPU: the GPU itself "
        "is in an error state, and the driver's Xid line in the kernel log says why."
        if erred
        else "A GPU kernel failed (unspecified launch failure) on a data-centre GPU, which does not sleep: the "
        "driver's Xid line in the kernel log says whether the program or the GPU failed."
        if server
        else "A GPU kernel failed (unspecified launch failure) and the CUDA context is lost; nothing says the "
        "machine slept, so the driver's Xid line in the kernel log says whether the program or the GPU failed."
    )
    fix = Remediation(
        text="Read the driver's Xid lines for that time (`sudo dmesg -T | grep -i xid`): 13, 31 and 43 are the "
        "program's own faults (CUDA_LAUNCH_BLOCKING=1 finds the call); 48, 63, 64, 79, 94 and 95 are the GPU's, "
        "as is nvidia-smi's ERR!: stop what runs on that GPU and reset it (`sudo nvidia-smi -r -i <index>`) or "
        "reboot, check its memory (`nvidia-smi -q -d ECC,ROW_REMAPPER`), and take it out of service if it "
        "returns."
        + (
            ""
            if erred or server
            else " With no Xid at that time and a suspend since the driver loaded, the driver lost its state "
            "in the sleep: stop every CUDA program and reload nvidia_uvm (`sudo rmmod nvidia_uvm`, `sudo modprobe "
            "nvidia_uvm`) or reboot."
        ),
        commands=(Command(("sudo", "dmesg", "--level=err,warn"), note="the driver's 'NVRM: Xid' lines"),),
        requires_root=True,
        target=Target.SYSTEM,
    )
    return dataclasses.replace(
        verdict, finding=dataclasses.replace(finding, summary=summary, remediation=fix)
    )


# ZLUDA: a CUDA build of torch run on an AMD GPU (Windows), its DLLs standing in for NVIDIA's
# ZLUDA in use, not just named: a folder of it in a path, its launch switch, its device suffix ("[ZLUDA]")
_ZLUDA = lazy(r"[\\/][\w.-]*zluda|\bzluda[\\/]|--use-zluda\b|\[ZLUDA\]", re.IGNORECASE)
_UNDER_ZLUDA_CHECKS = frozenset(
    {
        "env.library_path",
        "torch.cuda_init",
        "driver.installed",
        "driver.nvml",
        "torch.driver_compat",
        "gpu.present",
    }
)


def under_zluda(verdict: Verdict, pasted: PastedText) -> Verdict:
    """A paste that runs torch through ZLUDA (ComfyUI-Zluda, SD.Next's --use-zluda): the GPU is AMD's, the CUDA
    DLLs torch loads are ZLUDA's and the HIP SDK's, so a DLL that does not load, or no CUDA device, is the HIP
    SDK's PATH or ZLUDA's patch, never an NVIDIA driver (blind set 19: caffe2_nvrtc.dll on a 7900 XTX)."""
    finding = verdict.finding
    if verdict.kind != Kind.PROBLEM or finding.check_id not in _UNDER_ZLUDA_CHECKS:
        return verdict
    said = _ZLUDA.search(pasted.paste.text, 0, MAX_CHARS)
    if said is None or pasted.prose.gpu is not None:  # an NVIDIA card named: ZLUDA is not what runs there
        return verdict
    line = line_number(pasted.paste.text, said)
    summary = (
        f"torch's CUDA build runs on an AMD GPU through ZLUDA (line {line}): the CUDA libraries it loads are "
        "ZLUDA's stand-ins and the HIP SDK's, so what fails is the HIP SDK on PATH or ZLUDA's patch, not an NVIDIA "
        "driver."
    )
    fix = Remediation(
        text="Put the HIP SDK's bin folder on PATH (%HIP_PATH%bin, e.g. C:\\Program Files\\AMD\\ROCm\\5.7\\bin, "
        "with HIP_PATH set) and open a new terminal; then run the project's ZLUDA install or patch step again, "
        "which copies ZLUDA's cublas, cusparse, nvrtc and nvcuda DLLs over torch's. Keep the install in a short "
        "path (a folder at the drive's root): long nested paths break its DLL loading. No NVIDIA driver or "
        "reinstalled torch helps.",
        commands=(Command(("where", "hipinfo"), note="found: the HIP SDK is on PATH; then run hipinfo"),),
        target=Target.SYSTEM,
    )
    finding = dataclasses.replace(finding, summary=summary, details="", remediation=fix)
    return dataclasses.replace(
        verdict, finding=finding, find_out=None, lines=tuple(sorted({*verdict.lines, line}))
    )


def rocm_container_on_windows(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """docker's missing /dev/kfd where the docker command runs on Windows (its prompt, C:\\...>): Docker Desktop's
    Linux VM has no AMD GPU, so no ROCm container runs there at all; `docker context` is Linux's question
    (blind set 22 #30: legacy-rocm-build#1893)."""
    lines = {h.line for h in pasted.hits if h.signature.id == ROCM_DEVICE_MISSING}
    if not lines.intersection(verdict.lines) or verdict.finding.remediation is None:
        return verdict
    if not on_windows(facts) and _WINDOWS_PROMPT.search(pasted.paste.text, 0, MAX_CHARS) is None:
        return verdict
    finding = dataclasses.replace(
        verdict.finding,
        summary="Docker on this Windows host has no /dev/kfd to give a ROCm container: its Linux VM has no AMD "
        "GPU device.",
        remediation=rocm_container_on_windows_fix(),
    )
    return dataclasses.replace(verdict, finding=finding)
