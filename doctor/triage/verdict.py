"""Which checks a paste can decide, how each result reads in triage, and which one is the cause.

The checks are the live doctor's own (one rules engine): they run on the partial Facts of the paste. A check
whose inputs the paste does not establish is "unknown from this paste" whatever it concluded, with the
command that would decide it on that machine, so a missing line never reads as "no GPU" or "no driver". Of
the problems found, the cause is the one earliest in CAUSE_ORDER (what breaks everything after it first); its
confidence says whether the paste states it (the program's own words, a collect_env line) or the doctor
inferred it (the GPU or driver tables).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
import shlex
from typing import TYPE_CHECKING

from torch_gpu_doctor.catalog import builtin_specs, load_checks
from torch_gpu_doctor.checks.driver_installed import INSTALLED_NOT_LOADED
from torch_gpu_doctor.checks.driver_nvml import MISSED_REBOOT
from torch_gpu_doctor.checks.driver_xid_errors import FELL_OFF_THE_BUS
from torch_gpu_doctor.checks.env import NOT_A_GPU_INDEX
from torch_gpu_doctor.checks.nccl_communication import CUSTOM_ALL_REDUCE, between_machines
from torch_gpu_doctor.checks.nccl_communication import DEBUG as NCCL_DEBUG
from torch_gpu_doctor.checks.support.torch_state import built_for_one_torch
from torch_gpu_doctor.checks.torch_build import IN_AN_EXTENSION, JETSON_BUILDS_ONLY
from torch_gpu_doctor.checks.torch_out_of_memory import sized, stated_most
from torch_gpu_doctor.compat.app_pythons import AppPython, app_in
from torch_gpu_doctor.compat.extensions import load_extensions
from torch_gpu_doctor.compat.jetson import load_jetson
from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.compat.torch_releases import INDEX_URL, parse_cc, version_key
from torch_gpu_doctor.compat.wrappers import Wrapper, wrapper_in
from torch_gpu_doctor.facts.container import ContainerRuntime
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.container_gpus import driver_libraries_in_image, kubernetes_shm, pass_gpus
from torch_gpu_doctor.fixes.cuda_init import init_error_fix
from torch_gpu_doctor.fixes.driver_plan import plan_driver
from torch_gpu_doctor.fixes.gpu_state import hosted_notebook_gpu, no_cuda_on_a_mac
from torch_gpu_doctor.fixes.hidden_gpu import asked_for_a_missing_gpu
from torch_gpu_doctor.fixes.kernel_modules import gpu_lost_again, mismatch_after_reboot, reload_after_upgrade
from torch_gpu_doctor.fixes.library_path import extension_arch_fix
from torch_gpu_doctor.fixes.module_build import load_or_build
from torch_gpu_doctor.fixes.out_of_memory import (
    offers_a_smaller_job,
    too_big_at_batch_one,
    too_big_to_run,
    too_big_to_train,
)
from torch_gpu_doctor.fixes.target import on_windows, python_command
from torch_gpu_doctor.fixes.torch_rocm import gfx_target_fix
from torch_gpu_doctor.fixes.torch_wheel import fix_for_torch, gpus_older_than_every_build, program_floor_fix
from torch_gpu_doctor.judge import judge
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Evidence, Finding, Remediation, Status, Target, printable
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.report import Report
from torch_gpu_doctor.triage.facts import PYTHON, listed_build
from torch_gpu_doctor.triage.model import distribution_name
from torch_gpu_doctor.triage.paste import INSTALL_COMMAND, PastedText
from torch_gpu_doctor.triage.paste_facts import WORDS, WSL_GPU_MIN_BUILD
from torch_gpu_doctor.triage.prose import MAX_CHARS, line_around
from torch_gpu_doctor.triage.shown_error import ShownError
from torch_gpu_doctor.triage.topology import slow_across_sockets
from torch_gpu_doctor.unavailable import Reason, Unavailable

if TYPE_CHECKING:
    from torch_gpu_doctor.triage.sizing import RunSize, TrainingSize

TORCH_VERSION = 'python -c "import torch; print(torch.__version__, torch.version.cuda, torch.version.hip)"'
CUDA_INIT = 'python -c "import torch; torch.cuda.init(); print(torch.cuda.get_device_name(0))"'
# check id → the command that decides it on the reporter's machine
FIND_OUT: dict[str, str] = {
    "driver.installed": "nvidia-smi",
    "driver.nvml": "nvidia-smi",
    "driver.xid_errors": "sudo dmesg | grep -i nvrm",
    "gpu.present": "nvidia-smi -L",
    "torch.installed": TORCH_VERSION,
    "torch.cpu_build": TORCH_VERSION,
    "torch.driver_compat": "nvidia-smi",
    "torch.arch_compat": 'python -c "import torch; print(torch.cuda.get_device_capability(), torch.cuda.get_arch_list())"',
    "torch.cuda_init": CUDA_INIT,
    "torch.nvidia_wheels": "python -m pip list",
    "torch.companions": "python -m pip list",
    "torch.out_of_memory": "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",
    "nccl.communication": "NCCL_DEBUG=INFO (in the failing program's environment)",
    "driver.nouveau": "lsmod | grep -E 'nouveau|nvidia'",
    "driver.secure_boot": "mokutil --sb-state",
    "driver.kernel_module_build": "dkms status",
    "platform.container_gpus": "docker run --rm --gpus all IMAGE nvidia-smi",
    "platform.wsl_gpu": "ls -l /dev/dxg /usr/lib/wsl/lib/libcuda.so.1",
    "platform.jetson": "cat /etc/nv_tegra_release",
    "env.cuda_visible_devices": "nvidia-smi -L",
    "env.library_path": "python -m pip check",
    "compat.data_age": TORCH_VERSION,
    "amd.torch_rocm": TORCH_VERSION,
    "amd.gfx_target": "rocminfo | grep gfx",
}
UNEXPLAINED_FALSE = "torch.cuda.is_available() is False; the paste does not say why"
TORCH_BUILD_AND_REASON = "import torch; print(torch.__version__, torch.version.cuda); torch.cuda.init()"
FALSE_IN_A_CONTAINER = "torch.cuda.is_available() is False inside a container"
# Root causes first: a missing or broken driver explains every torch symptom after it, a wrong build explains
# the CUDA errors, and the errors of a running program come last.
CAUSE_ORDER = (
    # a module that Secure Boot refused, or a GPU that nouveau holds, is why no NVIDIA driver answers
    "driver.secure_boot",
    "driver.nouveau",
    "driver.kernel_module_build",  # a module that did not build for this kernel: why none loads
    "platform.wsl_gpu",  # WSL 1 reaches no GPU at all
    "driver.installed",
    "driver.nvml",
    "driver.xid_errors",
    "platform.container_gpus",
    "platform.jetson",
    "torch.installed",
    "torch.cpu_build",
    "amd.torch_rocm",
    "torch.driver_compat",
    "torch.arch_compat",
    "amd.gfx_target",
    "env.cuda_visible_devices",
    "env.library_path",
    "torch.nvidia_wheels",
    "torch.cuda_init",
    "torch.out_of_memory",
    "nccl.communication",
    "gpu.topology",  # a pasted `nvidia-smi topo -m` only
    "torch.companions",
    "gpu.present",
    "compat.data_age",
)
# Checks a paste decides only through a known error message: without one they are left out, not "unknown"
BY_MESSAGE_ONLY = frozenset(
    {
        "driver.nouveau", "driver.secure_boot", "driver.kernel_module_build", "platform.container_gpus",
        "env.cuda_visible_devices", "platform.wsl_gpu",
        "env.library_path", "torch.out_of_memory", "nccl.communication",
    }
)  # fmt: skip
NVIDIA_ONLY = (
    "platform.jetson",  # a Jetson's GPU is NVIDIA's: never asked of an AMD machine
    "gpu.present",
    "driver.installed",
    "driver.nouveau",
    "driver.secure_boot",
    "driver.nvml",
    "torch.driver_compat",
    "torch.arch_compat",
    "gpu.topology",
    "driver.xid_errors",  # the NVIDIA driver's kernel log: `dmesg | grep NVRM` says nothing of an AMD GPU
)
AMD_CHECKS = tuple(c for c in CAUSE_ORDER if c not in NVIDIA_ONLY)
# What only a Linux machine has (a kernel module and its log, Secure Boot's module signing, nouveau, Jetson's
# L4T, WSL's projected driver): on a Windows paste they would ask for `sudo dmesg` or `modprobe` there
LINUX_ONLY = frozenset(
    {
        "driver.secure_boot", "driver.nouveau", "driver.kernel_module_build", "driver.nvml",
        "driver.xid_errors", "platform.jetson", "platform.wsl_gpu",
    }
)  # fmt: skip
# WSL's GPU is Windows' driver seen through /dev/dxg: no NVIDIA kernel module, no NVRM log, no Jetson
NOT_ON_WSL = frozenset(
    {
        "driver.secure_boot",
        "driver.nouveau",
        "driver.kernel_module_build",
        "driver.xid_errors",
        "platform.jetson",
    }
)
# a Jetson's GPU has no desktop driver or NVML to ask, and its CUDA is its L4T's (platform.jetson)
NOT_ON_A_JETSON = frozenset(
    {
        "driver.installed",
        "driver.nvml",
        "driver.nouveau",
        "driver.secure_boot",
        "driver.kernel_module_build",
        "torch.driver_compat",
    }
)
# an x86-64 machine (collect_env's platform, lscpu, a wheel's or a library folder's tag): never a Jetson
_X86 = lazy(r"x86_64|\bamd64\b|win_amd64|\bx64\b", re.IGNORECASE)
NVIDIA_CHECKS = tuple(c for c in CAUSE_ORDER if not c.startswith("amd."))
TOPOLOGY = "gpu.topology"
WHOLE_MACHINE = "gpu-doctor --json"  # everything a paste never has (PCIe, eGPU, storage, ...)


class Kind:
    PROBLEM = "problem"
    FINE = "fine"
    UNKNOWN = "unknown"
    NOT_APPLICABLE = "not_applicable"


class Confidence:
    STATED = "stated"  # the paste says it: the program's own message, a collect_env line
    INFERRED = "inferred"  # the doctor's tables fill a gap (a GPU's compute capability, a driver's CUDA)
    # the paste shows the symptom, not its cause: the usual one for such a paste ("is_available() is False",
    # nothing answering inside a container), which the to-be-sure command settles
    LIKELY = "likely"


@dataclass(frozen=True)
class Verdict:
    finding: Finding
    title: str
    kind: str  # Kind.*
    missing: tuple[str, ...]  # what the check needed that the paste does not show
    find_out: str | None  # the command that would decide it on that machine
    lines: tuple[int, ...] = ()  # the paste's lines of the error messages behind it


@dataclass(frozen=True)
class Triage:
    report: Report  # the checks that ran on the paste's facts
    verdicts: tuple[Verdict, ...]
    not_in_report: tuple[str, ...]  # check ids that need facts a paste never has
    cause: Verdict | None  # the most likely cause: the first problem in CAUSE_ORDER
    confidence: str | None  # Confidence.* of the cause
    # with no cause: the failure the paste shows that no signature knows (never "No problem found" beside it)
    unrecognised: ShownError | None = None

    def exit_problem(self) -> bool:
        """Exit 1: a cause is named (a warning that leads the answer is a problem found), an error no signature
        knows is shown, or a check fails."""
        return (
            self.cause is not None
            or self.unrecognised is not None
            or any(v.kind == Kind.PROBLEM and v.finding.status is Status.FAIL for v in self.verdicts)
        )


@dataclass(frozen=True)
class Known:
    """What the paste establishes, whatever part of it said so."""

    gpus_listed: bool  # a GPU list (collect_env, nvidia-smi) or a GPU named in torch's warning
    nvidia_implied: bool  # the paste is about an NVIDIA GPU even when it names none
    driver: bool  # a driver version, or that no driver answers
    driver_cuda: bool  # the newest CUDA the driver supports
    torch: bool  # torch's version, or that it is missing
    build: bool  # CUDA, ROCm or CPU build
    available: bool  # torch.cuda.is_available()'s answer, or an init error
    libraries: bool  # a list of the installed packages
    errors: bool  # a known error message
    about_torch: bool = True  # the paste names torch, or is only words (a question is about torch)


def known(pasted: PastedText, facts: Facts) -> Known:
    r = pasted.collect_env
    packages, driver, runtime = facts.torch_packages, facts.driver, facts.torch
    driver_known = not isinstance(driver, Unavailable) and (
        isinstance(driver.version, str) or driver.version.reason is Reason.NOT_FOUND
    )
    kinds = {h.signature.cls for h in pasted.hits}
    return Known(
        gpus_listed=bool(facts.gpus) and any(isinstance(g.name, str) for g in facts.gpus),
        nvidia_implied=bool(facts.nvidia_gpus)
        or pasted.smi is not None
        or bool(kinds - {"rocm", "other", "nccl", "nccl_shm", "nccl_p2p", "nccl_ib"}),
        driver=driver_known or not isinstance(facts.nvml, Unavailable),
        driver_cuda=not isinstance(driver, Unavailable) and isinstance(driver.cuda_version, str),
        torch=not isinstance(packages, Unavailable) or (r is not None and r.torch_missing),
        build=not isinstance(packages, Unavailable)
        and (
            r is None
            or r.has("cuda_build")
            or packages.cuda is not None
            or packages.hip is not None
            or bool(kinds & {"cpu_build"})
            or not r.has("torch_version")
            or listed_build(packages.version or "", None) is not None  # its tag says: 2.1.2+cpu, 2.1.2+cu121
        ),
        available=not isinstance(runtime, Unavailable)
        and (runtime.cuda_available is not None or runtime.outcome != "ok"),
        libraries=(r is not None and r.libraries is not None) or bool(pasted.packages),
        errors=not isinstance(facts.reported_errors, Unavailable),
        about_torch=mentions_torch(pasted.paste.text) or pasted.words_only,
    )


def missing_fields(check_id: str, k: Known, facts: Facts) -> list[str]:
    """What a check needs that this paste does not show. A check missing one is "unknown from this paste"
    whatever it concluded."""
    torch = [] if k.torch else ["torch's version"]
    build = torch + ([] if k.build else ["how torch was built (CUDA used to build PyTorch)"])
    packages = facts.torch_packages
    cpu_build = not isinstance(packages, Unavailable) and packages.cuda is None and packages.hip is None
    gpus = [] if k.gpus_listed else ["the GPU (nvidia-smi -L)"]
    jetson = facts.jetson_board is not None
    if check_id == "gpu.present":
        return [] if jetson else gpus  # a Jetson's GPU is its SoC's
    if check_id in ("driver.installed", "driver.nvml") and jetson:
        return []  # its driver is the L4T image's; NVML does not cover it (JetPack 4 and 5 have no nvidia-smi)
    if check_id == "driver.installed":
        return [] if k.driver else ["the NVIDIA driver version"]
    if check_id == "driver.nvml":
        return [] if not isinstance(facts.nvml, Unavailable) else ["what NVML answers (nvidia-smi)"]
    if check_id == "driver.xid_errors":
        return [] if not isinstance(facts.kernel_log, Unavailable) or k.errors else ["the kernel log"]
    if check_id in ("torch.installed", "compat.data_age"):
        version_known = (
            not isinstance(packages, Unavailable)
            and packages.version is not None
            and not packages.version.startswith("(")
        )
        return torch if check_id == "torch.installed" or version_known else ["torch's version"]
    if check_id in ("torch.cpu_build", "amd.torch_rocm"):
        return build + ([] if not cpu_build or k.gpus_listed or k.nvidia_implied else gpus)
    if check_id == "torch.driver_compat":  # a Jetson's CUDA is its L4T's: platform.jetson judges torch there
        return build + (
            []
            if cpu_build or k.driver_cuda or jetson
            else ["the CUDA version the driver supports (nvidia-smi)"]
        )
    if check_id == "torch.arch_compat" and k.about_torch and gpus_older_than_every_build(facts):
        return []  # no build has kernels for these GPUs: which torch it is decides nothing
    if check_id == "torch.arch_compat":
        reported = _reported(facts, "no_kernel_image")
        unknown_cc = [g.name for g in facts.nvidia_gpus if not isinstance(g.compute_capability, str)]
        named = [f"the compute capability of {n}" for n in unknown_cc if isinstance(n, str)]
        return build + ([] if reported or cpu_build else (gpus or named))
    if check_id == "torch.cuda_init":  # is_available()'s False is the finding, whatever the build
        return [] if k.available else [*build, "Is CUDA available"]
    if check_id == "torch.companions" and _reported(facts, "companion_mismatch"):
        return []  # the paste's own output says a package does not match torch (xformers.info, its warning)
    if check_id in ("torch.companions", "torch.nvidia_wheels"):
        return torch + ([] if k.libraries else ["the list of installed packages (pip list)"])
    if check_id in BY_MESSAGE_ONLY:
        return []  # decided by a known error message, or left out
    if check_id == "amd.gfx_target":
        return ["the GPU's gfx target (rocminfo)"]
    return []


def _reported(facts: Facts, kind: str) -> bool:
    errors = facts.reported_errors
    return not isinstance(errors, Unavailable) and any(e.kind == kind for e in errors)


def triage(pasted: PastedText, facts: Facts) -> Triage:
    r = pasted.collect_env
    amd = _about_amd(facts, pasted) or (r is not None and r.rocm_build is not None)
    needs = AMD_CHECKS if amd else NVIDIA_CHECKS
    if on_windows(facts):
        needs = tuple(c for c in needs if c not in LINUX_ONLY)
    elif not isinstance(facts.os, Unavailable) and facts.os.is_wsl:
        needs = tuple(c for c in needs if c not in NOT_ON_WSL)
    if facts.jetson_board is not None:  # no nvidia-smi, no desktop driver: platform.jetson judges the GPU
        needs = tuple(c for c in needs if c not in NOT_ON_A_JETSON)
    elif (
        _X86.search(pasted.paste.text, 0, MAX_CHARS)
        or any(isinstance(g.bdf, str) for g in facts.nvidia_gpus)
        or pasted.topology is not None  # GPUs connected to each other: a Jetson has one, on its chip
    ):  # an x86 machine or GPUs on the PCI bus: a Jetson's file is no question there
        needs = tuple(c for c in needs if c != "platform.jetson")
    loaded = {c.spec.id: c for c in load_checks(plugins=False, only=needs).checks}
    chosen = [loaded[c] for c in needs if c in loaded]
    report = judge(facts, chosen)
    titles = {c.spec.id: c.spec.title for c in chosen}
    k = known(pasted, facts)
    lines_of = {  # each line once, though several signatures of one check match it
        check: tuple(dict.fromkeys(h.line for h in pasted.hits if h.signature.check == check))
        for check in titles
    }
    verdicts = tuple(
        _verdict(
            _for_paste(f, pasted, k, facts),
            titles[f.check_id],
            missing_fields(f.check_id, k, facts),
            lines_of[f.check_id],
        )
        for f in report.findings
        if (
            f.check_id not in BY_MESSAGE_ONLY
            or lines_of[f.check_id]
            or f.status in (Status.FAIL, Status.WARN)
        )
        and (f.check_id != TOPOLOGY or not isinstance(facts.topology, Unavailable))
    )
    verdicts = _with_own_causes(verdicts, pasted, titles)
    verdicts = _no_nvidia_gpu(verdicts, pasted, facts, titles)
    verdicts = _on_a_mac(verdicts, pasted, facts, titles)
    verdicts = _none_on_a_mac(verdicts, facts)
    if (
        not k.about_torch
    ):  # another program's error (CUDA samples, JAX, Taichi...); a question in words is not
        verdicts = tuple(_not_torch(v, facts, pasted) for v in verdicts)
    elif any(_torch_for_the_driver(v) for v in verdicts) and _pinned_stack(pasted):
        # vLLM & co. pin their torch: a driver too old for it needs a new driver, not another torch
        verdicts = tuple(_driver_not_torch(v, facts, pasted) for v in verdicts)
    engine = _serving_engine(pasted)
    if engine is not None:  # no kernels under vLLM or SGLang: their release pins the torch, so it is theirs
        verdicts = tuple(_engine_not_torch(v, engine, facts) for v in verdicts)
    verdicts = tuple(_hidden_by_the_program(_answered_probes(v, facts), pasted) for v in verdicts)
    verdicts = tuple(_cpu_environment(_not_asked_again(v, pasted, facts), pasted, facts) for v in verdicts)
    verdicts = tuple(_nccl_log_shown(v, pasted) for v in verdicts)
    verdicts = tuple(_no_pip_check_for_the_loader(v, pasted) for v in verdicts)
    runtime = facts.torch
    if not isinstance(runtime, Unavailable) and runtime.outcome != "ok" and runtime.failed_stage == "import":
        verdicts = tuple(_without_importing_torch(v) for v in verdicts)
    if pasted.smi is not None and pasted.smi.cut is not None:  # the table stops inside a GPU's block
        verdicts = tuple(_gpus_past_the_cut(v, pasted.smi.cut) for v in verdicts)
    if pasted.prose.across_nodes is not None:  # "works on 1 node": the network between the machines
        verdicts = tuple(_across_machines(v, facts, pasted.prose.across_nodes) for v in verdicts)
    if pasted.prose.recurs is not None:  # "it stopped again, on the other card"
        verdicts = tuple(_lost_again(v, pasted.prose.recurs) for v in verdicts)
    if pasted.prose.updated is not None and not _in_container(pasted):  # "after recent ubuntu update"
        verdicts = tuple(_updated_then_804(v, pasted, pasted.prose.updated) for v in verdicts)
    verdicts = tuple(_rocm_on_wsl(v, facts, pasted) for v in verdicts)
    verdicts = tuple(_rocm_build_on_nvidia(v, facts, k.about_torch, pasted) for v in verdicts)
    owner = _runtime_owner(pasted)
    if owner is not None:  # error 35 from CTranslate2, DALI...: their CUDA, not torch's
        verdicts = tuple(_not_torchs_runtime(v, facts, pasted, owner) for v in verdicts)
    if _in_container(pasted):  # a container's 803 is its image's libcuda, not a reboot the host missed
        verdicts = tuple(_in_container_fix(v, facts, pasted) for v in verdicts)
    mmcv = _mmcv_said(pasted.paste.text) if "mmcv" in pasted.paste.text[:MAX_CHARS] else None
    if mmcv is not None:  # "mmcv=1.1.5", "mmcv-full==1.5.0": the release a reinstall keeps
        verdicts = tuple(_with_mmcv(v, *mmcv) for v in verdicts)
    if pasted.no_gpus_line is not None:  # their own `docker run`, with the GPUs added, in place of IMAGE
        verdicts = tuple(_their_docker_run(v, pasted, pasted.no_gpus_line) for v in verdicts)
    if _ran_inside_a_container(pasted):  # its own shell, not the toolkit relaying the host's NVML
        verdicts = tuple(_mismatch_in_a_container(v) for v in verdicts)
    verdicts = tuple(_module_not_loaded(v, facts, pasted) for v in verdicts)
    if pasted.prose.rebooted is not None:  # "tried rebooting, still": the next step is not another reboot
        verdicts = tuple(_rebooted_already(v, pasted) for v in verdicts)
    verdicts = tuple(_two_torches(v, facts, pasted) for v in verdicts)
    if (
        pasted.topology is not None and pasted.prose.slow is not None
    ):  # "slower than one card" beside the matrix
        verdicts = tuple(_slow_between_sockets(v, pasted) for v in verdicts)
    app = app_in(pasted.paste.text[:MAX_CHARS])
    if app is not None:  # an application with its own Python (ComfyUI, a web UI): its pip, not PATH's
        verdicts = tuple(_in_the_apps_python(v, app, pasted) for v in verdicts)
    listed = {lib.name: lib.version for listing in pasted.packages for lib in listing.packages}  # normalised
    if listed:  # `flash-attn==VERSION` where the paste's pip freeze says flash-attn==2.3.0
        verdicts = tuple(_versions_from_the_list(v, listed) for v in verdicts)
    wrapper = wrapper_in(pasted.paste.text[:MAX_CHARS])
    if wrapper is not None:  # LLaMA-Factory, verl: vLLM's options under their own names
        verdicts = tuple(_in_the_wrappers_words(v, wrapper) for v in verdicts)
    if pasted.prose.reinstalled is not None:  # "a ton of builds, same error": they went to another Python
        verdicts = tuple(_reinstalled_already(v, pasted.prose.reinstalled) for v in verdicts)
    if pasted.prose.batch_one is not None:  # "batch size is 1": no smaller batch to try
        verdicts = tuple(_at_batch_one(v, pasted.prose.batch_one, facts) for v in verdicts)
    if pasted.prose.trains_model is not None:  # a model fully fine-tuned: whether any setting can fit it here
        from torch_gpu_doctor.triage.sizing import training_size  # fit's estimate, for such a paste only

        sized_job = training_size(pasted.paste.text, facts, pasted.prose)
        if sized_job is not None:
            verdicts = _too_big_to_train(verdicts, pasted, sized_job, titles)
    if pasted.prose.runs_model is not None:  # a model run in 16-bit: whether its weights leave any room
        from torch_gpu_doctor.triage.sizing import run_size  # fit's estimate, for such a paste only

        too_big_model = run_size(pasted.paste.text, facts, pasted.prose)
        if too_big_model is not None:
            verdicts = _too_big_to_run(verdicts, too_big_model)
    hosted = _HOSTED_NOTEBOOK.search(pasted.paste.text, 0, MAX_CHARS) is not None
    if hosted and pasted.kernel_log is None:  # Colab, Kaggle; a kernel log is read on one's own machine
        verdicts = tuple(_on_a_hosted_notebook(v) for v in verdicts)
    if _KUBERNETES.search(pasted.paste.text, 0, MAX_CHARS) is not None:  # a pod's /dev/shm is set in its spec
        verdicts = tuple(_in_a_pod(v, facts) for v in verdicts)
    extension = _failing_extension(pasted)
    if (
        extension is not None
    ):  # the words or the call name a compiled extension as where the kernel is missing
        verdicts = tuple(_extension_not_torch(v, facts, extension) for v in verdicts)
    interpreter = interpreter_shown(facts)
    if interpreter is not None and not isinstance(facts.python, Unavailable):
        # the paste's own Python: each question asked of it, and each command a fix gives as plain `python`
        # (a catalogue entry's, a check's that had no interpreter to name), is run with it
        executable = facts.python.executable or PYTHON
        verdicts = tuple(_asked_with(v, interpreter, executable) for v in verdicts)
    order = list(CAUSE_ORDER)
    if _toolkit_explains_the_driver(pasted):
        order.remove("platform.container_gpus")
        order.insert(0, "platform.container_gpus")
    if gpus_older_than_every_build(facts):  # no driver helps a GPU no build supports: the GPU is the cause
        order.remove("torch.arch_compat")
        order.insert(0, "torch.arch_compat")
    said = _words_only_lines(pasted)
    printed = any(_printed(v, said) for v in verdicts if v.kind == Kind.PROBLEM)
    windows = not isinstance(facts.os, Unavailable) and facts.os.system == "Windows"
    ordered = sorted(
        (
            v
            for v in verdicts
            if v.kind == Kind.PROBLEM
            # NCCL said only in words, on Windows: torch has no NCCL there, so it cannot be the cause
            and not (windows and v.finding.check_id == "nccl.communication" and _only_words(v, said))
        ),
        key=lambda v: (
            v.finding.status is not Status.FAIL,
            printed
            and _only_words(v, said),  # beside what a program printed, what the person says comes after
            order.index(v.finding.check_id) if v.finding.check_id in order else len(order),
        ),
    )
    if (
        len(ordered) > 1
        and ordered[0].finding.check_id == "torch.installed"
        and not ordered[0].lines
        and any(v.lines and v.finding.status is Status.FAIL for v in ordered[1:])
    ):
        # "torch did not import" from a report's N/A, beside the error the paste shows (an undefined symbol, a
        # missing library, a GPU with no kernels): the error says why, or is what the person asks about
        first = next(v for v in ordered[1:] if v.lines and v.finding.status is Status.FAIL)
        ordered = [first, *(v for v in ordered if v is not first)]
    cause = ordered[0] if ordered else None
    if (
        cause is not None
        and cause.find_out is not None
        and _first_command(cause) == cause.find_out.split("   #")[0]
    ):
        settled = dataclasses.replace(
            cause, find_out=None
        )  # its fix asks it first: "to be sure" would repeat it
        verdicts = tuple(settled if v is cause else v for v in verdicts)
        cause = settled
    if cause is not None and cause.finding.check_id != "torch.cuda_init":
        # "is_available() is False, the paste does not say why" beside a cause that says why is a contradiction
        verdicts = tuple(_explained_false(v) for v in verdicts)
    if cause is not None and cause.finding.check_id == "platform.container_gpus":
        # "no driver" read inside a container started without the GPUs is that, not the host's missing driver
        verdicts = tuple(_seen_from_the_container(v) for v in verdicts)
    not_in = tuple(s.id for s in builtin_specs() if s.id not in needs)
    shown = pasted.shown_error
    known_lines = {h.line for h in pasted.hits}
    unrecognised = shown if cause is None and shown is not None and shown.line not in known_lines else None
    return Triage(report, verdicts, not_in, cause, _confidence(cause, facts) if cause else None, unrecognised)


def interpreter_shown(facts: Facts) -> str | None:
    """The paste's own Python as a command line shows it (a conda env's, a portable one's), or None."""
    python = facts.python
    if isinstance(python, Unavailable) or python.executable == PYTHON or python.executable.startswith("~"):
        return None  # "~/miniconda3/...": a quoted ~ is not the home folder, and unquoted it is not one path
    return Command((python.executable,)).display()


def _asked_with(verdict: Verdict, interpreter: str, executable: str) -> Verdict:
    ask = verdict.find_out
    if ask is not None and ask.startswith("python "):
        verdict = dataclasses.replace(verdict, find_out=f"{interpreter} {ask.removeprefix('python ')}")
    fix = verdict.finding.remediation
    if fix is None or not any(_plain_python(c.argv) for c in fix.commands):
        return verdict
    commands = tuple(
        dataclasses.replace(c, argv=_with_python(c.argv, executable)) if _plain_python(c.argv) else c
        for c in fix.commands
    )
    fix = dataclasses.replace(fix, commands=commands)
    return dataclasses.replace(verdict, finding=dataclasses.replace(verdict.finding, remediation=fix))


def _program_at(argv: tuple[str, ...]) -> int:
    """Where the program is in a command: after `env`'s own `-u VAR` and `VAR=value` arguments."""
    if not argv or argv[0] != "env":
        return 0
    i = 1
    while i < len(argv) and (argv[i] == "-u" or ("=" in argv[i] and not argv[i].startswith("-"))):
        i += 2 if argv[i] == "-u" else 1
    return i


def _plain_python(argv: tuple[str, ...]) -> bool:
    """The command runs `python` by that name (`python -m pip ...`, `env -u LD_LIBRARY_PATH python -c ...`,
    `uv pip install --python python ...`)."""
    at = _program_at(argv)
    return (at < len(argv) and argv[at] == PYTHON) or any(
        a == "--python" and b == PYTHON for a, b in itertools.pairwise(argv)
    )


def _with_python(argv: tuple[str, ...], executable: str) -> tuple[str, ...]:
    at = _program_at(argv)
    return tuple(
        executable if a == PYTHON and (i == at or (i > 0 and argv[i - 1] == "--python")) else a
        for i, a in enumerate(argv)
    )


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
    frame = re.compile(
        rf"File \"[^\"\n]*?[/\\](?P<package>{framed})[/\\]"
        r"(?:ops[/\\]|layers[/\\]|flash_attn_interface\.py|(?:\w+_)?ops\.py)"
    )
    installed = re.compile(
        r"\bpip3?[ \t]+install[ \t]+(?:-\S+[ \t]+)*[\"']?(?P<package>"
        + table.pip_pattern("ops_frames")
        + r")\b",
        re.IGNORECASE,
    )
    return frozenset(table.names("csrc")), frame, installed


def _failing_extension(pasted: PastedText) -> str | None:
    """The compiled extension a 'no kernel image' paste names as where it failed ("" when only words say it is
    a custom extension), or None."""
    if not any(h.signature.check == "torch.arch_compat" for h in pasted.hits):
        return None
    text = pasted.paste.text
    source = _EXTENSION_SOURCE.search(text, 0, MAX_CHARS)
    in_csrc, in_frame, installed_words = _extension_patterns()
    if source is not None and source["package"] in in_csrc:  # the package, not its kernel's symbol
        return source["package"]
    called = _EXTENSION_CALL.search(text, 0, MAX_CHARS)
    if called is not None:
        return called[0]
    checked = _OWN_KERNEL_CHECK.search(text, 0, MAX_CHARS)
    if checked is not None:  # torch never words it so: the op's own library (FlashInfer, sgl-kernel)
        return f"the library whose {checked['op']} kernel failed"
    framed = in_frame.search(text, 0, MAX_CHARS)
    if framed is not None:
        return framed["package"]
    installed = installed_words.search(text, 0, MAX_CHARS) if 'File "' not in text[:MAX_CHARS] else None
    if installed is not None:  # the words alone: a traceback would show where the kernel was missing
        row = load_extensions().by_pip_name(installed["package"])
        return row.module if row is not None else installed["package"]
    return "" if _EXTENSION_WORDS.search(text, 0, MAX_CHARS) is not None else None


def _extension_not_torch(verdict: Verdict, facts: Facts, extension: str) -> Verdict:
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
    summary, torch_said = finding.summary, "torch has no kernels"
    summary = summary.replace(JETSON_BUILDS_ONLY, "")  # the extension's build, not torch's, is the gap
    if summary.startswith(torch_said):
        who = (
            f"{extension} (a compiled extension, not torch)"
            if extension
            else "A compiled extension (not torch)"
        )
        who = "The" + who[3:] if who.startswith("the ") else who  # the library named by its op's words
        summary = f"{who} has no kernels{summary[len(torch_said) :]}"
    fix = extension_arch_fix(extension or "a compiled extension", capability)
    finding = dataclasses.replace(finding, summary=summary, remediation=fix)
    return dataclasses.replace(verdict, finding=finding, find_out=None)


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


def _seen_from_the_container(verdict: Verdict) -> Verdict:
    finding = verdict.finding
    if finding.check_id not in ("driver.installed", "torch.cuda_init") or finding.status is not Status.FAIL:
        return verdict
    if "container" in finding.summary:  # it says so already ("nvidia-smi inside the container reaches ...")
        return verdict
    said = (
        "No NVIDIA driver answers inside the container: it was started without the GPUs (the most likely cause "
        "above), whatever the host has."
    )
    return dataclasses.replace(verdict, finding=dataclasses.replace(finding, summary=said, remediation=None))


def _explained_false(verdict: Verdict) -> Verdict:
    finding = verdict.finding
    if finding.check_id != "torch.cuda_init" or not finding.summary.startswith(UNEXPLAINED_FALSE):
        return verdict
    said = "torch.cuda.is_available() is False: the most likely cause above explains it."
    return dataclasses.replace(verdict, finding=dataclasses.replace(finding, summary=said))


def _with_own_causes(
    verdicts: tuple[Verdict, ...], pasted: PastedText, titles: dict[str, str]
) -> tuple[Verdict, ...]:
    """A known error that the check it names did not turn into a problem (a program's bug, a build tool's
    refusal, another program's CUDA error) is still what went wrong: the catalogue's own cause and fix stand
    in for that check's verdict, so a paste with an error the doctor read never says "no problem found"."""
    problems = {v.finding.check_id for v in verdicts if v.kind == Kind.PROBLEM}
    undecided = {v.finding.check_id: v for v in verdicts if v.kind == Kind.UNKNOWN}
    own: dict[str, Verdict] = {}
    # a refinement of a signature (its id extends the other's: other_cuda_kernel_assertion_condition, the
    # kernel's own `t < n_classes`) speaks for its check before the general one, wherever each stands
    ids = {h.signature.id for h in pasted.hits}
    refined = {i for i in ids if any(other.startswith(f"{i}_") for other in ids)}
    # a hit whose cause explains another's (CUDA_HOME a list → an extension built without CUDA) goes first
    hits = sorted(pasted.hits, key=lambda h: not ids.intersection(h.signature.explains))
    for hit in (h for h in hits if h.signature.id not in refined):
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


def _no_nvidia_gpu(
    verdicts: tuple[Verdict, ...], pasted: PastedText, facts: Facts, titles: dict[str, str]
) -> tuple[Verdict, ...]:
    """The person says the machine has no NVIDIA GPU (triage/prose.py: "I don't have any NVIDIA adapter", an
    integrated Intel GPU) and nothing in the paste names one or shows a driver answering: a driver to install or
    a CUDA torch would change nothing. What fails is the program asking
    for CUDA on a machine without it; that is the cause, in place of every verdict that assumed a GPU."""
    said = pasted.prose.no_nvidia
    if (
        said is None
        or pasted.prose.gpu is not None
        or any(isinstance(g.name, str) for g in facts.nvidia_gpus)
    ):
        return verdicts
    driver, nvml = facts.driver, facts.nvml
    driver_said = not isinstance(driver, Unavailable) and (
        isinstance(driver.version, str) or isinstance(driver.cuda_version, str)
    )
    if pasted.smi is not None or not isinstance(nvml, Unavailable) or driver_said:
        return verdicts  # a driver answered there: whatever the words say, that machine has an NVIDIA GPU
    built_without_cuda = {h.line for h in pasted.hits if h.signature.id in _OPS_WITHOUT_CUDA}
    assumed = [
        v
        for v in verdicts
        if v.kind == Kind.PROBLEM
        and (
            v.finding.check_id in ASSUMES_NVIDIA
            or (v.finding.check_id == "torch.companions" and built_without_cuda.intersection(v.lines))
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
    ways = f"on the CPU ({device}, or device='cpu' / no `.cuda()` in its code), " + (
        "on the Intel GPU with torch's XPU build (device 'xpu') where the program supports it, "
        if intel
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


def _on_a_mac(
    verdicts: tuple[Verdict, ...], pasted: PastedText, facts: Facts, titles: dict[str, str]
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
    xformers = {h.line for h in pasted.hits if "xformers" in h.signature.id}
    assumed = [
        v
        for v in verdicts
        if v.kind == Kind.PROBLEM
        and (
            (v.finding.check_id in ASSUMES_NVIDIA and v.finding.check_id != "torch.cpu_build")
            or v.finding.check_id == "env.cuda_visible_devices"  # accelerate's "requires a GPU (not 'mps')"
            or (v.finding.check_id == "torch.companions" and xformers.intersection(v.lines))
        )
    ]
    if not assumed:
        return verdicts
    said = pasted.prose.macos
    finding = Finding(
        "gpu.present",
        Status.FAIL,
        "This is a Mac: it has no NVIDIA GPU and PyTorch's macOS builds have no CUDA, so what asks for CUDA "
        + ("(xFormers' CUDA kernels here) " if xformers else "")
        + "cannot run on it.",
        details="No driver, CUDA toolkit or torch build changes that. Apple's GPU runs torch through its MPS "
        "backend (device 'mps'), where the program supports it.",
        evidence=(Evidence("said", "a Mac", f"line {said} of the paste"),) if said is not None else (),
        remediation=no_cuda_on_a_mac(bool(xformers)),
    )
    lines = tuple(sorted({*([said] if said is not None else []), *(n for v in assumed for n in v.lines)}))
    kept = tuple(v for v in verdicts if v not in assumed and v.finding.check_id != "gpu.present")
    return (Verdict(finding, titles.get("gpu.present", "gpu.present"), Kind.PROBLEM, (), None, lines), *kept)


# What a Mac without an NVIDIA GPU cannot have: an NVIDIA driver and its log, CUDA, a Jetson's L4T
_NOT_ON_A_MAC = NVIDIA_ONLY + tuple(LINUX_ONLY) + ("torch.nvidia_wheels", "torch.cuda_init")


def _none_on_a_mac(verdicts: tuple[Verdict, ...], facts: Facts) -> tuple[Verdict, ...]:
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


def _installs_torch(fix: Remediation | None) -> bool:
    return fix is not None and any(
        arg == "torch" or arg.startswith("torch==") for c in fix.commands for arg in c.argv
    )


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
_ENGINE = lazy(
    r"\b(?P<name>vllm|sglang)[ \t]+serve\b|-m[ \t]+(?P<name2>vllm|sglang)\b|[/\\](?P<name3>vllm|sglang)[/\\]"
    r"|\b(?P<name4>vllm)(?:Worker|\.entrypoints)|(?P<name5>vLLM|SGLang)[ \t]+Version\b|(?<![\w-])(?P<name6>vllm|sglang)==\d",
    re.IGNORECASE,
)


def _serving_engine(pasted: PastedText) -> str | None:
    """The serving engine the paste shows running (never one only mentioned: "HF Trainer (not vLLM)")."""
    found = _ENGINE.search(pasted.paste.text, 0, MAX_CHARS)
    if found is None:
        listed = {lib.name for listing in pasted.packages for lib in listing.packages}
        return next((name for name in ("vllm", "sglang") if name in listed), None)
    return next(v for v in found.groups() if v is not None).lower()


def _engine_not_torch(verdict: Verdict, engine: str, facts: Facts) -> Verdict:
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
    if not _installs_torch(finding.remediation):
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


def _pinned_stack(pasted: PastedText) -> bool:
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


def _runtime_owner(pasted: PastedText) -> tuple[str, int] | None:
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


def _not_torchs_runtime(
    verdict: Verdict, facts: Facts, pasted: PastedText, owner: tuple[str, int]
) -> Verdict:
    """A driver too old for the CUDA runtime of a library that is not torch: the driver is the fix (that
    library's CUDA is its build's, which another torch does not change), and its first line names it."""
    finding = verdict.finding
    if finding.check_id != "torch.driver_compat" or finding.status is not Status.FAIL:
        return verdict
    if not gpus_older_than_every_build(facts):  # else the GPU's last driver is the ceiling: the finding's own
        fix = init_error_fix("", "driver_too_old", facts, in_container=_in_container(pasted))
        finding = dataclasses.replace(finding, remediation=fix)
    driver = facts.driver
    cuda = (
        driver.cuda_version
        if not isinstance(driver, Unavailable) and isinstance(driver.cuda_version, str)
        else None
    )
    name, line = owner
    summary = (
        f"The NVIDIA driver is older than the CUDA runtime of {name}, which raised the error (line {line} of the "
        "paste)" + (f": the driver runs CUDA ≤ {cuda}." if cuda else ".")
    )
    finding = dataclasses.replace(finding, summary=summary)
    return dataclasses.replace(verdict, finding=finding, find_out="nvidia-smi")


# Questions to torch whose answers a paste can show (collect_env, a pip list, torch's version line)
_TORCH_PROBES = frozenset(
    {
        "import torch; print(torch.version.cuda)",
        "import torch; print(torch.__version__, torch.version.cuda, torch.version.hip)",
    }
)


def _answered_probes(verdict: Verdict, facts: Facts) -> Verdict:
    """A fix that asks torch what the paste already shows (its version, the CUDA it was built with) says the
    answer instead, so the first command is the fix (blind set 11: 'print(torch.version.cuda)' under a paste
    that says torch 1.13.0+cu117). Windows gets the toolkit's own folder."""
    fix = verdict.finding.remediation
    packages = facts.torch_packages
    if fix is None or isinstance(packages, Unavailable) or not packages.version or not packages.cuda:
        return verdict
    asked = [c for c in fix.commands if len(c.argv) == 3 and c.argv[1] == "-c" and c.argv[2] in _TORCH_PROBES]
    if not asked:
        return verdict
    windows = on_windows(facts)
    where = (
        f" On Windows NVIDIA's installer puts it in C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v{packages.cuda}."
        if windows
        else ""
    )
    fix = dataclasses.replace(
        fix,
        text=f"The paste shows torch {packages.version}, built with CUDA {packages.cuda}. {fix.text}{where}",
        commands=tuple(c for c in fix.commands if c not in asked),
    )
    return dataclasses.replace(verdict, finding=dataclasses.replace(verdict.finding, remediation=fix))


GREP_VISIBLE = ("grep", "-rn", "CUDA_VISIBLE_DEVICES", ".")


# The program's own "no GPU" errors, by the catalogue's entry: torch's, and CUDA's error 100 (38 in old torch)
_NO_GPU_IN_PROGRAM = {
    "no_visible_gpu_no_cuda_gpus_available": "No CUDA GPUs are available",
    "no_driver_no_cuda_capable_device": "no CUDA-capable device is detected",
}


def _hidden_by_the_program(verdict: Verdict, pasted: PastedText) -> Verdict:
    """'No CUDA GPUs are available' from a program, in a paste that says is_available() is True elsewhere (a
    plain shell, another repository): the program itself hides the GPU, most often a CUDA_VISIBLE_DEVICES set
    in its code or config to a GPU that does not exist here (blind set 11's e11; set 7's thread of a hard-coded
    '3' on a one-GPU machine)."""
    finding = verdict.finding
    works = pasted.prose.torch_works
    if works is None or finding.check_id != "torch.cuda_init" or finding.status is not Status.FAIL:
        return verdict
    said = next(
        (_NO_GPU_IN_PROGRAM[h.signature.id] for h in pasted.hits if h.signature.id in _NO_GPU_IN_PROGRAM),
        None,
    )
    if said is None:
        return verdict
    fix = Remediation(
        text="torch sees the GPU outside this program, so the program hides it: find where it sets "
        "CUDA_VISIBLE_DEVICES (its code, a config file, a launcher script) and set it to a GPU this machine has "
        "(`0` on a machine with one), or remove it. A job scheduler or container that gives the program no GPU "
        "does the same: run `nvidia-smi -L` where the program runs.",
        commands=(
            Command(GREP_VISIBLE, note="in the program's folder: where it sets the variable"),
            Command(("nvidia-smi", "-L"), note="the GPUs there, numbered from 0"),
        ),
        target=Target.PYTHON_ENV,
    )
    summary = (
        f"The program hides the GPU: it finds none ({said}), while torch sees one outside it "
        f"(line {works} of the paste says is_available() is True)."
    )
    return dataclasses.replace(
        verdict, finding=dataclasses.replace(finding, summary=summary, remediation=fix), find_out=None
    )


# NCCL's own log lines (NCCL_DEBUG=INFO was set): "host:1354:1354 [0] NCCL INFO Bootstrap : Using eth0"
_NCCL_LOG = lazy(r"\] NCCL (?:INFO|WARN) ")


def _nccl_log_shown(verdict: Verdict, pasted: PastedText) -> Verdict:
    """NCCL's INFO log is already in the paste: asking to rerun with NCCL_DEBUG=INFO asks for what is there.
    Its WARN lines are what to read; where the fix was only that request, it says so."""
    finding = verdict.finding
    if finding.check_id != "nccl.communication" or _NCCL_LOG.search(pasted.paste.text, 0, MAX_CHARS) is None:
        return verdict
    details = finding.details.replace(" " + NCCL_DEBUG, "").replace(NCCL_DEBUG, "")
    fix = finding.remediation
    if fix is not None and fix.text == NCCL_DEBUG:
        fix = dataclasses.replace(
            fix,
            text="The paste holds NCCL's INFO log already: the 'NCCL WARN' lines just before the error (and a "
            "'Last error:' line) name the cause. Paste the log from the first 'NCCL WARN' to the error.",
        )
    finding = dataclasses.replace(finding, details=details, remediation=fix)
    asked = verdict.find_out is not None and verdict.find_out.startswith("NCCL_DEBUG=INFO")
    return dataclasses.replace(verdict, finding=finding, find_out=None if asked else verdict.find_out)


def _not_asked_again(verdict: Verdict, pasted: PastedText, facts: Facts) -> Verdict:
    """A problem's "to be sure" that asks what the paste already shows is left out (nvidia-smi beside
    nvidia-smi's own output, torch's version and build beside a report that shows them, the arch list beside
    torch's warning that lists it): the person's turn is not spent on an answer they gave."""
    ask = verdict.find_out
    if verdict.kind != Kind.PROBLEM or ask is None:
        return verdict
    packages, runtime = facts.torch_packages, facts.torch
    shown = (
        (ask == "nvidia-smi" and pasted.smi is not None)
        or (
            ask.endswith(TORCH_VERSION.removeprefix("python "))
            and not isinstance(packages, Unavailable)
            and packages.version is not None
            and (packages.cuda is not None or packages.hip is not None)
        )
        or (
            "get_arch_list()" in ask
            and "get_device_capability()" in ask
            and not isinstance(runtime, Unavailable)
            and bool(runtime.arch_list)
            and all(isinstance(g.compute_capability, str) for g in facts.nvidia_gpus)
        )
    )
    return dataclasses.replace(verdict, find_out=None) if shown else verdict


# A shell prompt with an activated environment: "(vllm-cpu) root@gpu-3090:~/oss#", "(cpu-env) PS C:\\work>"
_ENV_PROMPT = lazy(
    r"^[ \t>`]*\((?P<env>[\w.-]{1,60})\)[ \t]+(?:\S+@\S+|PS[ \t]|[A-Za-z]:\\|~|/)", re.MULTILINE
)
_CPU_WORD = lazy(r"(?:^|[-_.])cpu(?:$|[-_.])", re.IGNORECASE)
GPU_ENV = "gpu-env"


def _cpu_environment(verdict: Verdict, pasted: PastedText, facts: Facts) -> Verdict:
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


def _rocm_on_wsl(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
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


def _first_command(verdict: Verdict) -> str | None:
    fix = verdict.finding.remediation
    return fix.commands[0].display() if fix is not None and fix.commands else None


def _torch_for_the_driver(verdict: Verdict) -> bool:
    return verdict.finding.check_id == "torch.driver_compat" and _installs_torch(verdict.finding.remediation)


def _driver_not_torch(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """torch.driver_compat where the program's stack pins its torch (vLLM, SGLang, xformers, flash-attn): another
    torch build would break it, so the fix is a driver that runs the CUDA it was built for."""
    if not _torch_for_the_driver(verdict):
        return verdict
    if gpus_older_than_every_build(facts) or plan_driver(facts).end_of_life:
        return verdict  # the GPU's last driver branch is the ceiling: no newer driver to install
    return _not_torch(verdict, facts, pasted)


# the words of a container run: its driver is the host's (a shell prompt is container_shell_line's); no \b,
# which a CJK letter beside the word defeats ("进入docker内部": inside docker)
_CONTAINER_WORDS = lazy(
    r"(?<![A-Za-z])(?:docker|podman|nvidia-container-cli|kubernetes|kubectl|containers?)(?![A-Za-z])|容器",
    re.IGNORECASE,
)


# a container started with the GPUs: `--gpus`, the nvidia runtime, a device request or a Kubernetes limit
_GPUS_PASSED = lazy(
    r"--gpus\b|--runtime[= ]nvidia\b|--device[= ]nvidia\.com/gpu|nvidia\.com/gpu\b|capabilities:\s*\[\s*gpu"
)

_KUBERNETES = lazy(r"\b(?:kubernetes|kubeflow|k8s|kubectl)\b", re.IGNORECASE)
# A hosted notebook: Colab's /content folder in a traceback or its module, Kaggle's /kaggle folders
# (the machine's own paths or modules, never the word "Colab": "runs fine on Colab, but on our own server")
_HOSTED_NOTEBOOK = lazy(r"File \"/content/|\bgoogle\.colab\b|File \"/kaggle/|/kaggle/working\b")
GPU_FAULTS = frozenset({"driver.xid_errors", "gpu.memory_errors"})


def _on_a_hosted_notebook(verdict: Verdict) -> Verdict:
    """A GPU fault on Colab or Kaggle (blind set 15: reset steps for an uncorrectable ECC error on Colab): a
    new runtime is the only fix there."""
    finding = verdict.finding
    if finding.check_id not in GPU_FAULTS or finding.status is not Status.FAIL:
        return verdict
    fix = hosted_notebook_gpu()
    return dataclasses.replace(verdict, finding=dataclasses.replace(finding, remediation=fix), find_out=None)


# The person says the kernel changed, or that another kernel works: the module was not built for this one.
_KERNEL_CHANGED = lazy(
    r"\bkernel\b[^.\n]{0,40}\b(?:update|upgrade)|\b(?:update|upgrade)\w*\b[^.\n]{0,40}\bkernel\b"
    r"|\b(?:new|newer|updated|another|other|different|previous|older|old)\s+kernel\b"
    r"|(?<!n't )(?<!not )\bwork(?:s|ed|ing)?\b[^.\n]{0,60}\bkernel\b(?![ \t]*modules?\b)",
    re.IGNORECASE,
)
NOT_LOADED_FIND_OUT = "dkms status; uname -r   # the kernels the module is built for, and the running one"


def _module_not_loaded(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """nvidia-smi's own failure is in the paste, so asking for nvidia-smi again settles nothing: DKMS's list
    against the running kernel does. Where the person says the kernel changed, building comes first."""
    finding = verdict.finding
    if finding.check_id != "driver.installed" or not finding.summary.startswith(INSTALLED_NOT_LOADED):
        return verdict
    if _in_container(pasted):  # an image's own nvidia-smi: the kernel module is the host's business
        finding = dataclasses.replace(
            finding,
            summary="nvidia-smi inside the container reaches no NVIDIA driver: the container has no GPU passed "
            "in, or the host's driver does not answer.",
            details="A container uses the host's kernel module and driver, passed in with the GPUs by the NVIDIA "
            "Container Toolkit (`docker run --gpus all`); an nvidia-smi the image brings cannot reach a driver "
            "on its own. If `nvidia-smi` fails on the host too, the host's driver is the problem.",
            remediation=pass_gpus(ContainerRuntime.DOCKER),
        )
        return dataclasses.replace(verdict, finding=finding, find_out="nvidia-smi   # on the host")
    if _KERNEL_CHANGED.search(pasted.paste.text, 0, MAX_CHARS) is not None:
        finding = dataclasses.replace(finding, remediation=load_or_build(facts.os, kernel_changed=True))
    return dataclasses.replace(verdict, finding=finding, find_out=NOT_LOADED_FIND_OUT)


def _words_only_lines(pasted: PastedText) -> frozenset[int]:
    """The lines where only a words signature (the person's sentence, "_in_words") was read."""
    words = {h.line for h in pasted.hits if h.signature.id.endswith("_words")}
    shown = {h.line for h in pasted.hits if not h.signature.id.endswith("_words")}
    return frozenset(words - shown)


def _only_words(verdict: Verdict, said: frozenset[int]) -> bool:
    return bool(verdict.lines) and all(line in said for line in verdict.lines)


def _printed(verdict: Verdict, said: frozenset[int]) -> bool:
    """The verdict rests on a line a program printed (not only the person's words, nor the tables alone)."""
    return any(line not in said for line in verdict.lines)


# An AMD GPU shown anywhere: its gfx target in an error, its product line
_AMD_NAMED = lazy(r"\bgfx\d{3,4}\b|\bRadeon\b|\bInstinct\b|\bMI\d{2,3}X?\b|\bRX[ \t]?\d{4}\b", re.IGNORECASE)


def _rocm_build_on_nvidia(verdict: Verdict, facts: Facts, about_torch: bool, pasted: PastedText) -> Verdict:
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


def _program_cuda_build() -> Remediation:
    """A program's ROCm build on an NVIDIA machine, where the paste never names torch: the program's own
    installer or environment chose AMD; its NVIDIA (CUDA) build is the fix, not a torch command."""
    return Remediation(
        text="Reinstall the program choosing its NVIDIA (CUDA) build, or install the CUDA build of torch into "
        "the program's own environment (its installer folder), in place of the ROCm one it installed.",
        target=Target.PYTHON_ENV,
    )


_INSIDE_WORDS = lazy(
    r"\b(?:inside|in|within)[ \t]+(?:the|a|my|our)[ \t]+(?:docker[ \t]+)?container\b|在容器[内里中]", re.I
)


# The paste puts the failure on the host, or shows the container started with its GPUs and a variable that
# hides them: "on the host: $ nvidia-smi", `--gpus all`, CUDA_VISIBLE_DEVICES set
_HOST_SIDE = lazy(r"\bon[ \t]+the[ \t]+host\b|--gpus\b|CUDA_VISIBLE_DEVICES\s*=", re.IGNORECASE)


def _ran_inside_a_container(pasted: PastedText) -> bool:
    """The failing commands ran in a container's own shell (its prompt, or words that put them inside one);
    never nvidia-container-cli's relay of the host's NVML error, which is the host's own."""
    text = pasted.paste.text[:MAX_CHARS]
    if "nvidia-container-cli" in text:
        return False  # the toolkit relays the host's NVML
    if pasted.container_line is not None:  # its own prompt shows it
        return True
    # words only: unless the person shows it on the host, or a container started with its GPUs
    return _INSIDE_WORDS.search(text) is not None and _HOST_SIDE.search(text) is None


def _mismatch_in_a_container(verdict: Verdict) -> Verdict:
    """NVML's driver/library mismatch where the paste shows or says a container: the image's own driver
    libraries against the host's module (blind sets 13 and 14), not a host that missed a reboot."""
    finding = verdict.finding
    if finding.remediation not in (reload_after_upgrade(), mismatch_after_reboot()):
        return verdict
    details = finding.details.removesuffix(MISSED_REBOOT)  # the host's upgrade story does not apply
    finding = dataclasses.replace(
        finding,
        summary="Driver/library version mismatch inside a container: its NVIDIA libraries are another version "
        "than the host's kernel module.",
        remediation=driver_libraries_in_image(),
        details=details,
    )
    return dataclasses.replace(verdict, finding=finding, find_out=None)


_FIND_ITS_PYTHON = (
    "Print which Python and torch the program gets, then install with that Python's full path. "
)
_WHICH_PYTHON = Command(
    (PYTHON, "-c", "import sys, torch; print(sys.executable, torch.__version__, torch.__file__)"),
    note="run it the way the program runs (its venv, launcher or app folder): the install goes into that Python",
)


def _in_the_apps_python(verdict: Verdict, app: AppPython, pasted: PastedText) -> Verdict:
    """A torch install for a bare `python`, in a paste about an application that runs its own Python
    (compat/app_pythons.json): its portable build's Python where the paste shows that build, else which Python
    the application runs, asked first (blind set 16: ComfyUI, Krita AI Diffusion's server)."""
    fix = verdict.finding.remediation
    first = fix.commands[0] if fix is not None and fix.commands else None
    installs = first is not None and "install" in first.argv and "uninstall" not in first.argv
    if (
        fix is None
        or first is None
        or not installs
        or not _installs_torch(dataclasses.replace(fix, commands=(first,)))
    ):
        return verdict  # an install of torch leads the fix, or this is not about where torch goes
    if not _plain_python(first.argv) or pasted.interpreter is not None:
        return verdict  # the paste shows the interpreter: the fix names it already
    text = pasted.paste.text[:MAX_CHARS]
    if app.portable_marker is not None and app.portable_python and app.portable_marker.search(text):
        python = app.portable_python
        commands = tuple(
            dataclasses.replace(c, argv=_with_python(c.argv, python)) if _plain_python(c.argv) else c
            for c in fix.commands
        )
        said = f"{app.name}'s portable build runs its own Python: {app.where}. "
    else:
        probe = dataclasses.replace(_WHICH_PYTHON, note=f"with {app.name}'s own Python: {app.where}")
        commands = (probe, *fix.commands)
        said = (
            f"{app.name} runs its own Python ({app.where}), not the one on PATH: install with that Python's full "
            "path in place of `python`. "
        )
    finding = dataclasses.replace(
        verdict.finding, remediation=dataclasses.replace(fix, text=said + fix.text, commands=commands)
    )
    return dataclasses.replace(verdict, finding=finding)


# A CUDA build of torch by its version as pip or a person writes it: "2.0.1+cu117", "version 2.0.1 + cu117"
# (never xFormers' "built for PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.1.0+cpu)": a build, not an install)
_CUDA_TORCH_SAID = lazy(
    r"(?<![\w.])(?P<version>\d\.\d{1,2}(?:\.\d{1,2})?)[ \t]*\+[ \t]*(?P<tag>cu\d{2,3})\b(?![ \t]+with[ \t]+CUDA)"
)


def _two_torches(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """A CPU build the program imports, beside a CUDA build the same paste shows elsewhere (`pip show torch` says
    2.0.1+cu117, the program runs 2.0.0+cpu: blind set 16): two Pythons, and pip installs into the one the
    program does not run, so which Python runs it comes first."""
    finding, fix = verdict.finding, verdict.finding.remediation
    packages = facts.torch_packages
    if finding.check_id != "torch.cpu_build" or finding.status is not Status.FAIL or fix is None:
        return verdict
    if isinstance(packages, Unavailable) or packages.version is None or not _installs_torch(fix):
        return verdict
    if not fix.commands or not _plain_python(fix.commands[0].argv):
        return verdict  # the paste names the interpreter: the install goes there already
    text = pasted.paste.text
    if "+" not in text or "requirement already satisfied" in text[:MAX_CHARS].lower():
        return verdict  # pip kept the same version's CPU build: a forced reinstall, not another Python
    other = _CUDA_TORCH_SAID.search(text, 0, MAX_CHARS)
    # pip's own word for it (`pip show torch` gave it, `pip install torch==X+cuY` put it somewhere)
    if other is None or "pip" not in line_around(text, other).lower():
        return verdict
    line = text.count("\n", 0, other.start()) + 1
    said = "The CUDA build is in the Python the program does not use. " + _FIND_ITS_PYTHON
    commands = (_WHICH_PYTHON, *fix.commands)
    summary = (
        f"Two Pythons: the program runs torch {packages.version}, a CPU-only build, while pip shows or installed "
        f"{other['version']}+{other['tag']} (line {line}) in another."
    )
    finding = dataclasses.replace(
        finding,
        summary=summary,
        remediation=dataclasses.replace(fix, text=said + fix.text, commands=commands),
    )
    return dataclasses.replace(verdict, finding=finding)


def _reinstalled_already(verdict: Verdict, line: int) -> Verdict:
    """A torch install for an interpreter the paste does not show, where the person says installing again changed
    nothing (blind set 16: "installed a ton of new pytorch builds ... same error"): those installs went into
    another Python than the program's, so which Python runs it comes first, then the install with that path."""
    fix = verdict.finding.remediation
    if fix is None or not _installs_torch(fix) or not any(_plain_python(c.argv) for c in fix.commands):
        return verdict
    asked = fix.commands[0].argv == _WHICH_PYTHON.argv  # an application's own Python was asked for already
    text = (
        "Installing torch again changed nothing (line "
        f"{line} of the paste): the installs went into another Python than the one the program runs. "
        + _FIND_ITS_PYTHON
        + fix.text
    )
    commands = fix.commands if asked else (_WHICH_PYTHON, *fix.commands)
    finding = dataclasses.replace(
        verdict.finding, remediation=dataclasses.replace(fix, text=text, commands=commands)
    )
    return dataclasses.replace(verdict, finding=finding, find_out=None)


def _rebooted_already(verdict: Verdict, pasted: PastedText) -> Verdict:
    """A library/module mismatch the person says a reboot did not clear: find the module that loads (not asking
    again for the running module's version where the paste shows /proc/driver/nvidia/version)."""
    finding = verdict.finding
    if finding.remediation != reload_after_upgrade():
        return verdict
    fix = mismatch_after_reboot()
    if "NVRM version:" in pasted.paste.text:  # the running module's version is in the paste already
        asked = tuple(c for c in fix.commands if c.argv != ("cat", "/proc/driver/nvidia/version"))
        fix = dataclasses.replace(fix, commands=asked)
    details = finding.details.removesuffix(MISSED_REBOOT)  # "...and was not rebooted": it was
    finding = dataclasses.replace(finding, remediation=fix, details=details)
    return dataclasses.replace(verdict, finding=finding, find_out=None)


OOM = "torch.out_of_memory"
_NO_SETTING_FITS = (
    "A smaller batch, bf16 and gradient checkpointing shrink only the activations: the weights, gradients and "
    "optimizer states of full training stay, and alone they outgrow this GPU."
)


def _too_big_to_train(
    verdicts: tuple[Verdict, ...], pasted: PastedText, job: TrainingSize, titles: dict[str, str]
) -> tuple[Verdict, ...]:
    """Full fine-tuning of a model whose weights, gradients and AdamW states alone outgrow the GPU (blind set
    15: a 7B model on a 12 GiB RTX 3060 was told to use bf16, which its command already set). An out-of-memory
    verdict gets that arithmetic as its cause; a paste that only asks how much memory it needs gets it as the
    answer. A GPU large enough (or not said, beside an error) leaves the verdicts as they are."""
    fits = job.gpu_gib is not None and job.full_gib <= job.gpu_gib
    oom = next((v for v in verdicts if v.finding.check_id == OOM and v.finding.status is Status.FAIL), None)
    if fits or (oom is not None and job.gpu_gib is None):
        return verdicts
    failed = any(v.kind == Kind.PROBLEM and v.finding.status is Status.FAIL for v in verdicts)
    if oom is None and (not pasted.prose.memory_asked or failed):  # an answer, not beside another failure
        return verdicts
    gpu = f"; this GPU has {job.gpu_gib:.1f} GiB" if job.gpu_gib is not None else ""
    summary = (
        f"Full fine-tuning of a {job.model} model needs about {job.full_gib:.0f} GiB of GPU memory"
        + (f" on each of its {job.gpus} GPUs" if job.gpus > 1 else "")
        + " even at batch size 1 with gradient checkpointing (weights, gradients and AdamW states: 16 bytes a "
        f"parameter){gpu}."
    )
    fix = too_big_to_train(job.model, job.lora_gib, job.qlora_gib)
    evidence = (Evidence("model", job.model, f"line {job.line} of the paste"),)
    if oom is not None:
        finding = dataclasses.replace(oom.finding, summary=summary, details=_NO_SETTING_FITS, remediation=fix)
        # the arithmetic decides it: no process list to ask for
        return tuple(
            dataclasses.replace(v, finding=finding, find_out=None) if v is oom else v for v in verdicts
        )
    finding = Finding(OOM, Status.WARN, summary, evidence=evidence, remediation=fix)
    return (*verdicts, Verdict(finding, titles.get(OOM, OOM), Kind.PROBLEM, (), None, (job.line,)))


def _too_big_to_run(verdicts: tuple[Verdict, ...], job: RunSize) -> tuple[Verdict, ...]:
    """An out-of-memory error running a model whose 16-bit weights alone fill the GPU (blind set 16: an 8B
    model on a 16 GiB card was told to lower max_model_len, which the weights leave no room for): the
    arithmetic is the cause, and a smaller form of the model the fix."""
    oom = next((v for v in verdicts if v.finding.check_id == OOM and v.finding.status is Status.FAIL), None)
    if oom is None:
        return verdicts
    split = f" on each of its {job.gpus} GPUs" if job.gpus > 1 else ""
    summary = (
        f"The {job.model} model's weights alone take about {job.weights_gib:.1f} GiB in 16-bit precision{split}, "
        f"of this GPU's {job.gpu_gib:.1f} GiB: nothing is left for the KV cache and activations."
    )
    fix = too_big_to_run(job.model, job.weights_gib, job.gpu_gib, job.int4_gib)
    details = "A smaller batch or context shrinks only the KV cache and activations, never the weights."
    finding = dataclasses.replace(oom.finding, summary=summary, details=details, remediation=fix)
    return tuple(
        dataclasses.replace(v, finding=finding, find_out=None, lines=tuple(sorted({*v.lines, job.line})))
        if v is oom
        else v
        for v in verdicts
    )


def _gpus_past_the_cut(verdict: Verdict, cut: int) -> Verdict:
    """An index past the GPUs of an nvidia-smi table cut after its row `cut` may well exist (blind set 17: "'1'
    is not a GPU index (0-0)" read from a table cut after GPU 0): what is known is only that the program asked
    CUDA for one it does not see."""
    finding = verdict.finding
    if finding.check_id != "env.cuda_visible_devices" or NOT_A_GPU_INDEX not in finding.summary:
        return verdict
    summary = (
        f"The program asked CUDA for a GPU it does not see; the paste's nvidia-smi table stops after the GPU on "
        f"line {cut}, so how many GPUs the machine has is not shown."
    )
    finding = dataclasses.replace(finding, summary=summary, remediation=asked_for_a_missing_gpu())
    return dataclasses.replace(
        verdict, finding=finding, find_out=None, lines=tuple(sorted({*verdict.lines, cut}))
    )


def _lost_again(verdict: Verdict, line: int) -> Verdict:
    finding = verdict.finding
    if finding.check_id != "driver.xid_errors" or FELL_OFF_THE_BUS not in finding.summary:
        return verdict
    finding = dataclasses.replace(finding, remediation=gpu_lost_again(line))
    return dataclasses.replace(verdict, finding=finding, lines=tuple(sorted({*verdict.lines, line})))


def _across_machines(verdict: Verdict, facts: Facts, line: int) -> Verdict:
    """NCCL's unexplained failure ("unhandled system error") in a job said to span machines: the connection
    between them comes before /dev/shm, which one machine alone would have hit too (blind set 17)."""
    errors = facts.reported_errors
    kinds = {e.kind for e in errors} if not isinstance(errors, Unavailable) else set()
    if verdict.finding.check_id != "nccl.communication" or verdict.kind != Kind.PROBLEM:
        return verdict
    if not kinds & {"nccl_system", "nccl"} or kinds & {"nccl_shm", "nccl_shm_permission", "nccl_shm_attach"}:
        return verdict
    cause, fix = between_machines()
    finding = dataclasses.replace(
        verdict.finding, summary=f"{cause}: the job spans several machines (line {line}).", remediation=fix
    )
    return dataclasses.replace(
        verdict, finding=finding, find_out=None, lines=tuple(sorted({*verdict.lines, line}))
    )


def _updated_then_804(verdict: Verdict, pasted: PastedText, line: int) -> Verdict:
    """Error 804 right after the system was updated, outside a container: the driver's packages moved on while
    the old kernel module still runs (blind set 17: "after recent ubuntu update"); a reboot loads the new one."""
    if verdict.finding.check_id != "torch.cuda_init" or not any(
        h.signature.id.startswith("forward_compat_804") for h in pasted.hits
    ):
        return verdict
    finding = dataclasses.replace(
        verdict.finding,
        summary=(
            f"CUDA fails with error 804 since the system was updated (line {line}): the driver's libraries were "
            "upgraded while the old kernel module still runs."
        ),
        remediation=reload_after_upgrade(),
    )
    return dataclasses.replace(
        verdict,
        finding=finding,
        find_out="cat /proc/driver/nvidia/version   # the module that runs, against the driver installed",
        lines=tuple(sorted({*verdict.lines, line})),
    )


def _without_importing_torch(verdict: Verdict) -> Verdict:
    """torch's import fails in the paste: a question that imports torch gets that error again (blind set 17's
    second review), so pip says which torch is installed, and what needs torch running waits for the fix."""
    ask = verdict.find_out
    if verdict.kind != Kind.UNKNOWN or not ask or "import torch" not in ask:
        return verdict
    python = ask.split(" -c ", 1)[0]
    if verdict.finding.check_id in ("torch.installed", "torch.cpu_build", "compat.data_age"):
        return dataclasses.replace(verdict, find_out=f"{python} -m pip show torch")
    return dataclasses.replace(verdict, kind=Kind.NOT_APPLICABLE, missing=(), find_out=None)


_UNKNOWN_PIN = lazy(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]*)==VERSION$")
_VERSION_NOTE = lazy(r";?\s*VERSION: [^;]*")


def _without_version_note(note: str) -> str:
    """A command's note without its explanation of the VERSION placeholder, once the release is filled in."""
    return _VERSION_NOTE.sub("", note)


def _versions_from_the_list(verdict: Verdict, listed: dict[str, str]) -> Verdict:
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


def _in_the_wrappers_words(verdict: Verdict, wrapper: Wrapper) -> Verdict:
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


# the library errors whose cause is two packages' versions, which `pip check` compares
_VERSION_CONFLICTS = frozenset({"undefined_symbol", "cudnn", "cublas"})


def _no_pip_check_for_the_loader(verdict: Verdict, pasted: PastedText) -> Verdict:
    """`pip check` compares the versions packages declare: it says nothing of a library the loader cannot
    find, a Windows DLL that does not load or a compiler too old (blind set 17), so it is no question to ask."""
    if verdict.finding.check_id != "env.library_path" or verdict.find_out != FIND_OUT["env.library_path"]:
        return verdict
    kinds = {h.implies.get("error") for h in pasted.hits if h.signature.check == "env.library_path"}
    return verdict if not kinds or kinds & _VERSION_CONFLICTS else dataclasses.replace(verdict, find_out=None)


def _slow_between_sockets(verdict: Verdict, pasted: PastedText) -> Verdict:
    finding = slow_across_sockets(verdict.finding, pasted) if verdict.finding.check_id == TOPOLOGY else None
    if finding is None or pasted.topology is None or pasted.prose.slow is None:
        return verdict
    lines = {*verdict.lines, pasted.prose.slow, *pasted.topology.lines}
    return dataclasses.replace(
        verdict, finding=finding, kind=Kind.PROBLEM, missing=(), find_out=None, lines=tuple(sorted(lines))
    )


def _at_batch_one(verdict: Verdict, line: int, facts: Facts) -> Verdict:
    """Out of memory at batch size 1, said in words: no smaller batch exists. Without figures, what holds the
    memory comes first (blind set 13: 6 GB held before the run started); with them, the model or one input."""
    finding = verdict.finding
    reported = facts.reported_errors
    error = stated_most(reported) if not isinstance(reported, Unavailable) else None
    if (
        finding.check_id != "torch.out_of_memory"
        or not offers_a_smaller_job(finding.remediation)
        or error is None
    ):
        return verdict
    finding = dataclasses.replace(
        finding,
        summary=f"{finding.summary.removesuffix('.')}, with the batch size already 1 (line {line}).",
        remediation=too_big_at_batch_one(sized(error)),
    )
    return dataclasses.replace(verdict, finding=finding, lines=tuple(sorted({*verdict.lines, line})))


def _in_a_pod(verdict: Verdict, facts: Facts) -> Verdict:
    """NCCL's /dev/shm too small, in a Kubernetes pod: the emptyDir, not `docker run --shm-size`."""
    finding = verdict.finding
    if finding.check_id != "nccl.communication" or finding.status is not Status.FAIL:
        return verdict
    if not _reported(facts, "nccl_shm"):
        return verdict
    return dataclasses.replace(verdict, finding=dataclasses.replace(finding, remediation=kubernetes_shm()))


def _in_container_fix(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
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
        and _ran_inside_a_container(
            pasted
        )  # a container's own prompt or "inside the container", not a mention
    ):
        # "Found no NVIDIA driver" or no GPU in a container's shell: its libcuda comes from the host through the
        # NVIDIA runtime, so the container was started without the GPUs (the host's own nvidia-smi may well work)
        passed = pass_gpus(
            ContainerRuntime.DOCKER
        )  # a shell prompt says a container, as the other fixes here
        return dataclasses.replace(verdict, finding=dataclasses.replace(finding, remediation=passed))
    hit = next((h for h in pasted.hits if "803" in h.signature.id or "804" in h.signature.id), None)
    if finding.check_id != "torch.cuda_init" or finding.status is not Status.FAIL or hit is None:
        return verdict
    fix = init_error_fix(hit.signature.id, "forward_compat", facts, in_container=True)
    return dataclasses.replace(verdict, finding=dataclasses.replace(finding, remediation=fix))


# mmcv's release as a person or a pip command writes it: "mmcv=1.1.5", "mmcv-full==1.5.0", "mmcv_full 1.3.9"; 1.x
# with CUDA operators is the mmcv-full package, 2.x is mmcv
_MMCV_SAID = lazy(
    r"\bmmcv(?P<full>[-_]full)?[ \t]*(?:==?|:|[ \t])[ \t]*v?(?P<version>[12]\.\d{1,2}\.\d{1,2})\b",
    re.IGNORECASE,
)


def _mmcv_said(text: str) -> tuple[str, str] | None:
    """The mmcv package and release the paste names (one of them: two different ones name neither)."""
    said = {
        ("mmcv-full" if found["full"] or found["version"].startswith("1.") else "mmcv", found["version"])
        for found in _MMCV_SAID.finditer(text, 0, MAX_CHARS)
    }
    return next(iter(said)) if len(said) == 1 else None


def _with_mmcv(verdict: Verdict, name: str, version: str) -> Verdict:
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


# A `docker run` typed on one line, after whatever prompt precedes it (`D:\FacePoke>`, `$ `, `user@host:~$ `)
_THEIR_RUN = lazy(
    r"^(?:[^\n]*?[>$#%][ \t]*|[ \t]*)(?P<sudo>sudo[ \t]+)?(?P<tool>docker|podman)[ \t]+run[ \t]+"
    r"(?P<rest>[^\n`^\\|;&<>$%]+?)[ \t]*$"
)  # never one with a variable or a substitution ($(pwd), %CD%): quoted again, it would no longer expand


def _their_docker_run(verdict: Verdict, pasted: PastedText, line: int) -> Verdict:
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


def _toolkit_explains_the_driver(pasted: PastedText) -> bool:
    """The container toolkit's own error is in the paste: it says why no driver answers inside the container
    (an image's own nvidia-smi, a device plugin without libnvidia-ml). Unless the driver's fault it relays is
    the host's ("nvidia-container-cli: ... nvml error: driver/library version mismatch"): then the host's
    driver stays the cause, and a reboot its fix."""
    if not any(h.signature.check == "platform.container_gpus" for h in pasted.hits):
        return False
    return not any(h.signature.check == "driver.nvml" and "mismatch" in h.signature.id for h in pasted.hits)


def _in_container(pasted: PastedText) -> bool:
    return _container_said(pasted) is not None


def _gpu_listed_by_a_tool(facts: Facts) -> bool:
    """A GPU named by a tool's output (nvidia-smi, collect_env), not only in the person's words: inside a
    container, proof that the GPUs were passed in."""
    return any(isinstance(g.name, str) and g.name_source != WORDS for g in facts.gpus)


def _container_said(pasted: PastedText) -> int | None:
    """The first line that shows (a container's prompt) or says (its words) that this ran in a container."""
    if pasted.container_line is not None:
        return pasted.container_line
    said = _CONTAINER_WORDS.search(pasted.paste.text, 0, MAX_CHARS)
    return None if said is None else pasted.paste.text.count("\n", 0, said.start()) + 1


def _about_amd(facts: Facts, pasted: PastedText) -> bool:
    """An AMD GPU, a ROCm build of torch or a HIP error in the paste: what triage's AMD_CHECKS and the not-torch
    rule both go by (triage adds a collect_env report's ROCm line, which only it reads)."""
    packages = facts.torch_packages
    return (
        any(g.vendor == "amd" for g in facts.gpus)
        or any(h.signature.cls == "rocm" for h in pasted.hits)
        or (not isinstance(packages, Unavailable) and packages.hip is not None)
    )


def _not_torch(verdict: Verdict, facts: Facts, pasted: PastedText) -> Verdict:
    """A paste that never mentions torch is another program's error (a CUDA binary, JAX, llama.cpp): what
    settles it is nvidia-smi, not torch, and installing torch fixes nothing there."""
    check_id = verdict.finding.check_id
    if verdict.kind == Kind.UNKNOWN and (check_id.startswith("torch.") or check_id == "compat.data_age"):
        # what torch would say is no question for a program without it (nvidia-smi answers none of these)
        return dataclasses.replace(verdict, kind=Kind.NOT_APPLICABLE, missing=(), find_out=None)
    if verdict.find_out and "import torch" in verdict.find_out and not _about_amd(facts, pasted):
        verdict = dataclasses.replace(verdict, find_out="nvidia-smi")  # an AMD machine has none: torch's own
    finding = verdict.finding
    if not _installs_torch(finding.remediation):
        return verdict
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
            remediation=init_error_fix("", "driver_too_old", facts, in_container=_in_container(pasted)),
        )
    elif finding.check_id == "amd.gfx_target":  # a ROCm library's gap: its ROCm release, not a torch
        finding = dataclasses.replace(finding, remediation=gfx_target_fix())
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


# A finding that says it is the usual cause, not the one the paste shows
_HEDGED = lazy(r"\b(?:most likely|most often)\b", re.IGNORECASE)


def _confidence(cause: Verdict, facts: Facts) -> str:
    summary = cause.finding.summary
    if summary.startswith((UNEXPLAINED_FALSE, FALSE_IN_A_CONTAINER)) or _HEDGED.search(summary):
        return Confidence.LIKELY
    if cause.lines:
        return Confidence.STATED
    check = cause.finding.check_id
    driver = facts.driver
    if (
        check == "torch.driver_compat"
        and not isinstance(driver, Unavailable)
        and driver.cuda_version_source == "compat table"
    ):
        return Confidence.INFERRED
    if check == "torch.arch_compat" and any(
        g.compute_capability_source == "compat table" for g in facts.nvidia_gpus
    ):
        return Confidence.INFERRED
    return Confidence.STATED


def _verdict(finding: Finding, title: str, missing: list[str], lines: tuple[int, ...]) -> Verdict:
    find_out = FIND_OUT.get(finding.check_id)
    if finding.summary.startswith(UNEXPLAINED_FALSE) and finding.remediation is not None:
        find_out = None  # its fix is the question to torch itself: asking it twice settles nothing more
    if finding.summary.startswith(CUSTOM_ALL_REDUCE):
        find_out = None  # vLLM's own kernel: NCCL_DEBUG=INFO would say nothing of it
    fix = finding.remediation
    if fix is not None and fix.commands and "--no-build-isolation" in fix.commands[0].argv:
        find_out = (
            TORCH_VERSION  # an extension that pins no torch: pip check names nothing; it is rebuilt for this
        )
    if missing and not lines:
        if finding.status in (Status.FAIL, Status.WARN):  # what it would say rests on what the paste lacks
            finding = dataclasses.replace(
                finding,
                status=Status.UNKNOWN,
                summary=f"Not decided from the paste: it does not show {'; '.join(missing)}.",
                details="",
                remediation=None,
            )
        return Verdict(finding, title, Kind.UNKNOWN, tuple(missing), find_out, lines)
    if finding.status in (Status.FAIL, Status.WARN, Status.CRASH):
        return Verdict(finding, title, Kind.PROBLEM, (), find_out, lines)
    if finding.status is Status.UNKNOWN or missing:
        return Verdict(finding, title, Kind.UNKNOWN, tuple(missing), find_out, lines)
    kind = Kind.FINE if finding.status is Status.PASS else Kind.NOT_APPLICABLE
    return Verdict(finding, title, kind, (), None, lines)


_NO_HIP_VERSION = lazy(r"0(?:\.0)*")


def _for_paste(finding: Finding, pasted: PastedText, k: Known, facts: Facts) -> Finding:
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
        and not _gpu_listed_by_a_tool(facts)
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
        inside = _container_said(pasted)
        if (
            inside is not None
            and not _gpu_listed_by_a_tool(facts)
            and _GPUS_PASSED.search(pasted.paste.text, 0, MAX_CHARS) is None  # its start passes them in
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
        and not k.gpus_listed
        and facts.jetson_board is None  # a Jetson's torch depends on its JetPack, not on a GPU to name
        and fix is not None
        and fix.target is Target.PYTHON_ENV
        and _installs_torch(fix)
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
