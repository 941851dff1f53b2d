"""Blind set 20's classes, each on its real paste (tests/triage/pastes, MANIFEST.json), with what must stay as it
was: NVML's phrase quoted on its own, torch's 'CUDA unknown error' in a title, CUDA error 999 in a running
program, error 36, Docker's missing runtime under any name, an Xid line without NVRM's prefix, NCCL's own form of
error 217 and its missing NVML, SIGFPE in cuBLAS on H20, another program's driver too old on a vGPU guest."""

from __future__ import annotations

import dataclasses

import pytest

from tests.triage.corpus_helpers import PASTES, cause_of, diagnosed
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste
from torch_gpu_doctor.triage.prose import read_prose
from torch_gpu_doctor.unavailable import Unavailable


def said(text: str) -> PasteDiagnosis:
    return diagnose_paste(text.encode(), "paste")


def test_nvmls_phrase_quoted_on_its_own_is_the_mismatch() -> None:
    """NVIDIA/ubuntu-packaging-nvidia-driver#3: 'we often face the `Driver/library version mismatch`'."""
    check, summary, first = cause_of(
        diagnosed("ubuntu-packaging-nvidia-driver-3-nvml-driver-library-mismatch.txt")
    )
    assert check == "driver.nvml" and summary.startswith("Driver/library version mismatch")
    assert "reboot" in first
    # the container toolkit's own form keeps its own entry
    hits = said(
        "nvidia-container-cli: initialization error: nvml error: driver/library version mismatch\n"
    ).pasted.hits
    assert [h.signature.id for h in hits] == ["driver_library_container_cli_nvml_mismatch"]


def test_torchs_cuda_unknown_error_in_a_title_is_read_and_a_server_gets_nvidia_uvm_not_suspend() -> None:
    """ComfyUI#9713: '# L20 RuntimeError: CUDA unknown error' in a VM: the title is read, and a data-centre GPU
    that never sleeps gets nvidia_uvm not loaded, not the laptop's suspend and resume."""
    check, summary, first = cause_of(diagnosed("comfyui-9713-cuda-unknown-error-vm.txt"))
    assert check == "torch.cuda_init" and "unknown error) on a data-centre GPU" in summary
    assert "suspend" not in summary and first == "ls -l /dev/nvidia-uvm"


def test_a_grid_guest_is_read_from_its_installer_and_a_bare_license_line_is_no_vgpu() -> None:
    """nvidia-docker#1510: 'NVIDIA-Linux-x86_64-390.75-grid.run' names the driver (CUDA <= 9.1) and a vGPU guest;
    `pip show torch`'s 'License: BSD-3' beside CUDA's unknown error (c13) is no vGPU."""
    d = diagnosed("nvidia-docker-1510-vgpu-grid-old-driver.txt")
    driver = d.facts.driver
    assert not isinstance(driver, Unavailable) and driver.version == "390.75"
    _, summary, _ = cause_of(d)
    assert "on a vGPU guest" in summary
    c13 = diagnose_paste(
        (PASTES.parent / "reports" / "c13_pip_show_torch210_container_cuda_unknown_error.txt").read_bytes(),
        "c13",
    )
    _, summary13, _ = cause_of(c13)
    assert "vGPU" not in summary13


def test_error_999_in_a_running_program_is_a_lost_gpu_state_not_a_bad_install() -> None:
    """llama.cpp#3045: 'CUDA error 999 at ggml-cuda.cu:5146: unknown error' after sleep and an eGPU unplugged."""
    check, summary, first = cause_of(diagnosed("llama.cpp-3045-egpu-hotplug.txt"))
    assert check == "torch.cuda_init" and summary.startswith(
        "CUDA error 999 (unknown error) while the program ran"
    )
    assert first.startswith("nvidia-smi")
    assert said("CUDA error 9990 in a log\n").pasted.empty  # no other number


def test_error_36_from_another_program_on_a_vgpu_guest_is_the_hosts_vgpu_release() -> None:
    """FasterTransformer#406: 'API call is not supported in the installed CUDA driver' on GRID T4-8C, driver
    450.102.04 (CUDA 11.0): the program's CUDA is newer than the guest driver, which comes with the host's
    vGPU software; no torch is involved, so none is offered."""
    d = diagnosed("fastertransformer-406-vgpu-driver-too-old-for-runtime.txt")
    check, summary, first = cause_of(d)
    assert check == "torch.driver_compat"
    assert (
        summary
        == "The NVIDIA driver is older than the CUDA the program was built with: it supports CUDA ≤ 11.0."
    )
    cause = d.result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert (
        "vGPU profile GRID T4-8C" in cause.finding.remediation.text
        and "torch" not in cause.finding.remediation.text
    )
    assert first == "nvidia-smi -q"


def test_a_driver_too_old_on_bare_metal_keeps_the_distributions_driver() -> None:
    text = "[FT][ERROR] CUDA runtime error: API call is not supported in the installed CUDA driver\n"
    d = said(text)
    cause = d.result.cause
    assert cause is not None and cause.finding.check_id == "torch.driver_compat"
    assert cause.finding.remediation is not None and "vGPU" not in cause.finding.remediation.text


def test_dockers_missing_runtime_is_read_under_any_driver_name() -> None:
    check, _, first = cause_of(diagnosed("gpu-hot-18-docker-missing-nvidia-runtime.txt"))  # driver "nvidia"
    assert check == "platform.container_gpus" and "nvidia-ctk runtime configure" in first


def test_an_xid_line_without_nvrms_prefix_is_read_as_the_kernel_logs() -> None:
    """open-gpu-kernel-modules#1030's title: 'Xid (PCI:0000:2b:00): 31 MMU Fault: ...': the Xid table's meaning."""
    d = diagnosed("open-gpu-kernel-modules-1030-xid31-mmu-fault.txt")
    assert d.pasted.kernel_log is not None and [e.xid for e in d.pasted.kernel_log.xid_events] == [31]
    check, summary, _ = cause_of(d)
    assert check == "driver.xid_errors" and summary.startswith("Xid 31")


def test_a_program_fault_that_windows_never_meets_is_the_driver() -> None:
    """open-gpu-kernel-modules#1030: Xid 31 in llama.cpp and ollama, 'working fine under windows'."""
    d = diagnosed("open-gpu-kernel-modules-1030-xid31-mmu-fault.txt")
    check, summary, _ = cause_of(d)
    assert check == "driver.xid_errors" and "the driver or the GPU, not one program's bug" in summary
    assert d.result.cause is not None and d.result.confidence == "likely"  # the words, not a log, say so
    fix = d.result.cause.finding.remediation
    assert fix is not None and "another driver release" in fix.text
    # the same Xid line without those words stays the program's own
    title = (PASTES / "open-gpu-kernel-modules-1030-xid31-mmu-fault.txt").read_text().splitlines()[0]
    alone = said(f"{title}\nIt happens when I run my training script.\n")
    assert alone.result.cause is not None and "usually their own bugs" in alone.result.cause.finding.summary


def test_nccls_own_form_of_error_217_is_peer_to_peer() -> None:
    check, summary, first = cause_of(diagnosed("easyr1-579-p2p-not-supported.txt"))
    assert check == "nccl.communication" and "peer-to-peer" in summary
    assert "NCCL_P2P_DISABLE=1" in first


def test_nccl_that_cannot_open_nvml_is_the_drivers_library_not_shared_memory() -> None:
    """LlamaFactory#6161: 'unhandled system error' with 'Last error: Failed to open libnvidia-ml.so.1'."""
    check, summary, first = cause_of(diagnosed("llamafactory-6161-missing-libnvidia-ml.txt"))
    assert check == "nccl.communication" and "could not load NVML" in summary
    assert first.startswith("ldconfig -p") and "/dev/shm" not in first


@pytest.mark.parametrize(
    "name",
    [
        "vllm-4392-h20-cublas-sigfpe.txt",  # "Floating point exception (core dumped)" on H20, torch 2.2.1+cu121
        "llamafactory-6201-h20-sigfpe-exitcode-8.txt",  # torchrun "failed (exitcode: -8)" on H20
    ],
)
def test_sigfpe_is_cublas_on_h20(name: str) -> None:
    check, summary, first = cause_of(diagnosed(name))
    assert check == "torch.cuda_init" and summary.startswith("The process died of SIGFPE")
    assert first.endswith("-m pip install nvidia-cublas-cu12==12.4.5.8")


def test_pythons_floating_point_error_is_no_sigfpe() -> None:
    hits = said("FloatingPointError: overflow encountered in exp\nexitcode: -80\n").pasted.hits
    assert not any(h.signature.id == "sigfpe_cublas_gemm" for h in hits)


@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("nccl-1504-nccl-error-container.txt", 1),  # "It turned out to errors related to NCCL"
        ("comfyui-nvidia-docker-111-vgpu-q-profile-cuda.txt", 1),  # "i get the error in the image"
        ("macos-egpu-17-egpu-tb2-macos.txt", None),  # "the Nvidia CUDA driver does not detect the GPU"
    ],
)
def test_a_failure_said_in_words_with_no_error_shown_is_never_no_problem(name: str, line: int | None) -> None:
    d = diagnosed(name)
    assert d.result.cause is None
    said_failing = d.result.unrecognised
    assert said_failing is not None and said_failing.said
    assert line is None or said_failing.line == line
    assert d.result.exit_problem()  # exit code 1, not 0


def test_the_nccl_words_ask_for_nccls_own_reason_and_a_screenshot_is_named() -> None:
    import io  # only here: the other tests print nothing

    from torch_gpu_doctor.triage.render import render_text

    out = io.StringIO()
    render_text(diagnosed("nccl-1504-nccl-error-container.txt"), "paste", out)
    assert "NCCL_DEBUG=INFO" in out.getvalue() and "No problem found" not in out.getvalue()
    out = io.StringIO()
    render_text(diagnosed("comfyui-nvidia-docker-111-vgpu-q-profile-cuda.txt"), "paste", out)
    assert "a screenshot of it cannot be read" in out.getvalue()


@pytest.mark.parametrize(
    "words",
    [
        "Training finished with no errors on both GPUs.\n",
        "It works fine now, thanks.\n",
        "What should I check if it fails to start?\n",  # a supposition, not an account
    ],
)
def test_words_without_a_failure_stay_no_problem(words: str) -> None:
    d = said("GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-1)\n" + words)
    assert d.pasted.prose.fails is None
    assert d.result.unrecognised is None


def test_prints_false_beside_a_shown_is_available_is_cuda_unavailable() -> None:
    """pytorch#32524: 'But pytorch-1.2 prints True and pytorch-1.4 prints False' after `print(torch.cuda.is_available())`."""
    check, summary, first = cause_of(diagnosed("pytorch-32524-driver-too-old-cu101.txt"))
    assert check == "torch.cuda_init" and "driver is older than the CUDA its build needs" in summary
    assert first.startswith("nvidia-smi")


def test_pip_that_kept_the_installed_torch_is_told_to_replace_the_build() -> None:
    """pytorch#103246: `pip install torch ... --index-url .../cu118` answered 'Requirement already satisfied: torch
    ... (2.0.1)': the cu118 build never came; the exact local versions, forced."""
    check, summary, first = cause_of(diagnosed("pytorch-103246-pip-already-satisfied-wrong-variant.txt"))
    assert check == "torch.installed" and summary.startswith("pip kept the torch already installed (2.0.1")
    assert first == (
        "python -m pip install --force-reinstall torch==2.0.1+cu118 torchvision==0.15.2+cu118 "
        "torchaudio==2.0.2+cu118 --index-url https://download.pytorch.org/whl/cu118"
    )


def test_pip_that_kept_the_build_asked_for_or_installed_another_package_is_fine() -> None:
    kept = (
        "$ pip install torch --index-url https://download.pytorch.org/whl/cu118\n"
        "Requirement already satisfied: torch in /home/u/env/lib/python3.10/site-packages (2.0.1+cu118)\n"
    )
    assert said(kept).result.cause is None
    other = (
        "$ pip install transformers\n"
        "Requirement already satisfied: torch in /home/u/env/lib/python3.10/site-packages (2.0.1)\n"
    )
    assert said(other).result.cause is None


def test_a_torch_version_in_backticks_and_a_gb10_are_read() -> None:
    """transformerlab-app#1330: 'reports **PyTorch `2.9.1+cpu`**' on a DGX Spark (NVIDIA GB10)."""
    d = diagnosed("transformerlab-app-1330-cpu-only-torch-aarch64.txt")
    assert d.pasted.prose.torch is not None and d.pasted.prose.torch.value == "2.9.1+cpu"
    assert [(g.name, g.compute_capability) for g in d.facts.gpus] == [("GB10", "12.1")]
    check, _, first = cause_of(d)
    assert check == "torch.cpu_build" and "+cu" in first


def test_a_quoted_traceback_is_read_and_an_extension_built_before_torch_113_is_named() -> None:
    """DeepAC#26: the traceback quoted with '> ', ending 'ImportError: .../libtorch_cuda_cu.so: cannot open
    shared object file' (a library only torch 1.10-1.12 had)."""
    d = diagnosed("deepac-26-extension-abi-mismatch.txt")
    assert "quoted lines ('> ') were read without their quote marks" in d.pasted.paste.notes
    check, summary, _ = cause_of(d)
    assert check == "env.library_path"
    assert summary.startswith("A compiled extension was built for a torch older than 1.13")


def test_python_prompts_and_a_lone_quote_keep_their_marks() -> None:
    from torch_gpu_doctor.triage.decode import decode_paste

    text = ">>> import torch\n>>> torch.cuda.is_available()\nFalse\n> a lone reply\n"
    decoded = decode_paste(text.encode(), "p")
    assert decoded.text.split("\n")[:4] == [
        ">>> import torch",
        ">>> torch.cuda.is_available()",
        "False",
        "> a lone reply",
    ]
    assert not decoded.notes


def test_an_old_torchs_missing_cuda_library_is_the_machines_cuda_not_a_wheel() -> None:
    """PyTorch-Jetson-Nano#5: Python 3.6 (torch 1.7-1.10) cannot load libcurand.so.10: no nvidia-* wheels then."""
    check, summary, first = cause_of(diagnosed("pytorch-jetson-nano-5-jetson-missing-cuda-libs.txt"))
    assert check == "env.library_path" and "older than 1.13" in summary and "nvidia-* wheels" in summary
    assert first == "ldconfig -p"


def test_error_46_and_801_under_wsl_are_the_windows_side_not_a_compute_mode_or_a_vgpu() -> None:
    _, summary46, first46 = cause_of(diagnosed("wsl-6014-wsl2-windows-build-regression.txt"))
    assert "under WSL 2" in summary46 and "Exclusive_Process" not in summary46
    assert first46 == "wsl.exe --update"
    _, summary801, first801 = cause_of(diagnosed("cudf-11382-wsl2-pascal-unsupported.txt"))
    assert "under WSL 2 (error 801)" in summary801 and "vGPU" not in summary801
    assert first801 == "nvidia-smi -L"


def test_error_46_on_linux_keeps_the_compute_mode() -> None:
    d = said("RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable\n")
    _, summary, _ = cause_of(d)
    assert "Exclusive_Process" in summary


def test_dockers_missing_runtime_on_windows_is_docker_desktops_wsl2_engine() -> None:
    d = diagnosed("nvidia-docker-1352-docker-windows-no-gpu-runtime.txt")
    check, _, first = cause_of(d)
    assert check == "platform.container_gpus" and first == "wsl.exe --update"
    cause = d.result.cause
    assert cause is not None and cause.finding.remediation is not None
    assert "systemctl" not in " ".join(c.display() for c in cause.finding.remediation.commands)


def test_a_rocm_torch_without_a_gpu_on_a_target_the_wheels_build_is_device_access() -> None:
    """legacy-rocm-build#3072: RX 7900 XTX (gfx1100, built by the wheels), rocminfo works, torch prints False on
    the line after the call: the user is not in render and video."""
    check, summary, first = cause_of(diagnosed("legacy-rocm-build-3072-rocm-render-group-permission.txt"))
    assert (
        check == "amd.gfx_target" and "its wheels build gfx1100" in summary and "render and video" in summary
    )
    assert first == "ls -l /dev/kfd /dev/dri"


def test_rocminfos_own_target_outranks_the_product_names_and_a_wheel_url_names_the_build() -> None:
    """legacy-rocm-build#3910: 'Radeon 780M' (gfx1103 by the table) beside rocminfo's 'amdgcn-amd-amdhsa--gfx1102',
    and torch installed from '.../torch-2.6.0.dev20241016%2Brocm6.2-cp312-...whl'."""
    d = diagnosed("legacy-rocm-build-3910-rocm-unsupported-igpu.txt")
    assert d.pasted.prose.amd_gpu is not None and d.pasted.prose.amd_gpu.value == "gfx1102"
    assert d.pasted.prose.torch is not None and d.pasted.prose.torch.value == "2.6.0.dev20241016+rocm6.2"
    check, summary, first = cause_of(d)
    assert check == "amd.gfx_target"
    # rocm6.2's wheels lack gfx1102 (rocm6.2.4's have it): the target, not the groups, and the newer variant
    assert "ROCm 6.2 wheels have no kernels for gfx1102" in summary and "render" not in summary
    assert "--index-url https://download.pytorch.org/whl/rocm" in first
    # the same paste with a variant that has gfx1102 is the groups again
    text = (PASTES / "legacy-rocm-build-3910-rocm-unsupported-igpu.txt").read_text()
    check, summary, first = cause_of(said(text.replace("%2Brocm6.2", "%2Brocm6.3")))
    assert check == "amd.gfx_target" and "render and video" in summary and first == "ls -l /dev/kfd /dev/dri"


def test_a_render_node_the_process_may_not_open_is_read() -> None:
    """ROCm/k8s-device-plugin#65: 'amdgpu_get_auth (1) failed (-1)' and access("/dev/dri/renderD128") = EPERM."""
    check, summary, first = cause_of(diagnosed("k8s-device-plugin-65-k8s-rocm-device-permissions.txt"))
    assert check == "amd.torch_rocm" and "render node" in summary
    assert first == "ls -l /dev/kfd /dev/dri"
    hits = said('access("/dev/dri/renderD128", F_OK) = 0\n').pasted.hits
    assert not hits  # a node it may open is no error


def test_a_failure_on_mixed_gpu_models_runs_on_the_newest_ones_by_the_pastes_own_order() -> None:
    """vLLM#19045: 'vllm serve can not work on two 3090' with collect_env listing two RTX 3090 and two GTX 1080 Ti
    (Pascal, under vLLM's 7.0 floor): the 3090s, by the report's CUDA order (no PCI_BUS_ID)."""
    d = diagnosed("vllm-19045-mixed-gpu-tensor-parallel.txt")
    check, summary, first = cause_of(d)
    assert check == "env.cuda_visible_devices" and summary.startswith("The machine mixes GPU models")
    assert "vLLM needs compute capability 7.0 or newer" in summary
    assert first == "env CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0,1 PROGRAM"


def test_a_cause_found_on_mixed_gpus_stays_the_cause() -> None:
    """3d-deepbox#44: a TITAN V beside a Quadro K620 in nvidia-smi, the job slow while the TITAN V idles: the idle
    GPU is the answer, not the mix."""
    check, summary, _ = cause_of(diagnosed("3d-deepbox-44-gpu-idle-healthy-env.txt"))
    assert check == "torch.cuda_init" and "idle" in summary


def test_mixed_gpus_without_a_failure_or_of_one_capability_are_no_cause() -> None:
    report = (
        "PyTorch version: 2.6.0+cu124\nIs debug build: False\nCUDA used to build PyTorch: 12.4\n"
        "ROCM used to build PyTorch: N/A\nIs CUDA available: True\nGPU models and configuration: \n"
        "GPU 0: NVIDIA GeForce RTX 3090\nGPU 1: NVIDIA GeForce GTX 1080 Ti\n"
    )
    assert said(report).result.cause is None  # nothing fails
    same = report.replace("GTX 1080 Ti", "RTX 3090 Ti")  # both 8.6
    cause = said("vllm serve can not work on these\n" + same).result.cause
    assert cause is None or cause.finding.check_id != "env.cuda_visible_devices"
    mixed = said("vllm serve can not work on these\n" + report).result.cause
    assert mixed is not None and mixed.finding.check_id == "env.cuda_visible_devices"  # the same words, mixed


def test_a_driver_too_old_beside_a_conda_cudatoolkit_names_the_driver_it_needs() -> None:
    """mmaction#105: error 35 and a conda list with cudatoolkit 10.0.130: NVIDIA's table gives 410.48."""
    _, summary, first = cause_of(diagnosed("mmaction-105-driver-insufficient-cuda10.txt"))
    assert summary.endswith("cudatoolkit 10.0.130 (CUDA 10.0) needs driver 410.48 or newer on Linux.")
    assert first.startswith("nvidia-smi")


def test_ncclss_unhandled_system_error_asks_nccl_for_its_reason_first() -> None:
    check, _, first = cause_of(diagnosed("nccl-tests-320-nccl-unhandled-system-error.txt"))
    assert check == "nccl.communication"
    assert first.startswith("env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET PROGRAM")


@pytest.mark.parametrize(
    "words",
    [
        "I applied the patch, it runs and I didn't get any error since.\n",  # the diff review's false positives
        "I couldn't find it in the accelerate docs.\n",
        "Feature request: show errors from all ranks, not only rank 0.\n",
        "This is not a bug report; I can't find the option to pin the GPU.\n",
    ],
)
def test_words_that_report_no_failure_are_not_read_as_one(words: str) -> None:
    assert read_prose(words.split("\n")).fails is None


def test_a_failure_said_beside_nvidia_smis_header_alone_is_still_said() -> None:
    """nvidia-smi's header is read as a fact, not an error: 'can not work' beside it still gets exit 1."""
    text = (
        "vllm serve can not work on my 4090\n"
        "| NVIDIA-SMI 550.54.14              Driver Version: 550.54.14      CUDA Version: 12.4     |\n"
    )
    d = said(text)
    assert d.result.unrecognised is not None and d.result.unrecognised.said


def test_another_backends_false_is_not_cudas() -> None:
    text = (
        "print(torch.cuda.is_available())  # True here\nbut torch.backends.mps.is_available() returns False\n"
    )
    assert read_prose(text.split("\n")).torch_fails is None


def test_mixed_gpus_on_a_healthy_paste_are_no_cause() -> None:
    text = (
        "Training is fine on both.\n"
        "| NVIDIA-SMI 550.54.14              Driver Version: 550.54.14      CUDA Version: 12.4     |\n"
        "GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-1)\nGPU 1: NVIDIA GeForce GT 1030 (UUID: GPU-2)\n"
    )
    assert said(text).result.cause is None


def test_pip_that_kept_pypis_own_build_of_the_variant_asked_for_is_fine() -> None:
    """torch 2.1.2 from PyPI is the cu121 build: kept after an install from the cu121 index, nothing is wrong."""
    text = (
        "$ pip install torch --index-url https://download.pytorch.org/whl/cu121\n"
        "Requirement already satisfied: torch in /home/u/env/lib/python3.10/site-packages (2.1.2)\n"
    )
    assert said(text).result.cause is None


def test_an_index_url_on_a_very_long_line_is_not_taken_for_an_install_command() -> None:
    """The diff review's hang: one 100k-character line of `pip install torch` before an index URL (a notebook's
    JSON) made one pattern over the whole line backtrack for minutes. The URL is found alone now, and a line that
    long is no command anyone typed: the rule leaves it."""
    text = "pip install torch " * 6000 + "--index-url https://download.pytorch.org/whl/cu118\n"
    text += "Requirement already satisfied: torch in /x (2.0.1)\n"
    assert said(text).result.cause is None
    short = "pip install torch --index-url https://download.pytorch.org/whl/cu118\n"
    short += "Requirement already satisfied: torch in /x (2.0.1)\n"
    cause = said(short).result.cause
    assert cause is not None and cause.finding.summary.startswith("pip kept the torch already installed")


def test_sigfpe_without_an_h20_asks_where_it_died() -> None:
    d = said("GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-1)\nFloating point exception (core dumped)\n")
    _, summary, first = cause_of(d)
    assert "no H20 is named here" in summary and "nvidia-cublas" not in first


def test_torchs_own_cuda_unknown_error_is_not_a_running_programs() -> None:
    hits = said("RuntimeError: CUDA error: unknown error\n").pasted.hits
    assert "unknown_error_999_while_running" not in {h.signature.id for h in hits}


def test_a_driver_that_meets_the_toolkits_minimum_is_not_blamed_for_it() -> None:
    from torch_gpu_doctor.triage.told import (
        driver_for_the_toolkit,  # the rule alone, on a verdict of the paste
    )

    d = diagnosed("mmaction-105-driver-insufficient-cuda10.txt")
    cause = d.result.cause
    assert cause is not None and "410.48" in cause.finding.summary
    plain = dataclasses.replace(
        cause,
        finding=dataclasses.replace(
            cause.finding, summary="The NVIDIA driver is older than the CUDA the program was built with."
        ),
    )
    assert driver_for_the_toolkit(plain, d.pasted, "418.87") is plain
    assert driver_for_the_toolkit(plain, d.pasted, "396.26") is not plain


def test_a_rocm_older_than_the_target_is_not_told_to_fix_device_access() -> None:
    """The diff review's probe: torch 2.3.1+rocm5.7 on an RX 9070 XT (gfx1201, which ROCm supports from 6.4)."""
    text = "PyTorch version: 2.3.1+rocm5.7 on an RX 9070 XT\nprint(torch.cuda.is_available())\nFalse\n"
    d = said(text)
    assert d.pasted.prose.amd_gpu is not None
    cause = d.result.cause
    assert cause is None or "render and video" not in cause.finding.summary
    text13 = text.replace("2.3.1+rocm5.7", "2.6.0+rocm6.4")  # the same card under a ROCm that has it
    cause13 = said(text13).result.cause
    assert cause13 is not None and "render and video" in cause13.finding.summary


def test_p2p_off_already_set_that_did_not_reach_the_workers_is_said_so() -> None:
    """EasyR1#579: 'NCCL_P2P_DISABLE: "1"' in Ray's runtime_env.yaml and still 'peer access is not supported':
    not 'set it' again, but where the workers inherit it."""
    check, summary, first = cause_of(diagnosed("easyr1-579-p2p-not-supported.txt"))
    assert check == "nccl.communication" and "although the paste sets NCCL_P2P_DISABLE=1 (line 22)" in summary
    assert first == "env NCCL_P2P_DISABLE=1 ray start --head"


def test_a_message_that_asks_for_p2p_off_is_not_a_setting() -> None:
    """accelerate's own 'Please set `NCCL_P2P_DISABLE="1"`' (fluxgym, e22) keeps the message's own remedy."""
    _, summary, first = cause_of(diagnosed("e22_fluxgym_rtx4000_p2p_ib_disable_typo.txt"))
    assert "although the paste sets" not in summary
    assert first.startswith("env NCCL_P2P_DISABLE=1 NCCL_IB_DISABLE=1")


def test_a_failure_said_with_nothing_else_is_named_not_unreadable() -> None:
    """Words alone ('it turned out to errors related to NCCL') were 'found nothing it knows' (exit 2) in the TUI's
    paste view: the line is named, with what to paste, as beside a report."""
    d = said("Hi! when I run pippy on one server with 4 GPUs it turned out to errors related to NCCL.\n")
    assert not d.pasted.empty
    assert d.result.unrecognised is not None and d.result.unrecognised.said and d.result.exit_problem()
    assert said("Thanks, everything works fine now.\n").pasted.empty
