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
import re
from typing import TYPE_CHECKING

from torch_gpu_doctor.catalog import builtin_specs, load_checks
from torch_gpu_doctor.checks.nccl_communication import CUSTOM_ALL_REDUCE
from torch_gpu_doctor.checks.torch_stack import KNOWN_BUG, known_library_bug
from torch_gpu_doctor.compat.app_pythons import app_in
from torch_gpu_doctor.compat.rocm_gfx import gfx_of_product
from torch_gpu_doctor.compat.wrappers import wrapper_in
from torch_gpu_doctor.facts.model import Facts
from torch_gpu_doctor.fixes.target import on_windows
from torch_gpu_doctor.fixes.torch_wheel import gpus_older_than_every_build
from torch_gpu_doctor.judge import judge
from torch_gpu_doctor.lazy_re import lazy
from torch_gpu_doctor.model import Command, Finding, Status
from torch_gpu_doctor.records import dataclass
from torch_gpu_doctor.triage.app_switches import with_the_apps_switches
from torch_gpu_doctor.triage.asked import (
    NO_BUILD_NEEDED,
    asked_cuda,
    asked_cuda_got_another,
    asked_cuda_got_cpu,
    build_for_said_cuda,
)
from torch_gpu_doctor.triage.built_for import extension_built_for, torch_the_extension_was_built_for
from torch_gpu_doctor.triage.cuda_home import CUDA_HOME_NOT_SET, torch_without_cuda
from torch_gpu_doctor.triage.cuda_on_amd import cuda_program_on_amd
from torch_gpu_doctor.triage.facts import PYTHON, listed_build
from torch_gpu_doctor.triage.features_on import ILLEGAL_ADDRESS, without_the_feature
from torch_gpu_doctor.triage.fresh_container import NVML_UNKNOWN, in_a_new_container
from torch_gpu_doctor.triage.frozen_build import frozen_build, inside_a_frozen_build
from torch_gpu_doctor.triage.ggml_devices import GGML_INVALID_FUNCTION, on_a_device_the_build_lacks
from torch_gpu_doctor.triage.gpus_shown import (
    MIXED,
    gpus_past_the_cut,
    held_out_of_sight,
    idle_while_slow,
    mixed_gpus,
    no_cuda_on_the_gpus_shown,
    on_a_full_gpu_beside_free_ones,
    on_the_smaller_gpu,
    slow_between_sockets,
)
from torch_gpu_doctor.triage.hunch import hunch
from torch_gpu_doctor.triage.interpreter import (
    asked_with,
    in_the_apps_python,
    interpreter_shown,
    reinstalled_already,
    two_torches,
)
from torch_gpu_doctor.triage.jetson_container import jetson_container_without_runtime
from torch_gpu_doctor.triage.job_size import (
    at_batch_one,
    too_big_to_run_here,
    too_big_to_train_here,
    while_evaluating,
)
from torch_gpu_doctor.triage.kernel_fault import KERNEL_FAULTS
from torch_gpu_doctor.triage.kernel_fault import next_step as fault_next_step
from torch_gpu_doctor.triage.labels import binary_labels_one_class
from torch_gpu_doctor.triage.line_kinds import (
    exception_lines,
    logged_warning_lines,
    only_words,
    shown_by_a_program,
    warned_and_went_on,
    words_only_lines,
)
from torch_gpu_doctor.triage.model import HUGGINGFACE_ENV
from torch_gpu_doctor.triage.nccl_settings import with_the_settings_set
from torch_gpu_doctor.triage.nccl_timing import at_a_step_some_ranks_take_alone
from torch_gpu_doctor.triage.no_devices import SIGNATURE as NO_DEVICES
from torch_gpu_doctor.triage.no_devices import no_devices_on_an_open_only_gpu
from torch_gpu_doctor.triage.no_wheel import SIGNATURE as NO_WHEEL
from torch_gpu_doctor.triage.no_wheel import no_wheel_for_this_python, no_wheel_on_an_old_index
from torch_gpu_doctor.triage.old_release import built_before_the_gpu, same_release_build
from torch_gpu_doctor.triage.oom_phase import by_phase as oom_by_phase
from torch_gpu_doctor.triage.outcome import (
    AMD_CHECKS,
    BY_MESSAGE_ONLY,
    CAUSE_ORDER,
    FAILURE_REPORTS,
    FALSE_IN_A_CONTAINER,
    FIND_OUT,
    LINUX_ONLY,
    NOT_ON_A_JETSON,
    NOT_ON_WSL,
    NVIDIA_CHECKS,
    PROGRAM_BUGS,
    TOPOLOGY,
    TORCH_VERSION,
    UNEXPLAINED_FALSE,
    Confidence,
    Kind,
    Triage,
    Verdict,
    error_reported,
    installs_torch,
)
from torch_gpu_doctor.triage.paste import IN_WORDS, INFORMATIONAL, PastedText
from torch_gpu_doctor.triage.prose import MAX_CHARS
from torch_gpu_doctor.triage.ptx import SIGNATURE as PTX_TOO_NEW
from torch_gpu_doctor.triage.ptx import ptx_newer_than_the_driver
from torch_gpu_doctor.triage.replaced_torch import replaced_by_an_install
from torch_gpu_doctor.triage.rocm_override import override_left_set
from torch_gpu_doctor.triage.shown_error import ShownError
from torch_gpu_doctor.triage.told import (
    across_machines,
    answered_probes,
    bnb_saw_no_gpu,
    booted_with_the_mismatch,
    context_of_a_running_process,
    cuda_works_nvml_mismatched,
    cured_by_a_restart,
    driver_for_the_toolkit,
    gpus_said_for_duplicate_ranks,
    hidden_by_the_program,
    launcher_hides_the_gpus,
    lost_again,
    module_not_loaded,
    nccl_bootstrap,
    nccl_log_shown,
    no_pip_check_for_the_loader,
    not_asked_again,
    one_gpu_per_task,
    p2p_off_not_inherited,
    pip_kept_torch,
    program_fault_below_the_programs,
    rebooted_already,
    shown_outputs_not_asked_again,
    updated_then_804,
    watermark_already_set,
    without_importing_torch,
    works_where_tested,
    wsl_session,
)
from torch_gpu_doctor.triage.two_environments import environments, two_environments
from torch_gpu_doctor.triage.under_sudo import started_with_sudo
from torch_gpu_doctor.triage.uv_project import uv_project_line, with_uv_first
from torch_gpu_doctor.triage.wanted_build import cuda_build_where_cpu_wanted
from torch_gpu_doctor.triage.wheel_names import abi_from_the_wheel_name
from torch_gpu_doctor.triage.where import (
    HOSTED_NOTEBOOK,
    KUBERNETES,
    LAUNCH_FAILURE,
    OPERATION_NOT_SUPPORTED,
    SIGFPE,
    UNKNOWN_AT_INIT,
    building_on_a_jetson,
    builds_an_image,
    container_said,
    cpu_environment,
    dgpu_image_on_a_jetson,
    docker_desktop_on_linux,
    docker_on_windows,
    driver_of_a_vgpu_guest,
    host_first_without_a_container,
    image_compat_on_wsl,
    image_ref,
    in_a_pod,
    in_an_l4t_image,
    in_container,
    in_container_fix,
    in_the_image,
    launch_failure_on_a_server,
    libcuda_in_a_container,
    lxc_module,
    mismatch_in_a_container,
    no_nvidia_gpu,
    none_on_a_mac,
    on_a_hosted_notebook,
    on_a_mac,
    on_a_shared_machine,
    on_a_vgpu_profile,
    on_wsl,
    ran_inside_a_container,
    rocm_container_on_windows,
    rocm_on_wsl,
    seen_from_the_container,
    sigfpe_without_an_h20,
    their_docker_run,
    toolkit_explains_the_driver,
    under_zluda,
    unknown_error_on_a_server,
)
from torch_gpu_doctor.triage.whose import (
    LIBCUDA_NOT_FOUND,
    about_amd,
    conda_pin_without_build,
    cuda_build_on_rocm,
    driver_not_torch,
    engine_not_torch,
    extension_not_torch,
    failing_extension,
    in_the_wrappers_words,
    lists_torchs_stack,
    mentions_torch,
    mmcv_said,
    not_torch,
    not_torchs_runtime,
    own_arch_flags_shown,
    pinned_stack,
    rocm_build_on_nvidia,
    runtime_owner,
    serving_engine,
    torch_for_the_driver,
    versions_from_the_list,
    with_mmcv,
)
from torch_gpu_doctor.triage.wording import explained_false, for_paste, with_own_causes
from torch_gpu_doctor.unavailable import Reason, Unavailable

if TYPE_CHECKING:
    pass


# Windows' own refusals to load a DLL (not found, a function missing, its start-up failed)
WINDOWS_DLL_ERRORS = frozenset(
    {
        "missing_library_winerror126",
        "missing_library_winerror127",
        "missing_library_winerror1114",
        "missing_library_torch_windows_dll",
    }
)
# an x86-64 machine (collect_env's platform, lscpu, a wheel's or a library folder's tag): never a Jetson
_X86 = lazy(r"x86_64|\bamd64\b|win_amd64|\bx64\b", re.IGNORECASE)
# a Windows batch file named: "webui-user.bat", "run.bat", "web-ui.bat" (a start script only Windows runs)
_BATCH_FILE = lazy(r"(?<![\w.-])[\w-]+\.bat\b", re.IGNORECASE)
# Anything that could be a Jetson: without one of these a paste's machine is not asked for its L4T release
_MAYBE_A_JETSON = lazy(
    r"jetson|tegra|\bl4t\b|jetpack|aarch64|arm64|\borin\b|xavier|\bnano\b|\bagx\b", re.IGNORECASE
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
        # a Hugging Face env dump names a few libraries (numpy, accelerate), never all: torchvision's absence
        # there says nothing (blind set 22: "Neither torchvision nor torchaudio is installed" from `accelerate env`)
        libraries=(r is not None and r.libraries is not None and r.wrapper != HUGGINGFACE_ENV)
        or any(not listing.partial for listing in pasted.packages),
        errors=not isinstance(facts.reported_errors, Unavailable),
        about_torch=mentions_torch(pasted.paste.text) or pasted.words_only or lists_torchs_stack(pasted),
    )


_GFX_NAMED = lazy(r"\bgfx[0-9a-f]{3,4}\b", re.IGNORECASE)


def _library_bug_decided(facts: Facts) -> bool:
    packages = facts.torch_packages
    if isinstance(packages, Unavailable) or packages.cuda is None:
        return False
    dists = {d.name: d for d in packages.distributions}
    return known_library_bug(facts, packages.cuda, dists) is not None


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
        reported = error_reported(facts, "no_kernel_image")
        unknown_cc = [g.name for g in facts.nvidia_gpus if not isinstance(g.compute_capability, str)]
        named = [f"the compute capability of {n}" for n in unknown_cc if isinstance(n, str)]
        return build + ([] if reported or cpu_build else (gpus or named))
    if check_id == "torch.cuda_init":  # is_available()'s False is the finding, whatever the build
        return [] if k.available else [*build, "Is CUDA available"]
    if check_id == "torch.companions" and error_reported(facts, "companion_mismatch"):
        return []  # the paste's own output says a package does not match torch (xformers.info, its warning)
    if check_id == "torch.nvidia_wheels" and _library_bug_decided(facts):
        return []  # torch's CUDA build says which cuBLAS it brings: no pip list needed to name its bug
    if check_id in ("torch.companions", "torch.nvidia_wheels"):
        return torch + ([] if k.libraries else ["the list of installed packages (pip list)"])
    if check_id in BY_MESSAGE_ONLY:
        return []  # decided by a known error message, or left out
    if check_id == "amd.gfx_target":
        # a card named in the paste ("RX 6700 XT") has a known target; otherwise rocminfo tells it
        names = [g.name for g in facts.gpus if g.vendor == "amd" and isinstance(g.name, str)]
        known = any(gfx_of_product(n) or _GFX_NAMED.search(n) for n in names)  # "AMD gfx1102": rocminfo's own
        return [] if known else ["the GPU's gfx target (rocminfo)"]
    return []


def triage(pasted: PastedText, facts: Facts) -> Triage:
    r = pasted.collect_env
    amd = about_amd(facts, pasted) or (r is not None and r.rocm_build is not None)
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
    elif not _MAYBE_A_JETSON.search(pasted.paste.text, 0, MAX_CHARS):  # nothing says ARM or Jetson
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
    logged = frozenset(h.line for h in pasted.hits if h.signature.id == KERNEL_LOG_XID)
    verdicts = tuple(
        _verdict(
            for_paste(f, pasted, k.gpus_listed, facts),
            titles[f.check_id],
            missing_fields(f.check_id, k, facts),
            lines_of[f.check_id],
            logged,
        )
        for f in report.findings
        if (
            f.check_id not in BY_MESSAGE_ONLY
            or lines_of[f.check_id]
            or f.status in (Status.FAIL, Status.WARN)
        )
        and (f.check_id != TOPOLOGY or not isinstance(facts.topology, Unavailable))
    )
    verdicts = with_own_causes(verdicts, pasted, titles)
    verdicts = no_nvidia_gpu(verdicts, pasted, facts, titles)
    verdicts = cuda_program_on_amd(verdicts, pasted, facts, titles)  # CTranslate2's CUDA on a Radeon
    if pasted.prose.replaced_torch is not None:  # another package's install replaced the CUDA torch
        verdicts = replaced_by_an_install(verdicts, pasted, facts, titles)
    if (
        pasted.prose.torch is not None and facts.nvidia_gpus
    ):  # "pytorch 1.3.1" beside an RTX 3080: no build fits
        verdicts = built_before_the_gpu(verdicts, pasted, facts, titles)
        verdicts = tuple(same_release_build(v, pasted, facts) for v in verdicts)
    engine = serving_engine(pasted)  # once: its search of the whole paste is not free
    verdicts = on_a_mac(verdicts, pasted, facts, titles, engine)
    verdicts = none_on_a_mac(verdicts, facts)
    verdicts = cuda_build_where_cpu_wanted(verdicts, pasted, facts, titles)
    verdicts = jetson_container_without_runtime(verdicts, pasted, facts, titles)
    verdicts = tuple(binary_labels_one_class(v, pasted) for v in verdicts)
    if "cxx11abi" in pasted.paste.text[:MAX_CHARS]:  # an extension's wheel name says its C++ ABI
        verdicts = tuple(abi_from_the_wheel_name(v, facts, pasted) for v in verdicts)
    if (
        not k.about_torch
    ):  # another program's error (CUDA samples, JAX, Taichi...); a question in words is not
        verdicts = tuple(not_torch(v, facts, pasted) for v in verdicts)
    elif any(torch_for_the_driver(v) for v in verdicts) and (
        pinned_stack(pasted) or (in_container(pasted) and pasted.prose.shared is None)
    ):
        # vLLM & co. pin their torch, and so does a container image (blind set 22: scalellm, an lvllm image on a
        # 570 driver): a driver too old for it needs a new driver on the host, not another torch; unless the
        # person says the host's driver cannot change (set 26: Kronos#71, "没办法更新机器GPU驱动"), where a
        # torch for the driver's CUDA is the way left
        verdicts = tuple(driver_not_torch(v, facts, pasted) for v in verdicts)
    if engine is not None:  # no kernels under vLLM or SGLang: their release pins the torch, so it is theirs
        # an error with its own fix (Triton's 'too old' on a Pascal card) keeps it: the engine's floor is the
        # answer to a torch without the GPU's kernels, not to what that error says to do
        own = {h.line for h in pasted.hits if h.signature.fix is not None}
        verdicts = tuple(
            v
            if v.lines and own.issuperset(v.lines)
            else engine_not_torch(v, engine, facts, image_ref(pasted))
            for v in verdicts
        )
    verdicts = tuple(hidden_by_the_program(answered_probes(v, facts), pasted) for v in verdicts)
    verdicts = tuple(cpu_environment(not_asked_again(v, pasted, facts), pasted, facts) for v in verdicts)
    verdicts = tuple(shown_outputs_not_asked_again(nccl_log_shown(v, pasted), pasted) for v in verdicts)
    verdicts = tuple(
        gpus_said_for_duplicate_ranks(one_gpu_per_task(nccl_bootstrap(v, pasted), pasted), pasted)
        for v in verdicts
    )
    verdicts = tuple(at_a_step_some_ranks_take_alone(v, pasted) for v in verdicts)
    if "NCCL_" in pasted.paste.text[:MAX_CHARS]:  # NCCL settings the paste sets: the plain run first
        verdicts = tuple(with_the_settings_set(v, pasted) for v in verdicts)
    if "NCCL_P2P_DISABLE" in pasted.paste.text[:MAX_CHARS]:  # set already, and the P2P failure is still there
        verdicts = tuple(p2p_off_not_inherited(v, pasted) for v in verdicts)
    verdicts = tuple(no_pip_check_for_the_loader(v, pasted) for v in verdicts)
    if "sudo" in pasted.paste.text[:MAX_CHARS]:  # a program started with sudo loses LD_LIBRARY_PATH
        verdicts = tuple(started_with_sudo(v, pasted) for v in verdicts)
    if any(h.signature.id == NO_WHEEL for h in pasted.hits):  # pip found no torch for this Python
        verdicts = tuple(
            no_wheel_on_an_old_index(no_wheel_for_this_python(v, pasted, facts), pasted, facts)
            for v in verdicts
        )
    if any(h.signature.id == NO_DEVICES for h in pasted.hits):  # nvidia-smi's "No devices were found"
        verdicts = tuple(no_devices_on_an_open_only_gpu(v, pasted, facts) for v in verdicts)
    if any(h.signature.id == PTX_TOO_NEW for h in pasted.hits):  # error 222: the program's PTX, not torch
        verdicts = tuple(ptx_newer_than_the_driver(v, pasted, facts) for v in verdicts)
    verdicts = tuple(bnb_saw_no_gpu(v, pasted) for v in verdicts)
    verdicts = tuple(context_of_a_running_process(v, pasted) for v in verdicts)
    verdicts = tuple(wsl_session(v, facts, pasted) for v in verdicts)
    verdicts = tuple(rocm_container_on_windows(v, facts, pasted) for v in verdicts)
    verdicts = tuple(driver_of_a_vgpu_guest(v, pasted) for v in verdicts)  # a guest's driver is its host's
    if OPERATION_NOT_SUPPORTED in (h.signature.id for h in pasted.hits):  # a vGPU profile's series decides
        verdicts = tuple(on_a_vgpu_profile(v, pasted) for v in verdicts)
    if any(h.signature.id == SIGFPE for h in pasted.hits):  # cuBLAS's H20 bug only where an H20 is
        verdicts = tuple(sigfpe_without_an_h20(v, pasted, facts) for v in verdicts)
    if UNKNOWN_AT_INIT.intersection(h.signature.id for h in pasted.hits):  # a server or VM does not sleep
        verdicts = tuple(unknown_error_on_a_server(v, pasted, facts) for v in verdicts)
    if LAUNCH_FAILURE in (h.signature.id for h in pasted.hits):  # a server does not sleep: its Xid decides
        verdicts = tuple(launch_failure_on_a_server(v, pasted, facts) for v in verdicts)
    if ILLEGAL_ADDRESS in (h.signature.id for h in pasted.hits):  # a server's optional kernels: off first
        verdicts = tuple(without_the_feature(v, pasted) for v in verdicts)
    if any(
        h.signature.id in KERNEL_FAULTS for h in pasted.hits
    ):  # a rerun shown, a nightly, a library's kernel
        verdicts = tuple(fault_next_step(v, pasted, facts) for v in verdicts)
    runtime = facts.torch
    if not isinstance(runtime, Unavailable) and runtime.outcome != "ok" and runtime.failed_stage == "import":
        verdicts = tuple(without_importing_torch(v) for v in verdicts)
    if pasted.smi is not None and pasted.smi.cut is not None:  # the table stops inside a GPU's block
        verdicts = tuple(gpus_past_the_cut(v, pasted.smi.cut) for v in verdicts)
    if pasted.prose.across_nodes is not None:  # "works on 1 node": the network between the machines
        verdicts = tuple(across_machines(v, facts, pasted.prose.across_nodes) for v in verdicts)
    if pasted.prose.fine_elsewhere is not None:  # "working fine under windows": not each program's bug
        verdicts = tuple(
            program_fault_below_the_programs(v, facts, pasted.prose.fine_elsewhere) for v in verdicts
        )
    if pasted.prose.recurs is not None:  # "it stopped again, on the other card"
        verdicts = tuple(lost_again(v, pasted.prose.recurs) for v in verdicts)
    if pasted.prose.updated is not None and not in_container(pasted):  # "after recent ubuntu update"
        verdicts = tuple(updated_then_804(v, pasted, pasted.prose.updated) for v in verdicts)
    if uv_project_line(pasted) is not None:  # `uv sync` manages the project: uv installs into its .venv
        verdicts = tuple(with_uv_first(v) for v in verdicts)
    if pasted.prose.updated is not None:  # CUDA's unknown error since an upgrade: not suspend's story
        # loaded for such a paste only (start-up time of every other triage)
        from torch_gpu_doctor.triage.after_upgrade import system_upgraded, unknown_error_after_an_upgrade

        upgraded = system_upgraded(pasted)
        if upgraded is not None:
            inside = in_container(pasted)
            verdicts = tuple(unknown_error_after_an_upgrade(v, pasted, upgraded, inside) for v in verdicts)
    verdicts = tuple(rocm_on_wsl(on_wsl(v, facts, pasted), facts, pasted) for v in verdicts)
    verdicts = tuple(docker_on_windows(v, facts, pasted) for v in verdicts)
    verdicts = tuple(docker_desktop_on_linux(v, facts, pasted) for v in verdicts)
    verdicts = tuple(libcuda_in_a_container(v, facts, pasted) for v in verdicts)
    if pasted.prose.jetson is not None:  # an image built on a Jetson before JetPack 5
        verdicts = tuple(building_on_a_jetson(v, pasted) for v in verdicts)
    if any(h.signature.id == GGML_INVALID_FUNCTION for h in pasted.hits):  # llama.cpp's ROCm on one device
        verdicts = tuple(on_a_device_the_build_lacks(v, pasted) for v in verdicts)
    if pasted.prose.shared is not None:  # a cluster's node: its driver is not the person's to change
        verdicts = tuple(on_a_shared_machine(v, facts, pasted) for v in verdicts)
    if "zluda" in pasted.paste.text[:MAX_CHARS].lower():  # AMD's GPU behind CUDA's names
        verdicts = tuple(under_zluda(v, pasted) for v in verdicts)
    verdicts = tuple(rocm_build_on_nvidia(v, facts, k.about_torch, pasted) for v in verdicts)
    if any(h.signature.id == LIBCUDA_NOT_FOUND for h in pasted.hits):  # NVIDIA's library asked for under ROCm
        verdicts = tuple(cuda_build_on_rocm(v, facts, pasted) for v in verdicts)
    owner = runtime_owner(pasted)
    if owner is not None:  # error 35 from CTranslate2, DALI...: their CUDA, not torch's
        verdicts = tuple(not_torchs_runtime(v, facts, pasted, owner) for v in verdicts)
    if in_container(pasted):  # a container's 803 is its image's libcuda, not a reboot the host missed
        verdicts = tuple(in_container_fix(v, facts, pasted) for v in verdicts)
    mmcv = mmcv_said(pasted.paste.text) if "mmcv" in pasted.paste.text[:MAX_CHARS] else None
    if mmcv is not None:  # "mmcv=1.1.5", "mmcv-full==1.5.0": the release a reinstall keeps
        verdicts = tuple(with_mmcv(v, *mmcv) for v in verdicts)
    if pasted.no_gpus_line is not None:  # their own `docker run`, with the GPUs added, in place of IMAGE
        verdicts = tuple(their_docker_run(v, pasted, pasted.no_gpus_line) for v in verdicts)
    if any(h.signature.id == NVML_UNKNOWN for h in pasted.hits):  # a container that never worked: its setup
        verdicts = tuple(in_a_new_container(v, pasted) for v in verdicts)
    verdicts = tuple(host_first_without_a_container(v, pasted) for v in verdicts)
    if any(h.signature.id == GPU_ACCESS_BLOCKED for h in pasted.hits):  # WSL, a container or a Hyper-V guest
        from torch_gpu_doctor.triage.access_blocked import where_blocked  # loaded for it only

        wsl = _wsl_shown(pasted, facts)
        verdicts = tuple(where_blocked(v, pasted, wsl) for v in verdicts)
    if ran_inside_a_container(pasted):  # its own shell, not the toolkit relaying the host's NVML
        lxc = lxc_module(pasted)
        verdicts = tuple(mismatch_in_a_container(v, lxc) for v in verdicts)
    if (
        "nvidia-smi" in pasted.paste.text[:MAX_CHARS]
    ):  # "... works, but nvidia-smi fails": NVML's library alone
        verdicts = tuple(cuda_works_nvml_mismatched(v, pasted) for v in verdicts)
    verdicts = tuple(module_not_loaded(v, facts, pasted) for v in verdicts)
    verdicts = tuple(image_compat_on_wsl(v, facts, pasted) for v in verdicts)
    if "torch" in pasted.paste.text[:MAX_CHARS] and frozen_build(pasted):  # torch inside an app.exe
        verdicts = tuple(inside_a_frozen_build(v) for v in verdicts)
    image = builds_an_image(pasted)
    if image is not None:  # "installing using docker compose": a torch install goes into the image
        verdicts = tuple(in_the_image(v, image) for v in verdicts)
    elif any(installs_torch(v.finding.remediation) for v in verdicts) and (
        running := container_said(pasted)
    ):  # a project's image: the install lasts until the container is recreated
        published = image_ref(pasted)
        verdicts = tuple(in_the_image(v, running, built=False, image=published) for v in verdicts)
    if facts.jetson_board is not None:  # a Jetson's container takes CUDA from the host (before JetPack 5)
        verdicts = tuple(in_an_l4t_image(v, pasted) for v in verdicts)
        verdicts = tuple(dgpu_image_on_a_jetson(v, pasted, facts) for v in verdicts)
    if pasted.prose.rebooted is not None or booted_with_the_mismatch(pasted) is not None:
        # "tried rebooting, still", or NVRM's mismatch seconds after boot: the next step is not another reboot
        verdicts = tuple(rebooted_already(v, pasted) for v in verdicts)
    cured = pasted.prose.restart_cures
    if cured is not None:  # "a reboot clears it": they have that step; what brings it back is the next
        verdicts = tuple(cured_by_a_restart(v, cured) for v in verdicts)
    verdicts = tuple(two_torches(v, facts, pasted) for v in verdicts)
    if pasted.smi is not None:  # a GPU no CUDA program can use: compute mode Prohibited, TCC under WSL
        wsl = _wsl_shown(pasted, facts)
        verdicts = no_cuda_on_the_gpus_shown(verdicts, pasted, titles, wsl)
    if pasted.smi is not None and pasted.prose.slow is not None:  # "very slow" beside an idle GPU
        verdicts = idle_while_slow(verdicts, pasted, titles)
    if pasted.prose.fails is not None:  # "is_available() false when running ... with accelerate launch"
        verdicts = launcher_hides_the_gpus(verdicts, pasted, titles)
    if pasted.prose.torch_works is not None and pasted.prose.fails is not None:  # "GPU not recognized", True
        verdicts = works_where_tested(verdicts, pasted, titles)
    envs = environments(pasted) if pasted.session is not None else None
    if envs is not None:  # is_available() True in one part of the paste, False in another: their difference
        verdicts = two_environments(verdicts, envs, facts, titles)
    if any(lib.name == "cudatoolkit" for listing in pasted.packages for lib in listing.packages):
        version = facts.driver.version if not isinstance(facts.driver, Unavailable) else None
        driver_version = version if isinstance(version, str) else None
        verdicts = tuple(  # its CUDA's minimum driver, unless the driver shown meets it
            driver_for_the_toolkit(v, pasted, driver_version) for v in verdicts
        )  # its CUDA's minimum
    if len({g.name for g in facts.nvidia_gpus}) > 1:  # "can not work on two 3090" beside two 1080 Ti
        verdicts = mixed_gpus(verdicts, pasted, facts, titles)
    if "already satisfied" in pasted.paste.text[:MAX_CHARS]:  # pip kept the torch another index was asked for
        verdicts = pip_kept_torch(verdicts, pasted, facts, titles)
    asked = asked_cuda(pasted.paste.text) if "install" in pasted.paste.text[:MAX_CHARS] else None
    if asked is not None:  # `cudatoolkit=10.1` asked, a CUDA 9.0 (or a CPU) build installed
        verdicts = asked_cuda_got_another(verdicts, asked, facts, titles)
        verdicts = tuple(asked_cuda_got_cpu(v, asked, facts) for v in verdicts)
    if pasted.prose.asks_build is not None:  # "I have CUDA 11.4, could you build one for it?"
        verdicts = build_for_said_cuda(verdicts, pasted, facts, titles)
    if (
        pasted.topology is not None and pasted.prose.slow is not None
    ):  # "slower than one card" beside the matrix
        verdicts = tuple(slow_between_sockets(v, pasted) for v in verdicts)
    if (
        "HSA_OVERRIDE_GFX_VERSION" in pasted.paste.text[:MAX_CHARS]
    ):  # an override left set beside the new build
        verdicts = tuple(override_left_set(v, pasted) for v in verdicts)
    built = extension_built_for(pasted)
    if built is not None:  # xFormers names the torch it was built for: the install takes that one
        verdicts = tuple(torch_the_extension_was_built_for(v, built) for v in verdicts)
    app = app_in(pasted.paste.text[:MAX_CHARS])
    if app is not None:  # an application with its own Python (ComfyUI, a web UI): its pip, not PATH's
        verdicts = tuple(in_the_apps_python(v, app, pasted) for v in verdicts)
        batch_file = (
            _BATCH_FILE.search(pasted.paste.text, 0, MAX_CHARS) is not None
        )  # "webui-user.bat": Windows
        verdicts = tuple(with_the_apps_switches(v, app, facts, batch_file) for v in verdicts)
    listed = {lib.name: lib.version for listing in pasted.packages for lib in listing.packages}  # normalised
    if listed:  # `flash-attn==VERSION` where the paste's pip freeze says flash-attn==2.3.0
        verdicts = tuple(versions_from_the_list(v, listed) for v in verdicts)
    if "pytorch-cuda" in listed:  # conda's CPU pytorch beside a CUDA pin its version has no build for
        verdicts = tuple(conda_pin_without_build(v, pasted) for v in verdicts)
    wrapper = wrapper_in(pasted.paste.text[:MAX_CHARS])
    if wrapper is not None:  # LLaMA-Factory, verl: vLLM's options under their own names
        verdicts = tuple(in_the_wrappers_words(v, wrapper) for v in verdicts)
    if pasted.prose.reinstalled is not None:  # "a ton of builds, same error": they went to another Python
        verdicts = tuple(reinstalled_already(v, pasted.prose.reinstalled) for v in verdicts)
    if any(h.signature.id == CUDA_HOME_NOT_SET for h in pasted.hits):  # beside a toolkit: a CPU torch
        verdicts = tuple(torch_without_cuda(v, pasted, facts) for v in verdicts)
    if "memory" in pasted.paste.text[:MAX_CHARS]:  # out of memory while loading weights, or running a model
        verdicts = tuple(oom_by_phase(v, pasted) for v in verdicts)
    verdicts = tuple(while_evaluating(v, pasted, facts) for v in verdicts)
    if pasted.prose.batch_one is not None:  # "batch size is 1": no smaller batch to try
        verdicts = tuple(at_batch_one(v, pasted.prose.batch_one, facts) for v in verdicts)
    if "WATERMARK" in pasted.paste.text[:MAX_CHARS]:  # the Mac's limit, said to be lifted already
        verdicts = tuple(watermark_already_set(v, pasted) for v in verdicts)
    if pasted.smi is not None and len(pasted.smi.gpus) > 1:  # one GPU full of another job, the others free
        verdicts = tuple(on_a_full_gpu_beside_free_ones(v, pasted, facts) for v in verdicts)
    if pasted.smi is not None and pasted.smi.processes == 0:  # memory in use, no process listed
        verdicts = tuple(held_out_of_sight(v, pasted, facts) for v in verdicts)
    if pasted.prose.gpus:  # "two GPUs: A6000 and GT1030": out of memory on the smaller one
        verdicts = tuple(on_the_smaller_gpu(v, pasted) for v in verdicts)
    if pasted.prose.trains_model is not None:  # a model fully fine-tuned: whether any setting can fit it here
        from torch_gpu_doctor.triage.sizing import training_size  # fit's estimate, for such a paste only

        sized_job = training_size(pasted.paste.text, facts, pasted.prose)
        if sized_job is not None:
            verdicts = too_big_to_train_here(verdicts, pasted, sized_job, titles)
    if pasted.prose.runs_model is not None:  # a model run in 16-bit: whether its weights leave any room
        from torch_gpu_doctor.triage.sizing import run_size  # fit's estimate, for such a paste only

        too_big_model = run_size(pasted.paste.text, facts, pasted.prose)
        if too_big_model is not None:
            verdicts = too_big_to_run_here(verdicts, too_big_model)
    hosted = HOSTED_NOTEBOOK.search(pasted.paste.text, 0, MAX_CHARS) is not None
    if hosted and pasted.kernel_log is None:  # Colab, Kaggle; a kernel log is read on one's own machine
        verdicts = tuple(on_a_hosted_notebook(v) for v in verdicts)
    if KUBERNETES.search(pasted.paste.text, 0, MAX_CHARS) is not None or any(
        h.signature.id.startswith("container_k8s") for h in pasted.hits
    ):  # a pod's /dev/shm is set in its spec, its GPUs come through Kubernetes' own runtime
        verdicts = tuple(in_a_pod(v, facts, pasted.paste.text[:MAX_CHARS], pasted.hits) for v in verdicts)
    extension = failing_extension(pasted)
    if (
        extension is not None
    ):  # the words or the call name a compiled extension as where the kernel is missing
        flags_shown = own_arch_flags_shown(pasted)
        verdicts = tuple(extension_not_torch(v, facts, extension, flags_shown) for v in verdicts)
    interpreter = interpreter_shown(facts)
    if interpreter is not None and not isinstance(facts.python, Unavailable):
        # the paste's own Python: each question asked of it, and each command a fix gives as plain `python`
        # (a catalogue entry's, a check's that had no interpreter to name), is run with it
        executable = facts.python.executable or PYTHON
        verdicts = tuple(asked_with(v, interpreter, executable) for v in verdicts)
    order = list(CAUSE_ORDER)
    if toolkit_explains_the_driver(pasted):
        order.remove("platform.container_gpus")
        order.insert(0, "platform.container_gpus")
    if envs is not None:  # two environments' answers: their difference comes before what either shows alone
        order.remove("torch.cuda_init")
        order.insert(0, "torch.cuda_init")
    if gpus_older_than_every_build(facts):  # no driver helps a GPU no build supports: the GPU is the cause
        order.remove("torch.arch_compat")
        order.insert(0, "torch.arch_compat")
    said = words_only_lines(pasted)
    printed = any(shown_by_a_program(v, said) for v in verdicts if v.kind == Kind.PROBLEM)
    warned = logged_warning_lines(pasted)
    raised = exception_lines(pasted)
    went_on = warned_and_went_on(pasted, PROGRAM_BUGS)
    # a launcher's report that a worker failed (torchrun's ChildFailedError) says only that another error
    # came first: any other problem the paste shows is that error
    reports = {h.line for h in pasted.hits if h.signature.id in FAILURE_REPORTS}
    fatal = any(  # the program stopped on an exception that a verdict reads
        v.kind == Kind.PROBLEM and v.finding.status is Status.FAIL and raised.intersection(v.lines)
        for v in verdicts
    )
    windows = not isinstance(facts.os, Unavailable) and facts.os.system == "Windows"
    # Windows refusing one of torch's DLLs stops its import before it could ask for a GPU: a CPU build beside
    # it (often chosen on purpose, "torch==2.9.0+cpu") is the second question, not the cause. (A CUDA library a
    # CPU build lacks, libcudart for vLLM's extension, is that build's doing: it stays first there.)
    refused = {h.line for h in pasted.hits if h.signature.id in WINDOWS_DLL_ERRORS}
    unloadable = any(
        v.kind == Kind.PROBLEM and v.finding.check_id == "env.library_path" and refused.intersection(v.lines)
        for v in verdicts
    )
    ordered = sorted(
        (
            v
            for v in verdicts
            if v.kind == Kind.PROBLEM
            # NCCL said only in words, on Windows: torch has no NCCL there, so it cannot be the cause
            and not (windows and v.finding.check_id == "nccl.communication" and only_words(v, said))
        ),
        key=lambda v: (
            v.finding.status is not Status.FAIL,
            printed
            and only_words(v, said),  # beside what a program printed, what the person says comes after
            # a warning the program logged and went on from comes after the exception that stopped it
            fatal and bool(v.lines) and all(line in warned for line in v.lines),
            # ... and so does one before a bug of the program's that fails the same on the CPU (blind set 23 #40:
            # torch's "driver too old" warning, the CPU fallback, then a shape mismatch)
            bool(v.lines) and all(line in went_on for line in v.lines),
            bool(v.lines) and all(line in reports for line in v.lines),
            unloadable and v.finding.check_id == "torch.cpu_build",
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
        verdicts = tuple(explained_false(v) for v in verdicts)
    if cause is not None and cause.finding.check_id == "platform.container_gpus":
        # "no driver" read inside a container started without the GPUs is that, not the host's missing driver
        driver_known = any("driver_cuda" in h.implies for h in pasted.hits) or (
            not isinstance(facts.driver, Unavailable) and isinstance(facts.driver.version, str)
        )
        verdicts = tuple(seen_from_the_container(v, driver_known) for v in verdicts)
    not_in = tuple(s.id for s in builtin_specs() if s.id not in needs)
    shown = pasted.shown_error
    known_lines = {h.line for h in pasted.hits if h.signature.check in needs}  # read by a check that ran
    if (
        cause is not None
        and shown is not None
        and not shown.cut  # a traceback cut before its message says less than the words
        and not shown.title  # and so does the issue title that stands in for it
        and shown.line not in known_lines
        and cause.lines
        and all(line in _only_reports_or_words(pasted) for line in cause.lines)
    ):  # "works on one GPU, fails on four with:" and the exception it shows: that exception is what to read
        cause = None
    unrecognised = shown if cause is None and shown is not None and shown.line not in known_lines else None
    failing = pasted.prose.fails
    errors = [h for h in pasted.hits if h.signature.id not in INFORMATIONAL]
    if (
        cause is None
        and unrecognised is None
        and failing is not None
        and not errors
        and not any(h.line == failing.line for h in pasted.hits)  # "is_bf16_supported() returns False"
    ):
        # the person says it fails and shows no error: never "No problem found" and exit 0
        image = "<img" in pasted.paste.text[:MAX_CHARS] or "![" in pasted.paste.text[:MAX_CHARS]
        unrecognised = ShownError(failing.line, failing.value, said=True, image=image)
    return Triage(
        report,
        verdicts,
        not_in,
        cause,
        _confidence(cause, facts, pasted) if cause else None,
        unrecognised,
        hunch(facts, pasted, unrecognised.text) if unrecognised is not None and unrecognised.said else None,
    )


def _first_command(verdict: Verdict) -> str | None:
    fix = verdict.finding.remediation
    return fix.commands[0].display() if fix is not None and fix.commands else None


# A finding that says it is the usual cause, not the one the paste shows
_HEDGED = lazy(r"\b(?:most likely|most often)\b", re.IGNORECASE)


def _only_reports_or_words(pasted: PastedText) -> set[int]:
    """The lines of hits that say only that something failed: a person's account of a symptom, a launcher's
    report of a worker's failure."""
    return {
        h.line for h in pasted.hits if h.signature.id.endswith(IN_WORDS) or h.signature.id in FAILURE_REPORTS
    }


def _confidence(cause: Verdict, facts: Facts, pasted: PastedText) -> str:
    summary = cause.finding.summary
    if summary.startswith((UNEXPLAINED_FALSE, FALSE_IN_A_CONTAINER)) or _HEDGED.search(summary):
        return Confidence.LIKELY
    if summary.startswith(NO_BUILD_NEEDED):  # the data's answer to the CUDA the person says they have
        return Confidence.INFERRED
    if summary.startswith(MIXED):  # the usual reason a job over mixed GPUs fails, not one the paste shows
        return Confidence.LIKELY
    said = {h.line for h in pasted.hits if h.signature.id.endswith(IN_WORDS)}
    if cause.lines and all(line in said for line in cause.lines):
        # a symptom the person describes ("hangs on two GPUs"): the paste says what happens, not why
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
    if check == "torch.nvidia_wheels" and KNOWN_BUG in summary:  # compat/library_bugs.json's row
        return Confidence.INFERRED
    return Confidence.STATED


def _reads_the_kernel_log(command: Command) -> bool:
    argv = command.argv[1:] if command.argv[:1] == ("sudo",) else command.argv
    return argv[:1] == ("dmesg",) or argv[:2] == ("journalctl", "-k")


_NAMED_GFX = lazy(r"\bgfx[0-9]{3,4}\b")
# access_blocked.BLOCKED: named here, so that the module loads for such a paste only
GPU_ACCESS_BLOCKED = "wsl_gpu_access_blocked"


def _wsl_shown(pasted: PastedText, facts: Facts) -> bool:
    """The paste says WSL, or its facts show WSL's kernel."""
    return pasted.prose.wsl is not None or (not isinstance(facts.os, Unavailable) and facts.os.is_wsl)


KERNEL_LOG_XID = (
    "xid_nvrm_event"  # the kernel log's own line ("NVRM: Xid (PCI:...): 79, ..."), not a tool's words
)


def _verdict(
    finding: Finding, title: str, missing: list[str], lines: tuple[int, ...], logged: frozenset[int]
) -> Verdict:
    find_out = FIND_OUT.get(finding.check_id)
    if finding.summary.startswith(UNEXPLAINED_FALSE) and finding.remediation is not None:
        find_out = None  # its fix is the question to torch itself: asking it twice settles nothing more
    if finding.summary.startswith(CUSTOM_ALL_REDUCE):
        find_out = None  # vLLM's own kernel: NCCL_DEBUG=INFO would say nothing of it
    if finding.check_id == "amd.gfx_target" and _NAMED_GFX.search(finding.summary):
        # the paste named the target (rocBLAS's "for GPU arch : gfx1201"): rocminfo would say it again
        find_out = None
    if (
        finding.check_id == "driver.xid_errors"
        and logged.intersection(lines)
        and finding.remediation is not None
    ):
        # the paste holds the kernel log's Xid lines: reading it again settles nothing (blind set 23: Xid 79 and
        # 119 pasted from dmesg), the fix's recovery comes first; nvidia-smi's "GPU is lost" is not that log
        find_out = None
        kept = tuple(c for c in finding.remediation.commands if not _reads_the_kernel_log(c))
        finding = dataclasses.replace(
            finding, remediation=dataclasses.replace(finding.remediation, commands=kept)
        )
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
