"""Blind set 30's classes, each on its real paste (tests/triage/pastes, MANIFEST.json), with what must stay as it
was beside it: the CUDA toolkit's stub libcuda, programs' own GPU messages (Ollama's old-GPU fallback, PTX from a
newer toolchain, vLLM without a platform, rocBLAS without a gfx target's kernels), Windows blocking a Linux's GPU
(WSL and Hyper-V guests), two Python environments in one paste, a GPU the driver does not name, the branch a GPU
without GSP needs, and an application's own Python."""

from __future__ import annotations

from pathlib import Path

from tests.triage.corpus_helpers import PASTES, cause_of, diagnosed
from torch_gpu_doctor.checks.support.signatures import load_catalogue, match_line
from torch_gpu_doctor.triage.access_blocked import BLOCKED
from torch_gpu_doctor.triage.healthy import healthy_next_step
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste
from torch_gpu_doctor.triage.verdict import GPU_ACCESS_BLOCKED

REPORTS = Path(__file__).parent / "reports"
CATALOGUE = load_catalogue()


def said(text: str) -> PasteDiagnosis:
    return diagnose_paste(text.encode(), "said.txt")


def test_the_toolkits_stub_libcuda_is_the_cause_by_its_message_or_its_path() -> None:
    """numba#9732: numba's library test maps libcuda.so from .../lib/stubs (exit 2 before); torch's 'Error 34: CUDA
    driver is a stub library' (fboulnois/stable-diffusion-docker#22). A linker's or CMake's stubs path is no
    loaded library."""
    for name in ("numba-9732-libcuda-stub-cudaapierror-34.txt", "fboulnois-sd-docker-22-error-34-stub.txt"):
        check, summary, first = cause_of(diagnosed(name))
        assert check == "env.library_path" and "stub" in summary, name
        assert first == "env -u LD_LIBRARY_PATH PROGRAM", name
    for line in (
        "/usr/bin/ld: warning: -L/usr/local/cuda/lib64/stubs -lcuda",
        "-- Found CUDA_cuda_LIBRARY: /usr/local/cuda/lib64/stubs/libcuda.so",
        "CUDA_CUDA_LIBRARY=/usr/local/cuda/lib64/stubs/libcuda.so",
    ):
        assert not [h for h in match_line(line, 1) if "stub" in h.signature.id], line


def test_rocblas_without_a_gfx_targets_kernels_names_the_release_that_has_it() -> None:
    """FramePack-ZLUDA#4: the line lost its first letter ('ocBLAS error') and holds a Windows path with a space;
    it was 'an error it does not know'. gfx1201 is AMD's from ROCm 6.4: that release (on Windows the HIP SDK's
    rocBLAS), not rocminfo, which cannot run there and would name the target again."""
    d = diagnosed("FramePack-ZLUDA-4-rocblas-gfx1201-tensile-missing.txt")
    check, summary, first = cause_of(d)
    assert check == "amd.gfx_target" and "gfx1201" in summary
    cause = d.result.cause
    assert cause is not None and cause.find_out is None
    fix = cause.finding.remediation
    assert fix is not None and "HIP SDK" in fix.text and "6.4" in fix.text and first == ""
    # on Linux, the installed ROCm's version is the check
    _, _, first = cause_of(diagnosed("migraphx-3517-tensile-gfx1201.txt"))
    assert first == "cat /opt/rocm/.info/version"
    # a target no release has and a sibling stands in for keeps the override (rocBLAS#1398, gfx90c)
    _, _, first = cause_of(diagnosed("rocblas-1398-gfx90c-ollama.txt"))
    assert first.startswith("env HSA_OVERRIDE_GFX_VERSION=9.0.0")


def test_ollamas_old_gpu_fallback_is_its_release_not_the_driver() -> None:
    """ollama#1992: 'CUDA GPU is too old. Falling back to CPU mode. Compute Capability detected: 5.2' was read as
    no error at all; Ollama 0.1.20's runner began at 6.0, later releases at 5.0 again."""
    check, summary, first = cause_of(diagnosed("ollama-1992-gtx970-cc52-too-old.txt"))
    assert check == "torch.arch_compat" and "5.2" in summary and "Ollama" in summary
    assert first.startswith("docker pull ollama/ollama")
    # a Kepler (3.0) gets no Ollama upgrade: no release runs there
    d = diagnosed("ollama-1834-gtx765m-cc30-too-old.txt")
    assert d.result.cause is not None
    fix = d.result.cause.finding.remediation
    assert fix is not None and "docker pull" not in " ".join(c.display() for c in fix.commands)


def test_ptx_from_a_newer_toolchain_is_a_driver_older_than_the_program() -> None:
    """ollama#1309: 'CUDA error 222: the provided PTX was compiled with an unsupported toolchain' in Docker on WSL
    was 'no problem found' (exit 0); it is the Windows driver to update."""
    d = diagnosed("ollama-1309-wsl2-docker-ptx-unsupported-toolchain.txt")
    _, summary, _ = cause_of(d)
    assert d.result.exit_problem() and summary.startswith("The NVIDIA driver is older than the CUDA")
    assert d.result.cause is not None and d.result.cause.finding.remediation is not None
    assert "Windows" in d.result.cause.finding.remediation.text


def test_vllm_without_a_platform_tests_the_layer_below_it_unless_the_paste_shows_why() -> None:
    """vllm#12847: 'No platform detected, vLLM is running on UnspecifiedPlatform' under `docker run --gpus all`
    was 'shows no error'; a plain CUDA container decides it. Beside a driver too old for torch's CUDA (vllm#16724,
    driver 525 and cu124) it does not become a container problem."""
    check, _, first = cause_of(diagnosed("vllm-12847-docker-no-platform-detected.txt"))
    assert check == "torch.cuda_init" and first == "docker run --rm --gpus all ubuntu nvidia-smi"
    report = diagnose_paste(
        (REPORTS / "c04_vllm_collect_env_a10_driver525_cu124.txt").read_bytes(), "c04.txt"
    )
    assert (
        report.result.cause is not None and report.result.cause.finding.check_id != "platform.container_gpus"
    )


def test_windows_blocking_the_gpu_is_wsls_driver_model_or_a_vms_missing_dxgkrnl() -> None:
    """WSL#14339: 'GPU access blocked by the operating system' inside WSL with an L40S in Data Center mode:
    the driver model (TCC to WDDM). dxgkrnl_ubuntu#1: the same message in a Hyper-V VM on a stock Ubuntu kernel
    (5.15.0-41-generic, lspci's Microsoft 3D controller): its kernel lacks dxgkrnl."""
    check, summary, first = cause_of(diagnosed("WSL-14339-l40s-tcc-gpu-access-blocked.txt"))
    assert check == "platform.wsl_gpu" and "TCC" in summary and first == "nvidia-smi -i 0 -dm 0"
    check, summary, first = cause_of(diagnosed("dxgkrnl-ubuntu-1-gpu-pv-nvml-blocked.txt"))
    assert "Hyper-V VM" in summary and "dxgkrnl" in summary and first == "ls -l /dev/dxg"
    # under WSL's own kernel, words about Hyper-V do not make it a VM guest
    wsl = said(
        "Hyper-V is on. uname -r: 5.15.133.1-microsoft-standard-WSL2\n"
        "$ nvidia-smi\nFailed to initialize NVML: GPU access blocked by the operating system\n"
    )
    _, summary, _ = cause_of(wsl)
    assert "TCC" in summary and "Hyper-V VM" not in summary
    assert GPU_ACCESS_BLOCKED == BLOCKED  # the pipeline names the signature to load its module for it only


def test_cuda_true_in_one_environment_and_false_in_another_is_their_difference() -> None:
    """isaac_ros_common#29: PyPI's torch 1.12.0 (False) in one Jetson container, NVIDIA's 1.12.0a0+...nv22.3 (True)
    in another; the working image's L4T tag was blamed. ultralytics#12690: `yolo` runs Python 3.10.9 with torch
    2.1.0 (its banner, False) while the person's Python 3.11.3 has 2.3.0+cu121 (True): 'no problem found' before;
    the after-review asked for the failing environment's own version, not the working one's."""
    check, summary, _ = cause_of(diagnosed("isaac-ros-common-29-agx-orin-container-pypi-torch-cpu.txt"))
    assert check == "torch.cuda_init" and "torch 1.12.0 (Python 3.8.10) answers False" in summary
    assert "PyPI's torch for aarch64 has no CUDA" in summary
    d = diagnosed("ultralytics-12690-yolo-cli-other-python-cpu-torch.txt")
    check, summary, first = cause_of(d)
    assert d.result.exit_problem() and "torch 2.1.0 (Python 3.10.9) answers False" in summary
    # the failing environment's own torch as a CUDA build, with its companions: its packages were installed for it
    assert first.startswith("PYTHON -m pip install --force-reinstall torch==2.1.0 torchvision==0.16.0 ")
    assert first.endswith("--index-url https://download.pytorch.org/whl/cu121")
    # "Expected behaviour: CUDA available: True" is no second environment (dstack#2348)
    _, summary, _ = cause_of(diagnosed("dstack-2348-error-802-fabricmanager-mismatch.txt"))
    assert "another" not in summary
    # nor the same torch answering both ways (a GPU that came back): not two environments
    same = said(">>> torch.__version__\n'2.3.0+cu121'\n>>> torch.cuda.is_available()\nFalse\n\n```\n"
                ">>> torch.__version__\n'2.3.0+cu121'\n>>> torch.cuda.is_available()\nTrue\n")  # fmt: skip
    assert same.result.cause is None or "another" not in same.result.cause.finding.summary


def test_a_working_gpu_the_driver_does_not_name_gets_its_next_step() -> None:
    """pytorch#75198: CUDA works on both GPUs, one shown as 'NVIDIA Graphics Device' by driver 510.47.03: no
    problem (exit 0), and the next step is a driver newer than the card. A healthy report naming its GPUs has none."""
    d = diagnosed("pytorch-75198-healthy-3090ti-named-graphics-device.txt")
    assert d.result.cause is None and not d.result.exit_problem()
    found = healthy_next_step(d.result, d.pasted, d.facts)
    assert found is not None and "510.47.03" in found[1].text and found[0] == 10
    quiet = diagnosed("pytorch-124007-healthy-gpu-util-0.txt")
    assert healthy_next_step(quiet.result, quiet.pasted, quiet.facts) is None


def test_a_gpu_the_open_module_refuses_needs_a_branch_that_still_supports_it() -> None:
    """cosmic-epoch#3411: a Pascal GPU (10de:1d16) refused by the open module on Pop!_OS: the proprietary module
    of R580, the last branch for Maxwell, Pascal and Volta, not re-checking the module's licence."""
    _, _, first = cause_of(diagnosed("cosmic-epoch-3411-open-module-pascal-no-gsp.txt"))
    assert first == "sudo apt install nvidia-driver-580"


def test_an_applications_switch_runs_with_the_python_the_paste_shows() -> None:
    """launcher-support#57: the web UI's 'sd-webui-aki' bundle has its own python\\python.exe, not venv's: the
    application's reinstall takes the shown interpreter."""
    _, _, first = cause_of(diagnosed("launcher-support-57-sd-aki-torch-not-compiled-cuda.txt"))
    assert first.startswith(
        "D:\\sd\\sd-webui-aki-v4.10\\sd-webui-aki-v4.10\\python\\python.exe -m pip uninstall"
    )


def test_nvmls_unknown_error_quoted_by_a_library_still_gets_its_fix() -> None:
    """h2o-llmstudio#668: GPUtil's ValueError quoting 'Failed to initialize NVML: Unknown Error' gave a cause with
    no fix (read as a Python exception of the binding); it is NVML's own error."""
    d = diagnosed("h2o-llmstudio-668-gputil-nvml-unknown-error.txt")
    assert d.result.cause is not None and d.result.cause.finding.remediation is not None
    _, _, first = cause_of(d)
    assert first.startswith("docker restart CONTAINER")


BANNER = (
    "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.\n"
    "   Use the NVIDIA Container Toolkit to start this container with GPU support; see\n"
)


def test_insufficient_driver_in_a_container_without_the_gpus_is_no_old_driver() -> None:
    """seldon-core#4887: Triton's banner 'The NVIDIA Driver was not detected' beside the CUDA runtime's 'driver
    version is insufficient': the container got no driver, and no second finding asks to update the host's. Where
    torch names the driver's CUDA ('found version 11040'), that driver is real and keeps its own fix."""
    d = diagnosed("seldon-core-4887-triton-driver-not-detected.txt")
    check, _, first = cause_of(d)
    assert check == "platform.container_gpus" and first.startswith("docker run --gpus all")
    compat = [v for v in d.result.verdicts if v.finding.check_id == "torch.driver_compat"]
    assert compat and all(
        v.finding.remediation is None and "no NVIDIA driver" in v.finding.summary for v in compat
    )
    known = said(
        BANNER
        + "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version "
        "11040). Please update your GPU driver by downloading and installing a new version from the URL\n"
    )
    kept = [v for v in known.result.verdicts if v.finding.check_id == "torch.driver_compat"]
    assert all("no NVIDIA driver" not in v.finding.summary for v in kept)


def test_a_mismatch_the_container_raises_is_the_containers_libraries_and_lxc_gets_the_modules_version() -> (
    None
):
    """nvidiavgpuarchive/index#1: 'the container is raising a mismatch error' beside NVRM's API mismatch (client
    570.148.08, module 570.148.06): the container's libraries, not a host that missed a reboot. Said in an LXC
    container, the user-space of the module's exact version goes inside it."""
    _, summary, first = cause_of(diagnosed("nvidiavgpuarchive-1-lxc-nvrm-api-mismatch.txt"))
    assert "inside a container" in summary and first != "systemctl reboot"
    lxc = said(
        "Inside my LXC container on Proxmox, nvidia-smi fails:\n"
        "[ 8957.099615] NVRM: API mismatch: the client has the version 570.148.08, but\n"
        "[ 8957.099615] NVRM: this kernel module has the version 570.148.06.  Please\n"
    )
    _, summary, first = cause_of(lxc)
    assert "inside a container" in summary
    assert first == "sh NVIDIA-Linux-x86_64-570.148.06.run --no-kernel-module"


def test_cudas_unknown_error_after_an_upgrade_looks_at_the_host_not_at_suspend() -> None:
    """stable-diffusion-webui-docker#388: 'CUDA unknown error' in a container after 'apt upgrade' and a restart:
    the suspend story's rmmod was first; the host's driver and a plain container come first. Without the upgrade
    said, the unknown error keeps its own answer."""
    check, _, first = cause_of(diagnosed("sd-webui-docker-388-cuda-unknown-error-after-apt-upgrade.txt"))
    assert check == "torch.cuda_init" and first == "nvidia-smi"
    plain = said("RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment\n")
    _, _, first = cause_of(plain)
    assert first != "nvidia-smi"


def test_ultralytics_no_cuda_device_asks_for_the_build_before_blaming_a_hidden_gpu() -> None:
    """comic-translate#210: Ultralytics' "Invalid CUDA 'device=0' requested" with is_available() False and 0 GPUs
    on a machine with no NVIDIA GPU: the fix said 'although torch is a CUDA build' and re-printed the count the
    paste shows. Like Lightning's, the message says only that CUDA is unavailable: the build comes first. With the
    banner's '+cpu' version shown, the CPU build is the cause (comic-translate#17)."""
    d = diagnosed("comic-translate-210-amd-gpu-cuda-device0.txt")
    _, _, first = cause_of(d)
    assert d.result.cause is not None and d.result.cause.finding.remediation is not None
    text = d.result.cause.finding.remediation.text
    assert "although torch is a CUDA build" not in text and "device=cpu" in text
    assert "torch.version.cuda" in first
    check, _, _ = cause_of(diagnosed("comic-translate-17-ultralytics-torch-cpu-invalid-cuda-device.txt"))
    assert check == "torch.cpu_build"


def test_a_project_uv_manages_gets_uvs_install_into_its_venv_and_the_lockfile_said() -> None:
    """lerobot#4093: `uv sync` on Windows installed torch 2.11.0+cpu; `python -m pip` was first, which a uv venv
    lacks, and the next `uv run` would have put the CPU build back. Without uv in the paste, pip stays first."""
    d = diagnosed("lerobot-4093-uv-sync-cpu-torch-windows-rtx5080.txt")
    _, _, first = cause_of(d)
    # the driver in backticks ("- NVIDIA driver: `580.88`", read since blind set 31) runs CUDA 13.0 on Windows
    assert first.startswith("uv pip install --python .venv torch==2.11.0+cu130 ")
    assert d.result.cause is not None and d.result.cause.finding.remediation is not None
    assert "--no-sync" in d.result.cause.finding.remediation.text
    _, _, first = cause_of(diagnosed("comic-translate-224-ultralytics-torch-cpu.txt"))
    assert "-m pip install" in first


def test_a_programs_xid_leads_with_the_cheap_run_and_reads_an_illegal_instruction() -> None:
    """llama.cpp#23811: Xid 13 'Illegal Instruction Encoding' from a long-context server: compute-sanitizer (many
    times slower) was first and the text said 'out of bounds'; the launch-blocking run is first now, and the
    subtype is said. Another program fault keeps the out-of-range reading."""
    d = diagnosed("llama-cpp-23811-xid13-illegal-instruction.txt")
    _, _, first = cause_of(d)
    assert first == "env CUDA_LAUNCH_BLOCKING=1 PROGRAM"
    assert d.result.cause is not None and d.result.cause.finding.remediation is not None
    assert "Illegal Instruction Encoding" in d.result.cause.finding.remediation.text
    assert "out-of-range" not in d.result.cause.finding.details
    plain = said("[ 99.1] NVRM: Xid (PCI:0000:01:00): 13, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): "
                  "Out Of Range Address\n")  # fmt: skip
    assert plain.result.cause is not None and plain.result.cause.finding.remediation is not None
    assert "Illegal Instruction" not in plain.result.cause.finding.remediation.text


# What a review of these rules found them doing where they should not (each a short realistic paste)


def test_two_environments_only_where_the_builds_differ_and_nothing_says_why() -> None:
    """The same torch on two machines, one with torch's 'driver too old' warning: the driver, not another
    environment. The same Python and build before and after a reboot: not two environments."""
    banner = "Python 3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0] on linux\n"
    ask = ">>> import torch\n>>> torch.__version__\n'2.3.0+cu121'\n>>> torch.cuda.is_available()\n"
    driver = said(
        "Workstation:\nPython 3.11.5 (main, Sep 11 2023, 13:54:46) [GCC 11.2.0] on linux\n" + ask + "True\n\n"
        "Server:\n"
        + banner
        + ask
        + "/usr/lib/python3/dist-packages/torch/cuda/__init__.py:118: UserWarning: "
        "CUDA initialization: The NVIDIA driver on your system is too old (found version 11040). Please update "
        "your GPU driver by downloading and installing a new version from the URL\nFalse\n"
    )
    _, summary, _ = cause_of(driver)
    assert "another" not in summary and "too old" in summary
    reboot = said(banner + ask + "False\nAfter a reboot it works again:\n" + banner + ask + "True\n")
    assert reboot.result.cause is None or "another" not in reboot.result.cause.finding.summary


def test_gpu_access_blocked_is_answered_for_where_it_happened() -> None:
    """A Linux host's container (the toolkit's cgroups setting), WSL's own lspci (its Basic Render Driver is no
    Hyper-V guest), a KVM guest's container (no Hyper-V at all)."""
    host = said(
        "Ubuntu 22.04 host, kernel 6.5.0-35-generic, driver 550.54.14\n"
        "$ docker run --rm --runtime=nvidia -e NVIDIA_VISIBLE_DEVICES=all nvidia/cuda:12.4.1-base-ubuntu22.04 "
        "nvidia-smi\nFailed to initialize NVML: GPU access blocked by the operating system\n"
    )
    _, summary, first = cause_of(host)
    assert "TCC" not in summary and "no-cgroups=false" in first
    wsl = said(
        "WSL2 on Windows 11, RTX 4090\n$ lspci\n8f5a:00:00.0 3D controller: Microsoft Corporation Basic Render "
        "Driver\n$ nvidia-smi\nFailed to initialize NVML: GPU access blocked by the operating system\n"
    )
    _, summary, _ = cause_of(wsl)
    assert "Hyper-V" not in summary and "TCC" not in summary.split(":")[0]
    kvm = said(
        "Proxmox VM with an RTX 3090 passed through (vfio). Guest OS: Ubuntu 22.04, kernel 5.15.0-91-generic.\n"
        "$ docker run --rm --gpus all nvidia/cuda:12.2.0-base-ubuntu22.04 nvidia-smi\n"
        "Failed to initialize NVML: GPU access blocked by the operating system\n"
    )
    _, summary, _ = cause_of(kvm)
    assert "Hyper-V" not in summary and "dxgkrnl" not in summary


def test_a_listing_that_holds_the_stub_is_no_stub_loaded() -> None:
    """`locate libcuda.so` lists the driver's library and the toolkit's stub: no library was loaded from either.
    The stub's three entries give one fix."""
    listing = said(
        "torch.cuda.is_available() is False\n$ locate libcuda.so\n/usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
        "/usr/local/cuda-12.4/lib64/stubs/libcuda.so\n"
    )
    assert listing.result.cause is None or "stub" not in listing.result.cause.finding.summary
    stubs = [s for s in CATALOGUE if s.id.startswith("library_path_cuda_stub")]
    assert len(stubs) == 2 and len({s.fix for s in stubs}) == 1


def test_a_kepler_gpu_the_open_module_refuses_gets_its_own_last_branch() -> None:
    """R580 does not drive Kepler: a GTX 780 (compute capability 3.5) gets R470."""
    kepler = said(
        "Ubuntu 24.04, GeForce GTX 780, installed nvidia-driver-580-open, black screen.\n"
        "[    5.123456] NVRM: The NVIDIA GPU 10de:1004 (PCI ID: 0000:01:00.0)\n"
        "               NVRM: installed in this system is not supported by open\n"
        "               NVRM: nvidia.ko because it does not include the required GPU\n"
        "               NVRM: System Processor (GSP).\n"
    )
    _, _, first = cause_of(kepler)
    assert first == "sudo apt install nvidia-driver-470"


def test_what_the_lxc_and_upgrade_rules_leave_alone() -> None:
    """In LXC, NVML's own library version is the container's, never the module's to install; an apt upgrade
    said before a container's CUDA errors and a mismatch on the host keeps the reboot; a driver reinstalled as a
    remedy beside suspend keeps the suspend story; vLLM on bare metal asks nvidia-smi first."""
    lxc = said(
        "Inside my LXC container on Proxmox, nvidia-smi fails:\n"
        "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.169\n"
    )
    _, _, first = cause_of(lxc)
    assert "570.169" not in first
    upgraded = said(
        "After an apt upgrade yesterday my docker container is throwing CUDA errors, so I checked the GPU:\n"
        "$ nvidia-smi\nFailed to initialize NVML: Driver/library version mismatch\nNVML library version: 550.120\n"
    )
    _, summary, _ = cause_of(upgraded)
    assert "inside a container" not in summary
    suspend = said(
        "After my laptop wakes from suspend, torch fails:\nRuntimeError: CUDA unknown error - this may be due to "
        "an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start.\n"
        "I already tried reinstalling the nvidia driver, nothing changed.\n"
    )
    _, _, first = cause_of(suspend)
    assert first != "nvidia-smi"
    bare = said(
        "pip install vllm on bare metal Ubuntu 22.04, no docker.\n$ vllm serve Qwen/Qwen2.5-7B-Instruct\n"
        "INFO 02-07 10:11:12 __init__.py:207] No platform detected, vLLM is running on UnspecifiedPlatform\n"
    )
    _, _, first = cause_of(bare)
    assert first == "nvidia-smi"


def test_an_ngc_image_for_discrete_gpus_on_a_jetson_is_the_wrong_image() -> None:
    """triton-server#6373: tritonserver:23.08-py3 on an AGX Xavier (L4T 35.2.1): the image, not a torch in it, is
    built for discrete GPUs; the answer was NVIDIA's Jetson torch wheel. An L4T image keeps its own reading."""
    d = diagnosed("triton-server-6373-jetson-agx-x86-image.txt")
    check, summary, first = cause_of(d)
    assert check == "platform.jetson" and summary.startswith(
        "nvcr.io/nvidia/tritonserver:23.08-py3 is NVIDIA's"
    )
    fix = d.result.cause.finding.remediation if d.result.cause is not None else None
    assert first == "" and fix is not None and "pip" not in fix.text
    l4t = said(
        "On my Jetson AGX Orin (L4T R35.3.1):\n$ docker run --runtime nvidia -it nvcr.io/nvidia/l4t-pytorch:r35.2.1-pth2.0-py3\n"
        ">>> import torch\n>>> torch.cuda.is_available()\nFalse\n"
    )
    assert l4t.result.cause is None or "discrete GPUs" not in l4t.result.cause.finding.summary


def test_k3s_pods_get_k3s_own_containerd_not_the_systems() -> None:
    """k8s-device-plugin#585: 'Insufficient nvidia.com/gpu' on Rancher K3s: `nvidia-ctk runtime configure
    --runtime=containerd` edits the system containerd, which K3s does not use; K3s's own picks NVIDIA's runtime up
    at its restart, and pods name its RuntimeClass."""
    d = diagnosed("k8s-device-plugin-585-k3s-insufficient-nvidia-gpu.txt")
    _, _, first = cause_of(d)
    assert first == "sudo systemctl restart k3s"
    assert d.result.cause is not None and d.result.cause.finding.remediation is not None
    assert "runtimeClassName: nvidia" in d.result.cause.finding.remediation.text


def test_a_next_step_in_words_alone_keeps_the_json_whole() -> None:
    """Under WSL the unnamed GPU's driver update is Windows' (words, no command): `--json` must still write its
    'to_be_sure' (it took the first command and raised before)."""
    import json

    from torch_gpu_doctor.triage.render import render_json

    text = (PASTES / "pytorch-75198-healthy-3090ti-named-graphics-device.txt").read_text(encoding="utf-8")
    wsl = text.replace(
        "Linux-5.15.32-051532-generic-x86_64-with-glibc2.17",
        "Linux-5.15.133.1-microsoft-standard-WSL2-x86_64-with-glibc2.35",
    )
    d = said(wsl)
    found = healthy_next_step(d.result, d.pasted, d.facts)
    assert found is not None and not found[1].commands and "Windows" in found[1].text
    assert json.loads(render_json(d, "wsl.txt", 0))["to_be_sure"] is None


def test_true_on_the_host_and_false_in_a_container_started_without_gpus_is_the_container() -> None:
    """The host's Python answers True, then `docker run -it --rm pytorch/pytorch:... python` (no --gpus) answers
    False: 'no problem found' before (the first answer, True, stood for the paste); the container without the
    GPUs, with the person's own command and --gpus all."""
    d = said(
        "On the host:\nPython 3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0] on linux\n>>> import torch\n"
        ">>> torch.__version__\n'2.3.0+cu121'\n>>> torch.cuda.is_available()\nTrue\n\n"
        "$ docker run -it --rm pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime python\n"
        "Python 3.10.14 (main, May  6 2024, 19:42:50) [GCC 11.2.0] on linux\n>>> import torch\n"
        ">>> torch.__version__\n'2.3.0'\n>>> torch.cuda.is_available()\nFalse\n"
    )
    _, summary, first = cause_of(d)
    assert "container started without the GPUs" in summary
    assert first == "docker run --gpus all -it --rm pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime python"
