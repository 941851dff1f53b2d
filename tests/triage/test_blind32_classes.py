"""Blind set 32's classes, each on its real paste (tests/triage/pastes, MANIFEST.json), with what must stay as it
was beside it: CUDA error 999 as programs that load the driver themselves print it (ollama, numba), torch's own
"Can't initialize NVML" warning, nvidia-smi's "No devices were found" told in a sentence, the container toolkit
that cannot load a Jetson's libcuda, pip finding torch in the user's own site-packages, an OOM whose process figure is zero, WSL 1 said in words, a
Docker test where the GPUs are a pod's, a torchvision of another build beside a CUDA torch chosen on purpose, and
a multi-GPU hang told in words."""

from __future__ import annotations

from tests.triage.corpus_helpers import cause_of, diagnosed
from torch_gpu_doctor.checks.support.signatures import match_line
from torch_gpu_doctor.triage.pipeline import PasteDiagnosis, diagnose_paste
from torch_gpu_doctor.unavailable import Unavailable


def _ids(line: str) -> set[str]:
    return {h.signature.id for h in match_line(line, 1)}


def test_error_999_from_any_program_that_loads_the_driver_is_the_driver_state() -> None:
    """ollama#6647 ('cudart init failure: 999' after suspend: "shows no error message" before) and cuml#5855
    (numba's '[999] Call to cuInit', cut: "an error it does not know")."""
    for paste in ("ollama-6647-cudart-999-after-sleep.txt", "cuml-5855-numba-cuinit-999.txt"):
        check, _summary, first = cause_of(diagnosed(paste))
        assert (check, first) == ("torch.cuda_init", "sudo rmmod nvidia_uvm"), paste
    wanted = "unknown_error_999_driver_init"
    assert wanted in _ids("cudaSetDevice err: 999")
    assert wanted in _ids('msg="Unable to load cudart" error="cudart init failure: 999"')
    assert wanted in _ids(
        "numba.cuda.cudadrv.driver.CudaAPIError: [999] Call to cuInit results in CUDA_ERROR_UNKNOWN"
    )
    # another code is another cause: 802 is the fabric manager's, 100 no device
    assert wanted not in _ids("cudaSetDevice err: 802")
    assert wanted not in _ids("CudaAPIError: [100] Call to cuInit results in CUDA_ERROR_NO_DEVICE")


def test_torchs_cant_initialize_nvml_warning_is_nvml_unreached_and_in_wsl_the_wsl_driver() -> None:
    """text-generation-webui#6282: the warning inside WSL after a Linux driver was installed from NVIDIA's
    downloads ('says it fails but shows no error message' before)."""
    check, summary, first = cause_of(diagnosed("textgen-6282-wsl-cant-initialize-nvml.txt"))
    assert check == "driver.nvml" and "inside WSL" in summary
    assert first == "/usr/lib/wsl/lib/nvidia-smi"
    wanted = "nvml_cannot_initialize_torch_warning"
    assert wanted in _ids("/x/torch/cuda/__init__.py:628: UserWarning: Can't initialize NVML")
    assert wanted in _ids('  warnings.warn("Can\'t initialize NVML")')
    assert wanted not in _ids("I can't initialize NVML in my own code")  # not torch's warning


def test_no_devices_found_told_in_a_sentence_is_read() -> None:
    """compute-gpu-installation#50: "run `nvidia-smi`, should say ´No devices were found´" (exit 0 before)."""
    d = diagnosed("compute-gpu-installation-50-rtx6000pro-no-devices.txt")
    assert d.result.exit_problem() and cause_of(d)[0] == "torch.cuda_init"
    wanted = "no_visible_gpu_nvidia_smi_no_devices"
    assert wanted in _ids("No devices were found")
    assert wanted in _ids("then nvidia-smi says No devices were found")
    assert wanted not in _ids("No devices were found in the inventory")  # not nvidia-smi's own line
    assert wanted not in _ids("nvidia-smi lists the GPU; lsusb: No devices were found")


def test_the_toolkit_that_cannot_load_a_jetsons_libcuda_is_the_l4t_loader_cache() -> None:
    """nvidia-container-toolkit#231: a minimal L4T rootfs ('shows no error message' and nvidia-smi, which a
    Jetson lacks, before); the x86 host's NVML keeps its own fix."""
    check, _summary, first = cause_of(
        diagnosed("nvidia-container-toolkit-231-jetson-minimal-rootfs-libcuda.txt")
    )
    assert check == "platform.container_gpus" and first == "sudo apt install --reinstall nvidia-l4t-core"
    check, _summary, first = cause_of(diagnosed("manylinux-5-container-nvml-load-failed.txt"))
    assert check == "platform.container_gpus" and first == "nvidia-smi"
    wanted = "container_toolkit_cannot_load_host_nvml"
    assert wanted in _ids(
        "E1128 19:48:41.908254 12927 driver.c:196] could not start driver service: load library failed: "
        "libcuda.so.1: cannot open shared object file: no such file or directory"
    )
    assert wanted not in _ids("load library failed: libcudnn.so.8: cannot open shared object file")


def test_torch_in_the_users_own_site_packages_shadows_the_environments() -> None:
    """vonovox#14: pip says torch 2.5.1 is already satisfied in AppData\\Roaming\\Python ('says it fails but
    shows no error message' before)."""
    check, summary, first = cause_of(diagnosed("vonovox-14-user-site-torch-251-shadows-cu128.txt"))
    assert check == "torch.installed" and "user's own site-packages" in summary
    assert first == "python -m pip uninstall torch torchvision torchaudio"
    wanted = "pip_torch_in_the_user_site"
    assert wanted in _ids(
        "Requirement already satisfied: torch in /home/me/.local/lib/python3.10/site-packages (2.1.0)"
    )
    assert wanted in _ids(
        r"Requirement already satisfied: torchvision in c:\users\me\appdata\roaming\python\python311\site-packages"
    )
    # an environment's own site-packages is where torch belongs
    assert wanted not in _ids(
        "Requirement already satisfied: torch in ./venv/lib/python3.10/site-packages (2.1.0)"
    )
    assert wanted not in _ids(
        "Requirement already satisfied: numpy in /home/me/.local/lib/python3.10/site-packages"
    )


def said(text: str) -> PasteDiagnosis:
    return diagnose_paste(text.encode(), "said.txt")


def _wsl_version(d: PasteDiagnosis) -> int | None:
    wsl = d.facts.wsl
    version = None if isinstance(wsl, Unavailable) else wsl.version
    return version if isinstance(version, int) else None


def test_an_oom_whose_process_figure_is_zero_is_still_this_programs_memory() -> None:
    """regional-prompting-flux#13: 'this process has 0 bytes memory in use' beside 23.03 GiB allocated by
    PyTorch (torch cannot ask the driver on Windows) was read as another program holding the card."""
    check, summary, first = cause_of(diagnosed("regional-prompting-flux-13-oom-24gb.txt"))
    assert check == "torch.out_of_memory" and "it holds 23.05 GiB of the GPU's 23.43 GiB" in summary
    assert "outside this program" not in summary and "nvidia-smi" not in (first or "")
    # where the process figure is real and small beside a full card, another program still holds it
    other = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
        "23.43 GiB of which 4.06 MiB is free. Including non-PyTorch memory, this process has 1.20 GiB memory in "
        "use. Of the allocated memory 0.80 GiB is allocated by PyTorch, and 15.67 MiB is reserved by PyTorch but "
        "unallocated.\n"
    )
    _check, summary, _first = cause_of(said(other))
    assert "used outside this program" in summary


def test_wsl_1_said_in_words_is_wsl_1_and_an_issue_templates_choice_is_not() -> None:
    """text-generation-webui#458: "I'm using wsl 1 on windows 10" was answered as a WSL 2 distribution."""
    check, summary, first = cause_of(diagnosed("textgen-458-wsl1-found-no-nvidia-driver.txt"))
    assert check == "platform.wsl_gpu" and summary.startswith("This is WSL 1")
    assert first == "wsl.exe --set-version DISTRO 2"
    error = "RuntimeError: Found no NVIDIA driver on your system.\n"
    for template in (
        "### Are you using WSL 1 or WSL 2?\n- [ ] WSL 1\n- [x] WSL 2\n",
        "Whether the issue is on WSL 2 and/or WSL 1: yes\n",
        "WSL version: 1.2.5.0\n",
        " - WSL version 1/2: [WSL2]\n",
    ):
        assert _wsl_version(said("I run it in WSL.\n" + template + error)) != 1, template
    assert _wsl_version(said("I run it in WSL.\n- [x] WSL 1\n" + error)) == 1


def test_a_docker_gpu_test_is_not_the_first_step_for_a_pod() -> None:
    """llm-d-deployer#273: vLLM pods found no platform; the first step was `docker run --gpus all`."""
    _check, _summary, first = cause_of(diagnosed("llm-d-deployer-273-vllm-pod-no-nvidia-runtimeclass.txt"))
    assert first == "kubectl describe pod POD"
    line = "WARNING 06-01 10:00:00 [__init__.py:39] No platform detected, vLLM is running on UnspecifiedPlatform\n"
    assert cause_of(said(line))[2] == "nvidia-smi"  # no pod shown: where vLLM runs
    assert cause_of(said("$ kubectl logs vllm-0\n" + line))[2] == "kubectl describe pod POD"


def test_a_torchvision_of_another_build_beside_a_chosen_cuda_torch_is_reinstalled_from_torchs_index() -> None:
    """ComfyUI#10517: torch 2.9.0+cu130 installed on purpose over a CPU-only requirements file, PyPI's
    torchvision 0.24.0 beside it, 'torchvision::nms does not exist': the answer was to go back to the CPU torch."""
    check, _summary, first = cause_of(diagnosed("comfyui-10517-cpu-torchvision-with-cu130-torch.txt"))
    assert check == "torch.companions"
    assert first == (
        "python -m pip install --force-reinstall --no-deps torchvision==0.24.0+cu130 torchaudio==2.9.0+cu130 "
        "--index-url https://download.pytorch.org/whl/cu130"
    )
    assert "other_torchvision_operator_missing" in _ids("RuntimeError: torchvision::nms does not exist")
    # the CPU build still asked for, and a CUDA one delivered: the CPU build is the answer
    wished = said("I asked for the cpu only version, but got torch==2.9.0+cu130 with nvidia-cublas-cu12\n")
    assert cause_of(wished)[0] == "torch.nvidia_wheels"


def test_a_hang_with_several_gpus_where_one_runs_normally_is_the_gpus_talking() -> None:
    """pytorch#73206: 'get stuck at the first iteration ... The code can run normally on a single GPU' (exit 0,
    'no problem found', before)."""
    check, _summary, first = cause_of(diagnosed("pytorch-73206-ddp-hang-8x-a40.txt"))
    assert check == "nccl.communication" and first.startswith("env NCCL_P2P_DISABLE=1")
    wanted = "nccl_multi_gpu_only_in_words"
    assert wanted in _ids("DDP gets stuck at the first iteration. The code can run normally on a single GPU.")
    assert wanted in _ids("It runs fine on one GPU but hangs after the first batch")
    assert wanted not in _ids("It runs fine on a single GPU, and that is all I need.")
    assert wanted not in _ids("The download hangs.")


def test_docker_desktop_on_a_windows_too_old_for_wsl_gpus_is_updated_first() -> None:
    """docker/for-win#13835: the toolkit in Docker Desktop's VM found no libnvidia-ml.so.1 on Windows 10 build
    19042; the answer was `nvidia-smi` and `sudo ldconfig` on a Linux host."""
    check, summary, first = cause_of(
        diagnosed("docker-for-win-13835-docker-desktop-libnvidia-ml-missing.txt")
    )
    assert check == "platform.container_gpus" and "Windows build 19042 is older than 21H2" in summary
    assert first == "wsl.exe --update"
    toolkit = (
        "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared "
        "object file: no such file or directory: unknown.\n"
    )
    # a current Windows: the WSL 2 engine and the driver, no Windows update
    _check, summary, first = cause_of(said("Docker Desktop on Windows 11, build 22631.\n" + toolkit))
    assert "WSL 2 does not reach the Windows NVIDIA driver" in summary and first == "wsl.exe --update"
    # a Linux host keeps the host driver's steps
    assert cause_of(said("Ubuntu 22.04 server\n" + toolkit))[2] == "nvidia-smi"


def test_a_driver_mismatch_under_the_gpu_operator_is_two_drivers_not_a_missed_reboot() -> None:
    """gpu-operator#898: the validator pod's 'nvml error: driver/library version mismatch' with the Operator's
    driver container enabled; the answer was a reboot after an upgrade."""
    check, summary, first = cause_of(diagnosed("gpu-operator-898-k3s-validator-nvml-mismatch.txt"))
    assert check == "driver.nvml" and "under the NVIDIA GPU Operator" in summary
    assert first == "cat /proc/driver/nvidia/version"
    mismatch = "Failed to initialize NVML: Driver/library version mismatch\n"
    assert cause_of(said(mismatch))[2] == "systemctl reboot"  # no Operator: the upgrade without a reboot


def test_duplicate_gpu_ranks_where_the_person_says_the_gpu_count_start_that_many() -> None:
    """ViewDiff#24: accelerate started 4 ranks, "I only have 1 GPU"; the first step was `nvidia-smi -L`."""
    check, summary, first = cause_of(diagnosed("viewdiff-24-nccl-duplicate-gpu-4procs-1gpu.txt"))
    assert check == "nccl.communication" and "it has 1 GPU" in summary
    assert first == "accelerate launch --num_processes 1 SCRIPT"
    error = "ncclInvalidUsage: Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 1000\n"
    two = said("We have two GPUs and run torchrun --nproc_per_node=4 train.py\n" + error)
    assert cause_of(two)[2] == "torchrun --nproc_per_node=2 SCRIPT"
    # the count not said: compare it first
    assert cause_of(said("torchrun --nproc_per_node=4 train.py\n" + error))[2] == "nvidia-smi -L"
    assert (
        cause_of(said("We have a few GPUs; torchrun --nproc_per_node=4 train.py\n" + error))[2]
        == "nvidia-smi -L"
    )


def test_no_torch_on_an_index_pytorch_no_longer_builds_for_is_the_index() -> None:
    """RVC#2790: 'from versions: none' on the cu117 index (its torch stops at 2.0.1, for Python 3.8 to 3.11);
    the first step only printed the Python version."""
    _check, summary, first = cause_of(diagnosed("rvc-2790-cu117-index-no-matching-distribution.txt"))
    assert "The cu117 index pip searched holds torch only up to 2.0.1" in summary
    assert first is not None and first.startswith(
        "python -m pip install torch torchvision torchaudio --index-url"
    )
    assert "/whl/cu117" not in first
    none = "ERROR: Could not find a version that satisfies the requirement torch (from versions: none)\n"
    current = said("Looking in indexes: https://download.pytorch.org/whl/cu130\n" + none)
    assert "holds torch only up to" not in cause_of(current)[1]  # a current index: the Python or platform


def test_jax_built_for_a_newer_cuda_is_jaxs_own_libraries() -> None:
    """kohya-colab#94: JAX's 'Found CUDA version 12010, but JAX was built against version 12020' (an error it
    did not know, and nvidia-smi, before)."""
    _check, summary, first = cause_of(diagnosed("kohya-colab-94-jax-built-for-newer-cuda.txt"))
    assert (
        "JAX was built against a newer CUDA" in summary and first == "python -m pip install -U 'jax[cuda12]'"
    )
    wanted = "other_jax_built_for_newer_cuda"
    assert wanted in _ids("Found cuDNN version 8600, but JAX was built against version 8904, which is newer.")
    assert wanted not in _ids("Found CUDA version 12020, JAX was built against 12010")  # no complaint


def test_a_gpu_the_kernels_compute_driver_does_not_support_is_no_permission_problem() -> None:
    """ROCm#2232: dmesg's 'PITCAIRN not supported in kfd' beside HSA's out-of-resources, with the user already
    in the render group; the answer was to add the user to it."""
    _check, summary, first = cause_of(diagnosed("rocm-2232-pitcairn-not-supported-in-kfd.txt"))
    assert "PITCAIRN not supported in kfd" in summary and not first
    assert "rocm_gpu_not_supported_in_kfd" in _ids(
        "[    3.548555] kfd kfd: amdgpu: TAHITI  not supported in kfd"
    )
    # without the kernel's word, out of resources is still the groups
    _check, _summary, first = cause_of(said("hipErrorNoDevice\nHSA_STATUS_ERROR_OUT_OF_RESOURCES\n"))
    assert first == "sudo usermod -aG render,video USER"


def test_ptx_newer_than_the_driver_is_a_driver_update_not_another_torch() -> None:
    """GeneFacePlusPlus#192: error 222 from an extension built by CUDA 11.7 under an older driver; the answer
    installed a torch that needs driver 525."""
    check, summary, first = cause_of(diagnosed("genefacepp-192-ptx-unsupported-toolchain-driver-510.txt"))
    assert check == "torch.driver_compat" and "built the program's GPU code" in summary
    assert first is not None and "pip install" not in first and "torch" not in first
    # torch's own too-old driver keeps torch's answer (a build for the driver, or the driver)
    old = said("RuntimeError: The NVIDIA driver on your system is too old (found version 11040).\n")
    assert "built the program's GPU code" not in cause_of(old)[1]


def test_a_jetson_container_without_libcuda_was_started_without_nvidias_runtime() -> None:
    """jetson-containers#196: docker compose on an Orin, 'libcuda.so.1: cannot open shared object file' (exit 0,
    'no problem found', before: a Jetson has no driver module for a check to fail)."""
    d = diagnosed("jetson-containers-196-compose-libcuda-missing-orin.txt")
    check, summary, first = cause_of(d)
    assert d.result.exit_problem() and check == "platform.container_gpus"
    assert "on a Jetson only NVIDIA's runtime" in summary and first.startswith(
        "sudo nvidia-ctk runtime configure"
    )
    error = (
        "error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file\n"
    )
    # not a Jetson: the driver's own answer stands
    assert "on a Jetson" not in cause_of(said("docker compose up\n" + error))[1]
    # a Jetson with no container in view: the board's loader cache
    check, summary, first = cause_of(said("Jetson Orin AGX, JetPack 5.1\n" + error))
    assert "loader cache" in summary and first == "sudo apt install --reinstall nvidia-l4t-core"


def test_no_devices_on_a_gpu_only_the_open_modules_drive_is_the_open_driver() -> None:
    """compute-gpu-installation#50: 'No devices were found' on an "RTX 6000 Pro" (the RTX PRO 6000, Blackwell,
    read as an RTX 6000 before) under Ubuntu-2404-lts-amd64; the first step read the kernel log."""
    _check, summary, first = cause_of(diagnosed("compute-gpu-installation-50-rtx6000pro-no-devices.txt"))
    assert "RTX PRO 6000 is driven only by NVIDIA's open kernel modules" in summary
    assert first == "sudo ubuntu-drivers install"
    smi = "$ nvidia-smi\nNo devices were found\n"
    # an older GPU keeps the kernel log first, and so does a GPU passed through by hand (its memory window)
    assert cause_of(said("Ubuntu 22.04, RTX 3090\n" + smi))[2] == "sudo dmesg"
    assert cause_of(said("Ubuntu 22.04 in a Proxmox VM, RTX 5090 passed through\n" + smi))[2] == "sudo dmesg"
