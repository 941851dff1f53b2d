"""A message that names its own remedy keeps it when a check turns it into a problem: the check's generic fix
(a torch reinstall, NCCL's P2P diagnosis) says less. Real pastes of blind set 7."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from torch_gpu_doctor.model import Command
from torch_gpu_doctor.triage.pipeline import diagnose_paste

HERE = Path(__file__).resolve().parent


def plain_python(argv: tuple[str, ...]) -> tuple[str, ...]:
    """The command with the paste's own interpreter (triage puts it in place of `python`) as `python`."""
    own = re.search(r"[/\\]python(?:3(?:\.\d+)?)?(?:\.exe)?$", argv[0]) is not None
    return ("python", *argv[1:]) if own else argv


@pytest.mark.parametrize(
    ("name", "check", "summary", "first"),
    [
        # xFormers without CUDA kernels after a new GPU: uninstall it, not another torch
        (
            "pastes/e25_xformers_not_built_cuda_rtx5090_comfyui.txt",
            "torch.companions",
            "A package built for another torch or CUDA",
            ("python", "-m", "pip", "uninstall", "-y", "xformers"),
        ),
        # accelerate's stop on RTX 40xx names the two variables (the person misspelled them)
        (
            "pastes/e22_fluxgym_rtx4000_p2p_ib_disable_typo.txt",
            "nccl.communication",
            "NCCL failed",
            ("env", "NCCL_P2P_DISABLE=1", "NCCL_IB_DISABLE=1", "python", "SCRIPT.py"),
        ),
        # WinError 1114: the DLL was found and its start-up failed; the runtime, then the import order
        (
            "pastes/e17_winerror1114_c10dll_pyqt5_cpu.txt",
            "env.library_path",
            "Windows loaded torch's c10.dll, but its start-up failed (WinError 1114)",
            ("winget", "install", "Microsoft.VCRedist.2015+.x64"),
        ),
    ],
)
def test_the_messages_own_remedy_comes_first(
    name: str, check: str, summary: str, first: tuple[str, ...]
) -> None:
    d = diagnose_paste((HERE / name).read_bytes(), name)
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == check
    assert cause.finding.summary.startswith(summary)
    fix = cause.finding.remediation
    assert fix is not None and fix.commands and fix.commands[0].argv == first


def test_windows_without_nccl_is_the_programs_backend() -> None:
    name = "reports/c07_collect_env_windows_nccl_not_built_in.txt"
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert 'backend="gloo"' in cause.finding.remediation.text


def test_no_kernel_image_in_a_named_extension_is_the_extensions() -> None:
    """state-spaces/mamba#867: B200, 'no kernel image' in causal_conv1d_cuda.causal_conv1d_fwd; torch detects the
    GPU. Another torch changes nothing: the extension needs a build for compute capability 10.0."""
    name = "pastes/e02_b200_mamba_causal_conv1d_no_kernel.txt"
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.check_id == "torch.arch_compat"
    assert cause.finding.summary.startswith(
        "causal_conv1d_cuda (a compiled extension, not torch) has no kernels"
    )
    fix = cause.finding.remediation
    assert fix is not None and "TORCH_CUDA_ARCH_LIST=10.0" in fix.text
    assert not any("torch==" in a for c in fix.commands for a in c.argv)


@pytest.mark.parametrize(
    "line",
    [
        'File "/x/torch/_C/__init__.py", torch._C._cuda_init()',  # torch's own module
        "vllm._C.ops.rms_norm(out, x)",  # a package's _C reached through its package: not this rule's words
    ],
)
def test_torchs_own_modules_are_not_extensions(line: str) -> None:
    text = f"RuntimeError: CUDA error: no kernel image is available for execution on the device\n{line}\n"
    cause = diagnose_paste(text.encode(), "x").result.cause
    assert cause is None or "a compiled extension" not in cause.finding.summary


@pytest.mark.parametrize(
    "name",
    [
        "reports/c10_nvidia_smi_memory_not_released.txt",  # pytorch#910: "memory hasn't been released"
        "pastes/e23_orphan_process_holds_gpu_memory_a100.txt",  # killed, "it still holds GPU memory"
    ],
)
def test_memory_held_after_the_program_ended_sends_to_its_holder(name: str) -> None:
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.summary.startswith("A process that outlived the program")
    fix = cause.finding.remediation
    assert fix is not None and fix.commands[0].argv == ("sudo", "fuser", "-v", "/dev/nvidiaN")


@pytest.mark.parametrize(
    "line",
    [
        "torch.cuda.empty_cache() releases cached memory to the driver",
        "the memory is released when the process exits",
        "OOM: the model uses most of the GPU memory",
    ],
)
def test_words_about_memory_that_is_not_held(line: str) -> None:
    cause = diagnose_paste(f"{line}\n".encode(), "x").result.cause
    assert cause is None or not cause.finding.summary.startswith("A process that outlived the program")


def test_cuda_version_err_in_nvidia_smi_is_a_foreign_libcuda() -> None:
    """microsoft/WSL#11589: `CUDA Version: ERR!` in nvidia-smi's header under WSL2 (driver 546.80): a Linux
    libcuda inside the distribution; the package that brought it is the first thing to find."""
    name = "reports/c01_wsl2_nvidia_smi_cuda_version_err.txt"
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and "CUDA Version: ERR!" in cause.finding.summary
    fix = cause.finding.remediation
    assert fix is not None and fix.commands[0].argv == ("dpkg", "-S", "libcuda.so.1")
    assert "wsl --shutdown" in fix.text


@pytest.mark.parametrize(
    ("name", "in_container"),
    [
        ("pastes/e10_error803_container_atorch.txt", True),  # "…构建的容器" (a container built from an image)
        ("pastes/compvis-sd-438-error-803-ubuntu22.txt", False),  # a desktop: the reboot stays
    ],
)
def test_error_803_reads_as_the_images_libcuda_in_a_container(name: str, in_container: bool) -> None:
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.remediation is not None
    fix = cause.finding.remediation
    assert fix.text.startswith("Error 803 inside a container") is in_container
    assert any(c.argv == ("systemctl", "reboot") for c in fix.commands) is not in_container


@pytest.mark.parametrize(
    ("name", "first"),
    [
        # 4 GPUs freeze until NCCL_P2P_DISABLE=1 (NVIDIA/nccl#631): the P2P path, ACS first, or an IOMMU
        ("pastes/e21_nccl_freeze_4gpus_p2p_disable.txt", ("sudo", "lspci", "-vvv")),
        # RTX 4090s hang, "It works with NCCL_P2P_DISABLE=1": these cards have no P2P, nothing to repair
        ("pastes/e20_nccl_4090_p2p_hang.txt", ("env", "NCCL_P2P_DISABLE=1", "PROGRAM")),
    ],
)
def test_a_hang_that_nccl_p2p_disable_cures_is_the_p2p_path(name: str, first: tuple[str, ...]) -> None:
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.check_id == "nccl.communication"
    fix = cause.finding.remediation
    assert fix is not None and plain_python(fix.commands[0].argv) == first


def test_p2p_disable_said_not_to_help_is_not_taken_as_cured() -> None:
    text = b"NCCL hangs at init on 2 A100s. I tried exporting NCCL_DEBUG=INFO but nothing else.\n"
    cause = diagnose_paste(text, "x").result.cause
    assert cause is None or cause.finding.check_id != "nccl.communication"


@pytest.mark.parametrize(
    ("name", "summary", "first"),
    [
        # bitsandbytes < 0.43 on Windows: its cuda_setup trips over Windows paths
        (
            "pastes/e16_bnb_windows_cpu_so_not_found.txt",
            "An old bitsandbytes (before 0.43)",
            ("python", "-m", "pip", "install", "-U", "bitsandbytes>=0.43"),
        ),
        # `python -m bitsandbytes` on Windows with 0.42.0 (blind set 6)
        (
            "reports/c02_bitsandbytes_report_windows.txt",
            "An old bitsandbytes (before 0.43)",
            ("python", "-m", "pip", "install", "-U", "bitsandbytes>=0.43"),
        ),
        # NVIDIA's image banner: the container started without the GPUs (--gpu after the image name)
        (
            "pastes/e22_docker_gpu_flag_after_image_cactus.txt",
            "The container was started without the GPUs",
            ("docker", "run", "--gpus", "all", "IMAGE"),
        ),
    ],
)
def test_ecosystem_messages_are_read(name: str, summary: str, first: tuple[str, ...]) -> None:
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.summary.startswith(summary)
    fix = cause.finding.remediation
    assert fix is not None and plain_python(fix.commands[0].argv) == first


def test_vllms_kv_cache_shorter_than_the_model_is_its_settings() -> None:
    name = "pastes/e17_vllm_kv_cache_max_seq_len_a10g_bonito.txt"
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert (
        cause is not None
        and "holds 16816 tokens, fewer than the model's full length of 32768" in cause.finding.summary
    )
    assert cause.finding.remediation is not None and "max_model_len=16816" in cause.finding.remediation.text


@pytest.mark.parametrize(
    "name",
    [
        "pastes/e13_uncorrectable_ecc_chatglm3.txt",  # zai-org/ChatGLM3#681: restarting the program did not help
        "pastes/e14_ecc_error39_8gpu_semseg.txt",  # NVIDIA/semantic-segmentation#33: 8 GPUs, one is failing
    ],
)
def test_uncorrectable_ecc_finds_the_gpu_then_resets_it(name: str) -> None:
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.summary.startswith(
        "A GPU's memory reported an uncorrectable ECC"
    )
    fix = cause.finding.remediation
    assert fix is not None and [c.argv for c in fix.commands] == [
        ("nvidia-smi", "-q", "-d", "ECC"),
        ("sudo", "nvidia-smi", "-r", "-i", "N"),
    ]
    assert "Restarting the program alone does not clear" in fix.text


def test_a_pods_shared_memory_is_set_in_its_spec() -> None:
    """NVIDIA/nccl#525: NCCL's /dev/shm too small under Kubeflow: the emptyDir, not `docker run --shm-size`."""
    name = "pastes/e02_nccl_shm_posix_fallocate_kubeflow.txt"
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.remediation is not None
    fix = cause.finding.remediation
    assert "medium: Memory" in fix.text and fix.commands[0].argv[:2] == ("kubectl", "exec")
    plain = diagnose_paste(
        b"include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device\n", "x"
    ).result
    assert plain.cause is not None and plain.cause.finding.remediation is not None
    assert plain.cause.finding.remediation.commands[0].argv[:2] == ("docker", "run")


def test_torchs_arch_warning_outranks_the_nccl_error_it_causes() -> None:
    """YijinHuang/SSiT#19: the warning's own source line (`warnings.warn(incompatible_device_warn.format(...))`)
    after an NCCL 'unhandled cuda error': the GPU torch has no kernels for is the cause."""
    name = "pastes/e21_nccl_unhandled_cuda_after_arch_warning_ssit.txt"
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.check_id == "torch.arch_compat"


@pytest.mark.parametrize(
    ("name", "first"),
    [
        # detectron2's `_C ... not built correctly: ... undefined symbol: _ZNK2at6Tensor7is_cudaEv` (a const
        # member: _ZNK): built for another torch; not on PyPI, so rebuilt from its repository, torch kept
        (
            "reports/c02_detectron2_collect_env_C_undefined_symbol.txt",
            # the report's interpreter (its conda env's python), named by its site-packages path
            "/home/arl/anaconda3/envs/trans/bin/python -m pip install --no-build-isolation --no-cache-dir "
            "--force-reinstall --no-deps "
            "git+https://github.com/facebookresearch/detectron2.git",
        ),
        # old bitsandbytes' cuda_setup on Windows, and a newer one's source checkout without its library
        (
            "reports/c03_bitsandbytes_windows_cpu_so_fallback.txt",
            "python -m pip install -U 'bitsandbytes>=0.43'",
        ),
        ("reports/c04_bitsandbytes_source_checkout_no_binary.txt", "python -m pip install -U bitsandbytes"),
    ],
)
def test_extension_reports_of_blind_set_9(name: str, first: str) -> None:
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.remediation is not None
    first_shown = cause.finding.remediation.commands[0]
    assert first in (first_shown.display(), Command(plain_python(first_shown.argv)).display())


def test_peer_access_not_supported_runs_with_p2p_off_first() -> None:
    """ray-project/ray_lightning#24: NCCL's P2P IPC 'peer access is not supported': NCCL_P2P_DISABLE=1 is the
    step (slower, works); the topology and the driver's peer-read matrix are the second look."""
    name = "pastes/e14_nccl_p2p_ipc_peer_access_not_supported.txt"
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert [c.argv for c in cause.finding.remediation.commands][1:] == [
        ("nvidia-smi", "topo", "-m"),
        ("nvidia-smi", "topo", "-p2p", "r"),
    ]
    assert cause.finding.remediation.commands[0].argv[:2] == ("env", "NCCL_P2P_DISABLE=1")


def test_a_p2p_hang_beside_its_own_matrix_asks_for_the_peer_reads_not_the_matrix() -> None:
    """NVIDIA/nccl#2079: ncclAllReduce spins forever on two RTX 5880 Ada, "NCCL_P2P_DISABLE=1 ... resolves the
    deadlock completely", with `nvidia-smi topo -m`'s matrix pasted: P2P is the cause, the person already ran
    it without P2P, and the matrix is there: what redirects peer traffic (ACS on a bridge) comes first, not the
    driver's peer-read matrix, which says OK with ACS on (set 24's review)."""
    name = "pastes/nccl-2079-nccl-p2p-hang-acs-pcie.txt"
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.check_id == "nccl.communication"
    assert cause.finding.remediation is not None
    assert cause.finding.remediation.commands[0].argv == ("sudo", "lspci", "-vvv")
    assert cause.finding.remediation.text.startswith("Running with NCCL_P2P_DISABLE=1 already confirmed it")


@pytest.mark.parametrize(
    "name",
    [
        # vLLM's warning that vllm._C did not import, in a collect_env with no package list (blind set 10)
        "reports/c10_vllm_collect_env_vllm_C_missing.txt",
        # the same warning on ROCm
        "reports/vllm-rocm62-mi210-cray-sles-vllm-C-missing.txt",
    ],
)
def test_a_known_error_the_check_cannot_weigh_is_still_the_cause(name: str) -> None:
    """No fix of its own, and the check it feeds needs what the paste lacks (a package list): the error's
    meaning is the cause, with the check's own question to settle the rest, never "no problem found"."""
    d = diagnose_paste((HERE / name).read_bytes(), name)
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "torch.companions"
    assert cause.finding.summary.startswith("vLLM's compiled extension is not importable")
    assert cause.find_out is not None and "pip list" in cause.find_out
    assert d.result.exit_problem()


def test_a_line_that_only_states_a_fact_is_never_a_cause_by_itself() -> None:
    """nvidia-smi's header (a driver version) feeds the driver checks; alone it says nothing went wrong."""
    name = "pastes/e15_anibali_docker_nogpus.txt"
    d = diagnose_paste((HERE / name).read_bytes(), name)
    assert any(h.signature.id == "other_nvidia_smi_header_driver_version" for h in d.pasted.hits)
    assert d.result.cause is None or d.result.cause.finding.check_id != "driver.nvml"


@pytest.mark.parametrize(
    ("name", "condition"),
    [
        ("pastes/e15_device_assert_unet_n_classes.txt", "t >= 0 && t < n_classes"),  # blind set 10
        ("pastes/e20_device_side_assert_n_classes_label_1000.txt", "t >= 0 && t < n_classes"),
        ("pastes/lm-eval-2293-device-side-assert-index.txt", "srcIndex < srcSelectDimSize"),
    ],
)
def test_a_kernel_assertion_that_names_its_condition_is_the_first_step(name: str, condition: str) -> None:
    """The kernel's message says what failed: the fix checks those values; rerunning with CUDA_LAUNCH_BLOCKING
    (what the bare "device-side assert triggered" needs) would only find the same line again."""
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and f"`{condition}` did not hold" in cause.finding.summary
    fix = cause.finding.remediation
    assert fix is not None and not fix.commands and "torch.unique" in fix.text


def test_a_bare_device_side_assert_still_reruns_with_blocking_launches() -> None:
    text = b"RuntimeError: CUDA error: device-side assert triggered\n"
    cause = diagnose_paste(text, "x").result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert cause.finding.remediation.commands[0].argv[:2] == ("env", "CUDA_LAUNCH_BLOCKING=1")


def test_a_question_the_paste_already_answers_is_not_asked() -> None:
    """Blind set 11's e09: CUDA_HOME unset while building an extension, on a paste that says torch 1.13.0+cu117 and
    Windows 11. The fix says the toolkit version and its Windows folder; it does not ask torch.version.cuda."""
    name = "depthcontrast-cuda-home-windows-torch113-cu117.txt"
    d = diagnose_paste((HERE / "pastes" / name).read_bytes(), name)
    cause = d.result.cause
    assert cause is not None and cause.finding.remediation is not None
    fix = cause.finding.remediation
    assert fix.text.startswith("The paste shows torch 1.13.0+cu117, built with CUDA 11.7.")
    assert "CUDA\\v11.7" in fix.text
    assert not any("torch.version.cuda" in " ".join(c.argv) for c in fix.commands)


def test_a_cpu_build_in_an_environment_named_for_the_cpu_gets_a_gpu_environment_of_its_own() -> None:
    """Blind set 11's e20: vLLM's collect_env under the prompt `(vllm-cpu) root@gpu-3090`, torch 2.6.0+cpu beside an
    RTX 3090. The CPU build is that environment's purpose: the CUDA build goes into a new one."""
    name = "vllm-collect-env-cpu-torch-in-vllm-cpu-env-rtx3090.txt"
    d = diagnose_paste((HERE / "pastes" / name).read_bytes(), name)
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "torch.cpu_build"
    assert cause.finding.summary.endswith("in an environment named for the CPU (vllm-cpu).")
    assert cause.finding.remediation is not None
    commands = [c.argv for c in cause.finding.remediation.commands]
    assert commands[0] == ("python", "-m", "venv", "gpu-env")
    assert commands[1][:3] == ("gpu-env/bin/python", "-m", "pip") and "torch==2.6.0+cu124" in commands[1]
    plain = (HERE / "pastes" / name).read_text().replace("(vllm-cpu) ", "")
    other = diagnose_paste(plain.encode(), name).result.cause
    assert other is not None and other.finding.remediation is not None
    assert other.finding.remediation.commands[0].argv[1:3] == (
        "-m",
        "pip",
    )  # no prompt: this environment's torch


def test_rocm_under_wsl2_gets_amds_wsl_setup_not_native_linux_advice() -> None:
    """Blind set 11's e18: a ROCm torch under a microsoft-standard-WSL2 kernel, "No HIP GPUs are available". Render
    groups, /dev/kfd and HSA_OVERRIDE_GFX_VERSION do not apply there; AMD's WSL setup does."""
    name = "rocm-wsl2-comfyui-rx7900-no-hip-gpus-collect-env.txt"
    d = diagnose_paste((HERE / "pastes" / name).read_bytes(), name)
    cause = d.result.cause
    assert cause is not None and cause.finding.summary.startswith("ROCm finds no AMD GPU under WSL2")
    fix = cause.finding.remediation
    assert fix is not None and "rocm.docs.amd.com" in fix.text
    assert not any("HSA_OVERRIDE" in " ".join(c.argv) or "usermod" in c.argv for c in fix.commands)
    assert "render and video groups" not in cause.finding.details and "WSL2" in cause.finding.details


def test_a_source_build_that_recorded_no_rocm_is_never_no_problem() -> None:
    """Blind set 11's e21: a ROCm source build whose collect_env says "ROCM used to build PyTorch: 0.0.0", HIP runtime
    N/A and CUDA False ended in "No problem found", exit 0. The build picked up no usable ROCm."""
    name = "pytorch-103874-rocm-source-build-rocm000-collect-env.txt"
    text = (HERE / "pastes" / name).read_text()
    d = diagnose_paste(text.encode(), name)
    assert d.result.exit_problem()
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "amd.torch_rocm"
    assert "was built without a usable ROCm (ROCM used to build PyTorch: 0.0.0" in cause.finding.summary
    assert cause.finding.remediation is not None and cause.finding.remediation.commands[0].argv == (
        "rocminfo",
    )
    real = diagnose_paste(
        text.replace("ROCM used to build PyTorch: 0.0.0", "ROCM used to build PyTorch: 6.2.41133").encode(),
        name,
    )
    assert real.result.cause is None or "without a usable ROCm" not in real.result.cause.finding.summary


@pytest.mark.parametrize(
    ("name", "argv_end"),
    [
        # "mmcv=1.1.5" in the words: mmcv 1.x is the mmcv-full package, rebuilt at that release
        ("pastes/mmdetection-3991-ext-abi-mismatch.txt", "mmcv-full==1.1.5"),
        # the same release in a pip list with no header (mmdetection#4357)
        ("pastes/mmdetection-4357-ext-abi-mismatch.txt", "mmcv-full==1.2.3"),
    ],
)
def test_an_mmcv_rebuild_names_the_release_the_paste_gives(name: str, argv_end: str) -> None:
    d = diagnose_paste((HERE / name).read_bytes(), name)
    fix = d.result.cause.finding.remediation if d.result.cause is not None else None
    assert fix is not None and fix.commands[0].argv[-1] == argv_end
    assert "VERSION" not in fix.commands[0].note


def test_mmcv_full_built_without_cuda_gets_mims_mmcv_full_not_mmcv_2() -> None:
    """mmdetection#11564: mmcv-full==1.5.0 installed, its ops without CUDA: mim installs that release's wheel."""
    name = "pastes/mmdetection-11564-ext-built-without-cuda.txt"
    d = diagnose_paste((HERE / name).read_bytes(), name)
    fix = d.result.cause.finding.remediation if d.result.cause is not None else None
    assert fix is not None and fix.commands[1].argv == ("mim", "install", "mmcv-full==1.5.0")
