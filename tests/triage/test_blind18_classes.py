"""Blind set 18's classes, each on its real paste (tests/triage/pastes, MANIFEST.json): an error in another
program's words, a ROCm card named beside a torch that finds no GPU, Windows said by nvcc, a package list cut
before torch's row, an AMD-only Windows machine, and error 804 beside a driver that runs the program's CUDA."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste
from torch_gpu_doctor.triage.prose import read_prose
from torch_gpu_doctor.triage.render import render_text
from torch_gpu_doctor.unavailable import Unavailable

PASTES = Path(__file__).parent / "pastes"


def diagnosed(name: str) -> PasteDiagnosis:
    return diagnose_paste((PASTES / name).read_bytes(), name)


def first_command(d: PasteDiagnosis) -> str:
    cause = d.result.cause
    assert cause is not None and cause.finding.remediation is not None
    return cause.finding.remediation.commands[0].display()


def test_caffes_check_of_error_803_in_a_container_is_the_images_libcuda() -> None:
    """MobileNet-YOLO#266: "Check failed: error == cudaSuccess (803 vs. 0)  system has unsupported display
    driver / cuda driver combination" under nvidia-docker: Caffe's wording of 803, not "Error 803:"."""
    d = diagnosed("mobilenet-yolo-266-cuda-803-driver-mismatch-in-nvidia-docker.txt")
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "torch.cuda_init"
    assert cause.finding.remediation is not None and "inside a container" in cause.finding.remediation.text
    assert d.result.unrecognised is None


def test_error_999_from_the_drivers_own_init_reloads_nvidia_uvm() -> None:
    """ollama#8638: "cuda driver library init failure: 999" hours after boot: the driver's unified-memory
    module, as torch's "CUDA unknown error" is."""
    d = diagnosed("ollama-8638-cuda-999-after-uptime-uvm.txt")
    assert first_command(d) == "sudo rmmod nvidia_uvm"


def test_a_named_card_off_the_wheels_list_beside_no_gpu_takes_its_siblings_kernels() -> None:
    """legacy-rocm-build#1931: an RX 6700xt (gfx1031) under ROCm, "cuda available = false": the wheels have no
    gfx1031 kernels, and gfx1030's override is the usual way."""
    d = diagnosed("legacy-rocm-build-1931-rocm-unsupported-gfx1031-hsa-override.txt")
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "amd.gfx_target"
    assert first_command(d) == "env HSA_OVERRIDE_GFX_VERSION=10.3.0 PROGRAM"
    assert d.result.confidence == "likely"  # the usual reason, not what the paste states
    fix = cause.finding.remediation
    assert fix is not None and fix.commands[1].argv[:3] == (
        "sudo",
        "usermod",
        "-aG",
    )  # then /dev/kfd's groups


@pytest.mark.parametrize(
    ("line", "windows"),
    [
        ("Built on Fri_Jun_14_16:44:19_Pacific_Daylight_Time_2024", True),
        ("Built on Wed_Sep_21_10:41:10_Pacific_Daylight_Time_2022", True),
        ("Built on Fri_Jun_14_16:34:21_PDT_2024", False),  # Linux's nvcc abbreviates the zone
    ],
)
def test_nvcc_built_for_windows_names_its_time_zone_in_full(line: str, windows: bool) -> None:
    text = ["nvcc: NVIDIA (R) Cuda compiler driver", line]
    assert (read_prose(text).runs_on_windows is not None) == windows


@pytest.mark.parametrize(
    ("line", "fails"),
    [
        ("# No CUDA Environment found", True),
        ("no cuda device detected on this machine", True),
        ("CUDA toolkit not found, set CUDA_HOME", False),
    ],
)
def test_no_cuda_found_in_words_is_cuda_unavailable(line: str, fails: bool) -> None:
    said = read_prose([line]).torch_fails
    assert (said is not None and said.value == "cuda_unavailable") == fails


def test_a_windows_list_of_torchs_stack_cut_before_torch_is_about_torch() -> None:
    """LLaMA-Factory#5113: "No CUDA Environment found", nvcc of Windows, and a pip list of accelerate and
    bitsandbytes cut before torch: PyPI's Windows torch is the CPU build."""
    d = diagnosed("llamafactory-5113-windows-cpu-torch-from-pypi.txt")
    cause = d.result.cause
    assert cause is not None and "what `pip install torch` gets from PyPI on Windows" in cause.finding.summary


def test_an_amd_only_windows_machine_gets_directml_not_a_linux_wheel_nor_a_mac_check() -> None:
    """comflowyspace#269: "Torch not compiled with CUDA enabled", Windows 10 with only a Radeon 780M."""
    d = diagnosed("comflowyspace-269-no-nvidia-gpu-amd-igpu.txt")
    assert first_command(d) == "python -m pip install torch-directml"
    text = " ".join(v.finding.summary for v in d.result.verdicts)
    assert "Mac" not in text and "rocm" not in first_command(d)


def test_error_804_beside_a_driver_that_runs_cuda_12_takes_the_compat_libcuda_off_the_path() -> None:
    """Fooocus#2169: 804 on a GTX 1070 with driver 535 (CUDA 12.x): only a forward-compatibility libcuda
    raises 804, and the driver itself runs the program's CUDA 12 under minor-version compatibility."""
    assert first_command(diagnosed("fooocus-2169-cuda-804-forward-compat-on-geforce.txt")) == "ldconfig -p"


def test_error_804_beside_an_r470_driver_still_updates_the_driver() -> None:
    """faster-whisper#653: nvidia-smi says CUDA 12.1 on driver 470 (the compat libcuda answering): the driver's
    own CUDA is 11.4, so without the compat library a CUDA 12 program fails anyway."""
    d = diagnosed("faster-whisper-653-forward-compat-804-2080ti.txt")
    cause = d.result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert "newer than the driver's (CUDA ≤ 11.4)" in cause.finding.remediation.text


def test_out_of_memory_beside_two_named_gpus_pins_the_job_to_the_larger() -> None:
    """bitsandbytes#448: "two GPUs: A6000 and GT1030", out of memory at batch size 1 and bitsandbytes seeing
    compute capability 6.1: the job is on the GT 1030."""
    d = diagnosed("bitsandbytes-448-mixed-gpus-wrong-device-selected.txt")
    cause = d.result.cause
    assert cause is not None and "most likely on the GeForce GT 1030" in cause.finding.summary
    assert cause.finding.remediation is not None
    assert [c.display() for c in cause.finding.remediation.commands][1] == (
        "env CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=N PROGRAM"
    )


@pytest.mark.parametrize(
    ("words", "named"),
    [
        ("On my rack I have two GPUs: A6000 and GT1030", ("GeForce GT 1030", "RTX A6000")),
        ("I use an A6000", ()),  # one GPU: prose.gpu, not a list
    ],
)
def test_every_gpu_the_words_name(words: str, named: tuple[str, ...]) -> None:
    assert tuple(s.value for s in read_prose([words]).gpus) == named


def test_a_firmware_halt_is_a_driver_matter_not_a_gpu_reset() -> None:
    """open-gpu-kernel-modules#942: Xid 62 (micro-controller halt) then 45 on an RTX 5070 Ti, 580.82.07: the
    firmware ships with the driver, so another driver release is the step."""
    cause = diagnosed("open-gpu-kernel-modules-942-xid62-gsp-halt-blackwell-desktop.txt").result.cause
    assert cause is not None and cause.finding.check_id == "driver.xid_errors"
    fix = cause.finding.remediation
    assert (
        fix is not None and "install another driver release" in fix.text and "nvidia-smi -r" not in fix.text
    )


def test_a_logged_warning_comes_after_the_exception_that_stopped_the_program() -> None:
    """GLM-4#510: vLLM's "WARNING ... Failed to import from vllm._C ... libcudart.so.12" was logged and the run
    went on; "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0" on a V100
    stopped it."""
    d = diagnosed("glm-4-510-bf16-unsupported-on-volta.txt")
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "gpu.precision"
    problems = {v.finding.check_id for v in d.result.verdicts if v.finding.status.value == "fail"}
    assert "env.library_path" in problems  # still said, after the cause


def test_a_missing_cuda_library_in_an_old_l4t_image_is_the_hosts_release() -> None:
    """jetson-containers#9: `import torch` in nvcr.io/nvidia/l4t-pytorch:r32.4.2 on a TX2 cannot open
    libnvToolsExt.so.1: before L4T R34 the image takes CUDA from the host, so the tag must be the host's L4T."""
    d = diagnosed("jetson-containers-9-jetson-l4t-container-host-mismatch.txt")
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "platform.jetson"
    assert "L4T R32.4.2" in cause.finding.summary
    assert first_command(d) == "cat /etc/nv_tegra_release"


@pytest.mark.parametrize(
    ("line", "jetson", "image"),
    [
        ("max@jetson-tx2-0:~$ ls", "TX2", None),
        ("docker run --runtime nvidia nvcr.io/nvidia/l4t-pytorch:r32.4.2-pth1.5-py3", "Jetson", "32.4.2"),
        ("dustynv/l4t-ml:r36.2.0 works", "Jetson", "36.2.0"),
    ],
)
def test_a_jetson_by_its_host_name_or_its_l4t_image(line: str, jetson: str, image: str | None) -> None:
    prose = read_prose([line])
    assert prose.jetson is not None and prose.jetson.value == jetson
    assert (prose.l4t_image.value if prose.l4t_image else None) == image


def test_a_watermark_said_to_be_lifted_but_still_in_the_error_is_checked_not_repeated() -> None:
    """pytorch#130112: "I have already did export PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0", and the MPS error still
    shows "max allowed: 20.40 GB": the setting never reached the process."""
    d = diagnosed("pytorch-130112-mps-oom-unified-memory.txt")
    assert (
        first_command(d)
        == "python -c 'import os; print(os.environ.get(\"PYTORCH_MPS_HIGH_WATERMARK_RATIO\"))'"
    )


def test_an_unknown_error_beside_a_report_asks_for_the_driver_not_the_report_again() -> None:
    """vllm-omni#241: "vllm start failed with CUDA driver error" beside vLLM's collect_env, cut before the
    driver line: a failure said, never "No problem found", and nvidia-smi is what is missing."""
    d = diagnosed("vllm-omni-241-unusual-gpu-h20-cuda-driver-error-undecidable.txt")
    assert d.result.cause is None and d.result.unrecognised is not None and d.result.unrecognised.line == 1
    out = io.StringIO()
    render_text(d, "paste", out)
    assert "$ nvidia-smi" in out.getvalue() and "collect_env" not in out.getvalue().split("Next:")[1]


def test_lightning_finding_no_gpu_asks_torch_for_its_build_before_visible_devices() -> None:
    """Lightning#15254: "No supported gpu backend found" in a notebook: torch's build is not shown, so the
    first question is the build and the device count in that kernel, never "although torch is a CUDA build"."""
    d = diagnosed("pytorch-lightning-15254-lightning-no-gpu-backend-in-notebook.txt")
    assert first_command(d).startswith("python -c 'import torch; print(torch.__version__, torch.version.cuda")
    cause = d.result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert "although torch is a CUDA build" not in cause.finding.remediation.text


def test_a_shadowed_cudnn_is_tested_by_running_it_not_by_is_available() -> None:
    """wetts#177: a system cuDNN 8 in /usr/local/cuda/lib64 on LD_LIBRARY_PATH beside the cu121 wheel's: cuDNN
    loads its sub-libraries on first use, so the test runs a convolution."""
    assert "conv2d" in first_command(diagnosed("wetts-177-ld-library-path-system-cudnn-shadows-torch.txt"))


@pytest.mark.parametrize(
    ("lines", "driver"),
    [
        (["- **Driver**: 580.82.09"], "580.82.09"),
        (["- **CUDA driver:** 580.105.08 / CUDA 13.0"], "580.105.08"),
        (
            ["### NVIDIA Open GPU Kernel Modules Version", "", "580.82.07", "", "### Operating System"],
            "580.82.07",
        ),
        (["### Driver Version", "", "not sure"], None),
    ],
)
def test_a_driver_in_markdown_and_issue_templates(lines: list[str], driver: str | None) -> None:
    said = read_prose(lines).driver
    assert (said.value if said else None) == driver


@pytest.mark.parametrize(
    ("line", "distro"),
    [
        ("I run **ollama serve** on Ubuntu 22.04.5 LTS. If I do it", "Ubuntu 22.04.5"),
        ("Pop!_OS 24.04 LTS", "Pop!_OS 24.04"),
        ("- **OS:** Ubuntu 24.04", "Ubuntu 24.04"),
        ("FROM nvidia/cuda:12.8.0-devel-ubuntu22.04", None),  # an image tag, not the machine
        ("works on Ubuntu 20.04 and Debian 12", None),  # two: not one machine's
    ],
)
def test_a_distribution_named_with_its_release(line: str, distro: str | None) -> None:
    said = read_prose([line]).distro
    assert (said.value if said else None) == distro


def test_the_distribution_in_words_picks_the_drivers_install_command() -> None:
    """open-gpu-kernel-modules#942's template names "Pop!_OS 24.04 LTS" and driver 580.82.07."""
    d = diagnosed("open-gpu-kernel-modules-942-xid62-gsp-halt-blackwell-desktop.txt")
    assert not isinstance(d.facts.os, Unavailable) and d.facts.os.distro_id == "pop"
    driver = d.facts.driver
    assert not isinstance(driver, Unavailable) and driver.version == "580.82.07"


def test_an_extension_path_an_editor_made_into_a_markdown_link_still_names_it() -> None:
    """flash-attention#854: "ImportError: [/opt/.../flash_attn_2_cuda...so](https://vscode-remote...so):
    undefined symbol: _ZN2at4_ops5zeros4call...": flash-attn, rebuilt against the installed torch."""
    d = diagnosed("flash-attention-854-extension-built-for-other-torch-version.txt")
    cause = d.result.cause
    assert cause is not None and cause.finding.summary.startswith("flash-attn's compiled extension")
    assert "FLASH_ATTENTION_FORCE_BUILD=TRUE" in first_command(d)


def test_the_old_abis_string_in_the_missing_symbol_says_the_abi_may_differ() -> None:
    """flash-attention#1644: "_ZN3c105ErrorC2ENS_14SourceLocationESs": `Ss` is the pre-C++11 ABI's std::string."""
    cause = diagnosed("flash-attention-1644-extension-cxx11-abi-mismatch.txt").result.cause
    assert cause is not None and "or the other C++ ABI" in cause.finding.summary


def test_a_torch_install_for_a_compose_image_goes_into_the_image() -> None:
    """Kokoro-FastAPI#306: "installing using docker compose", and torch's capability warning quoted in words
    ('"NVIDIA GeForce RTX 5060 Ti with CUDA capability sm_120 ...'): the GPU is named without the quote, and
    the new torch belongs in the image, rebuilt."""
    d = diagnosed("kokoro-fastapi-306-sm120-blackwell-old-torch-in-docker-image.txt")
    cause = d.result.cause
    assert cause is not None and "for NVIDIA GeForce RTX 5060 Ti (compute" in cause.finding.summary
    fix = cause.finding.remediation
    assert fix is not None and fix.text.startswith("The program runs from an image built with docker compose")
    assert fix.commands[-1].argv == ("docker", "compose", "build", "--no-cache")


def test_a_gpu_list_the_paste_holds_is_not_asked_for_again() -> None:
    """vllm#41848: a MIG UUID read with int(); the paste lists `nvidia-smi -L` with the MIG device's UUID, so the
    fix is the text alone, not that listing again."""
    d = diagnosed("vllm-41848-mig-uuid-in-cuda-visible-devices.txt")
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "env.cuda_visible_devices"
    assert cause.finding.remediation is not None and not cause.finding.remediation.commands
    assert "MIG-377e0049-554c-540b-93c6-d0976f8426cb" in cause.finding.remediation.text


def test_no_gpu_in_an_image_on_wsl_while_nvidia_smi_lists_them_is_the_images_compat_libcuda() -> None:
    """vllm#34296: "vllm/vllm-openai:v0.15.1 No CUDA GPUs are available, 0.10.1.1 is ok" under WSL, with
    nvidia-smi listing two RTX 4090s: the image's forward-compatibility libcuda shadows WSL's."""
    d = diagnosed("vllm-34296-wsl-geforce-cuda-compat-libs-in-container.txt")
    cause = d.result.cause
    assert cause is not None and "vllm/vllm-openai:v0.15.1 container" in cause.finding.summary
    assert cause.finding.remediation is not None and "/usr/lib/wsl/lib" in cause.finding.remediation.text


def test_winerror_1455_is_explained_as_memory_not_as_a_missing_dll() -> None:
    """yolov7#1036: WinError 1455 loading torch's DLLs: the explanation is the page file's, not WinError 126's."""
    cause = diagnosed("yolov7-1036-windows-dll-load-winerror1455-pagefile.txt").result.cause
    assert cause is not None and cause.finding.details.startswith("WinError 1455 is not a missing DLL")


def test_a_broken_toolkit_beside_unknown_runtime_nvidia_is_registered_again_after_the_host_driver() -> None:
    """nvidia-container-toolkit#302: after a power outage, "Unknown runtime specified nvidia" and "load library
    failed: libnvidia-ml.so.1": the host's nvidia-smi first, then the toolkit registered with Docker again."""
    cause = diagnosed("nvidia-container-toolkit-302-container-toolkit-broken-after-outage.txt").result.cause
    assert cause is not None and cause.finding.check_id == "platform.container_gpus"
    fix = cause.finding.remediation
    assert fix is not None and fix.commands[0].argv == ("nvidia-smi",)
    assert ("sudo", "nvidia-ctk", "runtime") in [c.argv[:3] for c in fix.commands]
    assert "changes nothing" not in cause.finding.details
