"""Rules that read the paste's context around a known error (blind set 13's classes): what the person already
tried, where the program ran, a Python session whose answer comes after torch's warning, a robot kit that is a
Jetson. The pastes are real (tests/triage/pastes, MANIFEST.json)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from torch_gpu_doctor.compat.torch_parse import load_torch_releases
from torch_gpu_doctor.triage.outcome import Kind
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste
from torch_gpu_doctor.triage.prose import read_prose
from torch_gpu_doctor.triage.render import render_text
from torch_gpu_doctor.triage.tool_output import parse_nvidia_smi, parse_session

PASTES = Path(__file__).parent / "pastes"
HERE = Path(__file__).parent


def diagnosed(name: str) -> PasteDiagnosis:
    return diagnose_paste((PASTES / name).read_bytes(), name)


def first_commands(d: PasteDiagnosis) -> list[str]:
    cause = d.result.cause
    assert cause is not None and cause.finding.remediation is not None
    return [c.display() for c in cause.finding.remediation.commands]


def test_a_mismatch_a_reboot_did_not_clear_is_not_answered_with_a_reboot() -> None:
    """nvidia-smi: "Failed to initialize NVML: Driver/library version mismatch", "Tried rebooting the system,
    but still doesn't work", /proc/driver/nvidia/version 520.56.06 beside nvidia-smi 525.85.12."""
    d = diagnosed("machine-shop-maintenance-70-nvml-mismatch-kernel-520-userspace-525.txt")
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "driver.nvml"
    assert first_commands(d) == ["modinfo -F version nvidia", "dkms status"]  # the running module is pasted
    assert "A reboot did not clear it" in (
        cause.finding.remediation.text if cause.finding.remediation else ""
    )
    assert "was not rebooted" not in cause.finding.details


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("Tried rebooting the system, but still doesn't work.", True),
        ("I rebooted twice and it is still the same error", True),
        ("even after a reboot nvidia-smi fails", False),  # no 'still' or 'not': said of a state, not a try
        ("Please reboot and try again", False),
        ("I upgraded the driver but haven't rebooted yet, still the same error.", False),
        ("I restarted the jupyter kernel but still get it", False),
    ],
)
def test_a_reboot_that_did_not_help(line: str, said: bool) -> None:
    assert (read_prose([line]).rebooted is not None) == said


def test_found_no_driver_in_a_container_shell_passes_the_gpus_in() -> None:
    """root@4728a09607c1:/opt/project# python3 test.py -> "Found no NVIDIA driver on your system", while the
    host's `docker run --gpus all nvidia/cuda nvidia-smi` works: the project's container has no GPUs."""
    d = diagnosed("nvidia-docker-1234-container-found-no-nvidia-driver.txt")
    commands = first_commands(d)
    assert commands[0] == "docker run --gpus all IMAGE"


def test_a_session_answer_after_torchs_warning_is_read() -> None:
    lines = (
        (PASTES / "legacy-rocm-build-1911-rocm-rx7900xt-hiperrorinvaliddevice.txt").read_text().split("\n")
    )
    session = parse_session(lines)
    assert session is not None and session.available is False


def test_a_jetbot_is_a_jetson_nano_and_false_said_before_the_question_counts() -> None:
    prose = read_prose(
        (PASTES / "jetbot-471-jetbot-jetson-torch-cuda-false-prose.txt")
        .read_text(encoding="utf-8")
        .split("\n")
    )
    assert prose.jetson is not None and prose.jetson.value == "Nano"
    assert prose.torch_fails is not None and prose.torch_fails.value == "cuda_unavailable"
    d = diagnosed("jetbot-471-jetbot-jetson-torch-cuda-false-prose.txt")
    assert d.result.cause is not None and d.result.cause.finding.check_id == "platform.jetson"


@pytest.mark.parametrize(
    ("name", "package"),
    [
        (
            "3d-ken-burns-15-torchvision-nms-no-kernel-image.txt",
            "torchvision",
        ),  # .../torchvision/csrc/cuda/nms_cuda.cu
        (
            "detectron2-1621-detectron2-env-v100-arch-sm37-roialign.txt",
            "detectron2",
        ),  # .../detectron2/layers/csrc/...
    ],
)
def test_a_failing_kernels_source_path_names_its_package(name: str, package: str) -> None:
    d = diagnosed(name)
    fix = d.result.cause.finding.remediation if d.result.cause is not None else None
    assert fix is not None and f"The kernel that fails is in {package}, not in torch" in fix.text
    assert f"in a checkout of {package}'s repository" in fix.text and "the package's name" not in fix.text


def test_a_session_answer_right_after_the_warning_is_read() -> None:
    lines = [
        ">>> torch.cuda.is_available()",
        "/x/torch/cuda/__init__.py:88: UserWarning: HIP initialization: x",
        "False",
        ">>>",
    ]
    session = parse_session(lines)
    assert session is not None and session.available is False and session.lines == (1, 3)


def test_a_windows_cuda_home_is_one_folder_not_a_list() -> None:
    text = "sys.platform            win32\nCUDA_HOME               C:\\CUDA\\v11.8\nPyTorch                 2.1.0+cu118\n"
    d = diagnose_paste(text.encode(), "paste.txt")
    assert all(h.signature.id != "other_cuda_home_path_list" for h in d.pasted.hits)


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("배치 사이즈는 1로 설정했습니다.", True),  # FastMRI_challenge#238
        ("Why I set batch_size=1，but still  CUDA out of memory.", True),  # daitao/SAN#41
        ("python finetuning.py --batch_size 1  --dataset ImageNet --name feimogu", True),
        ("Even when I am using batch size of 1, still cuda out of memory error is coming.", True),
        ("I set batchsize=1 layer=1 but it still OOM", True),  # tencent-ailab/pika#8
        ("即使batch size设置为1也会爆显存", True),
        ("--per_device_train_batch_size 1 --gradient_accumulation_steps 16", True),
        ("--per_device_eval_batch_size 1", False),  # evaluation's batch says nothing of training's
        ("batch size 16", False),
        ("With batch size 1 it works, but batch size 8 fails.", False),  # a smaller batch is the fix here
        ("Epoch 1 batch 1/500 loss 0.3", False),  # a training log's counter
    ],
)
def test_a_batch_of_one_said(line: str, said: bool) -> None:
    assert (read_prose([line]).batch_one is not None) == said


@pytest.mark.parametrize(
    ("name", "first"),
    [
        # no figures: 6 GB held before training, the batch already 1: find the holder first
        (
            "fastmri_challenge-238-oom-zombie-process-holds-6gb-ko.txt",
            "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",
        ),
        # the figures show the program itself holds the memory: the model or its input, nothing to stop
        ("san-41-oom-batch1-one-allocation-8gib.txt", None),
    ],
)
def test_out_of_memory_at_batch_one_is_never_answered_with_a_smaller_batch(
    name: str, first: str | None
) -> None:
    d = diagnosed(name)
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "torch.out_of_memory"
    fix = cause.finding.remediation
    assert fix is not None and "lower the batch size" not in fix.text
    assert "already 1" in cause.finding.summary
    assert (fix.commands[0].display() if fix.commands else None) == first


def test_a_hip_error_on_a_machine_whose_gpu_is_nvidia_is_a_rocm_build_there() -> None:
    """easydiffusion#1477: hipErrorNoBinaryForGpu, "GPU: Nvidia GeForce RTX 3050 Laptop GPU": the installer put
    a ROCm torch on an NVIDIA laptop; no gfx override helps."""
    cause = diagnosed("easydiffusion-1477-rocm-torch-on-nvidia-laptop-nobinaryforgpu.txt").result.cause
    assert cause is not None and cause.finding.summary.startswith("A ROCm (AMD) build of torch is installed")
    fix = cause.finding.remediation
    assert fix is not None and "HSA_OVERRIDE_GFX_VERSION" not in fix.text and "CUDA" in fix.text


def test_a_rocm_error_beside_an_assumed_nvidia_gpu_stays_amds() -> None:
    """legacy-rocm-build#2838: an MI100 whose rocminfo may not open /dev/kfd; the prompt's "nvidia_amd" folder
    names no NVIDIA GPU."""
    cause = diagnosed("legacy-rocm-build-2838-rocm-mi100-dev-kfd-permission.txt").result.cause
    assert cause is not None and "/dev/kfd" in cause.finding.summary
    assert first_commands(diagnosed("legacy-rocm-build-2838-rocm-mi100-dev-kfd-permission.txt"))[-1] == (
        "sudo usermod -aG render,video USER"
    )


@pytest.mark.parametrize(
    ("name", "extension", "arch"),
    [
        ("mmcv-2201-mmcv-built-on-a100-run-on-v100.txt", "mmcv", "X.Y"),  # its ops module's frame
        # the words: "installed the latest version of flash-attention via "pip install flash-attn"" on an Orin
        ("flash-attention-1146-flash-attn-orin-sm87-no-kernel-image.txt", "flash_attn", "8.7"),
    ],
)
def test_a_missing_kernel_in_an_extension_is_the_extensions(name: str, extension: str, arch: str) -> None:
    cause = diagnosed(name).result.cause
    assert cause is not None and cause.finding.summary.startswith(
        f"{extension} (a compiled extension, not torch)"
    )
    assert "Jetson builds of torch" not in cause.finding.summary
    fix = cause.finding.remediation
    assert fix is not None and f"TORCH_CUDA_ARCH_LIST={arch} " in fix.text


def test_an_unexplained_false_on_windows_names_pypis_cpu_build_and_its_fix() -> None:
    """yolov10#218: "本地win10机器 ... torch.cuda.is_available() 就是False": PyPI's Windows torch is CPU-only. The
    commands are typed into cmd or PowerShell: double quotes."""
    d = diagnosed("yolov10-218-yolov10-windows-pip-torch-cpu-zh.txt")
    cause = d.result.cause
    assert cause is not None and "what `pip install torch` gets from PyPI on Windows" in cause.finding.summary
    commands = first_commands(d)
    assert commands[-1].endswith("--index-url https://download.pytorch.org/whl/cu126")
    out = io.StringIO()
    render_text(d, "paste", out)
    assert 'python -c "import torch; print(torch.__version__, torch.version.cuda); torch.cuda.init()"' in (
        out.getvalue()
    )


def test_an_untagged_pip_torch_on_linux_is_pypis_build_of_its_release() -> None:
    """detectron2#1453: "PyTorch 1.5.0 @.../droneEnv/lib/python3.6/site-packages/torch" beside nvcc 9.1: an
    untagged Linux wheel is PyPI's cu102 (every other 1.5.0 build is tagged), so the toolkit is refused."""
    cause = diagnosed("detectron2-1453-detectron2-env-nvcc91-torch15.txt").result.cause
    assert cause is not None
    assert cause.finding.summary == (
        "A CUDA extension is being built with CUDA 9.1's nvcc, but torch was built with CUDA 10.2."
    )


def test_an_old_gcc_that_cannot_build_the_extension_is_the_cause() -> None:
    """detectron2#4612: "detectron2 failed to import" and "Compiler ($CXX) c++ (GCC) 4.8.5"."""
    cause = diagnosed("detectron2-4612-detectron2-env-gcc485-build.txt").result.cause
    assert cause is not None and "GCC 4.8.5" in cause.finding.summary


def test_a_library_mismatch_in_a_containers_own_shell_is_the_images_libraries() -> None:
    """localcolabfold#127: the host's nvidia-smi works (515.48.07); `moscardo@jupyter-moscardo:/$ nvidia-smi`,
    a JupyterHub pod, fails with the mismatch: the image's libraries, which no host reboot changes."""
    d = diagnosed("localcolabfold-127-nvml-mismatch-jupyter-container-host-515.txt")
    cause = d.result.cause
    assert cause is not None and cause.finding.summary.startswith(
        "Driver/library version mismatch inside a container"
    )
    assert "systemctl reboot" not in first_commands(d)


def test_the_toolkit_relaying_the_hosts_mismatch_is_still_the_hosts() -> None:
    """dalle#104: nvidia-container-cli's "nvml error: driver/library version mismatch" starting a container is
    the host's NVML: the host reboot stands."""
    assert first_commands(diagnosed("dalle-104-nvml-version-mismatch.txt"))[0] == "systemctl reboot"


def test_no_kernels_under_vllm_is_answered_with_vllms_release_not_another_torch() -> None:
    """vllm#16901: an RTX 5090 under a PyPI vLLM of April 2025 (torch 2.6 cu124): a torch installed under vLLM
    breaks its compiled kernels; the vLLM release built on a cu128 torch is the fix."""
    d = diagnosed("vllm-16901-vllm-rtx5090-no-kernel-image.txt")
    assert first_commands(d) == ["python -m pip install --upgrade vllm"]


def test_an_extension_built_in_its_source_folder_is_rebuilt_there() -> None:
    """sam2#22: "/data/levi/segment-anything-2/sam2/_C.so: undefined symbol: _ZN3c10...": built in a checkout,
    not installed: pip check knows nothing of it; the rebuild in place, without build isolation, is the fix."""
    d = diagnosed("sam2-22-sam2-c-so-undefined-symbol.txt")
    assert first_commands(d) == [
        "python -m pip install --no-build-isolation --no-deps -e /data/levi/segment-anything-2"
    ]


def test_no_gpu_inside_the_container_is_the_container_started_without_them() -> None:
    """d-align#1: "python setup.py build install inside the container": "No CUDA runtime is found, using
    CUDA_HOME='/usr/local/cuda'": the summary says what the fix does (set 24: gpu-jupyter#22's headline blamed
    the driver's age beside the container's fix)."""
    d = diagnosed("d-align-1-docker-no-cuda-runtime-extension-build.txt")
    cause = d.result.cause
    assert (
        cause is not None
        and "inside a container where no NVIDIA driver answers (line 4" in cause.finding.summary
    )
    assert "started without the GPUs" in cause.finding.summary
    assert any("--gpus" in c for c in first_commands(d))


# The review of session 8 (its reproducers, written to probe each rule, not taken from threads): each rule must
# stay silent where the words say something else.
@pytest.mark.parametrize(
    ("text", "not_first"),
    [
        # a pin the person says was not used is not the torch installed
        (
            "The repo's requirements pin torch==1.7.1+cu101, but I ignored that and installed the latest torch.\n"
            "Running on my RTX 3090 I get:\n"
            "RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
            "1.7.1+cu110",
        ),
        # vLLM only mentioned: the torch the program runs is the one to fix
        (
            "fine-tuning with the HF Trainer (not vLLM) on my RTX 5090, torch 2.5.1+cu124\n"
            "RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
            "vllm",
        ),
        # a ROCm error on a machine that also names its AMD GPU: not a ROCm build on NVIDIA
        (
            "My machine: Radeon RX 6700 XT, ROCm 6.0. Our lab server has an RTX 3090.\n"
            "RuntimeError: HIP error: invalid device function\n",
            "download.pytorch.org/whl/cu",
        ),
        # a JIT-compiled extension's cache is not a source checkout
        (
            "ImportError: /home/u/.cache/torch_extensions/py310_cu121/fused_adam/fused_adam.so: undefined symbol: "
            "_ZN3c104cuda9SetDeviceEi\n",
            "-e /home/u/.cache",
        ),
    ],
)
def test_a_rule_stays_silent_where_the_words_say_otherwise(text: str, not_first: str) -> None:
    d = diagnose_paste(text.encode(), "review.txt")
    cause = d.result.cause
    fix = cause.finding.remediation if cause is not None else None
    shown = " ".join(c.display() for c in fix.commands) if fix is not None else ""
    assert not_first not in shown


@pytest.mark.parametrize(
    "text",
    [
        "flash_attn_is_available = False, so it falls back to SDPA.",  # another module's is_available
        "With batch size 1 it is fine, with batch size 8 I get OOM",  # the OOM is the larger batch's
        "I think I lost a GPU's worth of throughput",  # a figure of speech
        "My computer freezes when I train on 2 GPUs: the screen goes black and the PC reboots",  # power, not NCCL
    ],
)
def test_words_that_name_no_failure_of_their_kind(text: str) -> None:
    said = read_prose([text])
    assert said.torch_fails is None and said.batch_one is None
    hits = {h.signature.id for h in diagnose_paste(text.encode(), "words.txt").pasted.hits}
    assert not hits & {"gpu_lost_in_words", "nccl_multi_gpu_hang_in_words"}


def test_a_printed_error_outranks_what_the_person_says() -> None:
    """A real out-of-memory error beside a sentence that reads like a lost GPU: the error is the cause."""
    text = (
        "One GPU is lost, which one? The job scheduler reports node gpu07 as down.\n"
        "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n"
    )
    cause = diagnose_paste(text.encode(), "words.txt").result.cause
    assert cause is not None and cause.finding.check_id == "torch.out_of_memory"


def test_below_vllms_compute_capability_floor_no_vllm_release_helps() -> None:
    """vLLM's docs require compute capability 7.0 (compat/cuda_matrix.json program_gpu_floors): a P100 (6.0)
    that runs `vllm serve` gets another engine, never a vLLM upgrade or another torch (a probe paste)."""
    text = (
        "I run vllm serve on my Tesla P100\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    )
    cause = diagnose_paste(text.encode(), "words.txt").result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert cause.finding.remediation.text.startswith("No vLLM release runs on this GPU")
    assert not cause.finding.remediation.commands
    assert load_torch_releases().program_floors["vllm"] == (7, 0)


MAC_XFORMERS = (
    "pastes/seine-21-no-cuda-on-mac-apple-m1.txt"  # Vchitect/SEINE#21: "在Mac M1上面运行" + xFormers' warning
)


def test_a_mac_named_in_words_has_no_cuda_and_xformers_is_uninstalled() -> None:
    """A Mac (here said in Chinese around an English warning) has no NVIDIA GPU and torch's macOS builds have
    no CUDA: xFormers' CUDA kernels not loading is that, not a torch/xFormers mismatch to reinstall."""
    name = MAC_XFORMERS
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.check_id == "gpu.present"
    assert cause.finding.summary.startswith("This is a Mac")
    fix = cause.finding.remediation
    assert fix is not None and fix.commands[0].argv == ("python", "-m", "pip", "uninstall", "-y", "xformers")


def test_a_mac_that_names_an_nvidia_gpu_keeps_its_verdicts() -> None:
    text = (
        (HERE / MAC_XFORMERS).read_text(encoding="utf-8").replace("Mac M1", "Mac Pro with a GeForce GTX 1080")
    )
    cause = diagnose_paste(text.encode(), "words.txt").result.cause
    assert cause is not None and cause.finding.check_id != "gpu.present"


@pytest.mark.parametrize("words", ["I run it on my Mac M1", "本地Mac M2上面", "my Mac mini M4 runs it"])
def test_a_mac_chip_in_words_names_a_mac(words: str) -> None:
    assert read_prose([words]).macos == 1


@pytest.mark.parametrize("words", ["set the MAC M1 address", "machine M1 node", "tmac M1"])
def test_other_words_with_m1_name_no_mac(words: str) -> None:
    assert read_prose([words]).macos is None


def test_vllms_own_floor_message_outranks_the_bf16_line_before_it() -> None:
    """vllm-project/vllm#1284: a P100's bf16 line, then vLLM's 'GPUs with compute capability below 7.0 are not
    supported': no dtype fixes that, so the floor is the cause and no release of vLLM is the fix."""
    name = "pastes/vllm-1284-app-requirement-vllm-gpu-floor.txt"
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.check_id == "torch.arch_compat"
    assert cause.finding.remediation is not None
    assert cause.finding.remediation.text.startswith("No vLLM release runs on this GPU")


WSL_NCCL = "pastes/pytorch-111187-nccl-on-wsl2-multi-gpu.txt"  # DDP under WSL2: "unhandled cuda error"


def test_nccl_unhandled_cuda_error_under_wsl2_turns_peer_to_peer_off_first() -> None:
    cause = diagnose_paste((HERE / WSL_NCCL).read_bytes(), WSL_NCCL).result.cause
    assert cause is not None and cause.finding.check_id == "nccl.communication"
    assert "under WSL2" in cause.finding.summary
    fix = cause.finding.remediation
    assert fix is not None and fix.commands[0].argv == ("env", "NCCL_P2P_DISABLE=1", "PROGRAM")


def test_the_same_nccl_error_off_wsl_keeps_the_debug_step() -> None:
    text = (HERE / WSL_NCCL).read_text(encoding="utf-8").replace("wsl2(win10 host)", "a server")
    cause = diagnose_paste(text.encode(), "nccl.txt").result.cause
    assert cause is not None and cause.finding.check_id == "nccl.communication"
    assert "WSL2" not in cause.finding.summary
    fix = cause.finding.remediation  # its INFO log is in the paste: read its WARN lines, no P2P guess
    assert fix is not None and fix.text.startswith("The paste holds NCCL's INFO log already")
    assert not any("NCCL_P2P_DISABLE=1" in c.argv for c in fix.commands)


def test_cudas_no_device_in_the_program_while_torch_sees_the_gpu_is_the_program_hiding_it() -> None:
    """doublechenching/brats_segmentation-pytorch#1: 'no CUDA-capable device is detected' in the program, and
    "torch.cuda.is_available()的结果是True": the program sets CUDA_VISIBLE_DEVICES itself (init_env('1'))."""
    name = "pastes/brats_segmentation-pytorch-1-gpu-not-visible-cuda-visible-devices-points-to-m.txt"
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.summary.startswith("The program hides the GPU")
    fix = cause.finding.remediation
    assert fix is not None and fix.commands[0].argv[:3] == ("grep", "-rn", "CUDA_VISIBLE_DEVICES")


@pytest.mark.parametrize(
    ("name", "interpreter"),
    [
        # a cmd prompt that runs the portable Python by a relative path: the prompt's folder makes it whole
        (
            "pastes/comfyui-7433-windows-install-update-replaced-cuda-torch-with.txt",
            "C:\\ComfyUI_windows_portable\\python_embeded\\python.exe",
        ),
        # a catalogue entry's `python -m pip show torch`, beside a site-packages path of an embedded Python
        (
            "pastes/pantella-14-windows-dll-load-failure-winerror-126-fbgemm-dll.txt",
            "E:\\PL-v0.0.5.2\\python-3.10.11-embed\\python.exe",
        ),
    ],
)
def test_a_fixs_plain_python_is_the_pastes_own_interpreter(name: str, interpreter: str) -> None:
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.remediation is not None
    first = cause.finding.remediation.commands[0]
    assert first.argv[0] == interpreter and first.argv[1:3] == ("-m", "pip")


def test_without_an_interpreter_in_the_paste_the_fix_keeps_plain_python() -> None:
    text = "Traceback (most recent call last):\nAssertionError: Torch not compiled with CUDA enabled\n"
    cause = diagnose_paste(text.encode(), "words.txt").result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert cause.finding.remediation.commands[0].argv[0] == "python"


def test_a_librarys_own_kernel_check_names_the_library_not_torch() -> None:
    """sgl-project/sglang#4130: "RMSNorm failed with error code no kernel image ..." on a Jetson AGX Orin: the
    format of FlashInfer's and sgl-kernel's checks, never torch's; the fix rebuilds that library for 8.7."""
    name = "pastes/sglang-4130-no-kernel-image-jetson-sm-87-extension.txt"
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.summary.startswith("The library whose RMSNorm kernel failed")
    assert (
        cause.finding.remediation is not None and "TORCH_CUDA_ARCH_LIST=8.7" in cause.finding.remediation.text
    )


def test_a_kernel_check_beside_the_librarys_name_names_it_and_its_wheels() -> None:
    """sgl-project/sglang#24302: "GemmaRMSNorm failed with error code no kernel image ..." and "the
    `gemma_rmsnorm` kernel in `sgl-kernel` is compiled only for sm80+": the library is sgl-kernel, whose builds
    come from its own wheel index and CMake, so no setuptools TORCH_CUDA_ARCH_LIST rebuild is offered."""
    cause = diagnosed("sglang-24302-no-kernel-image-extension.txt").result.cause
    assert cause is not None and cause.finding.summary.startswith(
        "sgl-kernel (a compiled extension, not torch)"
    )
    fix = cause.finding.remediation
    assert fix is not None and "https://docs.sglang.ai/whl/cu" in fix.text
    assert "TORCH_CUDA_ARCH_LIST" not in fix.text


COLAB_ECC = "pastes/fast-stable-diffusion-702-xid-ecc-uncorrectable-ecc.txt"  # /content/gdrive/... tracebacks


def test_a_gpu_fault_on_a_hosted_notebook_gets_a_new_runtime_not_a_reset() -> None:
    cause = diagnose_paste((HERE / COLAB_ECC).read_bytes(), COLAB_ECC).result.cause
    assert cause is not None and cause.finding.check_id == "driver.xid_errors"
    fix = cause.finding.remediation
    assert fix is not None and "Disconnect and delete runtime" in fix.text and fix.commands == ()


def test_the_same_fault_on_ones_own_machine_keeps_the_reset_fix() -> None:
    text = (HERE / COLAB_ECC).read_text(encoding="utf-8").replace("/content/gdrive/MyDrive", "/home/me")
    cause = diagnose_paste(text.encode(), "ecc.txt").result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert "Disconnect and delete runtime" not in cause.finding.remediation.text


CPU_ON_PURPOSE = (
    "pastes/pytorch-41598-is-available-false-cpu-only-torch-app-defaults-t.txt"  # detectron2 on CPU
)


def test_a_cpu_build_installed_on_purpose_makes_the_programs_device_the_fix() -> None:
    """`pip install torch==1.5.1+cpu ...` "(cpu only)" for "CPU ... TRAINING": torch is as wanted; detectron2's
    default device 'cuda' is what asserts."""
    cause = diagnose_paste((HERE / CPU_ON_PURPOSE).read_bytes(), CPU_ON_PURPOSE).result.cause
    assert cause is not None and cause.finding.check_id == "gpu.present"
    assert (
        cause.finding.remediation is not None and "cfg.MODEL.DEVICE = 'cpu'" in cause.finding.remediation.text
    )


@pytest.mark.parametrize(
    "words",
    [
        # the CPU build as the complaint: pip keeps installing it
        "it keeps giving me the cpu only version\n$ pip install torch==2.1.0+cpu\n",
        # the CPU goal said only inside the install line
        "$ pip install torch --index-url https://download.pytorch.org/whl/cpu  # cpu only\n",
    ],
)
def test_a_cpu_build_as_the_complaint_is_not_a_cpu_goal(words: str) -> None:
    assert not read_prose(words.splitlines()).asks_for_cpu


@pytest.mark.parametrize(
    "text",
    [
        # the CPU denied, and the GPU wanted (session 9's review, H3)
        "The README says: pip install torch --index-url https://download.pytorch.org/whl/cpu\n"
        "But I don't want CPU only, I want my GPU. Now I get:\nAssertionError: Torch not compiled with CUDA enabled\n",
        # the CPU in the past: a new GPU now
        "Earlier I did CPU training with this install:\n"
        "pip install torch==1.10.0+cpu torchvision==0.11.0+cpu -f https://download.pytorch.org/whl/torch_stable.html\n"
        "Now the new GPU is in and I want to train on it, but:\nAssertionError: Torch not compiled with CUDA enabled\n",
    ],
)
def test_a_cpu_build_wanted_no_longer_gets_the_cuda_build(text: str) -> None:
    cause = diagnose_paste(text.encode(), "words.txt").result.cause
    assert cause is not None and cause.finding.check_id == "torch.cpu_build"


ROCE = "pastes/pytorch-81628-nccl-over-ib-roce.txt"  # NCCL's INFO log, then an IB work request failure


def test_nccls_log_in_the_paste_is_not_asked_for_again() -> None:
    verdict = diagnose_paste((HERE / ROCE).read_bytes(), ROCE).result.cause
    assert verdict is not None and verdict.finding.check_id == "nccl.communication"
    assert verdict.find_out is None
    assert "NCCL_DEBUG=INFO" not in verdict.finding.details


def test_without_nccls_log_the_debug_run_is_still_asked_for() -> None:
    text = "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1191, unhandled system error, NCCL version 2.10.3\n"
    verdict = diagnose_paste(text.encode(), "nccl.txt").result.cause
    assert verdict is not None and verdict.finding.check_id == "nccl.communication"
    shown = (
        (verdict.find_out or "")
        + verdict.finding.details
        + (verdict.finding.remediation.text if verdict.finding.remediation else "")
    )
    assert "NCCL_DEBUG=INFO" in shown


def test_an_env_prefixed_python_is_the_pastes_interpreter_too() -> None:
    """`env -u LD_LIBRARY_PATH python -c ...` beside `<venv>/bin/python -m pip check`: both run the venv's."""
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/proj/main.py", line 1, in <module>\n    import torch\n'
        '  File "/home/u/proj/.venv/lib/python3.10/site-packages/torch/__init__.py", line 229, in <module>\n'
        "    from torch._C import *  # noqa: F403\n"
        "ImportError: /home/u/proj/.venv/lib/python3.10/site-packages/torch/lib/../../nvidia/cusparse/lib/"
        "libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12\n"
    )
    cause = diagnose_paste(text.encode(), "shadow.txt").result.cause
    assert cause is not None and cause.finding.remediation is not None
    programs = {c.argv[c.argv.index("-c") - 1] for c in cause.finding.remediation.commands if "-c" in c.argv}
    assert programs == {"/home/u/proj/.venv/bin/python"}


def test_colab_named_beside_ones_own_server_keeps_the_reset_fix() -> None:
    text = (
        "The notebook runs fine on Colab, but on our own server (4x A100, Ubuntu 22.04) training crashes:\n"
        '  File "/home/lab/proj/train.py", line 211, in <module>\n    loss.backward()\n'
        "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
    )
    cause = diagnose_paste(text.encode(), "ecc.txt").result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert "Disconnect and delete runtime" not in cause.finding.remediation.text


@pytest.mark.parametrize(
    "name",
    [
        "pastes/xlm-40-oom-memory-held-by-leftover-processes.txt",  # "when the program ends ... not released"
        "pastes/pytorch-lightning-1707-oom-memory-held-by-a-live-jupyter-kernel.txt",  # interrupted notebook
    ],
)
def test_memory_held_after_the_program_ended_finds_the_process_holding_it(name: str) -> None:
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and cause.finding.check_id == "torch.out_of_memory"
    assert cause.finding.remediation is not None
    assert cause.finding.remediation.commands[0].argv == ("sudo", "fuser", "-v", "/dev/nvidiaN")
    assert "notebook's kernel" in cause.finding.remediation.text


@pytest.mark.parametrize(
    "text",
    [
        # the program still runs: its own cache, freed in that process
        "In my Jupyter notebook, when the cell finishes the memory of the model is still allocated.",
        "When inference finishes, the vram is not freed until I close the gradio app.",
    ],
)
def test_memory_a_running_program_keeps_is_not_a_leftover_process(text: str) -> None:
    hits = diagnose_paste(text.encode(), "words.txt").pasted.hits
    assert not any(h.signature.id == "gpu_memory_held_after_exit" for h in hits)


def test_under_wsl2_nccls_own_cuda_failure_other_than_peer_access_is_not_put_on_p2p() -> None:
    text = (
        "Running torchrun --nproc_per_node 2 in WSL2 (Ubuntu 22.04 on Windows 11), 2x RTX 4090:\n"
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331,"
        " unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1\n"
        "ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\nCuda failure 'out of memory'\n"
    )
    cause = diagnose_paste(text.encode(), "nccl.txt").result.cause
    assert cause is not None and cause.finding.check_id == "nccl.communication"
    assert "under WSL2" not in cause.finding.summary


def test_tgis_flash_attention_2_warning_on_a_t4_says_ampere_for_flash_2_models() -> None:
    """huggingface/text-generation-inference#1161: "GPU with CUDA capability 7 5 is not supported for Flash
    Attention V2" on a Tesla T4: the fix must not read as if 7.5 were enough for flash-2 models."""
    name = "pastes/text-generation-inference-1161-flash-attention-v2-t4-capability-7-5.txt"
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    assert cause is not None and "compute capability 7.5" in cause.finding.summary
    assert cause.finding.remediation is not None
    assert "flash attention 2, which needs compute capability 8.0" in cause.finding.remediation.text


def test_an_amd_paste_asks_nothing_of_nvidia_tools() -> None:
    """nix-stable-diffusion#7: hipErrorNoBinaryForGpu on a Vega APU, torch never named: what stays unknown is
    asked of torch, never of nvidia-smi or a Jetson's release file."""
    name = "pastes/nix-stable-diffusion-7-rocm.txt"
    result = diagnose_paste((HERE / name).read_bytes(), name).result
    asked = {v.find_out for v in result.verdicts if v.kind == Kind.UNKNOWN}
    assert not any("nvidia-smi" in (a or "") or "nv_tegra" in (a or "") for a in asked)
    assert all(v.finding.check_id != "platform.jetson" for v in result.verdicts)


@pytest.mark.parametrize(
    ("name", "probe_first"),
    [
        # pytorch#102936: the program runs 2.0.0+cpu, `pip show torch` gives 2.0.1+cu117: two Pythons
        ("pastes/pytorch-102936-cpu-wheel-two-envs.txt", True),
        # "Requirement already satisfied" for the same version: a forced reinstall, not another Python
        ("pastes/mistral-inference-59-xformers-you-have-cpu-torch.txt", False),
        # xFormers' "built for PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.1.0+cpu)" is a build, not an install
        ("pastes/e21_xformers_cpu_torch_windows.txt", False),
    ],
)
def test_a_cuda_torch_pip_shows_beside_the_cpu_one_the_program_runs_is_two_pythons(
    name: str, probe_first: bool
) -> None:
    cause = diagnose_paste((HERE / name).read_bytes(), name).result.cause
    fix = cause.finding.remediation if cause is not None else None
    assert fix is not None
    assert ("sys.executable" in " ".join(fix.commands[0].argv)) is probe_first
    assert cause is not None and cause.finding.summary.startswith("Two Pythons") is probe_first


# blind set 17: a clue in the paste picks the branch of a many-branched error


def test_error_804_after_a_system_update_is_a_module_still_running() -> None:
    d = diagnosed("pytorch-40671-cuda-804-forward-compat.txt")  # "after recent ubuntu update"
    assert d.pasted.prose.updated == 3
    cause = d.result.cause
    assert cause is not None and cause.finding.summary.startswith(
        "CUDA fails with error 804 since the system"
    )
    assert first_commands(d)[0] == "systemctl reboot"
    inside = (PASTES / "pytorch-40671-cuda-804-forward-compat.txt").read_text()
    in_docker = diagnose_paste(("I run it in a docker container.\n" + inside).encode(), "in-docker.txt")
    container = in_docker.result.cause  # a container's 804 is its image's CUDA, not a reboot the host missed
    assert container is not None and "since the system was updated" not in container.finding.summary


def test_a_pip_upgrade_is_not_a_system_update() -> None:
    assert read_prose(["after the torch upgrade it fails", "pip install --upgrade torch"]).updated is None
    assert read_prose(["It broke after sudo apt upgrade last night"]).updated == 1


def test_nccl_failing_across_machines_is_the_network_between_them() -> None:
    d = diagnosed("pytorch-20313-nccl-unhandled-system-error.txt")  # 2 nodes fail, 1 node works
    cause = d.result.cause
    assert cause is not None and cause.finding.summary.startswith("NCCL could not connect the machines")
    assert first_commands(d)[0] == "ip -brief address"
    assert "NCCL_SOCKET_IFNAME=IFACE" in first_commands(d)[1]
    one = diagnose_paste(
        (PASTES / "pytorch-20313-nccl-unhandled-system-error.txt")
        .read_text()
        .replace("2 nodes", "4 GPUs")
        .replace("inside 1 nodes", "with 1 GPU")
        .replace("both node", "the machine")
        .encode(),
        "one-node.txt",
    )
    assert one.pasted.prose.across_nodes is None
    stays = one.result.cause
    assert stays is not None and not stays.finding.summary.startswith("NCCL could not connect the machines")


def test_docker_compose_log_lines_put_the_program_in_a_container() -> None:
    d = diagnosed("cosmos-169-docker-no-gpu-runtime.txt")  # "detect_worker_1  | Found no NVIDIA driver"
    assert d.pasted.container_line == 3
    cause = d.result.cause
    assert cause is not None and cause.finding.summary.startswith(
        "No NVIDIA driver answers inside this container"
    )
    fix = cause.finding.remediation
    assert fix is not None and "Docker Compose" in fix.text


def test_an_nvidia_smi_table_cut_inside_gives_no_gpu_count() -> None:
    """The thread's excerpt stops after GPU 0's row: GPU 1 may exist, so "'1' is not a GPU index" is not
    known, only that the program asked for a GPU it does not see (its launcher started 8 ranks)."""
    d = diagnosed("minicpm-v-356-cuda-visible-devices-ordinal.txt")
    assert d.pasted.smi is not None and d.pasted.smi.cut == 26
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "env.cuda_visible_devices"
    assert cause.finding.summary.startswith("The program asked CUDA for a GPU it does not see")
    assert "is not a GPU index" not in cause.finding.summary
    # a value that hides every GPU is wrong whatever the table hides
    hidden = diagnosed("examples-115-cuda-visible-devices-2-single-gpu.txt")
    assert hidden.pasted.smi is not None and hidden.pasted.smi.cut is not None
    kept = hidden.result.cause
    assert kept is not None and kept.finding.summary == "CUDA_VISIBLE_DEVICES='2' hides every GPU from torch."
    cut = (HERE / "pastes" / "minicpm-v-356-cuda-visible-devices-ordinal.txt").read_text().split("\n")
    whole = parse_nvidia_smi([*cut, "+----+"])
    assert whole is not None and whole.cut is None


def test_no_kernel_although_torch_has_the_gpus_cubin_is_an_extensions_gap() -> None:
    """torch 2.7.0+cu128 lists sm_120 and an RTX 5090 D found no kernel: the gap is a compiled extension, and
    reinstalling the same torch is no fix (blind set 17). A source build whose list reaches sm_86 only through
    PTX (compute_75) is torch's own gap."""
    covered = diagnosed("vllm-19018-no-kernel-image-sm120.txt").result.cause
    assert covered is not None and covered.finding.summary.endswith(
        "in a compiled extension the program loads, not in torch."
    )
    assert covered.finding.remediation is not None
    assert "TORCH_CUDA_ARCH_LIST=12.0" in covered.finding.remediation.text
    assert not any("install" in c.argv for c in covered.finding.remediation.commands)
    text = (PASTES / "vllm-19018-no-kernel-image-sm120.txt").read_text() + "\nvLLM Version: 0.9.0\n"
    engine = diagnose_paste(text.encode(), "with-vllm.txt").result.cause  # vLLM's collect_env names itself
    assert engine is not None and engine.finding.remediation is not None
    assert engine.finding.remediation.text.startswith(
        "torch has kernels for this GPU; vLLM's own compiled kernels"
    )
    assert engine.finding.remediation.commands[0].argv == (
        "python",
        "-m",
        "pip",
        "install",
        "--upgrade",
        "vllm",
    )
    ptx = diagnosed("kaggle-docker-1411-rtx3070-sm86-fmha-fatal.txt").result.cause
    assert ptx is not None and ptx.finding.summary.endswith("reach it only through PTX.")
    assert ptx.finding.remediation is not None and "install" in ptx.finding.remediation.commands[0].argv


def test_a_hip_error_on_a_card_the_rocm_wheels_lack_is_its_gfx_target() -> None:
    """RX 6700 XT (gfx1031) with torch 2.1.2+rocm5.6 and "HIP error: the operation cannot be performed in the
    present state" (blind set 17): the wheels have gfx1030's kernels, and the override is the usual way out.
    The same error on a card the wheels include is not blamed on its target."""
    name = "invokeai-5738-rocm-version-mismatch.txt"
    cause = diagnosed(name).result.cause
    assert cause is not None and cause.finding.check_id == "amd.gfx_target"
    assert cause.finding.summary.startswith("ROCm's torch wheels have no kernels for gfx1031")
    assert first_commands(diagnosed(name))[0].startswith("env HSA_OVERRIDE_GFX_VERSION=10.3.0")
    text = (PASTES / name).read_text().replace("RX 6700 XT", "RX 7900 XTX")
    supported = diagnose_paste(text.encode(), "rx7900.txt").result
    gfx = next(v for v in supported.verdicts if v.finding.check_id == "amd.gfx_target")
    assert "no kernels for gfx" not in gfx.finding.summary


def test_a_gpu_lost_again_on_a_second_card_is_power_first() -> None:
    """ "Unable to determine the device handle ... Unknown Error" that came back on the other RTX 3090 (blind set
    17): another reboot is no fix, the supply is the first suspect."""
    name = "chatglm-finetuning-95-gpu-fallen-off-bus.txt"
    d = diagnosed(name)
    assert d.pasted.prose.recurs == 18
    assert first_commands(d)[0] == "sudo nvidia-smi -pl WATTS"
    lines = (PASTES / name).read_text().split("\n")
    lines[17] = "有一张3090，训练时停了一次。"  # one card, stopped once
    once = "\n".join(lines)
    single = diagnose_paste(once.encode(), "once.txt")
    assert single.pasted.prose.recurs is None
    cause = single.result.cause
    assert cause is not None and cause.finding.remediation is not None
    # once: the kernel log kept first (a reboot empties it), then the reboot
    assert cause.finding.remediation.text.startswith("Keep the kernel log before anything else")
    assert first_commands(single)[:2] == ["sudo dmesg -T", "systemctl reboot"]
    assert read_prose(["It happened again on the other GPU too."]).recurs == 1


def test_a_cuda_dll_of_torch_that_fails_after_c10_is_the_install_not_the_vc_runtime() -> None:
    """torch loads torch\\lib's DLLs in name order: when cudnn_cnn_infer64_8.dll fails, c10.dll (which needs the
    Visual C++ runtime) had loaded, so the install is what is broken (blind set 17); c10.dll itself failing
    is still the runtime."""
    late = first_commands(diagnosed("chatglm3-69-windows-dll.txt"))
    assert late[0] == "D:\\python\\python.exe -m pip uninstall -y torch"
    assert "--index-url https://download.pytorch.org/whl/cuXXX" in late[1]
    early = first_commands(diagnosed("diffusers-5247-windows-dll.txt"))
    assert early[0].startswith("winget install Microsoft.VCRedist")


def test_a_version_placeholder_is_filled_from_the_pastes_package_list() -> None:
    """`flash-attn==VERSION` beside a pip freeze that lists flash-attn==2.3.0 (blind set 17): the rebuild keeps
    that release, and the note no longer explains the placeholder."""
    d = diagnosed("flash-attention-966-extension-abi-mismatch.txt")
    cause = d.result.cause
    assert cause is not None and cause.finding.remediation is not None
    command = cause.finding.remediation.commands[0]
    assert command.argv[-1] == "flash-attn==2.3.0" and "VERSION" not in command.note
    text = (
        (PASTES / "flash-attention-966-extension-abi-mismatch.txt")
        .read_text()
        .replace("flash-attn==2.3.0", "")
    )
    unlisted = diagnose_paste(text.encode(), "unlisted.txt").result.cause
    assert unlisted is not None and unlisted.finding.remediation is not None
    assert unlisted.finding.remediation.commands[0].argv[-1] == "flash-attn==VERSION"
