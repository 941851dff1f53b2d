"""Blind set 23's classes, each on its real paste (tests/triage/pastes, MANIFEST.json), with what must stay as it
was: a bug of the program's that fails the same on the CPU (tensor sizes that do not fit) is the cause, also after
torch's driver warning that the program went on from."""

from __future__ import annotations

import io

import pytest

from tests.triage.corpus_helpers import PASTES, cause_of, diagnosed
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste
from torch_gpu_doctor.triage.render import render_text


def said(text: str) -> PasteDiagnosis:
    return diagnose_paste(text.encode(), "paste")


# SafetyRL_HighwayEnv#1: torch's driver warning, the program's own fallback to the CPU, then its shape mismatch
_DRIVER_WARNING = (
    "/home/baykarai/.local/lib/python3.6/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: "
    "The NVIDIA driver on your system is too old (found version 9010). Please update your GPU driver by downloading "
    "and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: "
    "https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver. "
    "(Triggered internally at  /pytorch/c10/cuda/CUDAFunctions.cpp:100.)\n"
    "  return torch._C._cuda_getDeviceCount() > 0\n"
    "[WARNING] Preferred device cuda:best unavailable, switching to default cpu \n"
)


@pytest.mark.parametrize(
    "error",
    [
        "mat1 and mat2 shapes cannot be multiplied (1x5 and 7x64)",
        "RuntimeError: Error(s) in loading state_dict for Net:\n\tsize mismatch for fc.weight: copying a param with "
        "shape torch.Size([10, 512]) from checkpoint, the shape in current model is torch.Size([2, 512]).",
        "RuntimeError: The size of tensor a (77) must match the size of tensor b (154) at non-singleton dimension 1",
    ],
)
def test_a_shape_bug_after_the_driver_warning_is_the_cause(error: str) -> None:
    """The program went on from torch's warning (on the CPU) and stopped on its own shape bug: that bug is the
    cause, with no command to run; the driver stays a problem beside it."""
    d = said(_DRIVER_WARNING + error + "\n")
    _, summary, first = cause_of(d)
    assert summary.startswith("Tensor sizes do not fit together in the model")
    assert first == ""
    others = {v.finding.check_id for v in d.result.verdicts if v is not d.result.cause}
    assert "torch.driver_compat" in others


def test_a_real_shape_mismatch_traceback_is_a_program_bug() -> None:
    """MTPSL#3: the project's own code multiplies tensors that do not fit (the maintainer fixed the code)."""
    check, summary, first = cause_of(diagnosed("mtpsl-3-mat1-mat2-shapes-program-bug.txt"))
    assert summary.startswith("Tensor sizes do not fit together in the model") and first == ""
    assert check == "torch.cuda_init"


def test_a_device_mismatch_after_the_driver_warning_keeps_the_driver_first() -> None:
    """Tensors on two devices after the CPU fallback is the driver's doing (the program meant the GPU): only bugs
    that fail the same on the CPU take the lead from the warning."""
    d = said(
        _DRIVER_WARNING
        + "RuntimeError: Expected all tensors to be on the same device, but found at least two "
        "devices, cuda:0 and cpu!\n"
    )
    _, summary, _ = cause_of(d)
    assert "Tensor sizes" not in summary and "driver" in summary.lower()


def rendered(d: PasteDiagnosis) -> str:
    out = io.StringIO()
    render_text(d, "paste", out)
    return out.getvalue()


@pytest.mark.parametrize(
    ("name", "starts", "first"),
    [
        (  # NCCL's bootstrap socket: the interface, not collect_env
            "nccl-210-socket-creation-failed.txt",
            "NCCL could not open its bootstrap socket",
            "ip -brief address",
        ),
        (  # lspci's ACSCtl lines: ACS on, disabled per bridge
            "nccl-606-acs-srcvalid-hang.txt",
            "PCIe ACS is enabled on bridges between the GPUs",
            "sudo setpci -s BDF ECAP_ACS+0x6.w=0000",
        ),
        (  # IB status 4: GPUDirect RDMA, tested with it off, not the fabric's retry count
            "nccl-928-ib-error4-vendor81-gdr.txt",
            "NCCL's InfiniBand transfers fail with a local protection error (status 4)",
            "env NCCL_NET_GDR_LEVEL=LOC COMMAND",
        ),
        (  # Ollama's own cuInit code: 802 is Fabric Manager on an NVSwitch machine
            "ollama-12173-cuinit-802-h100.txt",
            "CUDA does not initialise",
            "sudo systemctl enable --now nvidia-fabricmanager",
        ),
        (  # Ollama told to skip its GPU libraries by an old OLLAMA_LLM_LIBRARY value
            "ollama-12797-llm-library-env.txt",
            "Ollama skips its GPU libraries at the request of OLLAMA_LLM_LIBRARY=cuda",
            "",
        ),
        (  # pip show's versions: torchvision put back beside the torch xFormers pins
            "sdnext-3531-torchvision-nms-mismatch-pipshow.txt",
            "A package built for another torch or CUDA",
            '"c:\\users\\jfran\\documents\\artificial intelligence\\automatic\\venv\\Scripts\\python.exe" -m pip '
            "install --force-reinstall --no-deps torchvision==0.19.0+cu121 --index-url "
            "https://download.pytorch.org/whl/cu121",
        ),
        (  # memory in use and no process listed: held out of nvidia-smi's sight
            "crosse-2-nvidia-smi-phantom-memory.txt",
            "GPU memory is held out of nvidia-smi's sight: 12799 of 16280 MiB",
            "sudo fuser -v /dev/nvidia0",
        ),
        (  # out of memory in the program's own validate(): autograd left on
            "a-pytorch-tutorial-to-image-captioning-57-oom-validate.txt",
            "The program ran out of GPU memory in its own evaluation code (validate",
            "",
        ),
        (  # cuDNN's bare libcuda.so in a Podman container passed the GPU by CDI: the spec, not WSL's folder
            "whisper-asr-webservice-205-podman-cdi-libcuda-so.txt",
            "cuDNN could not open the bare libcuda.so inside the container",
            "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml",
        ),
        (  # vLLM on an Intel Mac: no GPU build for macOS
            "vllm-7430-collect-env-intel-macos.txt",
            "This is a Mac: vLLM serves models on NVIDIA or AMD GPUs under Linux",
            "",
        ),
    ],
)
def test_blind23_classes_on_their_real_pastes(name: str, starts: str, first: str) -> None:
    _, summary, command = cause_of(diagnosed(name))
    assert summary.startswith(starts), summary
    assert command == first


def test_a_pasted_kernel_log_is_not_asked_for_again() -> None:
    """Xid 79 and 119 pasted from dmesg: no `dmesg` to run again, the recovery first; nvidia-smi's 'GPU is lost'
    (no kernel log in the paste) still asks for the log."""
    for name, first in (
        ("open-gpu-kernel-modules-1151-xid79-rtx5080.txt", "systemctl reboot"),
        ("open-gpu-kernel-modules-446-xid119-gsp-timeout.txt", ""),
    ):
        d = diagnosed(name)
        _, _, command = cause_of(d)
        assert command == first
        assert "To be sure" not in rendered(d)
    _, _, command = cause_of(diagnosed("marian-251-gpu-is-lost.txt"))
    assert command.startswith("sudo dmesg")


@pytest.mark.parametrize(
    "text",
    [
        # a runner list with a CUDA runner: a working install
        'msg="Dynamic LLM libraries" runners="[cpu cpu_avx cpu_avx2 cuda_v12 rocm_v6]"\n',
        # ACS off everywhere (nccl#1405): nothing to disable
        "ACSCtl: SrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-\n",
    ],
)
def test_what_is_fine_stays_fine(text: str) -> None:
    cause = said(text).result.cause
    assert cause is None or ("runner" not in cause.finding.summary and "ACS" not in cause.finding.summary)


def test_nvidia_smi_processes_listed_or_a_busy_gpu_is_not_out_of_sight() -> None:
    """A process listed, or a GPU at work (the job itself, seen from inside its container), is no hidden holder."""
    table = (
        "RuntimeError: CUDA out of memory.\n"
        "| NVIDIA-SMI 535.54.03              Driver Version: 535.54.03    CUDA Version: 12.2     |\n"
        "|   0  NVIDIA A10G                    On  | 00000000:00:1E.0 Off |                    0 |\n"
        "|  0%   33C    P0              58W / 300W |  20000MiB / 23028MiB |     {util}%      Default |\n"
        "| Processes:                                                                            |\n"
        "|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |\n"
        "|=======================================================================================|\n"
        "{rows}"
        "+---------------------------------------------------------------------------------------+\n"
    )
    row = "|    0   N/A  N/A      4242      C   python                                   19990MiB |\n"
    hidden = said(table.format(util=0, rows=""))
    assert cause_of(hidden)[1].startswith("GPU memory is held out of nvidia-smi's sight")
    for text in (table.format(util=0, rows=row), table.format(util=97, rows="")):
        assert "out of nvidia-smi's sight" not in cause_of(said(text))[1]


def test_an_evaluation_frame_in_a_library_or_under_no_grad_keeps_the_plain_answer() -> None:
    """A library's evaluation loop turns autograd off itself; a paste that shows no_grad already has it."""
    frames = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/site-packages/transformers/trainer.py", line 3000, in evaluate\n'
        "    output = eval_loop()\n"
        "RuntimeError: CUDA error: out of memory\n",
        'Traceback (most recent call last):\n  File "train.py", line 282, in validate\n'
        "    with torch.no_grad():\nRuntimeError: CUDA error: out of memory\n",
    )
    for text in frames:
        assert "evaluation code" not in cause_of(said(text))[1]


def test_libcuda_unversioned_on_wsl_keeps_wsl_folder_even_in_a_container_word() -> None:
    """WSL said: its /usr/lib/wsl/lib answer stands."""
    text = (
        "WSL2 Ubuntu 22.04, in docker\n"
        "Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file: "
        "No such file or directory\n"
    )
    _, _, command = cause_of(said(text))
    assert "/usr/lib/wsl/lib" in command


def test_detectron2_built_for_another_arch_is_rebuilt_for_the_gpu_not_torch() -> None:
    """detectron2#251: 'detectron2 arch flags sm_70' on Tesla P40s and a missing kernel: detectron2's build, for
    6.1; NVRTC too old for the GPU (detectron2#2910) stays torch's CUDA."""
    _, summary, first = cause_of(diagnosed("detectron2-251-arch-flags-sm70-on-p40.txt"))
    assert summary.startswith("detectron2 (a compiled extension, not torch) has no kernels for Tesla P40")
    assert first == "env TORCH_CUDA_ARCH_LIST=6.1 python -m pip install --no-build-isolation -e ."
    _, summary, _ = cause_of(diagnosed("detectron2-2910-nvrtc-arch-unsupported.txt"))
    assert summary.startswith("torch's run-time CUDA compiler (NVRTC) is older than this GPU")


_TOO_OLD_10010 = (
    "AssertionError: \nThe NVIDIA driver on your system is too old (found version 10010).\n"
    "Please update your GPU driver by downloading and installing a new\n"
)


@pytest.mark.parametrize(
    ("words", "legacy"),
    [
        ("Set SLURM handle signals.\n", True),  # trixie#9's own log
        ("I run it on our university cluster node, I have no root.\n", True),
        ("Training on my desktop.\n", False),
    ],
)
def test_a_shared_machine_keeps_its_driver_and_gets_the_torch_built_for_it(words: str, legacy: bool) -> None:
    """The driver of a cluster's node is its administrators': the newest torch built for CUDA 10.1 first; on a
    machine of one's own the driver stays the fix."""
    _, _, first = cause_of(said(words + _TOO_OLD_10010))
    assert ("torch==1.8.1+cu101" in first) is legacy


_GGML = (
    "ggml_cuda_init: found {n} ROCm devices:\n{devices}ROCm error: invalid device function\n"
    "  current device: {current}, in function ggml_cuda_compute_forward at ggml-cuda.cu:2932\n"
)


@pytest.mark.parametrize(
    ("text", "first", "starts"),
    [
        (  # llama.cpp#22013: the failing device is a Ryzen's 740M beside an RX 9070
            (PASTES / "llama.cpp-22013-rocm-igpu-invalid-device-function.txt").read_text(),
            "env HIP_VISIBLE_DEVICES=0 COMMAND",
            "llama.cpp put work on the integrated GPU, device 1 (AMD Radeon 740M Graphics, gfx1103)",
        ),
        (  # one card the build lacks: its target in the build
            _GGML.format(
                n=1, current=0, devices="  Device 0: AMD Radeon RX 6700 XT, gfx1031 (0x1031), VMM: no\n"
            ),
            "cmake -S . -B build -DGGML_HIP=ON -DGPU_TARGETS=gfx1031 -DCMAKE_BUILD_TYPE=Release",
            "llama.cpp's ROCm build has no kernels for device 0",
        ),
        (  # the same under Ollama, which has no build to change
            'time=2025 level=INFO source=routes.go msg="ollama"\n'
            + _GGML.format(
                n=1, current=0, devices="  Device 0: AMD Radeon RX 6700 XT, gfx1031 (0x1031), VMM: no\n"
            ),
            "",
            "Ollama's ROCm libraries have no kernels for device 0",
        ),
    ],
)
def test_ggml_invalid_device_function_names_the_device_and_its_way_out(
    text: str, first: str, starts: str
) -> None:
    _, summary, command = cause_of(said(text))
    assert summary.startswith(starts), summary
    assert command == first


def test_an_image_built_on_a_jetson_before_jetpack_5_needs_the_default_runtime() -> None:
    """jetson-containers#121: libcurand.so.10 missing in a RUN step on a TX2 with JetPack 4.6 (apt's nvidia-jetpack
    4.6-b199): docker build runs without NVIDIA's runtime unless it is the default; JetPack 5 images bring CUDA."""
    name = "jetson-containers-121-libcurand-docker-build.txt"
    _, summary, first = cause_of(diagnosed(name))
    assert summary.startswith("The image is built without the NVIDIA runtime")
    assert first == "sudo systemctl restart docker"
    text = (PASTES / name).read_text().replace("Version: 4.6-b199", "Version: 5.1.2-b104")
    assert not cause_of(said(text))[1].startswith("The image is built without the NVIDIA runtime")


def test_a_cuda_build_where_the_cpu_build_was_asked_for_is_a_problem() -> None:
    """comfy-cli#344: `install --cpu`, and pip show's Requires lists NVIDIA's CUDA wheels: the CPU index, into the
    venv pip show's Location names; a CPU build shown, or no CPU build asked for, is no such problem."""
    name = "comfy-cli-344-cpu-flag-installs-cuda-torch.txt"
    check, summary, first = cause_of(diagnosed(name))
    assert check == "torch.nvidia_wheels" and "where the CPU-only build was asked for" in summary
    assert first.startswith(
        "/home/xyc/learn/learn-comfy/.venv/bin/python -m pip install --force-reinstall torch==2.9.1 torchvision==0.24.1 "
        "torchaudio==2.9.1 --index-url https://download.pytorch.org/whl/cpu"
    )  # the release pip installed (PyPI's CUDA build, beside NVIDIA's wheels), from the CPU index
    text = (PASTES / name).read_text()
    for other in (
        text.replace("nvidia-cublas-cu12, nvidia-cuda-cupti-cu12", "sympy"),  # a CPU build's requirements
        text.replace("--cpu", "").replace("CPU-only", "").replace("whl/cpu", "whl"),  # no CPU build asked for
    ):
        cause = said(other).result.cause
        assert cause is None or "where the CPU-only build was asked for" not in cause.finding.summary


def test_the_wheel_name_says_which_cpp_abi_the_extension_was_built_with() -> None:
    """flash-attention#680: a cxx11abiTRUE wheel beside PyPI's torch 2.1.0 (the old ABI before 2.7): the same
    release's cxx11abiFALSE wheel; a wheel of torch's own ABI keeps the general answer."""
    name = "flash-attention-680-cxx11abi-wheel.txt"
    _, summary, first = cause_of(diagnosed(name))
    assert summary.startswith(
        "The flash-attn wheel installed (line 4 of the paste) was built with the new C++ ABI"
    )
    assert first.endswith(
        "https://github.com/Dao-AILab/flash-attention/releases/download/v2.3.4/"
        "flash_attn-2.3.4+cu122torch2.1cxx11abiFALSE-cp39-cp39-linux_x86_64.whl"
    )
    same = (PASTES / name).read_text().replace("cxx11abiTRUE", "cxx11abiFALSE")
    assert "was built with the" not in cause_of(said(same))[1]


def test_binary_labels_against_a_one_class_loss_name_the_class_count() -> None:
    """Pointnet2_PyTorch#89: `t < n_classes` fails and 'My labels are all either 0 or 1': one class where two
    are needed; without the labels said, the general reading of the assertion stands."""
    name = "pointnet2_pytorch-89-num-classes-assert.txt"
    _, summary, _ = cause_of(diagnosed(name))
    assert summary.startswith("The model is built for one class while the labels are 0 and 1")
    text = "\n".join(line for line in (PASTES / name).read_text().splitlines() if "binary" not in line)
    assert not cause_of(said(text))[1].startswith("The model is built for one class")


@pytest.mark.parametrize(
    ("words", "on_purpose"),
    [
        ("since im running code on cpu windows 10 and disabled cuda()\n", True),  # open-reid#97
        ("I disabled .cuda() everywhere\n", True),
        ("my training is slow, it is running on CPU\n", False),  # a complaint: the GPU is wanted
    ],
)
def test_the_cpu_on_purpose_is_the_programs_device_not_a_cuda_torch(words: str, on_purpose: bool) -> None:
    """'Torch not compiled with CUDA enabled' where the person runs on the CPU on purpose: the program's device."""
    error = 'raise AssertionError("Torch not compiled with CUDA enabled")\nAssertionError: Torch not compiled with CUDA enabled\n'
    _, summary, _ = cause_of(said(words + error))
    assert (
        summary.startswith("The program asks for CUDA, and the paste asks to run it on the CPU") is on_purpose
    )


def test_a_cut_conda_list_still_says_its_python_by_its_build_strings() -> None:
    """pytorch3d#317: the conda list is cut before its python and pytorch rows, but certifi's py37_0 says Python
    3.7: the CUDA build offered is one with wheels for 3.7, never the newest torch."""
    d = diagnosed("pytorch3d-317-conda-list-pytorch-select-cpu.txt")
    fix = d.result.cause.finding.remediation if d.result.cause else None
    assert fix is not None and any("torch==1.13.1" in c.display() for c in fix.commands)


def test_pips_own_successfully_installed_line_says_which_torch_and_decides_fbgemm() -> None:
    """pytorch#131662: 'Successfully installed torch-2.4.0+cu121', then fbgemm.dll fails: 2.4.1 of the same build,
    not `pip show` first; a torch other than 2.4.0 (or none said) still asks."""
    name = "pytorch-131662-fbgemm-dll-winerror126.txt"
    _, _, first = cause_of(diagnosed(name))
    assert first.endswith("pip install torch==2.4.1+cu121 --index-url https://download.pytorch.org/whl/cu121")
    other = (PASTES / name).read_text().replace("torch-2.4.0+cu121", "torch-2.3.1+cu121")
    assert cause_of(said(other))[2].endswith("pip show torch")


def test_ggmls_device_list_names_the_gpus_over_the_words() -> None:
    """llama.cpp#22013 writes 'RTX 9070' for the RX 9070 its own device list names: the list's AMD GPUs stand."""
    d = diagnosed("llama.cpp-22013-rocm-igpu-invalid-device-function.txt")
    assert [(g.vendor, g.name) for g in d.facts.gpus] == [
        ("amd", "AMD Radeon RX 9070"),
        ("amd", "AMD Radeon 740M Graphics"),
    ]


def test_a_programs_bare_libcuda_in_a_podman_container_is_the_cdi_spec() -> None:
    """The bare libcuda.so any program opens (bitsandbytes' ctypes), in a container given the GPU by CDI: the
    toolkit's spec, as for cuDNN's own message."""
    text = (
        "podman run --device nvidia.com/gpu=all myimage\n"
        "OSError: libcuda.so: cannot open shared object file: No such file or directory\n"
    )
    _, summary, first = cause_of(said(text))
    assert summary.startswith("The program could not open the bare libcuda.so inside the container")
    assert first == "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"


def test_the_cpu_reinstall_brings_the_companions_of_the_same_release() -> None:
    """A CPU torch beside the CUDA build's torchvision cannot load its operators: the three from the CPU index,
    at the installed torch's release where it is known."""
    text = "I want the CPU-only version\nSuccessfully installed torch-2.4.0+cu121\n"
    _, _, first = cause_of(said(text))
    assert (
        "torch==2.4.0 torchvision==0.19.0 torchaudio==2.4.0 --index-url https://download.pytorch.org/whl/cpu"
        in first
    )
