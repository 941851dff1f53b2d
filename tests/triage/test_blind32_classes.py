"""Blind set 32's classes, each on its real paste (tests/triage/pastes, MANIFEST.json), with what must stay as it
was beside it: CUDA error 999 as programs that load the driver themselves print it (ollama, numba), torch's own
"Can't initialize NVML" warning, nvidia-smi's "No devices were found" told in a sentence, the container toolkit
that cannot load a Jetson's libcuda, and pip finding torch in the user's own site-packages."""

from __future__ import annotations

from tests.triage.corpus_helpers import cause_of, diagnosed
from torch_gpu_doctor.checks.support.signatures import match_line


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
    check, _summary, first = cause_of(diagnosed("compute-gpu-installation-50-rtx6000pro-no-devices.txt"))
    assert check == "torch.cuda_init" and first == "sudo dmesg"
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
