"""Blind set 27's classes, each on its real paste (tests/triage/pastes, MANIFEST.json), with what must stay as it
was: torch 2.1's misspelt out-of-memory message, and torch's 'Unexpected error from cudaGetDeviceCount()' with or
without its error number."""

from __future__ import annotations

from tests.triage.corpus_helpers import cause_of, diagnosed
from tests.triage.test_blind25_classes import headline, said

DEVICE_COUNT = (
    "/usr/lib/python3/site-packages/torch/cuda/__init__.py:118: UserWarning: CUDA initialization: Unexpected error "
    "from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have "
    "already set an error? Error {error} (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)\n"
)


def test_torch_2_1s_misspelt_out_of_memory_message_is_read() -> None:
    """Fooocus#1902: 'GPU 0 has a total capacty of 6.00 GiB' (torch 2.1's typo) with no exception class before
    it was 'nothing it knows' (exit 2); it is the out-of-memory error with its figures."""
    d = diagnosed("fooocus-1902-cuda-oom-6gb.txt")
    check, summary, _ = cause_of(d)
    assert check == "torch.out_of_memory" and "1.57 GiB was free" in summary and d.result.exit_problem()


def test_cudagetdevicecounts_unexpected_error_is_read_with_or_without_its_number() -> None:
    """docker-faster-whisper#20: 'Error 500: named symbol not found' at cudaGetDeviceCount was exit 2; so were
    999, 34 and 3. Numbers with an entry of their own keep it (804 forward compatibility, 999 the unknown error,
    34 the stub library),
    also where the line wraps before its number (TaskMatrix#379)."""
    check, summary, _ = cause_of(diagnosed("faster-whisper-20-wsl-docker-error-500.txt"))
    assert check == "torch.cuda_init" and "failed with error 500 (named symbol not found)" in summary
    assert "forward compatibility" in headline(
        said(DEVICE_COUNT.format(error="804: forward compatibility was attempted on non supported HW"))
    )
    assert "Error 999: unknown error" in headline(said(DEVICE_COUNT.format(error="999: unknown error")))
    # 34 has its own entry since blind set 30 (numba#9732): the toolkit's stub libcuda, not just the number
    assert "stub libcuda.so" in headline(said(DEVICE_COUNT.format(error="34: CUDA driver is a stub library")))
    assert "Error 804" in headline(diagnosed("taskmatrix-379-err804-forward-compat.txt"))


def test_a_gpu_whose_firmware_never_booted_is_a_problem_of_the_card() -> None:
    """open-gpu-kernel-modules#789: 'RmInitAdapter failed' and 'failed to wait for GFW_BOOT' in the kernel log of
    an RTX 3090 the words call only '3090': 'no problem found' (exit 0) before; the bus id in NVRM's lines says an
    NVIDIA GPU is there. RmInitAdapter alone (a 5090 with Resizable BAR off, #862) keeps its own reading."""
    d = diagnosed("ogkm-789-rminitadapter-gsp-gfw-boot.txt")
    check, summary, _ = cause_of(d)
    assert check == "driver.xid_errors" and "firmware never finished starting it (GFW_BOOT" in summary
    assert d.result.exit_problem()
    _, summary, _ = cause_of(diagnosed("ogkm-862-5090-no-devices-rebar.txt"))
    assert "GFW_BOOT" not in summary


def test_xformers_built_for_another_torch_reads_the_installed_one_from_the_brackets() -> None:
    """LTX-Desktop#23: 'PyTorch 2.9.0+cu128 with CUDA 1208 (you have 2.10.0+cu128)', its first line cut: the
    torch in brackets is the installed one (it was read as 2.9.0 and 'no problem'), and the mismatch is the cause,
    with the xFormers for the installed torch from its CUDA index. The same torch on both sides is not it."""
    d = diagnosed("ltx-desktop-23-xformers-build-mismatch.txt")
    assert d.facts.torch_packages.version == "2.10.0+cu128"  # type: ignore[union-attr]
    check, summary, first = cause_of(d)
    assert check == "torch.companions" and summary.startswith("xFormers was built for torch 2.9.0+cu128")
    assert first == "python -m pip install -U xformers --index-url https://download.pytorch.org/whl/cu128"
    same = said("    PyTorch 2.10.0+cu128 with CUDA 1208 (you have 2.10.0+cu128)\n")
    assert not any(h.signature.id == "companion_xformers_built_for_another_torch" for h in same.pasted.hits)


def test_nvmls_bare_return_code_18_is_the_mismatch_and_a_nix_store_library_its_cause() -> None:
    """ollama-flake#4: 'libnvidia-ml.so.545.29.06: nvml vram init failure: 18' from a Nix store path: NVML's
    code 18 is the library/module mismatch (it was 'an error it does not know'), and the store's own nvidia-x11
    is why, which no reboot changes. Code 18 without a store path keeps the reboot; another code is no mismatch."""
    check, summary, first = cause_of(diagnosed("ollama-flake-4-nvml-rm-mismatch-nixos.txt"))
    assert check == "driver.nvml" and "from its own Nix store path" in summary
    assert first == "cat /proc/driver/nvidia/version"
    plain = 'msg="unable to load nvml" library=/usr/lib/libnvidia-ml.so.545.29.06 error="nvml vram init failure: 18"\n'
    _, _, first = cause_of(said(plain))
    assert first.startswith("systemctl reboot")
    assert "mismatch" not in headline(said(plain.replace("failure: 18", "failure: 9")))


def test_a_traceback_cut_inside_torchs_own_raise_names_the_cpu_build() -> None:
    """TCN#67: the last frame is torch/cuda/__init__.py's `raise AssertionError("Torch not compiled with C`, cut:
    a CPU build (it was 'a traceback cut before its last line'). Another assertion in that frame is not it."""
    check, _, first = cause_of(diagnosed("tcn-67-torch-not-compiled-cuda-windows.txt"))
    assert check == "torch.cpu_build" and "--index-url https://download.pytorch.org/whl/cu" in first
    other = '    raise AssertionError("libcudart functions unavailable. It looks like you have a broken build?")\n'
    assert not any(
        h.signature.id == "cpu_build_torch_not_compiled_with_cuda" for h in said(other).pasted.hits
    )


def test_a_mac_shown_by_pythons_apple_clang_banner_or_by_docker_on_it() -> None:
    """A1111#15192: '[Clang 15.0.0 (clang-1500.0.40.1)]' is Apple's clang, so a Mac (it got a CUDA install);
    ai-dock/comfyui#6: 'Found no NVIDIA driver' from an image 'on my Mac M1' beside the container's Linux paths
    is Docker on a Mac, which has no NVIDIA GPU to pass. LLVM's own clang banner is no Mac."""
    d = diagnosed("a1111-15192-torch-not-compiled-cuda-macos.txt")
    assert d.pasted.prose.macos is not None
    _, _, first = cause_of(d)
    assert "mps" in first
    _, summary, _ = cause_of(diagnosed("ai-dock-comfyui-6-mac-m1-cuda-image.txt"))
    assert summary.startswith("This is a Mac")
    assert said("Python 3.10.12 (main, Jun 11 2023) [Clang 16.0.6 ] on linux\n").pasted.prose.macos is None


def test_an_impossible_allocation_and_an_mps_message_beside_words_of_running_out() -> None:
    """comfyui_controlnet_aux#50: 'Tried to allocate 218.96 GiB' with no GPU total in the message: larger than
    nearly any GPU, so the input must shrink (it got training advice). audioldm2#20: 'ran out of memory' in words
    above MPS's own message: the message, with the Mac's watermark, and no nvidia-smi."""
    _, summary, _ = cause_of(diagnosed("comfy-controlnet-50-oom-huge-image-not-gpu-fault.txt"))
    assert "218.96 GiB is larger than nearly every GPU's whole memory" in summary
    small = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    assert "nearly every GPU" not in headline(said(small))
    d = diagnosed("audioldm2-20-mps-oom.txt")
    assert headline(d).startswith("The Mac's GPU reached the unified memory torch may use")
    assert d.result.cause is not None and "nvidia-smi" not in (d.result.cause.find_out or "")


def test_two_ranks_on_one_gpu_start_from_the_count_of_visible_gpus() -> None:
    """Megatron-LM#661, MambaIR#39: 'Duplicate GPU detected' where the framework maps each rank to a GPU itself:
    more ranks than visible GPUs, so the count comes first (nvidia-smi -L), set_device after it."""
    for name in ("megatron-661-nccl-duplicate-gpu.txt", "mambair-39-duplicate-gpu-launch-not-gpu-fault.txt"):
        d = diagnosed(name)
        _, summary, first = cause_of(d)
        assert "more ranks than visible GPUs" in summary and first == "nvidia-smi -L", name
        fix = d.result.cause.finding.remediation if d.result.cause else None
        assert fix is not None and fix.text.index("nvidia-smi -L") < fix.text.index("set_device")


def test_a_context_switch_timeout_leads_with_the_driver_not_a_reset() -> None:
    """chia-gigahorse#74: Xid 109 three times on a desktop RTX card: another driver release first (NVIDIA lists
    driver and program causes first; a display GPU cannot be reset), no `nvidia-smi -r` and DCGM."""
    d = diagnosed("chia-gigahorse-74-xid109-ctx-switch-timeout.txt")
    check, summary, first = cause_of(d)
    assert check == "driver.xid_errors" and "did not switch between programs in time" in summary
    assert "nvidia-smi -r" not in first
    fix = d.result.cause.finding.remediation if d.result.cause else None
    assert fix is not None and "another driver release" in fix.text and "dcgmi" not in fix.text


def test_no_nvidia_driver_in_a_hosted_notebook_is_a_runtime_without_a_gpu() -> None:
    """ComfyUI#1865: 'Found no NVIDIA driver' from /notebooks/ on Paperspace: a GPU machine type, not modprobe or
    dkms. The same error from a home folder keeps the driver's own steps."""
    _, summary, first = cause_of(diagnosed("comfyui-1865-no-nvidia-driver-paperspace.txt"))
    assert summary.startswith("No NVIDIA driver answers in this hosted notebook") and first == "nvidia-smi"
    error = "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU.\n"
    here = '  File "/home/me/ComfyUI/main.py", line 72, in <module>\n' + error
    assert "hosted notebook" not in headline(said(here))
    assert "hosted notebook" in headline(said(here.replace("/home/me/", "/notebooks/")))
